// The REST API (/api/v1, docs/rest.md): reads, writes with JSON bodies, control outcomes.

import { parseExact } from "./json.js";

const PREFIX = "/api/v1";

/** An answer that was not 2xx: its status and the server's `detail`. */
export class ApiError extends Error {
  constructor(status, detail, path) {
    super(detail);
    this.status = status;
    this.detail = detail;
    this.path = path;
  }
  /** The browser lacks the token (or holds a wrong one). */
  get unauthorised() {
    return this.status === 401 || this.status === 403;
  }
}

/** A query string from an object: arrays repeat the key; null, undefined and "" are left out. */
export function query(params = {}) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === null || item === undefined || item === "") continue;
      search.append(key, String(item));
    }
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

let onNetwork = () => {};
/** Call `fn(ok)` after every request: false when the server could not be reached. */
export function watchNetwork(fn) {
  onNetwork = fn;
}

async function request(method, path, { params, body, signal } = {}) {
  const url = PREFIX + path + query(params);
  const init = { method, signal, headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (method !== "GET" && method !== "DELETE") {
    init.headers["Content-Type"] = "application/json"; // every write: JSON, even {}
    init.body = JSON.stringify(body ?? {});
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch (err) {
    if (err.name === "AbortError") throw err;
    onNetwork(false);
    throw new ApiError(0, `the server does not answer (${err.message})`, path);
  }
  onNetwork(true);
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      // integers beyond 2^53 exact (json.js), but in plot data: charts want plain numbers
      data = path.includes("/plots/") ? JSON.parse(text) : parseExact(text);
    } catch {
      data = { detail: text.slice(0, 300) };
    }
  }
  if (!response.ok) {
    const detail = (data && data.detail) || `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, String(detail), path);
  }
  return { data, headers: response.headers };
}

/** GET: the parsed body. */
export async function get(path, params, options = {}) {
  return (await request("GET", path, { params, ...options })).data;
}

/** GET: {data, headers} (for X-Total-Count and X-Change-Cursor). */
export function getWithHeaders(path, params, options = {}) {
  return request("GET", path, { params, ...options });
}

/** POST, PUT, PATCH or DELETE with a JSON body. */
export async function send(method, path, body = {}) {
  return (await request(method, path, { body })).data;
}

/** Wait until the driver has handled every control of a 202 answer; the last one's outcome
 * ({state: applied|rejected|pending, message, trial}). */
export async function followControls(accepted, timeout = 8000) {
  let last = null;
  for (const id of accepted.control_ids || []) {
    last = await followControl(id, timeout);
    if (last.state === "rejected") return last;
  }
  return last;
}

export async function followControl(id, timeout = 8000) {
  const deadline = Date.now() + timeout;
  let delay = 80;
  for (;;) {
    const control = await get(`/controls/${id}`);
    if (control.state !== "pending" || Date.now() > deadline) return control;
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(400, delay * 1.5);
  }
}

/** The experiment's base path. */
export function exp(id) {
  return `/experiments/${encodeURIComponent(id)}`;
}
