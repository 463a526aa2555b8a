// What a job's recent executions came to: a strip of outcomes (colour and shape, a tooltip with
// time and message) and, for a failed attempt, whether it was final or a retry follows.
import { h } from "./dom.js";
import { utc } from "./format.js";

const DEFAULT_RETRIES = 4; // no retryPolicy: Fixed, 30 s, 4 retries (docs/api.md)

// status -> [shape, words]: the shape tells the outcome apart without its colour
const SHAPES = {
  completed: ["✓", "completed"],
  failed: ["✕", "failed"],
  postponed: ["◔", "postponed"],
  skipped: ["–", "skipped"],
};

/** The retries an action's policy allows (retryType None: none). */
export function retriesOf(action) {
  const policy = action?.retryPolicy;
  if (!policy) return DEFAULT_RETRIES;
  if (String(policy.retryType).toLowerCase() === "none") return 0;
  return policy.retryCount ?? DEFAULT_RETRIES;
}

/** For a Failed history entry, under the job's retry policy now: {final, text}; else null. */
export function failureFate(entry, jobProperties) {
  const e = entry.properties;
  if (String(e.status).toLowerCase() !== "failed") return null;
  const errorAction = e.actionName === "ErrorAction";
  const retries = retriesOf(errorAction ? jobProperties?.action?.errorAction : jobProperties?.action);
  if ((e.retryCount ?? 0) < retries) {
    return { final: false, text: `retry ${(e.retryCount ?? 0) + 1} of ${retries} follows` };
  }
  return { final: true, text: errorAction ? "final: the error action failed" : "final: the execution faulted" };
}

/** A history entry's status in lower case (Completed entries carry none). */
export const statusOf = (entry) => String(entry.properties.status ?? "Completed").toLowerCase();

/** One mark of the strip, for a history entry. */
function mark(entry, jobProperties) {
  const status = statusOf(entry);
  const [shape, words] = SHAPES[status] ?? ["?", status];
  const e = entry.properties;
  const fate = failureFate(entry, jobProperties);
  const when = utc(e.endTime ?? e.startTime ?? e.expectedExecutionTime);
  const tip = `${when} UTC — ${words}${fate ? ` (${fate.text})` : ""}${e.message ? `: ${e.message}` : ""}`;
  return h("span", { class: `outcome outcome-${status}${fate?.final ? " final" : ""}`, title: tip, "aria-label": tip, role: "listitem" }, shape);
}

/** The strip of a job's entries (given newest first; drawn oldest to newest, left to right). */
export function outcomeStrip(entries, jobProperties) {
  if (!entries.length) return h("span", { class: "muted small" }, "never ran");
  return h("span", { class: "outcomes", role: "list" }, [...entries].reverse().map((e) => mark(e, jobProperties)));
}
