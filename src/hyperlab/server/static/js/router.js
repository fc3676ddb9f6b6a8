// Hash routes: #/ (experiments), #/experiments/ID[/trials|/plots|/config] (an experiment and
// its tab), #/experiments/ID/trials/N (a trial). A tab may keep its state in the hash's query
// (#/experiments/ID/trials?sort=-value), replaced without a new history entry.

export const TABS = ["overview", "trials", "plots", "config"];

/** The route of a hash: {view, id, tab, number, query}. */
export function parse(hash = location.hash) {
  const text = hash.replace(/^#/, "") || "/";
  const [path, search = ""] = text.split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const query = new URLSearchParams(search);
  if (parts.length === 0) return { view: "overview", query };
  if (parts[0] === "experiments" && parts.length >= 2) {
    const id = parts[1];
    if (parts.length === 2) return { view: "experiment", id, tab: "overview", query };
    if (parts.length === 3 && TABS.includes(parts[2])) {
      return { view: "experiment", id, tab: parts[2], query };
    }
    if (parts.length === 4 && parts[2] === "trials" && /^\d+$/.test(parts[3])) {
      return { view: "trial", id, number: Number(parts[3]), query };
    }
  }
  return { view: "missing", path: text, query };
}

/** The hash of a route. */
export function link(id, tab = "overview", number = null) {
  if (id === undefined || id === null) return "#/";
  const base = `#/experiments/${encodeURIComponent(id)}`;
  if (number !== null) return `${base}/trials/${number}`;
  return tab === "overview" ? base : `${base}/${tab}`;
}

/** Keep a view's state in the hash's query without adding a history entry. */
export function replaceQuery(params) {
  const [path] = location.hash.split("?");
  const text = params.toString();
  history.replaceState(history.state, "", text ? `${path}?${text}` : path);
}

/** Call `onRoute(route)` now and on every change of the hash. */
export function start(onRoute) {
  const go = () => onRoute(parse());
  window.addEventListener("hashchange", go);
  go();
}
