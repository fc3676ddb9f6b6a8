// Steering a running experiment from the page: stop, concurrency and budget, a new search
// space, an added trial, killing a trial. Every request needs the token (the cookie the link
// with ?token= sets); the search space and added trials are checked by the server first
// (…/check answers 422 naming the parameter) so an invalid edit sends nothing.
import { exp } from "./api.js";
import { h, icon, replace } from "./dom.js";
import { isLive } from "./format.js";
import { spaceDialog } from "./space-editor.js";
import { markField, showProblem, steer } from "./steer.js";
import { addTrialDialog } from "./trial-form.js";
import { confirmDialog, openDialog } from "./ui.js";

/** The control buttons of the header: none when no driver runs the experiment, disabled
 * (with how to get the token) when this browser may not steer it. */
export function renderControls(el, ctx) {
  const record = ctx.record;
  if (!isLive(record)) {
    replace(el);
    return;
  }
  const allowed = ctx.session && ctx.session.can_write;
  const button = (label, iconName, onclick, testid, extra = "") => h("button", {
    class: `button ${extra}`, type: "button", disabled: !allowed, "data-testid": testid,
    title: allowed ? null : ctx.session?.how, onclick,
  }, icon(iconName, 15), label);
  replace(el,
    button("Add trial", "plus", () => addTrialDialog(ctx), "control-add-trial"),
    button("Search space", "edit", () => spaceDialog(ctx), "control-space"),
    button("Budget", "edit", () => budgetDialog(ctx), "control-budget"),
    button("Stop", "stop", () => stopExperiment(ctx), "control-stop", "danger-outline"));
}

async function stopExperiment(ctx) {
  const ok = await confirmDialog({
    title: `Stop ${ctx.record.name || ctx.id}?`,
    body: h("p", null, "Its running trials are canceled and no new ones start. ",
      h("code", null, `hyperlab resume ${ctx.id}`), " can continue it later."),
    ok: "Stop the experiment", danger: true,
  });
  if (ok) await steer("POST", `${exp(ctx.id)}/stop`, {}, "Stop", ctx);
}

/** Kill a waiting or running trial (it ends USER_CANCELED). */
export async function killTrial(ctx, number, after) {
  const ok = await confirmDialog({
    title: `Kill trial #${number}?`,
    body: h("p", null, "It ends as USER_CANCELED (killed) and counts in max_trials; it does not run again."),
    ok: "Kill the trial", danger: true,
  });
  if (!ok) return;
  await steer("POST", `${exp(ctx.id)}/trials/${number}/kill`, {}, `Kill trial #${number}`, null);
  if (after) after();
}

// ---- concurrency and budget --------------------------------------------------------------

function budgetDialog(ctx) {
  const o = ctx.record.options;
  const field = (name, label, value, hint, attrs) => {
    const input = h("input", { class: "input", id: `budget-${name}`, name, value: value ?? "", "data-testid": `budget-${name}`, ...attrs });
    const message = h("div", { class: "field-error", hidden: true });
    input.addEventListener("input", () => markField(input, null, message));
    return { name, input, message, el: h("div", { class: "field" }, h("label", { for: `budget-${name}` }, label), input, h("div", { class: "hint" }, hint), message) };
  };
  const fields = [
    field("concurrency", "Concurrency", o.concurrency, "Trials running at once.", { type: "number", min: 1, step: 1, required: true }),
    field("max_trials", "Max trials", o.max_trials, "Trials that end on their own, at most.", { type: "number", min: 1, step: 1, placeholder: "no limit" }),
    field("max_duration", "Max duration", o.max_duration ? compactDuration(o.max_duration) : "", "Experiment time: seconds, or 90s, 30m, 2h, 1d.", { type: "text", placeholder: "no limit" }),
  ];
  const problem = h("div", { class: "form-error", hidden: true, "data-testid": "budget-error" });
  const form = h("form", { class: "form", novalidate: true, "data-testid": "budget-form" }, fields.map((f) => f.el), problem);
  const apply = h("button", { class: "button primary", type: "submit", "data-testid": "budget-apply" }, "Apply");
  form.append(h("div", { class: "dialog-actions" },
    h("button", { class: "button", type: "button", onclick: () => dialog.close() }, "Cancel"), apply));
  const dialog = openDialog({ title: "Concurrency and budget", content: form, testid: "budget-dialog" });
  fields[0].input.focus();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {};
    let bad = false;
    for (const f of fields) {
      markField(f.input, null, f.message);
      const text = f.input.value.trim();
      const current = f.name === "max_duration" ? (o.max_duration ? compactDuration(o.max_duration) : "") : String(o[f.name] ?? "");
      if (text === current) continue;
      if (!text) {
        markField(f.input, "A running experiment keeps a budget once it has one: give a value.", f.message);
        bad = true;
        continue;
      }
      if (f.name === "max_duration") {
        body.max_duration = /^\d+(\.\d+)?$/.test(text) ? Number(text) : text;
      } else {
        const value = Number(text);
        if (!Number.isInteger(value) || value < 1) {
          markField(f.input, "A whole number of at least 1.", f.message);
          bad = true;
          continue;
        }
        body[f.name] = value;
      }
    }
    if (bad) return;
    if (!Object.keys(body).length) {
      dialog.close();
      return;
    }
    apply.disabled = true;
    const { error } = await steer("PATCH", exp(ctx.id), body, "Budget", ctx);
    apply.disabled = false;
    if (error) {
      showProblem(problem, error, fields);
      return;
    }
    dialog.close();
  });
}

function compactDuration(seconds) {
  for (const [unit, size] of [["d", 86400], ["h", 3600], ["m", 60]]) {
    if (seconds >= size && seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return String(seconds);
}
