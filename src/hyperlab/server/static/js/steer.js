// Sending a control request and saying what came of it; marking the fields of a form with the
// server's messages (a 422's detail names the field: "params: lr: 5 is above the upper bound").
import { ApiError, followControls, send } from "./api.js";
import { rich, toast, toastError } from "./ui.js";

/** Send a control request, wait for the driver's outcome and say it; the outcome, or null. */
export async function steer(method, path, body, what, ctx) {
  let accepted;
  try {
    accepted = await send(method, path, body);
  } catch (err) {
    toastError(what, err);
    return { error: err };
  }
  let outcome;
  try {
    outcome = await followControls(accepted);
  } catch (err) {
    toast(`${what}: sent`, { detail: `Its outcome could not be read: ${err.detail || err.message}` });
    return { outcome: null };
  }
  if (!outcome || outcome.state === "pending") {
    toast(`${what}: sent`, { detail: "The driver has not applied it yet; it will shortly." });
  } else if (outcome.state === "rejected") {
    toast(`${what}: refused`, { kind: "error", detail: outcome.message });
  } else {
    toast(`${what}: done`, { kind: "success", detail: outcome.message });
  }
  if (ctx) ctx.page.reload().catch(() => {});
  return { outcome };
}

/** Show an error under a field and mark it invalid (null clears it). */
export function markField(input, message, messageEl) {
  input.classList.toggle("invalid", Boolean(message));
  input.setAttribute("aria-invalid", message ? "true" : "false");
  messageEl.textContent = message || "";
  messageEl.hidden = !message;
}

/** Whether a server's detail is about field `name` ("params: lr: 5 is above ..."). */
export function names(detail, name) {
  if (!detail) return false;
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[\\s:])${escaped}:`).test(detail);
}

/** An error answer in a form: under the field it names (the detail starts "name: ..."). */
export function showProblem(el, err, fields = []) {
  const detail = err instanceof ApiError ? err.detail : String(err);
  const named = fields.find((f) => names(detail, f.name));
  if (named) markField(named.input, detail, named.message);
  el.replaceChildren(...rich(err.unauthorised ? `This browser may not steer the experiment. ${detail}` : detail));
  el.hidden = false;
}
