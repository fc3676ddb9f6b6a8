// The Overview tab: the best value so far (the Pareto front for several objectives), the curves
// of the best trials, the top trials.
import { exp, get } from "./api.js";
import { h } from "./dom.js";
import { isMultiObjective } from "./format.js";
import { paretoCard } from "./pareto.js";
import { bestChart, curvesChart, purge } from "./plots.js";
import { bestSketch } from "./sketch.js";
import { latest } from "./plots-tab.js";
import { link } from "./router.js";
import { TrialsTable } from "./trials-table.js";
import { chartCard, chartMessage, empty, errorBox } from "./ui.js";

const CHART_PACE = 5000; // ms: charts redraw at most this often while trials change

export function summaryTab(el, ctx) {
  const options = ctx.record.options;
  const metric = options.metric || "value";
  let x = "number";
  const toggle = h("div", { class: "segmented", role: "group", "aria-label": "x axis" },
    ["number", "time"].map((kind) => h("button", {
      type: "button", class: "seg-button", "aria-pressed": kind === x ? "true" : "false", "data-x": kind,
      onclick: (event) => {
        x = kind;
        for (const b of event.target.parentElement.children) b.setAttribute("aria-pressed", b.dataset.x === x ? "true" : "false");
        drawBest();
      },
    }, kind === "number" ? "by trial" : "over time")));
  const best = chartCard("Best value so far", { testid: "best-chart", tools: toggle, height: 280 });
  const curves = chartCard("Intermediate curves: best 5 and latest 5", { testid: "curves-chart", height: 280 });
  // several objectives have no single best value: their Pareto front takes the best chart's place
  const front = isMultiObjective(options) ? paretoCard(ctx, { height: 380, onDrawn: () => ctx.drawn("chart") }) : null;
  const drawFirst = front ? front.draw : () => drawBest();
  const table = new TrialsTable(ctx, { sort: "value", limit: 10, compact: true, onDrawn: () => ctx.drawn("table") });
  const top = h("section", { class: "card flush", "data-testid": "top-trials" },
    // with several objectives no trial is best: the table ranks by the first objective
    h("div", { class: "card-head padded" }, h("h2", null, front ? `Top trials by ${[].concat(metric)[0]}` : "Top trials"),
      h("a", { href: link(ctx.id, "trials"), class: "link", "data-testid": "all-trials" }, "All trials →")),
    table.el);

  async function drawBest() {
    try {
      const [series, points] = await Promise.all([
        get(`${exp(ctx.id)}/plots/best`, { x }),
        get(`${exp(ctx.id)}/plots/scatter`, { x: x === "time" ? "finished" : "number", y: "value", max_points: 2000 }),
      ]);
      if (!series.points.length) {
        chartMessage(best, empty("No succeeded trial yet", "The best value shows here once a trial succeeds."));
      } else {
        chartMessage(best, null);
        const args = [best.plot, series, points, { metric, mode: options.mode }];
        best.note.textContent = `${series.n_trials.toLocaleString("en-US")} succeeded trials${points.sampled ? `; points: an even sample of ${points.numbers.length.toLocaleString("en-US")}` : ""}`;
        if (!window.Plotly && !best.plot.dataset.drawn) {
          bestSketch(...args); // on screen now; plotly redraws it once loaded
          ctx.drawn("chart");
        }
        await bestChart(...args);
      }
    } catch (err) {
      if (best.plot.dataset.sketch) best.note.textContent = `Shown without zoom: ${err.message}`;
      else chartMessage(best, errorBox(err, "Could not draw the best value"));
    }
    ctx.drawn("chart");
  }

  async function drawCurves() {
    try {
      const answer = await get(`${exp(ctx.id)}/plots/curves`, { top: 5, trials: latest(ctx, 5).join(",") || null });
      const drawnCurves = answer.curves.filter((c) => c.steps.length);
      if (!drawnCurves.length) {
        chartMessage(curves, empty("No intermediate results yet", "Trials that call hyperlab.report(...) draw their curves here."));
      } else {
        chartMessage(curves, null);
        await curvesChart(curves.plot, drawnCurves, { metric: answer.metric });
      }
    } catch (err) {
      chartMessage(curves, errorBox(err, "Could not draw the curves"));
    }
  }

  let chartsAt = 0;
  let timer = null;
  const refreshCharts = () => {
    clearTimeout(timer);
    const wait = chartsAt + CHART_PACE - Date.now();
    timer = setTimeout(() => {
      chartsAt = Date.now();
      drawFirst();
      drawCurves();
    }, Math.max(0, wait));
  };
  const onChanges = () => {
    table.changed();
    refreshCharts();
  };
  ctx.bus.addEventListener("changes", onChanges);
  // curves of running trials grow without status changes: redraw them at the charts' pace
  const curvesTimer = setInterval(() => {
    if (ctx.record.driver_alive && !document.hidden) drawCurves();
  }, CHART_PACE);

  el.append(h("div", { class: "stack", "data-testid": "overview-tab" },
    h("div", { class: "grid-2" }, front ? front.el : best.el, curves.el),
    top));
  chartsAt = Date.now();
  table.load();
  drawFirst();
  drawCurves();

  return {
    destroy: () => {
      ctx.bus.removeEventListener("changes", onChanges);
      clearTimeout(timer);
      clearInterval(curvesTimer);
      table.destroy();
      purge(best.plot);
      if (front) front.destroy();
      purge(curves.plot);
    },
  };
}
