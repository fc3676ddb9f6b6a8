// Pieces every view uses: toasts, confirmations, dialogs, empty and loading states, errors.
import { h, icon, replace } from "./dom.js";

const HOW_FALLBACK =
  "Open the link with ?token= that hyperlab printed when this server started " +
  "(`hyperlab show ID` prints it again); it lets this browser steer the experiment.";
let how = HOW_FALLBACK;

/** Text with `code` spans, as nodes. */
export function rich(text) {
  return String(text ?? "").split(/(`[^`]+`)/).map((part) => (part.startsWith("`") && part.endsWith("`") && part.length > 2 ? h("code", null, part.slice(1, -1)) : part));
}

/** Remember how this browser gets the token (the session's `how`), for 401/403 answers. */
export function setHow(text) {
  if (text) how = text;
}

/** A toast in the corner; errors stay until closed, the rest fade after `timeout` ms. */
export function toast(message, { kind = "info", detail = null, timeout = null, testid = "toast" } = {}) {
  const box = document.getElementById("toasts");
  const close = () => el.remove();
  const el = h("div", { class: `toast toast-${kind}`, role: kind === "error" ? "alert" : "status", "data-testid": testid },
    h("div", { class: "toast-body" },
      h("strong", null, message),
      detail ? h("div", { class: "toast-detail" }, typeof detail === "string" ? rich(detail) : detail) : null),
    h("button", { class: "icon-button", "aria-label": "Close", onclick: close }, icon("x", 14)));
  box.append(el);
  const wait = timeout ?? (kind === "error" ? 0 : 4500);
  if (wait) setTimeout(close, wait);
  return el;
}

/** A toast for a failed request: its detail, and for a missing or wrong token how to get one. */
export function toastError(what, err) {
  if (err && err.unauthorised) {
    return toast(`${what}: this browser may not steer the experiment`, {
      kind: "error", detail: how, testid: "auth-error",
    });
  }
  return toast(`${what} failed`, { kind: "error", detail: err ? err.detail || err.message : null });
}

/** Ask before doing something; resolves true when confirmed. */
export function confirmDialog({ title, body, ok = "Confirm", danger = false }) {
  return new Promise((resolve) => {
    const dialog = h("dialog", { class: "dialog confirm", "data-testid": "confirm-dialog" });
    const done = (answer) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    const cancel = h("button", { class: "button", type: "button", "data-testid": "confirm-cancel", onclick: () => done(false) }, "Cancel");
    replace(dialog,
      h("h2", null, title),
      body ? h("div", { class: "dialog-body" }, body) : null,
      h("div", { class: "dialog-actions" },
        cancel,
        h("button", {
          class: danger ? "button danger" : "button primary", type: "button",
          "data-testid": "confirm-ok", onclick: () => done(true),
        }, ok)));
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      done(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

/** A modal dialog around `content`; returns {dialog, close}. */
export function openDialog({ title, content, actions = [], testid = "dialog", wide = false, onClose = null }) {
  const dialog = h("dialog", { class: wide ? "dialog wide" : "dialog", "data-testid": testid });
  const close = () => {
    if (!dialog.open) return;
    dialog.close();
    dialog.remove();
    if (onClose) onClose();
  };
  replace(dialog,
    h("div", { class: "dialog-head" },
      h("h2", null, title),
      h("button", { class: "icon-button", type: "button", "aria-label": "Close", onclick: close }, icon("x", 16))),
    h("div", { class: "dialog-body" }, content),
    actions.length ? h("div", { class: "dialog-actions" }, actions) : null);
  dialog.addEventListener("cancel", (event) => {
    event.preventDefault();
    close();
  });
  document.body.append(dialog);
  dialog.showModal();
  return { dialog, close };
}

/** An empty state: what is missing and what to do about it. */
export function empty(title, text = null, extra = null, testid = "empty") {
  return h("div", { class: "empty", "data-testid": testid },
    h("div", { class: "empty-title" }, title),
    text ? h("div", { class: "empty-text" }, text) : null,
    extra);
}

/** A loading placeholder. */
export function loading(text = "Loading…") {
  return h("div", { class: "loading", role: "status" }, h("span", { class: "spinner" }), text);
}

/** An inline error box for a request that failed. */
export function errorBox(err, title = "Could not load this") {
  const detail = err ? err.detail || err.message || String(err) : "";
  return h("div", { class: "callout callout-error", role: "alert", "data-testid": "error" },
    icon("alert", 16), h("div", null, h("strong", null, title), detail ? h("div", null, rich(detail)) : null));
}

/** The notice shown where controls are disabled because this browser lacks the token. */
export function authNotice(text = how) {
  return h("div", { class: "callout callout-lock", "data-testid": "auth-how" },
    icon("lock", 16), h("div", null, h("strong", null, "Read-only in this browser. "), rich(text)));
}

/** A button that copies `text`. */
export function copyButton(text, label = "Copy") {
  return h("button", {
    class: "icon-button", type: "button", title: label, "aria-label": label,
    onclick: async (event) => {
      event.stopPropagation();
      try {
        await navigator.clipboard.writeText(text);
        toast("Copied", { detail: text, timeout: 1500 });
      } catch {
        toast("Could not copy", { kind: "error", detail: text });
      }
    },
  }, icon("copy", 14));
}

/** A labelled value in a stats row. */
export function stat(label, value, { testid = null, sub = null, title = null } = {}) {
  return h("div", { class: "stat", "data-testid": testid, title },
    h("div", { class: "stat-label" }, label),
    h("div", { class: "stat-value" }, value),
    sub ? h("div", { class: "stat-sub" }, sub) : null);
}

/** A progress bar: `fraction` in [0, 1]. */
export function bar(fraction, { kind = "", label = null, testid = null } = {}) {
  const pct = Math.max(0, Math.min(1, fraction || 0)) * 100;
  return h("div", {
    class: `bar ${kind}`, role: "progressbar", "aria-valuemin": 0, "aria-valuemax": 100,
    "aria-valuenow": Math.round(pct), "aria-label": label, "data-testid": testid,
  }, h("div", { class: "bar-fill", style: { width: `${pct}%` } }));
}

/** A card holding a chart: {el, plot (the chart's element), note (a line under it), tools}. */
export function chartCard(title, { testid, tools = null, height = 300, wide = false } = {}) {
  const plot = h("div", { class: "plot", style: { height: `${height}px` }, "data-testid": `${testid}-plot` });
  const note = h("div", { class: "plot-note" });
  const toolsEl = h("div", { class: "card-tools" }, tools);
  const body = h("div", { class: "plot-body" }, plot);
  const el = h("section", { class: wide ? "card chart-card wide" : "card chart-card", "data-testid": testid },
    h("div", { class: "card-head" }, h("h2", null, title), toolsEl), body, note);
  const card = { el, plot, note, tools: toolsEl, body };
  chartMessage(card, loading("Drawing…"));
  return card;
}

/** Show a message in place of a chart (no data yet, or an error). */
export function chartMessage(card, content) {
  let box = card.body.querySelector(".plot-message");
  if (!content) {
    if (box) box.remove();
    card.plot.style.visibility = "";
    return;
  }
  if (!box) {
    box = h("div", { class: "plot-message" });
    card.body.append(box);
  }
  card.plot.style.visibility = "hidden";
  replace(box, content);
}
