// Charts drawn with plotly.js (loaded asynchronously by index.html): the best value so far,
// intermediate curves, parallel coordinates, parameter importance, scatter, a trial's reports.
import { num, param } from "./format.js";

export const ACCENT = "#4f46e5";
export const STATUS_COLORS = {
  WAITING: "#94a3b8", RUNNING: "#0284c7", PAUSED: "#0d9488", SUCCEEDED: "#16a34a",
  FAILED: "#dc2626", EARLY_STOPPED: "#d97706", USER_CANCELED: "#64748b", SYS_CANCELED: "#a3a3a3",
};
const PALETTE = [
  "#4f46e5", "#0891b2", "#ea580c", "#16a34a", "#db2777",
  "#7c3aed", "#ca8a04", "#0f766e", "#dc2626", "#475569",
];
const FONT = 'Inter, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

// plotly reads a subset of HTML in every string it draws (axis titles, tick labels, legend
// entries, hover text, parallel-coordinates labels: <a href>, <b>, <br>...), fills in
// %{...} templates in titles and hover text, and then decodes entities; so a metric named
// <a href="...">CLICK</a> would become a live link, and one named %{x} would lose its name.
// Each user string goes through plain() on its way in and is drawn as the text it is; in a
// hovertemplate it comes from the trace's meta, never spelled into the template.
const ENTITIES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "{": "&#123;" };

/** ``text`` as plotly draws it literally: its &, <, > and { written as entities. */
export function plain(text) {
  return String(text).replace(/[&<>{]/g, (c) => ENTITIES[c]);
}
const GRID = "#eef0f4";

// plotly.js is 4.8 MB of script that blocks the page for most of a second while it runs: the
// page preloads it (index.html) but runs it only once the first view is on screen
// (allowPlotly), or at once when a chart is asked for afterwards.
let allowed = null;
const gate = new Promise((resolve) => {
  allowed = resolve;
});
let loading = null;

/** Let plotly.js run (the first view has painted, or the view needs it now). */
export function allowPlotly() {
  allowed();
}

/** plotly.js, once its script has run. */
export function plotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!loading) {
    loading = gate.then(() => new Promise((resolve, reject) => {
      if (window.Plotly) {
        resolve(window.Plotly);
        return;
      }
      const preload = document.getElementById("plotly-js");
      const script = document.createElement("script");
      script.src = preload ? preload.href : "/static/vendor/plotly.min.js";
      script.addEventListener("load", () => resolve(window.Plotly), { once: true });
      script.addEventListener("error", () => reject(new Error("plotly.js could not be loaded")), { once: true });
      document.head.append(script);
    }));
  }
  return loading;
}

function axis(extra = {}) {
  return {
    gridcolor: GRID, zerolinecolor: "#e2e8f0", linecolor: "#cbd5e1", ticks: "outside",
    tickcolor: "#cbd5e1", ticklen: 4, automargin: true, title: { font: { size: 12, color: "#64748b" } },
    ...extra,
  };
}

function layout(extra = {}) {
  return {
    margin: { l: 56, r: 16, t: 10, b: 44 },
    font: { family: FONT, size: 12, color: "#334155" },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    hoverlabel: { bgcolor: "#fff", bordercolor: "#cbd5e1", font: { family: FONT, color: "#0f172a" } },
    legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom", font: { size: 11 } },
    showlegend: false,
    ...extra,
    xaxis: axis(extra.xaxis),
    yaxis: axis(extra.yaxis),
  };
}

const CONFIG = {
  responsive: true,
  displaylogo: false,
  modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d", "toggleSpikelines"],
};

/** Draw (or redraw in place) a chart; resolves once it is on the page. */
export async function draw(el, data, extraLayout = {}) {
  const Plotly = await plotly();
  if (!el.isConnected) return;
  if (el.dataset.sketch) { // a quick SVG stood in while plotly.js loaded
    el.replaceChildren();
    delete el.dataset.sketch;
  }
  await Plotly.react(el, data, layout(extraLayout), CONFIG);
  el.dataset.drawn = "true";
}

export function purge(el) {
  if (window.Plotly && el) window.Plotly.purge(el);
}

const toDate = (epoch) => new Date(epoch * 1000);

/** The best value so far (a step line) over every trial's value (points). */
export function bestChart(el, best, points, { metric, mode }) {
  const byTime = best.x === "time";
  const conv = byTime ? toDate : (x) => x;
  const data = [];
  if (points && points.numbers.length) {
    const [xs, ys] = points.axes;
    data.push({
      type: points.numbers.length > 3000 ? "scattergl" : "scatter", mode: "markers", name: "trial",
      x: xs.values.map((x) => (x === null ? null : conv(x))), y: ys.values,
      text: points.numbers.map((n) => `#${n}`),
      marker: { size: 5, color: "#94a3b8", opacity: 0.55 },
      hovertemplate: "%{text}<br>%{y:.4g}<extra></extra>",
    });
  }
  const xs = best.points.map((p) => conv(p.x));
  const ys = best.points.map((p) => p.value);
  if (best.points.length && best.last_x !== null && best.last_x > best.points.at(-1).x) {
    xs.push(conv(best.last_x));
    ys.push(best.points.at(-1).value);
  }
  data.push({
    type: "scatter", mode: "lines+markers", name: "best so far", x: xs, y: ys,
    line: { color: ACCENT, width: 2.5, shape: "hv" },
    marker: { size: best.points.map((_, i) => (i < best.points.length ? 6 : 0)), color: ACCENT },
    text: best.points.map((p) => `#${p.number}`),
    hovertemplate: "best so far %{y:.4g}<br>%{text}<extra></extra>",
  });
  const span = byTime ? 0 : Math.max(...xs, 0);
  return draw(el, data, {
    showlegend: true,
    xaxis: { title: { text: byTime ? "finished" : "trial" }, type: byTime ? "date" : "linear", ...(byTime ? {} : wholeTicks(span)) },
    yaxis: { title: { text: `${plain(metric)} (${mode})` } },
  });
}

/** Intermediate curves; early-stopped and paused trials end with a marker where they stopped. */
export function curvesChart(el, curves, { metric, selected = new Set() }) {
  const data = [];
  const stops = { EARLY_STOPPED: { x: [], y: [], text: [] }, PAUSED: { x: [], y: [], text: [] } };
  curves.forEach((curve, i) => {
    const color = PALETTE[i % PALETTE.length];
    const mine = selected.has(curve.number);
    data.push({
      type: "scatter", mode: curve.steps.length > 1 ? "lines" : "markers",
      name: `#${curve.number}${curve.value !== null ? ` · ${num(curve.value)}` : ""}`,
      x: curve.steps, y: curve.values,
      line: { color, width: mine ? 2.6 : 1.6, dash: curve.status === "RUNNING" ? "dot" : "solid" },
      marker: { color, size: 5 },
      hovertemplate: `#${curve.number} (${curve.status.toLowerCase()})<br>step %{x}: %{y:.4g}<extra></extra>`,
    });
    if (curve.stopped_at_step !== null && stops[curve.status]) {
      const at = curve.steps.lastIndexOf(curve.stopped_at_step);
      const y = at >= 0 ? curve.values[at] : curve.values.at(-1);
      if (y !== undefined) {
        stops[curve.status].x.push(curve.stopped_at_step);
        stops[curve.status].y.push(y);
        stops[curve.status].text.push(`#${curve.number}`);
      }
    }
  });
  const marks = { EARLY_STOPPED: ["x", "early stopped"], PAUSED: ["diamond-open", "paused"] };
  for (const [status, [symbol, label]] of Object.entries(marks)) {
    if (!stops[status].x.length) continue;
    data.push({
      type: "scatter", mode: "markers", name: label, ...stops[status],
      marker: { symbol, size: 10, color: STATUS_COLORS[status], line: { width: 2, color: STATUS_COLORS[status] } },
      hovertemplate: `%{text} ${label} at step %{x}<extra></extra>`,
    });
  }
  return draw(el, data, {
    showlegend: true,
    legend: { orientation: "v", x: 1.01, y: 1, yanchor: "top", font: { size: 11 } },
    margin: { l: 56, r: 8, t: 10, b: 44 },
    xaxis: { title: { text: "step" }, ...wholeTicks(Math.max(0, ...curves.map((c) => c.steps.at(-1) ?? 0))) },
    yaxis: { title: { text: metric ? plain(metric) : "" } },
  });
}

/** Ticks at whole numbers only, for trial numbers and steps over a short range. */
function wholeTicks(span) {
  return span < 8 ? { dtick: 1, tick0: 0 } : { tickformat: ",d" };
}

function dimension(axisData, label) {
  const values = axisData.values;
  if (axisData.kind === "choice") {
    const options = axisData.options;
    const labels = options.map((o) => param(o)); // parcoords draws its ticks as plain text
    const index = new Map(options.map((o, i) => [JSON.stringify(o), i]));
    return {
      label: plain(label), values: values.map((v) => index.get(JSON.stringify(v)) ?? -1),
      tickvals: options.map((_, i) => i), ticktext: labels, range: [-0.3, Math.max(0.3, options.length - 0.7)],
    };
  }
  if (axisData.scale === "log") {
    const logs = values.map((v) => (v > 0 ? Math.log10(v) : null));
    const finite = logs.filter((v) => v !== null);
    const low = Math.floor(Math.min(...finite));
    const high = Math.ceil(Math.max(...finite));
    const ticks = [];
    for (let p = low; p <= high; p += 1) ticks.push(p);
    return { label: `${plain(label)} (log)`, values: logs, tickvals: ticks, ticktext: ticks.map((p) => num(10 ** p)) };
  }
  return { label: plain(label), values };
}

/** Parallel coordinates: one axis per parameter, then the objective (which colors the lines). */
export function parallelChart(el, columns, { target, mode }) {
  const axes = columns.axes;
  const keep = columns.numbers.map((_, row) => axes.every((a) => a.values[row] !== null && a.values[row] !== undefined));
  const pick = (a) => ({ ...a, values: a.values.filter((_, row) => keep[row]) });
  const kept = axes.map(pick);
  const goal = kept.at(-1);
  const dims = kept.map((a, i) => dimension(a, i === kept.length - 1 ? target : a.key.replace(/^param\./, "")));
  return draw(el, [{
    type: "parcoords",
    line: {
      color: goal.values, colorscale: [[0, "#312e81"], [0.35, "#6366f1"], [0.7, "#ec4899"], [1, "#f59e0b"]],
      reversescale: mode === "max", showscale: true,
      colorbar: { thickness: 10, len: 0.8, outlinewidth: 0, tickfont: { size: 10 } },
    },
    labelfont: { size: 12, color: "#1e293b" }, tickfont: { size: 10, color: "#475569" },
    rangefont: { size: 1, color: "rgba(0,0,0,0)" }, // the axes' ticks say enough
    dimensions: dims,
  }], { margin: { l: 64, r: 64, t: 52, b: 24 } });
}

/** Parameter importance as horizontal bars, the most important on top. */
export function importanceChart(el, result) {
  const rows = [...result.params].reverse();
  return draw(el, [{
    type: "bar", orientation: "h",
    x: rows.map((r) => r.importance), y: rows.map((r) => plain(r.name)),
    marker: { color: ACCENT },
    text: rows.map((r) => `${(r.importance * 100).toFixed(1)}%`), textposition: "outside", cliponaxis: false,
    hovertemplate: "%{y}: %{x:.3f}<extra></extra>",
  }], {
    margin: { l: 90, r: 48, t: 8, b: 36 },
    xaxis: { title: { text: "importance (share of explained variation)" }, range: [0, Math.min(1, Math.max(...rows.map((r) => r.importance), 0.05) * 1.25)] },
    yaxis: { ticks: "", gridcolor: "rgba(0,0,0,0)" },
    bargap: 0.35,
  });
}

/** One quantity against another (scattergl: fine with many points); choices get a little
 * horizontal jitter so overlapping points show their density. */
export function scatterChart(el, columns, { xLabel, yLabel }) {
  const [xa, ya] = columns.axes;
  let xs = xa.values;
  const xaxis = { title: { text: plain(xLabel) } };
  if (xa.kind === "choice") {
    const index = new Map(xa.options.map((o, i) => [JSON.stringify(o), i]));
    xs = xs.map((v, row) => (index.get(JSON.stringify(v)) ?? 0) + jitter(columns.numbers[row]));
    Object.assign(xaxis, { tickvals: xa.options.map((_, i) => i), ticktext: xa.options.map((o) => plain(param(o))) });
  } else if (xa.scale === "log") {
    xaxis.type = "log";
  }
  return draw(el, [{
    type: columns.numbers.length > 1000 ? "scattergl" : "scatter", mode: "markers", x: xs, y: ya.values,
    text: columns.numbers.map((n, i) => `#${n} · ${columns.statuses[i].toLowerCase()}`),
    customdata: columns.numbers, meta: [plain(xLabel), plain(yLabel)],
    marker: { size: 6, color: columns.statuses.map((s) => STATUS_COLORS[s] || ACCENT), opacity: 0.7 },
    hovertemplate: "%{text}<br>%{meta[0]}: %{x:.4g}<br>%{meta[1]}: %{y:.4g}<extra></extra>",
  }], { xaxis, yaxis: { title: { text: plain(yLabel) }, type: ya.scale === "log" ? "log" : "linear" } });
}

function jitter(n) {
  const x = Math.sin(n * 12.9898) * 43758.5453;
  return (x - Math.floor(x) - 0.5) * 0.3;
}

/** A trial's intermediate reports of one metric, over steps (one line per attempt). */
export function reportsChart(el, reports, metric) {
  const attempts = [...new Set(reports.map((r) => r.attempt))];
  const data = attempts.map((attempt, i) => {
    const rows = reports.filter((r) => r.attempt === attempt && typeof r.metrics[metric] === "number");
    return {
      type: "scatter", mode: rows.length > 60 ? "lines" : "lines+markers",
      name: `attempt ${attempt}`, x: rows.map((r) => r.step), y: rows.map((r) => r.metrics[metric]),
      line: { color: PALETTE[i % PALETTE.length], width: 2 }, marker: { size: 5 },
      hovertemplate: `step %{x}: %{y:.4g}<extra>attempt ${attempt}</extra>`,
    };
  });
  return draw(el, data, {
    showlegend: attempts.length > 1,
    xaxis: { title: { text: "step" }, ...wholeTicks(Math.max(0, ...reports.map((r) => r.step))) },
    yaxis: { title: { text: plain(metric) } },
  });
}
