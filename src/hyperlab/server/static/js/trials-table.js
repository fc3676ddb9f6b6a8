// The trials table: one page at a time, filtered, sorted and paged by the server (never all
// rows), with parameters and metrics as columns. Stays smooth at 100,000 trials: a request per
// page, the one in flight aborted when the page changes, live changes batched.
import { exp, getWithHeaders } from "./api.js";
import { h, icon, replace } from "./dom.js";
import { badge, count, duration, firstMode, isMultiObjective, num, objectiveMetric, objectives, param, timeEl } from "./format.js";
import { link } from "./router.js";
import { empty, errorBox } from "./ui.js";

export const PAGE_SIZES = [25, 50, 100, 250, 500];
const REFRESH_EVERY = 1000; // ms: live changes redraw the page at most this often

export class TrialsTable {
  /**
   * @param ctx the experiment page's context
   * @param options {sort, limit, offset, filters: query params, compact, selectable,
   *   onState(state), onDrawn(), emptyText}
   */
  constructor(ctx, options = {}) {
    this.ctx = ctx;
    this.sort = options.sort || "-number";
    this.limit = options.limit || 50;
    this.offset = options.offset || 0;
    this.filters = options.filters || {};
    this.compact = Boolean(options.compact);
    this.selectable = Boolean(options.selectable);
    this.onState = options.onState || (() => {});
    this.onDrawn = options.onDrawn || (() => {});
    this.total = null;
    this.rows = [];
    this.request = null;
    this.lastLoad = 0;
    this.pending = null;
    this.status = h("div", { class: "table-progress", "aria-hidden": "true" });
    this.problem = h("div");
    this.thead = h("thead");
    this.tbody = h("tbody");
    this.table = h("table", { class: "table trials", "data-testid": this.compact ? "top-trials-table" : "trials-table" }, this.thead, this.tbody);
    this.scroll = h("div", { class: "table-scroll tall" }, this.table);
    this.emptyEl = h("div");
    this.pager = h("div", { class: "pager", "data-testid": "pager" });
    this.el = h("div", { class: "trials-table" }, this.status, this.problem, this.scroll, this.emptyEl, this.compact ? null : this.pager);
    if (this.compact) this.scroll.classList.remove("tall");
  }

  /** The columns for the experiment as known now. */
  columns() {
    const ctx = this.ctx;
    const options = ctx.record.options;
    const objective = objectiveMetric(options, ctx.metrics); // its column is the value
    const cols = [];
    if (this.selectable) cols.push({ key: "select", label: "", cls: "col-select" });
    cols.push({ key: "number", label: "#", sort: "number", cls: "num col-number" });
    cols.push({ key: "status", label: "Status", cls: "col-status" });
    const several = isMultiObjective(options) ? objectives(options) : null;
    if (several) { // a column per objective, the first sorted as the value (best first)
      several.forEach((o, i) => cols.push({
        key: `objective.${o.metric}`, label: o.metric, sort: i === 0 ? "value" : `metric.${o.metric}`, cls: "num col-objective",
        objective: i, title: `objective ${i + 1} of ${several.length}, ${o.mode}${i === 0 ? ": sorted best first" : ""}`,
      }));
    } else {
      cols.push({ key: "value", label: objective ? `Value (${objective})` : "Value", sort: "value", cls: "num", title: `the objective, ${firstMode(options)}: sorted best first` });
    }
    if (options.constraints || this.rows.some((t) => t.constraints)) {
      cols.push({ key: "violation", label: "Constraints", cls: "num col-violation", title: "feasible when every constraint is met; else by how much they are missed (the sum of the violations)" });
    }
    const shown = new Set(several ? several.map((o) => o.metric) : [objective]);
    for (const name of [...ctx.metrics].filter((m) => !shown.has(m)).sort()) {
      cols.push({ key: `metric.${name}`, label: name, sort: `metric.${name}`, cls: "num col-metric", metric: name });
    }
    for (const p of ctx.params) {
      cols.push({ key: `param.${p.name}`, label: p.name, sort: `param.${p.name}`, cls: p.kind === "number" ? "num col-param" : "col-param", param: p.name });
    }
    cols.push({ key: "duration", label: "Duration", sort: "duration", cls: "num" });
    if (!this.compact) {
      cols.push({ key: "attempt", label: "Attempt", cls: "num col-attempt", title: "runs of this trial (a re-run after a crash or a stop counts)" });
      if (this.showParent) cols.push({ key: "parent", label: "Parent", cls: "num", title: "the trial whose checkpoint it continued (population based training)" });
      cols.push({ key: "started", label: "Started", sort: "started", cls: "col-time" });
    }
    return cols;
  }

  setFilters(filters) {
    this.filters = filters;
    this.offset = 0;
    this.load();
  }

  /** Live changes: redraw the page at most once a second. */
  changed() {
    const wait = this.lastLoad + REFRESH_EVERY - Date.now();
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = null;
      this.load({ quiet: true });
    }, Math.max(0, wait));
  }

  async load({ quiet = false } = {}) {
    if (this.request) this.request.abort();
    const request = new AbortController();
    this.request = request;
    this.lastLoad = Date.now();
    const slow = quiet ? null : setTimeout(() => this.el.classList.add("loading"), 150);
    const params = { ...this.filters, sort: this.sort, limit: this.limit, offset: this.offset };
    try {
      const { data, headers } = await getWithHeaders(`${exp(this.ctx.id)}/trials`, params, { signal: request.signal });
      if (request !== this.request) return;
      this.total = Number(headers.get("X-Total-Count") || data.length);
      if (this.offset > 0 && this.offset >= this.total) {
        this.offset = Math.max(0, Math.floor((this.total - 1) / this.limit) * this.limit);
        this.request = null;
        this.load({ quiet });
        return;
      }
      replace(this.problem);
      const key = JSON.stringify([data, this.total, this.sort, this.offset, this.limit]);
      if (quiet && key === this.drawnKey) return; // a live refresh that changed nothing
      this.drawnKey = key;
      this.rows = data;
      for (const trial of data) for (const name of Object.keys(trial.metrics || {})) this.ctx.metrics.add(name);
      this.render();
      this.onDrawn();
    } catch (err) {
      if (err.name === "AbortError") return;
      replace(this.problem, errorBox(err, "Could not read the trials"));
      this.problem.firstChild.dataset.testid = "table-error";
      this.onDrawn();
    } finally {
      clearTimeout(slow);
      if (request === this.request) {
        this.el.classList.remove("loading");
        this.request = null;
      }
    }
  }

  render() {
    this.showParent = this.showParent || this.ctx.record.options.assessor === "pbt" || this.rows.some((t) => t.parent !== null);
    const cols = this.columns();
    const signature = cols.map((c) => c.key).join("|") + this.sort;
    if (signature !== this.signature) {
      this.signature = signature;
      replace(this.thead, h("tr", null, cols.map((c) => this.headerCell(c))));
    }
    this.updateSelectAll();
    const focused = document.activeElement && this.tbody.contains(document.activeElement)
      ? document.activeElement.closest("tr")?.dataset.number : null;
    const fragment = document.createDocumentFragment();
    for (const trial of this.rows) fragment.append(this.row(trial, cols));
    this.tbody.replaceChildren(fragment);
    if (focused) this.tbody.querySelector(`tr[data-number="${focused}"]`)?.focus();
    this.scroll.hidden = this.rows.length === 0;
    replace(this.emptyEl, this.rows.length ? null : this.emptyState());
    if (!this.compact) this.renderPager();
    this.table.dataset.total = this.total;
  }

  emptyState() {
    const filtered = Object.values(this.filters).some((v) => (Array.isArray(v) ? v.length : v));
    if (filtered) {
      return empty("No trial matches these filters", "Widen the ranges or clear the filters.", null, "table-empty");
    }
    return empty("No trials yet", "Trials appear here as soon as the tuner proposes them.", null, "table-empty");
  }

  headerCell(c) {
    if (c.key === "select") {
      this.selectAll = h("input", {
        type: "checkbox", "aria-label": "Select the trials of this page for the curves",
        onchange: (event) => this.selectPage(event.target.checked),
      });
      return h("th", { class: c.cls }, this.selectAll);
    }
    if (!c.sort) return h("th", { class: c.cls, title: c.title || null, scope: "col" }, c.label);
    const active = this.sort === c.sort ? "asc" : this.sort === `-${c.sort}` ? "desc" : null;
    const label = c.sort === "value" && active ? (active === "asc" ? "best first" : "worst first") : active === "asc" ? "ascending" : "descending";
    // which way the numbers go down the column: `value` sorts best first, the largest on top
    // when the experiment maximises; the arrow and aria-sort follow the numbers
    const largestFirst = c.sort === "value" && firstMode(this.ctx.record.options) === "max";
    const arrow = (key) => ((key === "asc") !== largestFirst ? "up" : "down");
    const shown = active ? arrow(active) : null;
    return h("th", {
      class: `${c.cls} sortable ${active ? "sorted" : ""}`, scope: "col",
      "aria-sort": shown ? (shown === "up" ? "ascending" : "descending") : "none",
      "data-sort": c.sort, "data-arrow": shown,
    }, h("button", {
      type: "button", class: "sort-button", title: active ? `Sorted ${label}; click to reverse` : `Sort by ${c.label}${c.sort === "value" ? " (best first)" : ""}`,
      "data-testid": `sort-${c.sort}`,
      onclick: () => this.sortBy(c.sort),
    }, h("span", { class: "th-label" }, c.label),
    shown ? icon(shown, 12) : h("span", { class: "sort-hint" }, icon(arrow("asc"), 12))));
  }

  sortBy(key) {
    this.sort = this.sort === key ? `-${key}` : key;
    this.offset = 0;
    this.signature = null;
    this.onState(this.state());
    this.load();
  }

  state() {
    return { sort: this.sort, limit: this.limit, offset: this.offset };
  }

  row(trial, cols) {
    const href = link(this.ctx.id, "trials", trial.number);
    const tr = h("tr", {
      class: "clickable", tabindex: 0, "data-number": trial.number, "data-testid": "trial-row", "data-status": trial.status,
      onclick: (event) => {
        if (event.target.closest("input, a, button")) return;
        location.hash = href;
      },
      onkeydown: (event) => {
        if (event.key === "Enter" && event.target === tr) location.hash = href;
      },
    });
    for (const c of cols) tr.append(this.cell(trial, c, href));
    if (feasible(trial) === false) {
      tr.classList.add("infeasible");
      tr.dataset.feasible = "false";
    }
    if (this.ctx.selected.has(trial.number)) tr.classList.add("selected");
    return tr;
  }

  cell(trial, c, href) {
    const td = (content, extra = {}) => h("td", { class: c.cls, ...extra }, content);
    switch (c.key) {
      case "select":
        return td(h("input", {
          type: "checkbox", checked: this.ctx.selected.has(trial.number), "data-testid": "select-trial",
          "aria-label": `Show trial ${trial.number}'s curve`,
          onchange: (event) => this.select(trial.number, event.target.checked),
        }));
      case "number":
        return td([h("a", { href, class: "strong" }, `#${trial.number}`),
          trial.source === "custom" ? h("span", { class: "tag", title: "added by hand" }, "custom") : null]);
      case "status":
        return td(badge(trial.status));
      case "value":
        return td(trial.value === null ? h("span", { class: "muted" }, "–") : num(trial.value), { "data-col": "value" });
      case "violation": {
        const ok = feasible(trial);
        if (ok === null) return td(h("span", { class: "muted" }, "–"), { "data-col": "violation" });
        const text = ok ? "feasible" : `violated by ${num(violation(trial))}`;
        return td(h("span", { class: ok ? "tag ok" : "tag warn", title: `constraints: ${(trial.constraints || []).map((v) => num(v)).join(", ")} (each ≤ 0 when met)` }, text), { "data-col": "violation" });
      }
      case "duration":
        if (trial.duration === null && trial.started_at && trial.status === "RUNNING") {
          return td(h("span", { class: "muted", title: "running for" }, duration(Date.now() / 1000 - trial.started_at)));
        }
        return td(duration(trial.duration));
      case "attempt":
        return td(trial.attempt > 1 ? h("span", { class: "tag warn" }, trial.attempt) : h("span", { class: "muted" }, trial.attempt));
      case "parent":
        return td(trial.parent === null ? h("span", { class: "muted" }, "–") : h("a", { href: link(this.ctx.id, "trials", trial.parent) }, `#${trial.parent}`));
      case "started":
        return td(timeEl(trial.started_at));
      default:
        if (c.objective !== undefined) {
          const value = trial.values ? trial.values[c.objective] : trial.metrics[c.label];
          return td(metricText(value), { "data-col": c.key });
        }
        if (c.metric) return td(metricText(trial.metrics[c.metric]));
        if (c.param) return td(param(trial.params[c.param]), { "data-col": c.key });
        return td("");
    }
  }

  select(number, on) {
    if (on) this.ctx.selected.add(number);
    else this.ctx.selected.delete(number);
    this.tbody.querySelector(`tr[data-number="${number}"]`)?.classList.toggle("selected", on);
    this.updateSelectAll();
    this.ctx.bus.dispatchEvent(new CustomEvent("selection"));
  }

  selectPage(on) {
    for (const trial of this.rows.slice(0, 100)) {
      if (on) this.ctx.selected.add(trial.number);
      else this.ctx.selected.delete(trial.number);
    }
    this.render();
    this.ctx.bus.dispatchEvent(new CustomEvent("selection"));
  }

  updateSelectAll() {
    if (!this.selectAll) return;
    const picked = this.rows.filter((t) => this.ctx.selected.has(t.number)).length;
    this.selectAll.checked = picked > 0 && picked === this.rows.length;
    this.selectAll.indeterminate = picked > 0 && picked < this.rows.length;
  }

  renderPager() {
    const total = this.total || 0;
    const pages = Math.max(1, Math.ceil(total / this.limit));
    const page = Math.floor(this.offset / this.limit) + 1;
    const go = (p) => {
      const target = Math.min(Math.max(1, p), pages);
      this.offset = (target - 1) * this.limit;
      this.onState(this.state());
      this.load();
    };
    const pageInput = h("input", {
      class: "input page-input", type: "number", min: 1, max: pages, value: page, "aria-label": "Page", "data-testid": "page-input",
      onchange: (event) => go(Number(event.target.value) || 1),
    });
    const size = h("select", {
      class: "input", "aria-label": "Rows per page", "data-testid": "page-size",
      onchange: (event) => {
        this.limit = Number(event.target.value);
        this.offset = 0;
        this.onState(this.state());
        this.load();
      },
    }, PAGE_SIZES.map((n) => h("option", { value: n, selected: n === this.limit }, String(n))));
    const nav = (iconName, label, target, disabled, testid) => h("button", {
      class: "icon-button", type: "button", "aria-label": label, title: label, disabled, "data-testid": testid, onclick: () => go(target),
    }, icon(iconName, 15));
    const first = total ? this.offset + 1 : 0;
    const last = Math.min(total, this.offset + this.limit);
    replace(this.pager,
      h("label", { class: "pager-size" }, "Rows per page", size),
      h("span", { class: "pager-range", "data-testid": "page-range" }, `${count(first)}–${count(last)} of ${count(total)}`),
      h("div", { class: "pager-nav" },
        nav("first", "First page", 1, page <= 1, "page-first"),
        nav("back", "Previous page", page - 1, page <= 1, "page-prev"),
        h("span", { class: "pager-page" }, "Page ", pageInput, ` of ${count(pages)}`),
        nav("next", "Next page", page + 1, page >= pages, "page-next"),
        nav("last", "Last page", pages, page >= pages, "page-last")));
  }

  destroy() {
    if (this.request) this.request.abort();
    clearTimeout(this.pending);
  }
}

/** Whether a trial met its constraints: null when it has none (yet). */
function feasible(trial) {
  if (typeof trial.feasible === "boolean" && trial.constraints) return trial.feasible;
  return trial.constraints ? trial.constraints.every((v) => v <= 0) : null;
}

/** The sum of a trial's positive constraint values (0 when feasible). */
function violation(trial) {
  if (typeof trial.violation === "number") return trial.violation;
  return (trial.constraints || []).reduce((sum, v) => sum + Math.max(0, v), 0);
}

function metricText(value) {
  if (value === undefined || value === null) return h("span", { class: "muted" }, "–");
  return typeof value === "number" ? num(value) : param(value);
}
