// How numbers, durations, times, parameters and statuses read on the page.
import { h } from "./dom.js";

const DASH = "–";
const INTEGER = new Intl.NumberFormat("en-US");

/** A number with `digits` significant digits: 0.001234, 12.35, 1.23e-6, 123,457. */
export function num(value, digits = 4) {
  if (value === null || value === undefined || value === "") return DASH;
  if (typeof value === "bigint") return value.toString(); // beyond 2^53 (json.js): every digit
  if (typeof value !== "number") return String(value);
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) && Math.abs(value) < 1e15) return INTEGER.format(value);
  const size = Math.abs(value);
  if (size !== 0 && (size < 1e-3 || size >= 1e6)) {
    return value.toExponential(Math.max(0, digits - 2)).replace(/\.?0+e/, "e");
  }
  if (size >= 10 ** digits) return INTEGER.format(Math.round(value));
  return String(Number(value.toPrecision(digits)));
}

/** A whole count: 100,000. */
export function count(value) {
  return value === null || value === undefined ? DASH : INTEGER.format(value);
}

/** Seconds as people say them: 450ms, 12.3s, 1m 12s, 2h 05m, 3d 4h. */
export function duration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return DASH;
  const s = Math.max(0, seconds);
  if (s < 0.001) return s === 0 ? "0s" : "<1ms";
  if (s < 1) return `${Math.round(s * 1000)}ms`;
  if (s < 10) return `${s.toFixed(1)}s`;
  if (s < 60) return `${Math.floor(s)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(Math.floor(s % 60)).padStart(2, "0")}s`;
  const hours = Math.floor(m / 60);
  if (hours < 24) return `${hours}h ${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/** An epoch time as "12s ago", "5m ago", "3h ago", "2d ago" (or "in 5m"). */
export function relative(epoch, now = Date.now() / 1000) {
  if (epoch === null || epoch === undefined) return DASH;
  const delta = now - epoch;
  if (Math.abs(delta) < 5) return "just now";
  const text = duration(Math.abs(delta)).split(" ")[0];
  return delta > 0 ? `${text} ago` : `in ${text}`;
}

/** An epoch time in full, in the browser's locale. */
export function absolute(epoch) {
  if (epoch === null || epoch === undefined) return DASH;
  return new Date(epoch * 1000).toLocaleString(undefined, {
    year: "numeric", month: "short", day: "numeric",
    hour: "2-digit", minute: "2-digit", second: "2-digit",
  });
}

/** A <time> showing a relative time, the absolute one on hover (kept fresh by tickTimes). */
export function timeEl(epoch) {
  if (epoch === null || epoch === undefined) return h("span", { class: "muted" }, DASH);
  return h("time", {
    datetime: new Date(epoch * 1000).toISOString(),
    title: absolute(epoch),
    "data-epoch": epoch,
  }, relative(epoch));
}

/** Refresh every relative time on the page. */
export function tickTimes(root = document) {
  const now = Date.now() / 1000;
  for (const el of root.querySelectorAll("time[data-epoch]")) {
    el.textContent = relative(Number(el.dataset.epoch), now);
  }
}

/** A parameter's value: numbers with 4 significant digits, a nested choice as name(sub=...). */
export function param(value) {
  if (value === null) return "null";
  if (value === undefined) return DASH;
  if (typeof value === "number") return num(value);
  if (typeof value === "boolean") return String(value);
  if (typeof value === "object" && !Array.isArray(value) && "_name" in value) {
    const rest = Object.entries(value).filter(([k]) => k !== "_name");
    if (!rest.length) return String(value._name);
    return `${value._name}(${rest.map(([k, v]) => `${k}=${param(v)}`).join(", ")})`;
  }
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

// ---- statuses: one color each, the same everywhere --------------------------------------------

export const TRIAL_STATUSES = [
  "WAITING", "RUNNING", "PAUSED", "SUCCEEDED", "FAILED",
  "EARLY_STOPPED", "USER_CANCELED", "SYS_CANCELED",
];
export const KILLABLE_TRIAL = new Set(["WAITING", "RUNNING", "PAUSED"]);
/** Trials that ended on their own: what max_trials counts. */
export const ENDED_ON_THEIR_OWN = ["SUCCEEDED", "FAILED", "EARLY_STOPPED", "USER_CANCELED"];

const LABELS = {
  WAITING: "waiting", RUNNING: "running", PAUSED: "paused", SUCCEEDED: "succeeded",
  FAILED: "failed", EARLY_STOPPED: "early stopped", USER_CANCELED: "killed",
  SYS_CANCELED: "interrupted", INITIALIZED: "initialized", NO_MORE_TRIAL: "finishing",
  DONE: "done", STOPPED: "stopped", ERROR: "error", LOST: "driver lost",
};
const TITLES = {
  USER_CANCELED: "USER_CANCELED: killed by a user",
  SYS_CANCELED: "SYS_CANCELED: interrupted by a stop or a crash; it runs again on resume",
  NO_MORE_TRIAL: "NO_MORE_TRIAL: the budget is spent; the last trials are finishing",
  LOST: "It says RUNNING but no driver runs it: `hyperlab resume ID` continues it",
};

export function statusLabel(status) {
  return LABELS[status] || String(status).toLowerCase();
}

/** A colored badge for a trial or experiment status. */
export function badge(status, extra = {}) {
  return h("span", {
    class: `badge s-${status}`,
    title: TITLES[status] || status,
    "data-status": status,
    ...extra,
  }, statusLabel(status));
}

/** An experiment's status badge: "driver lost" when it says RUNNING but no driver runs it. */
export function experimentBadge(record) {
  const status = record.driver_lost ? "LOST" : record.status;
  return badge(status, { "data-testid": "experiment-status" });
}

/** Whether a driver runs the experiment (a summary of the list has no driver_alive). */
export function isLive(record) {
  if ("driver_alive" in record) return record.driver_alive;
  return !record.driver_lost && ["RUNNING", "NO_MORE_TRIAL"].includes(record.status);
}

const BOOKKEEPING = new Set(["time_this_iter_s"]); // hyperlab.trial.BOOKKEEPING_METRICS

/** The reported metric that is the objective, as the driver picks it (hyperlab.trial's
 * objective_key) from `metrics`, the names reported: the `metric` option, else NNI's `default`
 * (a bare value), else the only one; null when none is known. Shown as the value, not again as
 * a metric. */
export function objectiveMetric(options, metrics) {
  if (Array.isArray(options.metric)) return options.metric[0] ?? null; // several: the first is the value
  if (options.metric) return options.metric;
  const own = [...metrics].filter((m) => !BOOKKEEPING.has(m));
  if (own.includes("default")) return "default";
  return own.length === 1 ? own[0] : null;
}

/** The experiment's objectives in metric order: [{metric, mode}], several for a multi-objective
 * experiment (a list of metrics; one mode given for them all applies to each). */
export function objectives(options) {
  const metrics = Array.isArray(options.metric) ? options.metric : [options.metric || "value"];
  const modes = Array.isArray(options.mode) ? options.mode : metrics.map(() => options.mode);
  return metrics.map((metric, i) => ({ metric, mode: modes[i] === "max" ? "max" : "min" }));
}

/** Whether the experiment optimizes several objectives (then it has a Pareto front). */
export function isMultiObjective(options) {
  return objectives(options).length > 1;
}

/** The direction of the experiment's value (its first objective): "min" or "max". */
export function firstMode(options) {
  return objectives(options)[0].mode;
}

/** The experiment's objectives, named: "loss (min)", "loss (min), latency (min)". */
export function objectiveName(options) {
  return objectives(options).map((o) => `${o.metric} (${o.mode})`).join(", ");
}
