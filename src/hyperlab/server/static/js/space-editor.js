// The search-space editor: NNI JSON, checked by the server as it is typed
// (…/search-space/check sends nothing to the experiment); Apply sends only a space that passed.
import { exp, send } from "./api.js";
import { h } from "./dom.js";
import { parseExact } from "./json.js";
import { markField, steer } from "./steer.js";
import { openDialog } from "./ui.js";

export function spaceDialog(ctx) {
  const editor = h("textarea", {
    class: "input code-editor", spellcheck: "false", rows: 18, "aria-label": "Search space (NNI JSON)",
    "data-testid": "space-editor", value: JSON.stringify(ctx.record.space, null, 2),
  });
  const message = h("div", { class: "field-error", hidden: true, "data-testid": "space-error", role: "alert" });
  const okLine = h("div", { class: "field-ok", hidden: true, "data-testid": "space-ok" });
  const apply = h("button", { class: "button primary", type: "button", "data-testid": "space-apply" }, "Apply");
  let checked = 0;

  /** Parse and check the text with the server (nothing is sent to the experiment). */
  const check = async () => {
    const mine = ++checked;
    let space;
    try {
      space = parseExact(editor.value); // integers beyond 2^53 sent as typed
    } catch (err) {
      markField(editor, `Not valid JSON: ${err.message}`, message);
      okLine.hidden = true;
      return null;
    }
    if (space === null || typeof space !== "object" || Array.isArray(space)) {
      markField(editor, 'Expected a JSON object: {"name": {"_type": ..., "_value": [...]}}', message);
      return null;
    }
    try {
      const answer = await send("POST", `${exp(ctx.id)}/search-space/check`, space);
      if (mine !== checked) return null;
      markField(editor, null, message);
      okLine.textContent = `✓ Valid: ${answer.detail}`;
      okLine.hidden = false;
      return space;
    } catch (err) {
      if (mine !== checked) return null;
      okLine.hidden = true;
      markField(editor, err.unauthorised ? `This browser may not steer the experiment: ${err.detail}` : err.detail, message);
      return null;
    }
  };
  let timer = null;
  editor.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(check, 500);
  });
  apply.addEventListener("click", async () => {
    clearTimeout(timer);
    apply.disabled = true;
    const space = await check();
    if (space) {
      const { error } = await steer("PUT", `${exp(ctx.id)}/search-space`, space, "Search space", ctx);
      if (!error) dialog.close();
      else markField(editor, error.detail, message);
    }
    apply.disabled = false;
  });
  const dialog = openDialog({
    title: "Edit the search space", wide: true, testid: "space-dialog",
    content: h("div", { class: "form" },
      h("p", { class: "hint" }, "NNI search-space JSON. New proposals use it; the tuner relearns from the finished trials that fit it; no trial's parameters change. The server checks it before anything is sent."),
      editor, message, okLine),
    actions: [h("button", { class: "button", type: "button", onclick: () => dialog.close() }, "Cancel"), apply],
  });
  editor.focus();
}
