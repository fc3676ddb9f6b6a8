// The experiment's header: name, id, status, progress against the budget, the best trial,
// trials by status, time spent; its controls; and why it is read-only when it is.
import { renderControls } from "./controls.js";
import { h, replace } from "./dom.js";
import {
  ENDED_ON_THEIR_OWN, TRIAL_STATUSES, count, duration, experimentBadge, isLive, isMultiObjective, num,
  objectiveName, objectives, param, statusLabel, timeEl,
} from "./format.js";
import { link } from "./router.js";
import { authNotice, bar, copyButton, stat } from "./ui.js";

export function elapsed(ctx) {
  const record = ctx.record;
  const extra = isLive(record) && record.status === "RUNNING" ? Date.now() / 1000 - ctx.fetchedAt : 0;
  return record.elapsed + Math.max(0, extra);
}

/** Draw the header of `ctx.record` into `el`; called after every poll, it redraws only what
 * changed (so focus stays where it is), and the controls only when what they allow changes. */
export function renderHeader(el, ctx) {
  const record = ctx.record;
  if (!el.parts) {
    el.parts = {
      badge: h("span"), name: h("h1", { "data-testid": "experiment-name" }),
      controls: h("div", { class: "exp-controls" }), stats: h("div", { class: "stats" }), notices: h("div"),
    };
    const p = el.parts;
    replace(el,
      h("div", { class: "exp-title-row" },
        h("div", { class: "exp-title" },
          h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "#/" }, "Experiments"), h("span", null, "/")),
          h("div", { class: "exp-name-row" }, p.name, p.badge,
            h("span", { class: "mono muted", "data-testid": "experiment-id" }, record.id),
            copyButton(record.id, "Copy the experiment id"))),
        p.controls),
      p.stats, p.notices);
  }
  const p = el.parts;
  const live = isLive(record);
  p.name.textContent = record.name || record.id;
  const status = `${record.status}:${record.driver_lost}`;
  if (status !== p.status) {
    p.status = status;
    replace(p.badge, experimentBadge(record));
  }
  const allowed = JSON.stringify([live, record.status, ctx.session?.can_write, record.options]);
  if (allowed !== p.allowed) {
    p.allowed = allowed;
    renderControls(p.controls, ctx);
    replace(p.notices, notices(ctx, live));
  }
  const shown = JSON.stringify([record.counts, record.best, record.status, record.options, record.n_trials, record.finished_at, record.error]);
  if (shown !== p.shown) {
    p.shown = shown;
    replace(p.stats, ...stats(ctx));
  }
}

function stats(ctx) {
  const record = ctx.record;
  const options = record.options;
  const counts = record.counts || {};
  const done = ENDED_ON_THEIR_OWN.reduce((sum, s) => sum + (counts[s] || 0), 0);
  const progress = [];
  if (options.max_trials) {
    progress.push(h("div", { class: "progress", "data-testid": "progress-trials" },
      bar(done / options.max_trials, { kind: `e-${record.status}`, label: "trials done" }),
      h("span", { class: "num-text" }, `${count(done)} / ${count(options.max_trials)} trials`)));
  }
  if (options.max_duration) {
    progress.push(h("div", { class: "progress", "data-testid": "progress-time" },
      bar(elapsed(ctx) / options.max_duration, { kind: `e-${record.status}`, label: "time spent" }),
      h("span", { class: "num-text", "data-clock": "budget" }, `${duration(elapsed(ctx))} / ${duration(options.max_duration)}`)));
  }
  if (!progress.length) progress.push(h("span", null, `${count(done)} trials done`));
  const best = record.best;
  const bestValue = best
    ? h("div", null,
      h("a", { href: link(record.id, "trials", best.number), class: "best-value", "data-testid": "best-value" }, num(best.value, 5)),
      h("span", { class: "muted" }, ` trial #${best.number}`))
    : h("span", { class: "muted", "data-testid": "best-value" }, "no trial has succeeded yet");
  const bestParams = best
    ? h("div", { class: "param-list", "data-testid": "best-params" },
      Object.entries(best.params).map(([k, v]) => h("span", { class: "param-pill" }, h("span", { class: "muted" }, `${k} `), param(v))))
    : null;
  return [
    stat("Progress", h("div", { class: "progress-stack" }, progress), { testid: "progress" }),
    isMultiObjective(options) ? objectivesStat(record) : stat(`Best ${objectiveName(options)}`, bestValue, { sub: bestParams, testid: "best" }),
    stat("Trials", trialCounts(record), { testid: "trial-counts" }),
    stat("Time", h("span", { "data-clock": "elapsed" }, duration(elapsed(ctx))), {
      testid: "elapsed",
      sub: h("span", null, "started ", timeEl(record.started_at ?? record.created_at),
        record.finished_at ? h("span", null, " · ended ", timeEl(record.finished_at)) : null,
        ` · concurrency ${options.concurrency}`),
    }),
  ];
}

/** Several objectives have no single best: which they are, the constraints, a link to the front. */
function objectivesStat(record) {
  const options = record.options;
  const names = objectives(options).map((o) => h("span", { class: "param-pill" }, o.metric, h("span", { class: "muted" }, ` ${o.mode}`)));
  const limits = (options.constraints || []).map((c) => h("span", { class: "param-pill mono" }, c));
  return stat("Objectives", h("div", { class: "param-list" }, names), {
    testid: "objectives",
    sub: h("div", null, limits.length ? h("div", { class: "param-list" }, h("span", { class: "muted" }, "subject to "), limits) : null,
      h("a", { href: link(record.id), class: "link" }, "the Pareto front")),
  });
}

/** Update the running clocks only (every second). */
export function updateClock(el, ctx) {
  const spent = elapsed(ctx);
  const clock = el.querySelector('[data-clock="elapsed"]');
  if (clock) clock.textContent = duration(spent);
  const budget = el.querySelector('[data-clock="budget"]');
  if (budget) budget.textContent = `${duration(spent)} / ${duration(ctx.record.options.max_duration)}`;
}

function trialCounts(record) {
  const counts = record.counts || {};
  const total = record.n_trials || 0;
  const present = TRIAL_STATUSES.filter((s) => counts[s]);
  return h("div", { class: "counts" },
    h("div", { class: "count-total" }, h("span", { class: "big", "data-testid": "trial-total" }, count(total)), " trials"),
    total ? h("div", { class: "stacked", role: "img", "aria-label": present.map((s) => `${counts[s]} ${statusLabel(s)}`).join(", ") },
      present.map((s) => h("span", { class: `seg s-${s}`, style: { flexGrow: counts[s] }, title: `${counts[s]} ${statusLabel(s)}` }))) : null,
    h("div", { class: "legend" }, present.map((s) => h("span", { class: "legend-item", "data-status": s },
      h("span", { class: `dot s-${s}` }), `${count(counts[s])} ${statusLabel(s)}`))));
}

function notices(ctx, live) {
  const record = ctx.record;
  const out = [];
  if (record.error) {
    out.push(h("div", { class: "callout callout-error", "data-testid": "experiment-error" },
      h("div", null, h("strong", null, "The experiment ended with an error"), h("pre", { class: "error-text" }, record.error))));
  }
  if (record.driver_lost) {
    out.push(h("div", { class: "callout callout-warn", "data-testid": "driver-lost" },
      h("div", null, h("strong", null, "Driver lost. "),
        `It says ${record.status} but no driver runs it (pid ${record.driver_pid} on ${record.driver_host} is gone). `,
        h("code", null, `hyperlab resume ${record.id}`), " continues it.")));
  } else if (!live) {
    out.push(h("div", { class: "callout callout-muted", "data-testid": "read-only" },
      h("div", null, h("strong", null, "Read-only: "), "no driver runs this experiment, so it cannot be steered. ",
        record.status.match(/STOPPED|ERROR|INITIALIZED/) ? h("span", null, h("code", null, `hyperlab resume ${record.id}`), " continues it.") : null)));
  } else if (ctx.session && !ctx.session.can_write) {
    out.push(authNotice(ctx.session.how));
  }
  return out.length ? h("div", { class: "notices" }, out) : null;
}
