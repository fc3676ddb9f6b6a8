// The Pareto front of a multi-objective experiment (GET .../pareto): its trials against two
// objectives (a scatter, the front as a step line), three (scatter3d), or any two or three of
// more (picked in selects; "all" draws parallel coordinates). The front stands out, dominated
// trials are dimmed, infeasible ones are grey crosses; a click opens the trial.
import { exp, get } from "./api.js";
import { h } from "./dom.js";
import { count, num, objectives, param } from "./format.js";
import { ACCENT, draw, plain, purge } from "./plots.js";
import { link } from "./router.js";
import { chartCard, chartMessage, empty, errorBox } from "./ui.js";

const DOMINATED = "#818cf8";
const INFEASIBLE = "#9ca3af";
const ALL = "all"; // the z select's choice for every objective at once (parallel coordinates)
const NONE = "none"; // the z select's choice for a 2-D plot
const MAX_POINTS = 5000; // the front comes first, then the others by number, a page at a time

/** The experiment's front and other trials, up to MAX_POINTS of them: the pages of /pareto. */
async function readFront(id) {
  const answer = await get(`${exp(id)}/pareto`, { limit: 1000 });
  while (answer.trials.length < Math.min(answer.total, MAX_POINTS)) {
    const more = await get(`${exp(id)}/pareto`, { limit: 1000, offset: answer.trials.length });
    if (!more.trials.length) break;
    answer.trials.push(...more.trials);
  }
  // a value that is not finite comes as null: such a trial has no place on these axes
  answer.trials = answer.trials.filter((t) => t.values.every((v) => v !== null));
  return answer;
}

/** A trial's hover text: its number, objectives, constraints and parameters, as plain text. */
function hover(trial, names) {
  const lines = [`<b>#${trial.number}</b>${trial.on_front ? " · on the front" : ""}`];
  names.forEach((name, i) => lines.push(`${plain(name)}: ${num(trial.values[i])}`));
  if (trial.constraints && trial.constraints.length) {
    lines.push(trial.feasible ? "feasible" : `infeasible · violation ${num(trial.violation)}`);
  }
  for (const [key, value] of Object.entries(trial.params || {})) lines.push(`${plain(key)} = ${plain(param(value))}`);
  return lines.join("<br>");
}

/** The trials split into the three traces' groups. */
function groups(trials) {
  return {
    front: trials.filter((t) => t.on_front),
    dominated: trials.filter((t) => !t.on_front && t.feasible !== false),
    infeasible: trials.filter((t) => t.feasible === false),
  };
}

const title = (o) => plain(`${o.metric} (${o.mode})`);

/** A scatter (2-D) or scatter3d (3-D) of the trials on the objectives `axes` (indexes). */
function scatterTraces(answer, axes, names, { full }) {
  const { front, dominated, infeasible } = groups(answer.trials);
  const three = axes.length === 3;
  const type = three ? "scatter3d" : answer.trials.length > 3000 ? "scattergl" : "scatter";
  const coords = (rows) => {
    const out = { x: rows.map((t) => t.values[axes[0]]), y: rows.map((t) => t.values[axes[1]]) };
    if (three) out.z = rows.map((t) => t.values[axes[2]]);
    return out;
  };
  const trace = (name, rows, marker, extra = {}) => ({
    type, mode: "markers", name, ...coords(rows), customdata: rows.map((t) => t.number),
    hovertext: rows.map((t) => hover(t, names)), hoverinfo: "text", marker, ...extra,
  });
  const size = three ? 4 : 7;
  // on two objectives, the step line through the front bounds the region it dominates: sorted
  // by x, it runs along x first when x is minimized (hv), along y first when maximized (vh)
  const line = full && !three;
  const sorted = line ? [...front].sort((a, b) => a.values[axes[0]] - b.values[axes[0]]) : front;
  const xMode = answer.modes[axes[0]];
  return [
    trace("dominated", dominated, { size: three ? 5 : size, color: DOMINATED, opacity: three ? 0.5 : 0.35 }),
    // scatter3d draws its "x" symbol as the emoji ❌ (red, or missing from the fonts): a × in
    // text, and in the legend the "x" of a trace with no point (the legend draws it in SVG)
    ...(three ? [
      trace("infeasible", infeasible, { color: INFEASIBLE }, { mode: "text", text: infeasible.map(() => "×"), textfont: { color: INFEASIBLE, size: 18 }, showlegend: false, legendgroup: "infeasible" }),
      { type, mode: "markers", name: "infeasible", x: [null], y: [null], z: [null], hoverinfo: "skip", legendgroup: "infeasible", marker: { size: 8, symbol: "x", color: INFEASIBLE } },
    ] : [trace("infeasible", infeasible, { size: size + 1, symbol: "x-thin-open", color: INFEASIBLE, opacity: 0.9, line: { width: 2, color: INFEASIBLE } })]),
    trace("Pareto front", sorted, { size: size + 3, color: ACCENT, symbol: "diamond", line: { width: 1, color: "#fff" } },
      line ? { mode: "lines+markers", line: { color: ACCENT, width: 2, shape: xMode === "max" ? "vh" : "hv" } } : {}),
  ];
}

/** Parallel coordinates over every objective, the front colored, the rest dimmed. */
function parallelTraces(answer, names) {
  const rows = answer.trials.filter((t) => t.feasible !== false);
  return [{
    type: "parcoords", name: "objectives",
    line: { color: rows.map((t) => (t.on_front ? 1 : 0)), colorscale: [[0, "#c7d2fe"], [1, ACCENT]], cmin: 0, cmax: 1 },
    labelfont: { size: 12, color: "#1e293b" }, tickfont: { size: 10, color: "#475569" },
    dimensions: names.map((name, i) => ({ label: title({ metric: name, mode: answer.modes[i] }), values: rows.map((t) => t.values[i]) })),
  }];
}

/** The Pareto card of an experiment's page: {el, draw(), destroy()}; `onDrawn` after each draw. */
export function paretoCard(ctx, { height = 420, wide = false, onDrawn = () => {} } = {}) {
  const known = objectives(ctx.record.options);
  const pick = (label, testid, extra = []) => h("select", { class: "input small", "aria-label": label, "data-testid": testid },
    [...extra, ...known.map((o, i) => [String(i), o.metric])].map(([v, text]) => h("option", { value: v }, text)));
  const xSelect = pick("x axis", "pareto-x");
  const ySelect = pick("y axis", "pareto-y");
  const zSelect = pick("z axis", "pareto-z", [[NONE, "no z (2-D)"], [ALL, "all (parallel)"]]);
  xSelect.value = "0";
  ySelect.value = "1";
  zSelect.value = known.length > 2 ? "2" : NONE;
  const tools = known.length > 3 ? [xSelect, ySelect, zSelect] : null; // up to 3: every objective is an axis
  const card = chartCard("Pareto front", { testid: "pareto-chart", tools, height, wide });
  let clicks = false;

  async function drawFront() {
    try {
      const answer = await readFront(ctx.id);
      const names = answer.metrics;
      if (!answer.trials.length) {
        chartMessage(card, empty("No trial with every objective yet", "Each succeeded trial becomes a point here; those no other beats form the front."));
        onDrawn();
        return;
      }
      chartMessage(card, null);
      const k = names.length;
      const z = zSelect.value;
      xSelect.disabled = ySelect.disabled = z === ALL;
      let axes = k > 3 ? [Number(xSelect.value), Number(ySelect.value)] : [...Array(k).keys()];
      if (k > 3 && z !== NONE && z !== ALL) axes.push(Number(z));
      axes = axes.filter((a, i) => axes.indexOf(a) === i); // the same objective twice: once
      const axisOf = (i) => ({ metric: names[i], mode: answer.modes[i] });
      let data;
      const layout = { showlegend: true, legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom", font: { size: 11 } } };
      if (k > 3 && z === ALL) {
        data = parallelTraces(answer, names);
        Object.assign(layout, { showlegend: false, margin: { l: 64, r: 64, t: 52, b: 24 } });
      } else if (axes.length === 3) {
        data = scatterTraces(answer, axes, names, { full: k === 3 });
        layout.scene = Object.fromEntries(["xaxis", "yaxis", "zaxis"].map((key, i) => [key, { title: { text: title(axisOf(axes[i])) }, gridcolor: "#e2e8f0" }]));
        layout.scene.camera = { eye: { x: 1.6, y: 1.6, z: 1.1 } }; // far enough to keep the axis titles in
        layout.margin = { l: 0, r: 0, t: 24, b: 0 };
      } else {
        if (axes.length < 2) axes.push(axes[0] === 0 ? 1 : 0);
        data = scatterTraces(answer, axes.slice(0, 2), names, { full: k === 2 });
        layout.xaxis = { title: { text: title(axisOf(axes[0])) } };
        layout.yaxis = { title: { text: title(axisOf(axes[1])) } };
      }
      await draw(card.plot, data, layout);
      card.plot.dataset.axes = axes.join(",");
      if (!clicks && card.plot.on) {
        clicks = true;
        card.plot.on("plotly_click", (event) => {
          const number = event.points?.[0]?.customdata;
          if (number !== undefined && number !== null) location.hash = link(ctx.id, "trials", number);
        });
      }
      const shown = answer.trials.length < answer.total ? ` (${count(answer.trials.length)} shown)` : "";
      card.note.textContent = `${count(answer.front.length)} of ${count(answer.total)} trials on the front${shown}`
        + `${answer.n_infeasible ? `; ${count(answer.n_infeasible)} infeasible (×)` : ""}`
        + `${k > 3 && z !== ALL ? `; the front is on all ${k} objectives` : ""}.`
        + `${z === ALL && k > 3 ? " The front's lines are dark; infeasible trials are left out." : " Click a point to open its trial."}`;
    } catch (err) {
      chartMessage(card, errorBox(err, "Could not draw the Pareto front"));
    }
    onDrawn();
  }
  for (const s of [xSelect, ySelect, zSelect]) s.addEventListener("change", drawFront);

  return { el: card.el, draw: drawFront, destroy: () => purge(card.plot) };
}
