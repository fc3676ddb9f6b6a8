// The Plots tab: the Pareto front (several objectives), curves of the picked and the best trials,
// parallel coordinates, parameter importance, and any parameter or metric against the objective.
import { exp, get } from "./api.js";
import { h } from "./dom.js";
import { count, firstMode, isMultiObjective, objectiveMetric } from "./format.js";
import { paretoCard } from "./pareto.js";
import { curvesChart, importanceChart, parallelChart, purge, scatterChart } from "./plots.js";
import { link } from "./router.js";
import { chartCard, chartMessage, empty, errorBox } from "./ui.js";

const CHART_PACE = 8000; // ms: the analysis charts redraw at most this often while trials change

/** The numbers of the latest `n` trials (numbers are 0, 1, 2... in creation order). */
export function latest(ctx, n) {
  const total = ctx.record.n_trials || 0;
  const out = [];
  for (let i = total - 1; i >= Math.max(0, total - n); i -= 1) out.push(i);
  return out;
}

export function plotsTab(el, ctx) {
  const options = ctx.record.options;
  const target = objectiveMetric(options, ctx.metrics) || "value"; // NNI's: default
  const select = (label, choices, value, testid) => h("select", { class: "input small", "aria-label": label, "data-testid": testid },
    choices.map(([v, text]) => h("option", { value: v, selected: v === value }, text)));

  // ---- curves ----
  const metricNames = () => [...ctx.metrics].sort((a, b) => (a === target ? -1 : b === target ? 1 : a.localeCompare(b)));
  const curveMetric = select("Metric", [], null, "curves-metric");
  /** The metrics known now, the chosen one kept: trials report more as they run, and when none
   * was chosen (an experiment without a metric option, as NNI's), the server names the metric
   * it drew (`shown`). */
  const fillMetrics = (shown) => {
    if (shown) ctx.metrics.add(shown);
    const names = metricNames();
    const value = curveMetric.value || shown || target;
    curveMetric.replaceChildren(...names.map((m) => h("option", { value: m, selected: m === value }, m)));
    curveMetric.value = names.includes(value) ? value : names[0] || "";
    curveMetric.hidden = !names.length;
  };
  fillMetrics(null);
  const topN = select("Which trials", [
    ["top:10", "best 10"], ["top:20", "best 20"], ["mix:5", "best 5 and latest 5"],
    ["latest:10", "latest 10"], ["latest:20", "latest 20"], ["top:0", "picked only"],
  ], "mix:5", "curves-top");
  if (ctx.selected.size) topN.value = "top:0";
  const curves = chartCard("Intermediate curves", { testid: "curves-chart", tools: [curveMetric, topN], height: 340, wide: true });
  async function drawCurves() {
    const picked = [...ctx.selected].slice(0, 80);
    const [kind, n] = topN.value.split(":");
    const size = Number(n);
    const numbers = [...picked, ...(kind === "latest" || kind === "mix" ? latest(ctx, size) : [])];
    try {
      const answer = await get(`${exp(ctx.id)}/plots/curves`, {
        trials: numbers.length ? [...new Set(numbers)].join(",") : null,
        top: kind === "latest" ? 0 : size, metric: curveMetric.value || null,
      });
      fillMetrics(answer.metric);
      const shown = answer.curves.filter((c) => c.steps.length);
      curves.note.replaceChildren(picked.length
        ? h("span", null, `${picked.length} picked in the `, h("a", { href: link(ctx.id, "trials") }, "trials table"), " (thicker lines). ✕ marks where an early-stopped trial was stopped, ◇ a paused one; running trials are dotted.")
        : h("span", null, "Pick trials in the ", h("a", { href: link(ctx.id, "trials") }, "trials table"), " to compare their curves here. ✕ marks where an early-stopped trial was stopped, ◇ a paused one; running trials are dotted."));
      if (!shown.length) {
        chartMessage(curves, empty("No curves to draw", numbers.length || size
          ? `None of these trials reported ${answer.metric || "a metric"} yet.` : "Pick trials in the table, or show the best ones."));
      } else {
        chartMessage(curves, null);
        await curvesChart(curves.plot, shown, { metric: answer.metric, selected: new Set(picked) });
      }
    } catch (err) {
      chartMessage(curves, errorBox(err, "Could not draw the curves"));
    }
  }
  curveMetric.addEventListener("change", drawCurves);
  topN.addEventListener("change", drawCurves);

  // ---- parallel coordinates ----
  const parallel = chartCard("Parameters against the objective", { testid: "parallel-chart", height: 360, wide: true });
  async function drawParallel() {
    try {
      const columns = await get(`${exp(ctx.id)}/plots/parallel`, { target: "value", max_points: 1000 });
      if (!columns.numbers.length) {
        chartMessage(parallel, empty("Nothing to draw yet", "Each finished trial with a value becomes a line here."));
        return;
      }
      chartMessage(parallel, null);
      await parallelChart(parallel.plot, columns, { target, mode: firstMode(options) });
      parallel.note.textContent = `${count(columns.numbers.length)} trials${columns.sampled ? ` (an even sample of ${count(columns.total)})` : ""}; drag along an axis to pick a range.`;
    } catch (err) {
      chartMessage(parallel, errorBox(err, "Could not draw the parallel coordinates"));
    }
  }

  // ---- importance ----
  const importance = chartCard("Parameter importance", { testid: "importance-chart", height: Math.max(200, 60 + 34 * ctx.params.length) });
  async function drawImportance() {
    try {
      const result = await get(`${exp(ctx.id)}/plots/importance`, { target: "value" });
      if (!result.params.length || !result.n_used) {
        chartMessage(importance, empty("Not enough trials yet", "Importance is fitted on the succeeded trials."));
        return;
      }
      chartMessage(importance, null);
      await importanceChart(importance.plot, result);
      importance.note.textContent = `Random forest on ${count(result.n_used)} succeeded trials${result.sampled ? " (a sample)" : ""}.`;
    } catch (err) {
      if (err.status === 501) {
        chartMessage(importance, h("div", { class: "callout callout-muted", "data-testid": "importance-unavailable" }, h("div", null, err.detail)));
      } else {
        chartMessage(importance, errorBox(err, "Could not compute the importance"));
      }
    }
  }

  // ---- scatter ----
  const axisChoices = () => [
    ...ctx.params.map((p) => [`param.${p.name}`, p.name]),
    ...[...ctx.metrics].filter((m) => m !== target).map((m) => [`metric.${m}`, `${m} (metric)`]),
    ["duration", "duration"], ["number", "trial number"],
  ];
  const xSelect = select("x axis", axisChoices(), axisChoices()[0]?.[0], "scatter-x");
  const ySelect = select("y axis", [["value", target], ...[...ctx.metrics].filter((m) => m !== target).map((m) => [`metric.${m}`, m])], "value", "scatter-y");
  const scatter = chartCard("One quantity against another", { testid: "scatter-chart", tools: [xSelect, h("span", { class: "muted small" }, "against"), ySelect], height: Math.max(200, 60 + 34 * ctx.params.length) });
  async function drawScatter() {
    try {
      const columns = await get(`${exp(ctx.id)}/plots/scatter`, { x: xSelect.value, y: ySelect.value, max_points: 5000 });
      if (!columns.numbers.length) {
        chartMessage(scatter, empty("Nothing to draw yet", "Finished trials with both values show here."));
        return;
      }
      chartMessage(scatter, null);
      const label = (s) => s.options[s.selectedIndex].text;
      await scatterChart(scatter.plot, columns, { xLabel: label(xSelect), yLabel: label(ySelect) });
      scatter.note.textContent = `${count(columns.numbers.length)} trials${columns.sampled ? ` (an even sample of ${count(columns.total)})` : ""}, colored by status.`;
    } catch (err) {
      chartMessage(scatter, errorBox(err, "Could not draw the scatter plot"));
    }
  }
  xSelect.addEventListener("change", drawScatter);
  ySelect.addEventListener("change", drawScatter);

  const front = isMultiObjective(options) ? paretoCard(ctx, { height: 480, wide: true }) : null;
  const all = () => {
    if (front) front.draw();
    drawCurves();
    drawParallel();
    drawImportance();
    drawScatter();
  };
  let chartsAt = Date.now();
  let timer = null;
  const onChanges = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      chartsAt = Date.now();
      all();
    }, Math.max(0, chartsAt + CHART_PACE - Date.now()));
  };
  ctx.bus.addEventListener("changes", onChanges);
  ctx.bus.addEventListener("selection", drawCurves);
  const curvesTimer = setInterval(() => {
    if (ctx.record.driver_alive && !document.hidden) drawCurves();
  }, CHART_PACE);

  el.append(h("div", { class: "stack", "data-testid": "plots-tab" },
    front ? front.el : null, curves.el, parallel.el, h("div", { class: "grid-2" }, importance.el, scatter.el)));
  all();

  return {
    destroy: () => {
      ctx.bus.removeEventListener("changes", onChanges);
      ctx.bus.removeEventListener("selection", drawCurves);
      clearTimeout(timer);
      clearInterval(curvesTimer);
      for (const card of [curves, parallel, importance, scatter]) purge(card.plot);
      if (front) front.destroy();
    },
  };
}
