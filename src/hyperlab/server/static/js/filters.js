// The trials table's filters: status chips, the objective's range, and ranges of parameters,
// metrics and duration (option pickers for choices). They become the server's query
// parameters (status=, value=MIN..MAX, param=NAME:MIN..MAX, param=NAME:[options], metric=...),
// which the page also keeps in its address.
import { debounce, h, icon, replace } from "./dom.js";
import { TRIAL_STATUSES, count, objectiveMetric, statusLabel } from "./format.js";
import { parseExact } from "./json.js";

const TYPING_PAUSE = 350; // ms after the last keystroke before the table asks the server

/** Filters from the address's query (the same text the server reads). */
export function readFilters(query, params) {
  const state = { status: new Set(), value: { min: "", max: "" }, ranges: [], choices: new Map() };
  for (const s of (query.get("status") || "").split(",").filter(Boolean)) state.status.add(s.toUpperCase());
  const split = (text) => {
    const [min = "", max = ""] = text.split("..");
    return { min, max };
  };
  if (query.get("value")) state.value = split(query.get("value"));
  if (query.get("duration")) state.ranges.push({ kind: "duration", name: "duration", ...split(query.get("duration")) });
  for (const given of query.getAll("param")) {
    const at = given.indexOf(":");
    const name = given.slice(0, at);
    const rest = given.slice(at + 1);
    const p = params.find((x) => x.name === name);
    if (!p) continue;
    if (p.kind === "choice" && rest.startsWith("[")) {
      try {
        const wanted = parseExact(rest).map((v) => JSON.stringify(v));
        state.choices.set(name, new Set(p.options.map((o, i) => (wanted.includes(JSON.stringify(o.value)) ? i : -1)).filter((i) => i >= 0)));
      } catch {
        /* a hand-edited address: left out */
      }
    } else {
      state.ranges.push({ kind: "param", name, ...split(rest) });
    }
  }
  for (const given of query.getAll("metric")) {
    const at = given.indexOf(":");
    state.ranges.push({ kind: "metric", name: given.slice(0, at), ...split(given.slice(at + 1)) });
  }
  return state;
}

/** The server's query parameters for `state` (invalid ranges left out). */
export function filterQuery(state, params) {
  const range = (r) => (r.min === "" && r.max === "" ? null : `${r.min}..${r.max}`);
  const out = { param: [], metric: [] };
  if (state.status.size) out.status = [...state.status].join(",");
  if (valid(state.value)) out.value = range(state.value);
  for (const r of state.ranges) {
    if (!valid(r)) continue;
    const text = range(r);
    if (!text) continue;
    if (r.kind === "duration") out.duration = text;
    else out[r.kind].push(`${r.name}:${text}`);
  }
  for (const [name, picked] of state.choices) {
    const p = params.find((x) => x.name === name);
    if (!p || !picked.size) continue;
    out.param.push(`${name}:${JSON.stringify([...picked].map((i) => p.options[i].value))}`);
  }
  return out;
}

function valid(r) {
  const low = r.min === "" ? null : Number(r.min);
  const high = r.max === "" ? null : Number(r.max);
  if (low !== null && !Number.isFinite(low)) return false;
  if (high !== null && !Number.isFinite(high)) return false;
  return low === null || high === null || low <= high;
}

export class FilterBar {
  constructor(ctx, state, onChange) {
    this.ctx = ctx;
    this.state = state;
    this.onChange = (state) => {
      this.clearButton.hidden = !this.active();
      onChange(state);
    };
    this.fire = debounce(() => this.onChange(this.state), TYPING_PAUSE);
    this.clearButton = h("button", { class: "link-button", type: "button", "data-testid": "clear-filters", onclick: () => this.clear() }, "Clear all");
    this.chips = h("div", { class: "chips", role: "group", "aria-label": "Filter by status", "data-testid": "status-chips" });
    this.groups = h("div", { class: "filter-groups" });
    this.el = h("div", { class: "filter-bar", "data-testid": "filters" },
      h("div", { class: "filter-row" }, h("span", { class: "filter-label" }, icon("filter", 14), "Status"), this.chips),
      h("div", { class: "filter-row" }, this.groups));
    this.renderChips();
    this.renderGroups();
  }

  /** Redraw the status chips with the latest counts. */
  renderChips() {
    const counts = this.ctx.record.counts || {};
    const shown = TRIAL_STATUSES.filter((s) => counts[s] || this.state.status.has(s));
    replace(this.chips, shown.length ? shown.map((s) => h("button", {
      type: "button", class: `chip s-${s}`, "aria-pressed": this.state.status.has(s) ? "true" : "false",
      "data-testid": `chip-${s}`,
      onclick: () => {
        if (this.state.status.has(s)) this.state.status.delete(s);
        else this.state.status.add(s);
        this.renderChips();
        this.onChange(this.state);
      },
    }, h("span", { class: `dot s-${s}` }), statusLabel(s), h("span", { class: "chip-count" }, count(counts[s] || 0)))) : h("span", { class: "muted small" }, "no trials yet"));
  }

  renderGroups() {
    const ctx = this.ctx;
    const objective = objectiveMetric(ctx.record.options, ctx.metrics);
    const groups = [this.rangeGroup(objective || "value", this.state.value, null, "value")];
    for (const r of this.state.ranges) groups.push(this.rangeGroup(r.name, r, () => this.removeRange(r), `${r.kind}-${r.name}`, r.kind));
    for (const [name, picked] of this.state.choices) groups.push(this.choiceGroup(name, picked));
    const adder = h("select", { class: "input add-filter", "aria-label": "Add a filter", "data-testid": "add-filter" });
    const fill = () => { // the metrics known grow as trials finish: list them when opened
      const used = new Set([...this.state.ranges.map((r) => `${r.kind}:${r.name}`), ...[...this.state.choices.keys()].map((n) => `param:${n}`)]);
      replace(adder,
        h("option", { value: "" }, "+ Add a filter…"),
        h("optgroup", { label: "Parameters" }, ctx.params.filter((p) => !used.has(`param:${p.name}`)).map((p) => h("option", { value: `param:${p.name}` }, p.name))),
        h("optgroup", { label: "Metrics" }, [...ctx.metrics].filter((m) => m !== objectiveMetric(ctx.record.options, ctx.metrics) && !used.has(`metric:${m}`)).map((m) => h("option", { value: `metric:${m}` }, m))),
        used.has("duration:duration") ? null : h("option", { value: "duration:duration" }, "duration (s)"));
    };
    fill();
    adder.addEventListener("focus", fill);
    adder.addEventListener("mousedown", fill);
    adder.addEventListener("change", () => {
      const [kind, name] = adder.value.split(/:(.*)/s);
      if (!kind) return;
      const p = ctx.params.find((x) => x.name === name);
      if (kind === "param" && p && p.kind === "choice") this.state.choices.set(name, new Set());
      else this.state.ranges.push({ kind, name, min: "", max: "" });
      this.renderGroups();
      const inputs = this.groups.querySelectorAll("input");
      if (inputs.length) inputs[inputs.length - (kind === "param" && p?.kind === "choice" ? p.options.length : 2)].focus();
    });
    this.clearButton.hidden = !this.active();
    replace(this.groups, groups, adder, this.clearButton);
  }

  /** Whether any filter is set. */
  active() {
    const s = this.state;
    return Boolean(s.status.size || s.ranges.some((r) => r.min !== "" || r.max !== "") || [...s.choices.values()].some((c) => c.size)
      || s.value.min !== "" || s.value.max !== "");
  }

  rangeGroup(label, r, remove, testid, kind = "value") {
    const input = (side) => {
      const el = h("input", {
        class: "input range-input", type: "text", inputmode: "decimal", placeholder: side, value: r[side],
        "aria-label": `${label} ${side}`, "data-testid": `filter-${testid}-${side}`,
      });
      el.addEventListener("input", () => {
        r[side] = el.value.trim();
        const ok = valid(r);
        for (const x of el.parentElement.querySelectorAll("input")) x.classList.toggle("invalid", !ok);
        if (ok) this.fire();
      });
      return el;
    };
    return h("div", { class: "filter-group", "data-testid": `filter-${testid}` },
      h("span", { class: "filter-name" }, kind === "metric" ? `${label}` : label),
      input("min"), h("span", { class: "muted" }, "…"), input("max"),
      remove ? h("button", { class: "icon-button", type: "button", "aria-label": `Remove the ${label} filter`, onclick: remove }, icon("x", 12)) : null);
  }

  choiceGroup(name, picked) {
    const p = this.ctx.params.find((x) => x.name === name);
    return h("div", { class: "filter-group", "data-testid": `filter-param-${name}` },
      h("span", { class: "filter-name" }, name),
      p.options.map((o, i) => h("label", { class: "check" },
        h("input", {
          type: "checkbox", checked: picked.has(i), "data-testid": `filter-${name}-option`,
          onchange: (event) => {
            if (event.target.checked) picked.add(i);
            else picked.delete(i);
            this.onChange(this.state);
          },
        }), o.label)),
      h("button", {
        class: "icon-button", type: "button", "aria-label": `Remove the ${name} filter`,
        onclick: () => {
          this.state.choices.delete(name);
          this.renderGroups();
          this.onChange(this.state);
        },
      }, icon("x", 12)));
  }

  removeRange(r) {
    this.state.ranges = this.state.ranges.filter((x) => x !== r);
    this.renderGroups();
    this.onChange(this.state);
  }

  clear() {
    this.state.status.clear();
    this.state.value = { min: "", max: "" };
    this.state.ranges = [];
    this.state.choices.clear();
    this.renderChips();
    this.renderGroups();
    this.onChange(this.state);
  }
}
