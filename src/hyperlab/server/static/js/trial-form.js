// The add-trial form, made from the search space: number fields with the bounds, lists for
// choices (and the parameters of a nested choice's option). The server checks the parameters
// first (…/trials/check); one outside the space is marked with its message, nothing is sent.
import { exp, send } from "./api.js";
import { h } from "./dom.js";
import { param } from "./format.js";
import { describe, startValue } from "./space.js";
import { markField, names, showProblem, steer } from "./steer.js";
import { openDialog, rich, toast } from "./ui.js";

export function addTrialDialog(ctx) {
  const best = ctx.record.best ? ctx.record.best.params : {};
  const fields = [];
  const inputs = h("div", { class: "form-grid" });
  const build = (params, values, into, prefix = "") => {
    for (const p of params) {
      const id = `trial-${prefix}${p.name}`;
      const message = h("div", { class: "field-error", hidden: true, "data-testid": `error-${prefix}${p.name}` });
      let input;
      const sub = h("div", { class: "nested" });
      if (p.kind === "choice") {
        input = h("select", { class: "input", id, "data-testid": `param-${prefix}${p.name}` },
          p.options.map((o, i) => h("option", { value: i }, o.label)));
        const start = startValue(p, values[p.name]);
        const at = p.options.findIndex((o) => JSON.stringify(o.value) === JSON.stringify(start));
        input.value = String(Math.max(0, at));
        const nestedValues = values[p.name] && typeof values[p.name] === "object" ? values[p.name] : {};
        const renderNested = () => {
          sub.replaceChildren();
          const option = p.options[Number(input.value)];
          fieldsFor(`${prefix}${p.name}.`).forEach((f) => fields.splice(fields.indexOf(f), 1));
          if (option.nested && option.nested.length) build(option.nested, nestedValues, sub, `${prefix}${p.name}.`);
        };
        input.addEventListener("change", renderNested);
        queueMicrotask(renderNested);
      } else {
        input = h("input", {
          class: "input", id, type: "number", "data-testid": `param-${prefix}${p.name}`,
          min: p.low, max: p.high, step: p.step ?? "any", required: true,
          value: startValue(p, values[p.name]),
        });
      }
      fields.push({ name: `${prefix}${p.name}`, p, input, message });
      input.addEventListener("input", () => markField(input, null, message));
      into.append(h("div", { class: "field" },
        h("label", { for: id }, `${prefix}${p.name}`, h("span", { class: "hint inline" }, describe(p))),
        input, message, sub));
    }
  };
  const fieldsFor = (prefix) => fields.filter((f) => f.name.startsWith(prefix));
  build(ctx.params, best, inputs);

  const collect = () => {
    const params = {};
    let bad = false;
    for (const f of fields) {
      markField(f.input, null, f.message);
      const path = f.name.split(".");
      let value;
      if (f.p.kind === "choice") {
        const option = f.p.options[Number(f.input.value)];
        value = option.nested ? { _name: option.value } : option.value;
      } else {
        if (f.input.value.trim() === "" || !Number.isFinite(Number(f.input.value))) {
          markField(f.input, "A number is needed.", f.message);
          bad = true;
          continue;
        }
        value = Number(f.input.value);
      }
      let target = params;
      for (const key of path.slice(0, -1)) target = target[key];
      target[path.at(-1)] = value;
    }
    return bad ? null : params;
  };
  const problem = h("div", { class: "form-error", hidden: true, "data-testid": "trial-error", role: "alert" });
  const submit = h("button", { class: "button primary", type: "submit", "data-testid": "trial-submit" }, "Add the trial");
  const form = h("form", { class: "form", novalidate: true, "data-testid": "add-trial-form" },
    h("p", { class: "hint" }, "It runs next and counts in max_trials. Prefilled with the best trial's parameters."),
    inputs, problem,
    h("div", { class: "dialog-actions" }, h("button", { class: "button", type: "button", onclick: () => dialog.close() }, "Cancel"), submit));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.hidden = true;
    const params = collect();
    if (!params) return;
    submit.disabled = true;
    try {
      await send("POST", `${exp(ctx.id)}/trials/check`, { params });
    } catch (err) {
      submit.disabled = false;
      const named = fields.find((f) => names(err.detail, f.name));
      if (named && !err.unauthorised) {
        markField(named.input, err.detail.replace(/^params: /, ""), named.message);
        named.input.focus();
      } else {
        problem.replaceChildren(...rich(err.unauthorised ? `This browser may not steer the experiment. ${err.detail}` : err.detail));
        problem.hidden = false;
      }
      return;
    }
    const { outcome, error } = await steer("POST", `${exp(ctx.id)}/trials`, { params }, "Add a trial", ctx);
    submit.disabled = false;
    if (error) {
      showProblem(problem, error);
      return;
    }
    dialog.close();
    if (outcome && outcome.trial !== null && outcome.trial !== undefined) {
      toast(`Trial #${outcome.trial} added`, {
        kind: "success", detail: Object.entries(params).map(([k, v]) => `${k}=${param(v)}`).join(", "),
      });
    }
  });
  const dialog = openDialog({ title: "Add a trial", content: form, testid: "add-trial-dialog" });
  const first = fields[0];
  if (first) first.input.focus();
}
