// #/experiments/ID/trials/N: one trial: its parameters, final metrics, status history, error,
// intermediate reports (a curve of any metric), its log (followed while it runs), and a kill
// button while it waits or runs.
import { exp, get } from "./api.js";
import { killTrial } from "./controls.js";
import { h, icon, replace } from "./dom.js";
import { notFound } from "./experiment.js";
import {
  KILLABLE_TRIAL, absolute, badge, count, duration, isLive, num, objectiveMetric, objectives, param, statusLabel,
  tickTimes, timeEl,
} from "./format.js";
import { allowPlotly, purge, reportsChart } from "./plots.js";
import { Poller } from "./poller.js";
import { link } from "./router.js";
import { authNotice, chartCard, chartMessage, empty, errorBox, loading, setHow, stat } from "./ui.js";

const TRIAL_PACE = 1500; // ms between reads of a trial that has not finished
const LOG_PACE = 1000; // ms between reads of a followed log
const LOG_TAIL = 65536; // bytes of the log's end shown first
const LOG_KEEP = 1 << 20; // characters of log kept on the page at most
const REPORT_ROWS = 500; // rows of the reports table at most (the newest)

export function trialView(root, route) {
  const view = new TrialPage(root, route.id, route.number);
  return { destroy: () => view.destroy() };
}

class TrialPage {
  constructor(root, id, number) {
    this.root = root;
    this.id = id;
    this.number = number;
    this.metric = null;
    this.destroyed = false;
    replace(root, h("section", { class: "page" }, loading(`Loading trial #${number}…`)));
    this.start();
  }

  async start() {
    const base = exp(this.id);
    const [record, trial, session] = await Promise.allSettled([
      get(base), get(`${base}/trials/${this.number}`), get("/session", { experiment_id: this.id }),
    ]);
    if (this.destroyed) return;
    if (record.status === "rejected") {
      const err = record.reason;
      if (err.status === 404 || err.status === 422) notFound(this.root, `No experiment "${this.id}" here`, err.detail);
      else replace(this.root, h("section", { class: "page" }, errorBox(err, "Could not load the experiment")));
      return;
    }
    if (trial.status === "rejected") {
      const err = trial.reason;
      if (err.status === 404 || err.status === 422) {
        replace(this.root, h("section", { class: "page" },
          empty(`No trial #${this.number} in ${record.value.name || this.id}`, err.detail,
            h("a", { class: "button primary", href: link(this.id, "trials") }, "See its trials"), "not-found")));
      } else {
        replace(this.root, h("section", { class: "page" }, errorBox(err, "Could not load the trial")));
      }
      return;
    }
    this.record = record.value;
    this.session = session.status === "fulfilled" ? session.value : { can_write: false };
    setHow(this.session.how);
    this.trial = trial.value;
    document.title = `#${this.number} · ${this.record.name || this.id} · hyperlab`;
    this.build();
    this.render();
    allowPlotly();
    this.log = new LogPanel(this);
    this.logCard.append(this.log.el);
    this.poller = new Poller(() => this.poll(), TRIAL_PACE).start(TRIAL_PACE);
    this.clock = setInterval(() => tickTimes(this.root), 15000);
  }

  async poll() {
    if (!KILLABLE_TRIAL.has(this.trial.status)) {
      this.poller.stop();
      return undefined;
    }
    const trial = await get(`${exp(this.id)}/trials/${this.number}`);
    if (this.destroyed) return undefined;
    const changed = trial.status !== this.trial.status || trial.reports.length !== this.trial.reports.length || trial.attempt !== this.trial.attempt;
    this.trial = trial;
    if (changed) this.render();
    return TRIAL_PACE;
  }

  build() {
    const r = this.record;
    this.title = h("div", { class: "exp-name-row" });
    this.actions = h("div", { class: "exp-controls" });
    this.stats = h("div", { class: "stats trial-stats" });
    this.notice = h("div");
    this.params = h("section", { class: "card", "data-testid": "trial-params" });
    this.metrics = h("section", { class: "card", "data-testid": "trial-metrics" });
    this.history = h("section", { class: "card", "data-testid": "trial-history" });
    this.errorCard = h("div");
    this.metricSelect = h("select", { class: "input small", "aria-label": "Metric", "data-testid": "report-metric" });
    this.metricSelect.addEventListener("change", () => {
      this.metric = this.metricSelect.value;
      this.drawCurve();
    });
    this.curve = chartCard("Intermediate results", { testid: "trial-curve", tools: this.metricSelect, height: 300, wide: true });
    this.reports = h("section", { class: "card flush", "data-testid": "trial-reports" });
    this.logCard = h("section", { class: "card", "data-testid": "trial-log" });
    const n = this.number;
    const nav = h("div", { class: "pager-nav" },
      h("a", { class: "icon-button", href: link(this.id, "trials", Math.max(0, n - 1)), "aria-label": "Previous trial", title: "Previous trial", "aria-disabled": n === 0 ? "true" : null }, icon("back", 15)),
      h("a", { class: "icon-button", href: link(this.id, "trials", n + 1), "aria-label": "Next trial", title: "Next trial" }, icon("next", 15)));
    replace(this.root, h("section", { class: "page", "data-testid": "trial-page" },
      h("header", { class: "exp-header card" },
        h("div", { class: "exp-title-row" },
          h("div", { class: "exp-title" },
            h("nav", { class: "crumbs", "aria-label": "Breadcrumb" },
              h("a", { href: "#/" }, "Experiments"), h("span", null, "/"),
              h("a", { href: link(this.id) }, r.name || r.id), h("span", null, "/"),
              h("a", { href: link(this.id, "trials") }, "Trials"), h("span", null, "/")),
            this.title),
          h("div", { class: "exp-controls" }, this.actions, nav)),
        this.stats, this.notice),
      this.errorCard,
      h("div", { class: "trial-grid" },
        h("div", { class: "stack" }, this.params, this.metrics, this.history),
        h("div", { class: "stack" }, this.curve.el, this.reports)),
      this.logCard));
  }

  render() {
    const t = this.trial;
    const r = this.record;
    replace(this.title,
      h("h1", { "data-testid": "trial-title" }, `Trial #${t.number}`),
      badge(t.status, { "data-testid": "trial-status" }),
      t.attempt > 1 ? h("span", { class: "tag warn", title: "runs of this trial" }, `attempt ${t.attempt}`) : null,
      t.source === "custom" ? h("span", { class: "tag", title: "added by hand" }, "custom") : null,
      t.parent !== null ? h("span", { class: "tag" }, "continues ", h("a", { href: link(this.id, "trials", t.parent) }, `#${t.parent}`)) : null);
    const killable = KILLABLE_TRIAL.has(t.status) && isLive(r);
    const allowed = this.session.can_write;
    if (this.killable === killable) {
      this.renderBody();
      return;
    }
    this.killable = killable;
    replace(this.actions, killable ? h("button", {
      class: "button danger-outline", type: "button", "data-testid": "kill-trial", disabled: !allowed,
      title: allowed ? "Kill this trial" : this.session.how,
      onclick: () => killTrial({ id: this.id }, t.number, () => this.poller && this.poller.now()),
    }, icon("stop", 15), "Kill") : null);
    replace(this.notice, killable && !allowed ? authNotice(this.session.how) : null);
    this.renderBody();
  }

  renderBody() {
    const t = this.trial;
    const r = this.record;
    const objective = objectiveMetric(r.options, Object.keys(t.metrics));
    const several = t.values ? objectives(r.options) : null; // a multi-objective trial: every value
    const constraints = t.constraints ? h("div", { "data-testid": "trial-feasible" }, t.feasible === false
      ? h("span", { class: "tag warn" }, `infeasible: violated by ${num(t.violation)}`) : h("span", { class: "tag ok" }, "feasible")) : null;
    replace(this.stats,
      several
        ? stat("Objectives", h("div", { class: "param-list", "data-testid": "trial-values" }, several.map((o, i) => h("span", { class: "param-pill" }, h("span", { class: "muted" }, `${o.metric} `), num(t.values[i], 6)))), { sub: constraints })
        : stat(objective ? `Value (${objective})` : "Value", t.value === null ? h("span", { class: "muted" }, "–") : h("span", { class: "best-value", "data-testid": "trial-value" }, num(t.value, 6)), { sub: constraints }),
      stat("Duration", t.duration !== null ? duration(t.duration) : t.started_at && t.status === "RUNNING" ? h("span", null, duration(Date.now() / 1000 - t.started_at), h("span", { class: "muted" }, " so far")) : "–"),
      stat("Started", t.started_at ? h("span", { title: absolute(t.started_at) }, timeEl(t.started_at)) : h("span", { class: "muted" }, "not yet")),
      stat("Finished", t.finished_at ? timeEl(t.finished_at) : h("span", { class: "muted" }, "–")),
      stat("Seed", t.seed === null ? "–" : h("span", { class: "mono" }, t.seed)));
    replace(this.params, h("div", { class: "card-head" }, h("h2", null, "Parameters")), kvTable(t.params, "param"));
    replace(this.metrics, h("div", { class: "card-head" }, h("h2", null, "Final metrics")),
      Object.keys(t.metrics).length ? kvTable(t.metrics, "metric") : h("p", { class: "muted" }, KILLABLE_TRIAL.has(t.status) ? "Not finished yet." : "None reported."));
    replace(this.history, h("div", { class: "card-head" }, h("h2", null, "Status history")),
      t.events.length ? h("ol", { class: "timeline", "data-testid": "status-history" }, t.events.map((e, i) => h("li", null,
        badge(e.status), h("span", { class: "muted small" }, ` attempt ${e.attempt} · `), h("span", { class: "small", title: absolute(e.time) }, absolute(e.time)),
        i > 0 ? h("span", { class: "muted small" }, ` (+${duration(e.time - t.events[i - 1].time)})`) : null)))
        : h("p", { class: "muted" }, "No status change recorded."));
    replace(this.errorCard, t.error ? h("section", { class: "card error-card", "data-testid": "trial-error" },
      h("div", { class: "card-head" }, h("h2", null, `Error (${statusLabel(t.status)})`)), h("pre", { class: "error-text" }, t.error)) : null);
    this.renderReports();
    this.drawCurve();
  }

  reportMetrics() {
    const names = new Set();
    for (const rep of this.trial.reports) for (const [k, v] of Object.entries(rep.metrics)) if (typeof v === "number") names.add(k);
    return [...names];
  }

  async drawCurve() {
    const names = this.reportMetrics();
    const objective = objectiveMetric(this.record.options, names);
    if (!this.metric || !names.includes(this.metric)) this.metric = names.includes(objective) ? objective : names[0] || null;
    replace(this.metricSelect, names.map((m) => h("option", { value: m, selected: m === this.metric }, m)));
    this.metricSelect.hidden = names.length < 2;
    if (!this.metric) {
      chartMessage(this.curve, empty("No intermediate results", KILLABLE_TRIAL.has(this.trial.status) ? "They show here as the trial reports them." : "This trial reported none."));
      return;
    }
    chartMessage(this.curve, null);
    try {
      await reportsChart(this.curve.plot, this.trial.reports, this.metric);
    } catch (err) {
      chartMessage(this.curve, errorBox(err, "Could not draw the curve"));
    }
  }

  renderReports() {
    const reports = this.trial.reports;
    const names = [...new Set(reports.flatMap((rep) => Object.keys(rep.metrics)))];
    const shown = reports.slice(-REPORT_ROWS).reverse();
    replace(this.reports,
      h("div", { class: "card-head padded" }, h("h2", null, "Reports"), h("span", { class: "muted small" }, `${count(reports.length)}${reports.length > REPORT_ROWS ? `, the newest ${REPORT_ROWS} shown` : ""}`)),
      reports.length ? h("div", { class: "table-scroll short" }, h("table", { class: "table", "data-testid": "reports-table" },
        h("thead", null, h("tr", null, h("th", { class: "num" }, "Step"), h("th", { class: "num" }, "Attempt"), names.map((n) => h("th", { class: "num" }, n)), h("th", null, "Time"))),
        h("tbody", null, shown.map((rep) => h("tr", null,
          h("td", { class: "num" }, rep.step), h("td", { class: "num muted" }, rep.attempt),
          names.map((n) => h("td", { class: "num" }, typeof rep.metrics[n] === "number" ? num(rep.metrics[n]) : param(rep.metrics[n]))),
          h("td", { class: "small", title: absolute(rep.time) }, timeEl(rep.time)))))))
        : h("p", { class: "muted padded" }, "No reports."));
  }

  destroy() {
    this.destroyed = true;
    if (this.poller) this.poller.stop();
    if (this.log) this.log.destroy();
    clearInterval(this.clock);
    if (this.curve) purge(this.curve.plot);
  }
}

function kvTable(values, kind) {
  return h("table", { class: "table plain kv-table", "data-testid": `${kind}-table` },
    h("tbody", null, Object.entries(values).map(([k, v]) => h("tr", null,
      h("th", { scope: "row", class: "mono" }, k), h("td", { class: typeof v === "number" ? "num" : "" }, param(v))))));
}

/** A trial's stdout or stderr: its tail, then what follows while "follow" is on. */
class LogPanel {
  constructor(page) {
    this.page = page;
    this.stream = "stdout";
    this.follow = KILLABLE_TRIAL.has(page.trial.status);
    this.pre = h("pre", { class: "log", "data-testid": "log-text", tabindex: 0 });
    this.info = h("div", { class: "log-info muted small", "data-testid": "log-info" });
    const streams = h("div", { class: "segmented", role: "group", "aria-label": "Log stream" },
      ["stdout", "stderr"].map((s) => h("button", {
        type: "button", class: "seg-button", "aria-pressed": s === this.stream ? "true" : "false", "data-stream": s, "data-testid": `log-${s}`,
        onclick: (event) => {
          this.stream = s;
          for (const b of event.target.parentElement.children) b.setAttribute("aria-pressed", b.dataset.stream === s ? "true" : "false");
          this.open();
        },
      }, s)));
    this.followBox = h("input", {
      type: "checkbox", checked: this.follow, "data-testid": "log-follow",
      onchange: (event) => {
        this.follow = event.target.checked;
        if (this.follow) this.poller.start();
        else this.poller.stop();
      },
    });
    this.tools = h("div", { class: "card-tools" }, streams, h("label", { class: "check" }, this.followBox, "Follow"));
    this.el = h("div", null, h("div", { class: "card-head" }, h("h2", null, "Log"), this.tools), this.info, this.pre);
    this.poller = new Poller(() => this.more(), LOG_PACE);
    this.open();
  }

  async open() {
    this.poller.stop();
    const mine = (this.generation = (this.generation || 0) + 1);
    this.pre.textContent = "";
    try {
      const piece = await get(`${exp(this.page.id)}/trials/${this.page.number}/log`, { stream: this.stream, tail: LOG_TAIL });
      if (mine !== this.generation) return;
      this.show(piece, true);
    } catch (err) {
      replace(this.info, errorBox(err, "Could not read the log"));
    }
  }

  show(piece, first) {
    if (!piece.exists) {
      this.pre.hidden = true;
      const t = this.page.trial;
      const functionTrial = /function trial/.test(piece.note || "");
      this.tools.hidden = functionTrial;
      replace(this.info, h("div", { class: "callout callout-muted", "data-testid": "log-note" },
        h("div", null, sentence(piece.note), t.error ? " The trial's error is shown above." : "")));
      if (!piece.done && this.follow) this.poller.start(LOG_PACE);
      this.offset = 0;
      return;
    }
    this.pre.hidden = false;
    this.tools.hidden = false;
    this.offset = piece.next_offset;
    const atBottom = this.pre.scrollHeight - this.pre.scrollTop - this.pre.clientHeight < 24;
    let text = (first ? "" : this.pre.textContent) + piece.text;
    if (text.length > LOG_KEEP) text = text.slice(text.length - LOG_KEEP);
    this.pre.textContent = text;
    if (first || atBottom) this.pre.scrollTop = this.pre.scrollHeight;
    replace(this.info, h("span", null,
      first && piece.offset > 0 ? `The last ${count(piece.next_offset - piece.offset)} bytes of ${count(piece.size)}. ` : `${count(piece.size)} bytes. `,
      piece.done ? "The trial has ended." : this.follow ? "Following…" : ""));
    if (!text) this.pre.textContent = piece.done ? "(empty)" : "(nothing yet)";
    if (piece.done) this.poller.stop();
    else if (this.follow && !this.poller.running) this.poller.start(LOG_PACE);
  }

  async more() {
    const mine = this.generation;
    const piece = await get(`${exp(this.page.id)}/trials/${this.page.number}/log`, { stream: this.stream, offset: this.offset || 0 });
    if (mine !== this.generation) return undefined;
    if (piece.exists && this.pre.hidden) {
      this.show(piece, true);
    } else if (piece.exists) {
      if (this.pre.textContent === "(nothing yet)") this.pre.textContent = "";
      this.show(piece, false);
    } else if (piece.done) {
      this.poller.stop();
    }
    return LOG_PACE;
  }

  destroy() {
    this.poller.stop();
  }
}

/** A note as a sentence: capitalised, with a full stop. */
function sentence(text) {
  if (!text) return "";
  const t = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(t) ? t : `${t}.`;
}
