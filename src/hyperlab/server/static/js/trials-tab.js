// The Trials tab: filters, the table, and the trials picked for the curves (shown on Plots).
import { h, replace } from "./dom.js";
import { FilterBar, filterQuery, readFilters } from "./filters.js";
import { count } from "./format.js";
import { link, replaceQuery } from "./router.js";
import { PAGE_SIZES, TrialsTable } from "./trials-table.js";

export function trialsTab(el, ctx, query) {
  const filters = readFilters(query, ctx.params);
  const limit = PAGE_SIZES.includes(Number(query.get("limit"))) ? Number(query.get("limit")) : 50;
  const page = Math.max(1, Number(query.get("page")) || 1);
  const table = new TrialsTable(ctx, {
    sort: query.get("sort") || "-number", limit, offset: (page - 1) * limit,
    filters: filterQuery(filters, ctx.params), selectable: true,
    onState: () => sync(), onDrawn: () => ctx.drawn("table"),
  });
  const bar = new FilterBar(ctx, filters, (state) => {
    table.setFilters(filterQuery(state, ctx.params));
    sync();
  });
  const picked = h("div", { class: "selection-bar", "data-testid": "selection-bar" });

  function sync() {
    const q = new URLSearchParams();
    const f = filterQuery(filters, ctx.params);
    for (const [key, value] of Object.entries(f)) for (const v of [].concat(value)) q.append(key, v);
    if (table.sort !== "-number") q.set("sort", table.sort);
    if (table.limit !== 50) q.set("limit", table.limit);
    const p = Math.floor(table.offset / table.limit) + 1;
    if (p > 1) q.set("page", p);
    replaceQuery(q);
  }

  function renderSelection() {
    const n = ctx.selected.size;
    picked.hidden = n === 0;
    replace(picked, n ? [
      h("span", null, h("strong", null, count(n)), n === 1 ? " trial picked" : " trials picked"),
      h("a", { class: "button primary small", href: link(ctx.id, "plots"), "data-testid": "show-curves" }, "Compare their curves"),
      h("button", {
        class: "link-button", type: "button",
        onclick: () => {
          ctx.selected.clear();
          table.render();
          ctx.bus.dispatchEvent(new CustomEvent("selection"));
        },
      }, "Clear"),
    ] : null);
  }

  const onChanges = () => {
    table.changed();
    bar.renderChips();
  };
  const onRecord = () => {
    bar.renderChips();
    if (table.rows.length) table.render(); // a new search space may add columns
  };
  ctx.bus.addEventListener("changes", onChanges);
  ctx.bus.addEventListener("record", onRecord);
  ctx.bus.addEventListener("selection", renderSelection);
  renderSelection();
  replace(el, h("div", { class: "stack", "data-testid": "trials-tab" },
    h("div", { class: "card" }, bar.el),
    h("div", { class: "card flush" }, table.el),
    picked));
  table.load();

  return {
    update: () => {},
    destroy: () => {
      table.destroy();
      ctx.bus.removeEventListener("changes", onChanges);
      ctx.bus.removeEventListener("record", onRecord);
      ctx.bus.removeEventListener("selection", renderSelection);
    },
  };
}
