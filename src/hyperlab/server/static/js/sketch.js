// The best value so far drawn as plain SVG while plotly.js (4.8 MB) is still loading, so the
// experiment's first view paints in a few hundred milliseconds; plotly redraws it, with zoom
// and hover, once it has loaded. Same data, colors and layout as plots.bestChart.
import { num } from "./format.js";

const NS = "http://www.w3.org/2000/svg";
const MARGIN = { l: 56, r: 16, t: 34, b: 44 };

function el(tag, attrs, text) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

/** About `count` round values across [low, high]. */
function ticks(low, high, count) {
  const span = high - low || Math.abs(high) || 1;
  const raw = span / Math.max(2, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(low / step) * step; v <= high + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

export function bestSketch(box, best, points, { metric, mode }) {
  const width = box.clientWidth || 600;
  const height = box.clientHeight || 280;
  const byTime = best.x === "time";
  const xs = [];
  const ys = [];
  if (points) {
    const [px, py] = points.axes;
    px.values.forEach((x, i) => {
      if (x !== null && py.values[i] !== null) {
        xs.push(x);
        ys.push(py.values[i]);
      }
    });
  }
  const steps = best.points.map((p) => [p.x, p.value]);
  if (steps.length && best.last_x !== null && best.last_x > steps.at(-1)[0]) steps.push([best.last_x, steps.at(-1)[1]]);
  const allX = [...xs, ...steps.map((s) => s[0])];
  const allY = [...ys, ...steps.map((s) => s[1])];
  let [x0, x1] = [Math.min(...allX), Math.max(...allX)];
  let [y0, y1] = [Math.min(...allY), Math.max(...allY)];
  const padX = (x1 - x0 || 1) * 0.04;
  const padY = (y1 - y0 || Math.abs(y1) || 1) * 0.06;
  [x0, x1, y0, y1] = [x0 - padX, x1 + padX, y0 - padY, y1 + padY];
  const sx = (x) => MARGIN.l + ((x - x0) / (x1 - x0)) * (width - MARGIN.l - MARGIN.r);
  const sy = (y) => height - MARGIN.b - ((y - y0) / (y1 - y0)) * (height - MARGIN.t - MARGIN.b);

  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "sketch", role: "img", "aria-label": `best ${metric} so far` });
  const axisText = { "font-size": 12, fill: "#334155", "font-family": "Inter, system-ui, sans-serif" };
  const plotW = width - MARGIN.l - MARGIN.r;
  const plotH = height - MARGIN.t - MARGIN.b;
  for (const t of ticks(y0, y1, Math.floor(plotH / 45))) {
    svg.append(el("line", { x1: MARGIN.l, x2: width - MARGIN.r, y1: sy(t), y2: sy(t), stroke: "#eef0f4" }));
    svg.append(el("text", { x: MARGIN.l - 8, y: sy(t) + 4, "text-anchor": "end", ...axisText }, num(t, 3)));
  }
  const label = (x) => (byTime ? new Date(x * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : num(x));
  for (const t of ticks(x0, x1, Math.floor(plotW / 80)).filter((v) => byTime || Number.isInteger(v))) {
    svg.append(el("line", { x1: sx(t), x2: sx(t), y1: MARGIN.t, y2: height - MARGIN.b, stroke: "#eef0f4" }));
    svg.append(el("text", { x: sx(t), y: height - MARGIN.b + 18, "text-anchor": "middle", ...axisText }, label(t)));
  }
  svg.append(el("line", { x1: MARGIN.l, x2: width - MARGIN.r, y1: height - MARGIN.b, y2: height - MARGIN.b, stroke: "#cbd5e1" }));
  svg.append(el("text", { x: (MARGIN.l + width - MARGIN.r) / 2, y: height - 6, "text-anchor": "middle", ...axisText, fill: "#64748b" }, byTime ? "finished" : "trial"));
  const title = el("text", { x: 14, y: (MARGIN.t + height - MARGIN.b) / 2, "text-anchor": "middle", ...axisText, fill: "#64748b" }, `${metric} (${mode})`);
  title.setAttribute("transform", `rotate(-90 14 ${(MARGIN.t + height - MARGIN.b) / 2})`);
  svg.append(title);
  const dots = el("g", { fill: "#94a3b8", "fill-opacity": 0.55 });
  xs.forEach((x, i) => dots.append(el("circle", { cx: sx(x), cy: sy(ys[i]), r: 2.5 })));
  svg.append(dots);
  if (steps.length) {
    let d = `M${sx(steps[0][0])},${sy(steps[0][1])}`;
    for (let i = 1; i < steps.length; i += 1) d += ` H${sx(steps[i][0])} V${sy(steps[i][1])}`;
    svg.append(el("path", { d, fill: "none", stroke: "#4f46e5", "stroke-width": 2.5 }));
    const marks = el("g", { fill: "#4f46e5" });
    best.points.forEach((p) => marks.append(el("circle", { cx: sx(p.x), cy: sy(p.value), r: 3 })));
    svg.append(marks);
  }
  const legend = el("g", { transform: `translate(${MARGIN.l + 12}, 16)`, ...axisText, "font-size": 11 });
  legend.append(el("circle", { cx: 0, cy: 0, r: 2.5, fill: "#94a3b8" }), el("text", { x: 10, y: 4 }, "trial"));
  legend.append(el("path", { d: "M52,0 H80", stroke: "#4f46e5", "stroke-width": 2.5 }), el("circle", { cx: 66, cy: 0, r: 3, fill: "#4f46e5" }));
  legend.append(el("text", { x: 86, y: 4 }, "best so far"));
  svg.append(legend);
  box.replaceChildren(svg);
  box.dataset.sketch = "true";
}
