// #/ : every experiment of the store, filtered by name or id and status, kept live; experiments
// no driver runs can be removed.
import { exp, get, send } from "./api.js";
import { debounce, h, icon, reconcile, replace } from "./dom.js";
import { count, duration, experimentBadge, isLive, num, tickTimes, timeEl } from "./format.js";
import { Poller } from "./poller.js";
import { link, replaceQuery } from "./router.js";
import { authNotice, bar, confirmDialog, empty, errorBox, loading, setHow, toast, toastError } from "./ui.js";

const STATUS_FILTERS = [
  ["", "Any status"], ["live", "Running"], ["DONE", "Done"], ["STOPPED", "Stopped"],
  ["ERROR", "Error"], ["LOST", "Driver lost"], ["INITIALIZED", "Initialized"],
];

export function overviewView(root, route) {
  const state = { q: route.query.get("q") || "", status: route.query.get("status") || "", rows: null, session: null };
  const body = h("div", { class: "card flush" }, loading("Loading experiments…"));
  const notice = h("div");
  const search = h("input", {
    type: "search", class: "input", placeholder: "Filter by name or id", value: state.q,
    "aria-label": "Filter experiments by name or id", "data-testid": "overview-filter",
  });
  const status = h("select", { class: "input", "aria-label": "Filter by status", "data-testid": "overview-status" },
    STATUS_FILTERS.map(([value, label]) => h("option", { value, selected: value === state.status }, label)));
  const summary = h("span", { class: "muted", "data-testid": "overview-count" });

  const onFilter = () => {
    state.q = search.value.trim();
    state.status = status.value;
    replaceQuery(new URLSearchParams(Object.entries({ q: state.q, status: state.status }).filter(([, v]) => v)));
    render();
  };
  search.addEventListener("input", debounce(onFilter, 150));
  status.addEventListener("change", onFilter);

  replace(root,
    h("section", { class: "page", "data-testid": "overview" },
      h("div", { class: "page-head" },
        h("div", null, h("h1", null, "Experiments"), summary),
        h("div", { class: "toolbar" }, h("label", { class: "search" }, icon("search", 14), search), status)),
      notice,
      body));

  function matches(e) {
    if (state.q) {
      const q = state.q.toLowerCase();
      if (!e.id.toLowerCase().includes(q) && !(e.name || "").toLowerCase().includes(q)) return false;
    }
    if (!state.status) return true;
    if (state.status === "live") return isLive(e);
    if (state.status === "LOST") return e.driver_lost;
    return e.status === state.status && !e.driver_lost;
  }

  function render() {
    if (state.rows === null) return;
    const rows = state.rows.filter(matches);
    summary.textContent = state.rows.length
      ? `${count(state.rows.length)} in this store${rows.length !== state.rows.length ? `, ${count(rows.length)} shown` : ""}`
      : "";
    if (!state.rows.length) {
      replace(body, empty("No experiments in this store yet",
        h("span", null, "Start one with ", h("code", null, "hyperlab run config.yml --port 8080"),
          " or ", h("code", null, "hyperlab.run(...)"), " on this store: it shows here as soon as it starts.")));
      return;
    }
    if (!rows.length) {
      replace(body, empty("No experiment matches this filter", null,
        h("button", { class: "button", onclick: () => { search.value = ""; status.value = ""; onFilter(); } }, "Clear the filter")));
      return;
    }
    if (!state.tbody || !body.contains(state.tbody)) {
      state.tbody = h("tbody");
      replace(body, h("div", { class: "table-scroll" }, h("table", { class: "table", "data-testid": "experiments-table" },
        h("thead", null, h("tr", null,
          h("th", null, "Experiment"), h("th", null, "Status"), h("th", { class: "col-progress" }, "Progress"),
          h("th", { class: "num" }, "Best"), h("th", { class: "num" }, "Trials"), h("th", null, "Started"),
          h("th", { class: "num" }, "Duration"), h("th", { class: "actions" }, h("span", { class: "sr-only" }, "Actions")))),
        state.tbody)));
    }
    // redraw only the rows whose experiment changed, so focus and clicks are not lost
    const focused = state.tbody.contains(document.activeElement) ? document.activeElement.closest("tr")?.dataset.id : null;
    const cache = state.cache || new Map();
    const nodes = rows.map((e) => {
      const key = JSON.stringify([e, state.session?.can_write]);
      const known = cache.get(e.id);
      if (known && known.key === key) return known.el;
      const el = row(e);
      cache.set(e.id, { key, el });
      return el;
    });
    state.cache = cache;
    reconcile(state.tbody, nodes);
    if (focused && !state.tbody.contains(document.activeElement)) state.tbody.querySelector(`tr[data-id="${focused}"]`)?.focus();
  }

  function row(e) {
    const href = link(e.id);
    const live = isLive(e);
    // a server started for one experiment (run --port, view): its token steers that one only
    const own = state.session?.server_experiment;
    const other = own != null && own !== e.id;
    const canRemove = state.session ? state.session.can_write && !other : false;
    const removeButton = live ? null : h("button", {
      class: "icon-button danger", type: "button", "data-testid": "remove-experiment",
      "aria-label": `Remove experiment ${e.id}`, disabled: !canRemove,
      title: canRemove ? "Remove this experiment, its trials and its folder"
        : other ? `This server's token steers experiment ${own} only` : state.session?.how,
      onclick: (event) => { event.stopPropagation(); remove(e); },
    }, icon("trash", 15));
    return h("tr", {
      class: "clickable", tabindex: 0, "data-testid": "experiment-row", "data-id": e.id,
      onclick: () => { location.hash = href; },
      onkeydown: (event) => { if (event.key === "Enter") location.hash = href; },
    },
      h("td", null, h("a", { href, class: "strong" }, e.name || e.id), h("div", { class: "mono muted small" }, e.id)),
      h("td", null, experimentBadge(e)),
      h("td", { class: "col-progress" }, progress(e)),
      h("td", { class: "num" }, e.best_value === null ? h("span", { class: "muted" }, "–") : num(e.best_value)),
      h("td", { class: "num" }, count(e.n_trials),
        e.n_running || e.n_failed ? h("div", { class: "small muted" },
          [e.n_running ? `${e.n_running} running` : null, e.n_failed ? `${e.n_failed} failed` : null].filter(Boolean).join(" · ")) : null),
      h("td", null, timeEl(e.started_at ?? e.created_at)),
      h("td", { class: "num" }, duration(e.elapsed)),
      h("td", { class: "actions" }, removeButton));
  }

  async function remove(e) {
    const ok = await confirmDialog({
      title: `Remove ${e.name || e.id}?`,
      body: h("p", null, `This deletes experiment ${e.id}, its ${count(e.n_trials)} trials, their reports and its folder. It cannot be undone.`),
      ok: "Remove", danger: true,
    });
    if (!ok) return;
    try {
      await send("DELETE", exp(e.id));
      toast(`Removed ${e.name || e.id}`, { kind: "success" });
      state.rows = state.rows.filter((r) => r.id !== e.id);
      render();
    } catch (err) {
      toastError(`Removing ${e.id}`, err);
    }
  }

  const poller = new Poller(async () => {
    try {
      state.rows = await get("/experiments");
    } catch (err) {
      if (state.rows === null) replace(body, errorBox(err, "Could not read the experiments"));
      throw err;
    }
    render();
    return state.rows.some(isLive) ? 2000 : 10000;
  }, 2000).start();

  get("/session").then((session) => {
    state.session = session;
    setHow(session.how);
    if (!session.can_write) replace(notice, authNotice(session.how));
    render();
  }).catch(() => {});

  const clock = setInterval(() => tickTimes(root), 15000);
  return {
    destroy: () => {
      poller.stop();
      clearInterval(clock);
    },
  };
}

function progress(e) {
  const done = e.n_finished;
  if (e.max_trials) {
    return h("div", { class: "progress" },
      bar(done / e.max_trials, { kind: e.driver_lost ? "lost" : `e-${e.status}`, label: "trials done" }),
      h("span", { class: "small muted num-text" }, `${count(done)} / ${count(e.max_trials)}`));
  }
  if (e.max_duration) {
    return h("div", { class: "progress" },
      bar(e.elapsed / e.max_duration, { kind: `e-${e.status}`, label: "time spent" }),
      h("span", { class: "small muted num-text" }, `${duration(e.elapsed)} / ${duration(e.max_duration)}`));
  }
  return h("span", { class: "small muted" }, `${count(done)} done`);
}

