// The Config tab: the search space and the options, readably; the driver and the times.
import { spaceDialog } from "./space-editor.js";
import { h, icon } from "./dom.js";
import { absolute, duration, isLive, num, param } from "./format.js";
import { describe } from "./space.js";
import { copyButton } from "./ui.js";

export function configTab(el, ctx) {
  const draw = () => el.replaceChildren(render(ctx));
  ctx.bus.addEventListener("record", draw);
  draw();
  return { destroy: () => ctx.bus.removeEventListener("record", draw) };
}

function render(ctx) {
  const record = ctx.record;
  const o = record.options;
  const canEdit = isLive(record) && ctx.session && ctx.session.can_write;
  const json = JSON.stringify(record.space, null, 2);
  const spaceRows = ctx.params.map((p) => h("tr", null,
    h("td", { class: "strong mono" }, p.name),
    h("td", null, h("span", { class: "tag" }, p.type)),
    h("td", null, p.kind === "choice"
      ? h("div", { class: "param-list" }, p.options.map((opt) => h("span", { class: "param-pill" }, opt.label,
        opt.nested && opt.nested.length ? h("span", { class: "muted" }, ` { ${opt.nested.map((n) => `${n.name}: ${describe(n)}`).join(", ")} }`) : null)))
      : describe(p).replace(`${p.type} `, ""))));
  const space = h("section", { class: "card", "data-testid": "config-space" },
    h("div", { class: "card-head" }, h("h2", null, "Search space"),
      canEdit ? h("button", { class: "button small", type: "button", "data-testid": "config-edit-space", onclick: () => spaceDialog(ctx) }, icon("edit", 14), "Edit") : null),
    ctx.params.length ? h("table", { class: "table plain" },
      h("thead", null, h("tr", null, h("th", null, "Parameter"), h("th", null, "Distribution"), h("th", null, "Range or options"))),
      h("tbody", null, spaceRows)) : h("p", { class: "muted" }, "An empty search space."),
    h("details", { class: "raw" }, h("summary", null, "NNI JSON ", copyButton(json, "Copy the search space")), h("pre", { class: "code" }, json)));

  const row = (label, value, hint = null) => h("div", { class: "kv-row" },
    h("dt", null, label), h("dd", null, value === null || value === undefined || value === "" ? h("span", { class: "muted" }, hint || "–") : value));
  const args = (name, a) => (name ? h("span", null, h("strong", null, name), Object.keys(a || {}).length ? h("span", { class: "mono muted" }, ` ${JSON.stringify(a)}`) : null) : null);
  const group = (title, rows) => h("div", { class: "kv-group" }, h("h3", null, title), h("dl", { class: "kv" }, rows));
  const options = h("section", { class: "card", "data-testid": "config-options" },
    h("div", { class: "card-head" }, h("h2", null, "Options")),
    h("div", { class: "kv-grid" },
      group("Objective", [
        row("metric", [].concat(o.metric || []).join(", "), "the only reported metric"),
        row("mode", [].concat(o.mode).map((m) => (m === "max" ? "maximize" : "minimize")).join(", ")),
        row("constraints", (o.constraints || []).join(", "), "none"),
      ]),
      group("Search", [row("tuner", args(o.tuner, o.tuner_args)), row("assessor", args(o.assessor, o.assessor_args), "none"), row("seed", o.seed ?? record.seed)]),
      group("Budget", [row("max trials", o.max_trials === null ? null : num(o.max_trials), "no limit"), row("max duration", o.max_duration ? duration(o.max_duration) : null, "no limit"), row("concurrency", o.concurrency)]),
      group("Trials", [
        row("executor", o.executor), row("trial timeout", o.trial_timeout ? duration(o.trial_timeout) : null, "none"),
        row("max failed trials", o.max_failed_trials, "default"), row("continue on failure", String(o.continue_on_failure)),
        row("fail fast", String(o.fail_fast)), row("checkpoints kept", o.checkpoint_keep),
        row("GPUs", o.gpus ? param(o.gpus) : null, "none"), row("log cap", o.max_log_bytes ? `${num(o.max_log_bytes / 1048576)} MiB` : null, "none"),
      ]),
      group("Where", [row("working dir", o.working_dir ? h("span", { class: "mono" }, o.working_dir) : null, "the hyperlab home"),
        row("driver", record.driver_host ? `pid ${record.driver_pid} on ${record.driver_host}` : null, "none"),
        row("heartbeat", record.heartbeat_at ? absolute(record.heartbeat_at) : null)]),
      group("Times", [row("created", absolute(record.created_at)), row("started", record.started_at ? absolute(record.started_at) : null),
        row("finished", record.finished_at ? absolute(record.finished_at) : null), row("experiment time", duration(record.elapsed))]),
    ));
  return h("div", { class: "stack", "data-testid": "config-tab" }, space, options);
}
