// #/experiments/ID[/tab]: one experiment. Owns its data (record, counts, best trial, session)
// and the live poll of /changes, which it hands to the header and the open tab.
import { exp, get } from "./api.js";
import { configTab } from "./config-tab.js";
import { h, replace } from "./dom.js";
import { count, isLive, tickTimes } from "./format.js";
import { renderHeader, updateClock } from "./header.js";
import { allowPlotly } from "./plots.js";
import { plotsTab } from "./plots-tab.js";
import { Poller } from "./poller.js";
import { link } from "./router.js";
import { parameters } from "./space.js";
import { summaryTab } from "./summary.js";
import { trialsTab } from "./trials-tab.js";
import { empty, errorBox, loading, setHow } from "./ui.js";

const LIVE_PACE = 1000; // ms between polls of /changes while a driver runs the experiment
const IDLE_PACE = 10000;
const RECORD_PACE = 10000; // ms between full reads of the record (elapsed time, options)
const TABS = { overview: summaryTab, trials: trialsTab, plots: plotsTab, config: configTab };
let readyMarked = false;

export function experimentView(root, route) {
  const page = new ExperimentPage(root, route);
  return {
    accepts: (next) => next.view === "experiment" && next.id === route.id,
    update: (next) => page.show(next.tab, next.query),
    destroy: () => page.destroy(),
  };
}

/** The page of an unknown experiment (or trial): what was asked for, and a way back. */
export function notFound(root, title, detail) {
  replace(root, h("section", { class: "page" },
    empty(title, detail, h("a", { class: "button primary", href: "#/", "data-testid": "back-to-overview" }, "See all experiments"), "not-found")));
}

class ExperimentPage {
  constructor(root, route) {
    this.root = root;
    this.id = route.id;
    this.bus = new EventTarget();
    this.tab = null;
    this.tabView = null;
    this.destroyed = false;
    this.drawnParts = new Set();
    this.ctx = {
      id: this.id, record: null, session: null, params: [], metrics: new Set(),
      selected: new Set(), bus: this.bus, page: this,
      drawn: (part) => this.drawn(part),
    };
    replace(root, h("section", { class: "page" }, loading("Loading the experiment…")));
    this.start(route);
  }

  async start(route) {
    const [record, session] = await Promise.allSettled([
      get(exp(this.id)),
      get("/session", { experiment_id: this.id }),
    ]);
    if (this.destroyed) return;
    if (record.status === "rejected") {
      const err = record.reason;
      if (err.status === 404 || err.status === 422) {
        notFound(this.root, `No experiment "${this.id}" here`, err.detail);
      } else {
        replace(this.root, h("section", { class: "page" }, errorBox(err, "Could not load the experiment")));
      }
      return;
    }
    this.ctx.session = session.status === "fulfilled" ? session.value : { can_write: false, how: "" };
    setHow(this.ctx.session.how);
    this.setRecord(record.value);
    document.title = `${record.value.name || this.id} · hyperlab`;
    this.cursor = record.value.change_cursor;
    this.headerEl = h("header", { class: "exp-header card", "data-testid": "experiment-header" });
    this.tabsEl = h("nav", { class: "tabs", "aria-label": "Experiment views" });
    this.bodyEl = h("div", { class: "tab-body" });
    replace(this.root, h("section", { class: "page", "data-testid": "experiment-page", "data-experiment": this.id },
      this.headerEl, this.tabsEl, this.bodyEl));
    renderHeader(this.headerEl, this.ctx);
    const wanted = this.wanted || route; // the address may have changed while loading
    this.show(wanted.tab, wanted.query);
    this.drawn("header");
    this.recordAt = Date.now();
    this.poller = new Poller(() => this.poll(), this.pace()).start(this.pace());
    this.clock = setInterval(() => {
      updateClock(this.headerEl, this.ctx);
      tickTimes(this.root);
    }, 1000);
  }

  setRecord(record) {
    const ctx = this.ctx;
    ctx.record = record;
    ctx.fetchedAt = Date.now() / 1000;
    ctx.params = parameters(record.space);
    for (const name of [].concat(record.options.metric || [])) ctx.metrics.add(name);
  }

  pace() {
    return isLive(this.ctx.record) ? LIVE_PACE : IDLE_PACE;
  }

  /** Read the record again (after a control, or a change of status). */
  async reload() {
    const record = await get(exp(this.id));
    if (this.destroyed) return;
    this.recordAt = Date.now(); // the change cursor stays the poll's: no change is skipped
    this.setRecord(record);
    renderHeader(this.headerEl, this.ctx);
    this.renderTabs();
    this.bus.dispatchEvent(new CustomEvent("record", { detail: record }));
    if (this.poller) this.poller.setInterval(this.pace());
  }

  async poll() {
    const answer = await get(`${exp(this.id)}/changes`, { after: this.cursor, limit: 1000 });
    if (this.destroyed) return undefined;
    const record = this.ctx.record;
    const statusChanged = answer.status !== record.status || answer.driver_alive !== record.driver_alive;
    this.cursor = answer.cursor;
    Object.assign(record, {
      status: answer.status, driver_alive: answer.driver_alive, counts: answer.counts,
      best: answer.best, n_trials: answer.n_trials,
    });
    for (const trial of answer.trials) for (const name of Object.keys(trial.metrics || {})) this.ctx.metrics.add(name);
    if (statusChanged || Date.now() - this.recordAt > RECORD_PACE) {
      await this.reload();
    } else {
      renderHeader(this.headerEl, this.ctx);
      this.renderTabs();
    }
    if (answer.trials.length || statusChanged) {
      this.bus.dispatchEvent(new CustomEvent("changes", { detail: { trials: answer.trials, statusChanged } }));
    }
    return answer.more ? 0 : this.pace();
  }

  /** The tab links: built once, then only the active one and the trial count change (so a
   * focused link keeps its focus while the page polls). */
  renderTabs() {
    const names = { overview: "Overview", trials: "Trials", plots: "Plots", config: "Config" };
    if (!this.tabLinks) {
      this.tabCount = h("span", { class: "tab-count", "data-testid": "tab-trial-count" });
      this.tabLinks = Object.entries(names).map(([tab, label]) => h("a", {
        class: "tab", href: link(this.id, tab), "data-tab": tab, "data-testid": `tab-${tab}`,
      }, label, tab === "trials" ? this.tabCount : null));
      replace(this.tabsEl, this.tabLinks);
    }
    for (const a of this.tabLinks) {
      const active = a.dataset.tab === this.tab;
      a.classList.toggle("active", active);
      if (active) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    this.tabCount.textContent = count(this.ctx.record.n_trials);
  }

  show(tab, query) {
    if (!this.bodyEl) {
      this.wanted = { tab, query }; // shown once the experiment has loaded
      return;
    }
    if (tab === this.tab && this.tabView) {
      if (this.tabView.update) this.tabView.update(query);
      return;
    }
    if (this.tabView) this.tabView.destroy();
    this.tab = tab;
    this.renderTabs();
    this.bodyEl.replaceChildren();
    this.tabView = TABS[tab](this.bodyEl, this.ctx, query);
  }

  /** A part of the first view is on screen: once the header, the first table page and the
   * first chart are (those the first tab has), mark the page ready for benchmarks. */
  drawn(part) {
    this.drawnParts.add(part);
    if (readyMarked) {
      allowPlotly();
      return;
    }
    const needs = { overview: ["header", "table", "chart"], trials: ["header", "table"] }[this.tab] || ["header"];
    if (needs.every((p) => this.drawnParts.has(p))) {
      readyMarked = true;
      performance.mark("hyperlab:ready");
      document.body.dataset.ready = "true";
      requestAnimationFrame(() => setTimeout(allowPlotly, 0)); // after this frame is painted
    }
  }

  destroy() {
    this.destroyed = true;
    if (this.poller) this.poller.stop();
    clearInterval(this.clock);
    if (this.tabView) this.tabView.destroy();
  }
}
