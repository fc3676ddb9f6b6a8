// An experiment's search space (NNI's JSON: {name: {_type, _value}}) read as parameters with
// their kind, bounds and options: for table columns, filters, the add-trial form, and the
// readable view of the config.
import { num, param } from "./format.js";

const LOG = new Set(["loguniform", "qloguniform", "lognormal", "qlognormal"]);
const BOUNDED = new Set(["uniform", "quniform", "loguniform", "qloguniform", "randint"]);

/** The parameters of `space` (nested choices' own parameters under `nested`). */
export function parameters(space) {
  return Object.entries(space || {}).map(([name, spec]) => parameter(name, spec));
}

export function parameter(name, spec) {
  const type = spec && spec._type;
  const value = (spec && spec._value) || [];
  if (type === "choice") {
    const options = value.map((option) => {
      const nested = option !== null && typeof option === "object" && !Array.isArray(option) && "_name" in option;
      return {
        value: nested ? option._name : option,
        label: nested ? String(option._name) : param(option),
        nested: nested ? parameters(Object.fromEntries(Object.entries(option).filter(([k]) => k !== "_name"))) : null,
      };
    });
    return { name, type, kind: "choice", options, spec };
  }
  const p = { name, type, kind: "number", log: LOG.has(type), integer: type === "randint", spec };
  if (BOUNDED.has(type)) {
    p.low = value[0];
    p.high = type === "randint" ? value[1] - 1 : value[1]; // randint excludes its upper bound
    if (type.startsWith("q")) p.q = value[2];
  } else {
    p.mu = value[0];
    p.sigma = value[1];
    if (type && type.startsWith("q")) p.q = value[2];
  }
  if (type && type.startsWith("q") && p.q !== undefined) p.step = p.q;
  if (p.integer) p.step = 1;
  return p;
}

/** How a parameter's distribution reads: "loguniform 0.0001 … 0.1", "choice of 3". */
export function describe(p) {
  if (p.kind === "choice") return `choice of ${p.options.length}`;
  if (p.low !== undefined) {
    const q = p.q !== undefined ? `, step ${num(p.q)}` : "";
    const ints = p.integer ? " (integers)" : "";
    return `${p.type} ${num(p.low)} … ${num(p.high)}${q}${ints}`;
  }
  const q = p.q !== undefined ? `, step ${num(p.q)}` : "";
  return `${p.type} μ=${num(p.mu)} σ=${num(p.sigma)}${q}`;
}

/** A value to start the add-trial form with: the best trial's, else the middle of the range. */
export function startValue(p, best) {
  if (best !== undefined) {
    if (p.kind === "choice" && best !== null && typeof best === "object" && "_name" in best) return best._name;
    return best;
  }
  if (p.kind === "choice") return p.options[0]?.value;
  if (p.low === undefined) return p.log ? Math.exp(p.mu) : p.mu;
  if (p.integer) return Math.round((p.low + p.high) / 2);
  const mid = p.log ? Math.sqrt(p.low * p.high) : (p.low + p.high) / 2;
  return Number(mid.toPrecision(3));
}
