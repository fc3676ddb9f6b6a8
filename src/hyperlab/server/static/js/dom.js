// Building DOM nodes without a framework: h("div", {class: "x", onclick: f}, child, ...).

/** An element: props set attributes (class, data-*, aria-*...), on* handlers, style objects,
 * and DOM properties (value, checked, disabled); children are nodes, strings, or arrays. */
export function h(tag, props = null, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [key, value] of Object.entries(props)) {
      if (value === undefined || value === null || value === false) continue;
      if (key.startsWith("on") && typeof value === "function") {
        el.addEventListener(key.slice(2).toLowerCase(), value);
      } else if (key === "style" && typeof value === "object") {
        Object.assign(el.style, value);
      } else if (key === "class") {
        el.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : value;
      } else if (key in PROPERTIES) {
        el[key] = value;
      } else {
        el.setAttribute(key, value === true ? "" : String(value));
      }
    }
  }
  append(el, children);
  return el;
}

const PROPERTIES = { value: 1, checked: 1, disabled: 1, selected: 1, indeterminate: 1, htmlFor: 1 };

/** Append children (nodes, strings, numbers, nested arrays; null and false are skipped). */
export function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Replace an element's children. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** Call `fn` once calls have stopped for `ms` milliseconds. */
export function debounce(fn, ms) {
  let timer = null;
  const debounced = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  debounced.cancel = () => clearTimeout(timer);
  return debounced;
}

/** A small inline SVG icon from a path list (24x24 viewBox, stroked). */
export function icon(name, size = 16) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", size);
  svg.setAttribute("height", size);
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "icon");
  for (const d of ICONS[name] || []) {
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", d);
    svg.append(path);
  }
  return svg;
}

const ICONS = {
  stop: ["M7 7h10v10H7z"],
  x: ["M6 6l12 12", "M18 6L6 18"],
  plus: ["M12 5v14", "M5 12h14"],
  edit: ["M4 20h4L19 9l-4-4L4 16v4z", "M13.5 6.5l4 4"],
  lock: ["M6 11h12v9H6z", "M8.5 11V8a3.5 3.5 0 0 1 7 0v3"],
  back: ["M15 6l-6 6 6 6"],
  next: ["M9 6l6 6-6 6"],
  first: ["M17 6l-6 6 6 6", "M7 6v12"],
  last: ["M7 6l6 6-6 6", "M17 6v12"],
  trash: ["M5 7h14", "M10 7V5h4v2", "M7 7l1 13h8l1-13"],
  copy: ["M9 9h10v10H9z", "M5 15V5h10"],
  filter: ["M4 5h16l-6 8v5l-4 2v-7z"],
  up: ["M12 19V5", "M6 11l6-6 6 6"],
  down: ["M12 5v14", "M6 13l6 6 6-6"],
  search: ["M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14z", "M16.5 16.5L21 21"],
  check: ["M5 12l5 5 9-10"],
  alert: ["M12 4l9 16H3z", "M12 10v4", "M12 17v.5"],
  chart: ["M4 20V4", "M4 20h16", "M8 16l4-5 3 3 5-7"],
};

/** Make `parent`'s children be `nodes`, in order, touching only what differs (nodes kept in
 * place keep their focus). */
export function reconcile(parent, nodes) {
  nodes.forEach((node, i) => {
    const at = parent.children[i];
    if (at !== node) parent.insertBefore(node, at || null);
  });
  while (parent.children.length > nodes.length) parent.lastElementChild.remove();
}
