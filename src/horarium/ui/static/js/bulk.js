// Bulk actions on the selected jobs of a collection: enable, disable, run now, delete. One
// confirmation lists what will change for each job; each job's request is sent on its own and
// its result shown on its own line, so that one refusal does not hide the others.
import { call, eachLimited, paths } from "./api.js";
import { capital, confirmAction, h } from "./dom.js";

const stateOf = (job) => capital(job.properties?.state ?? "");

const ACTIONS = {
  enable: {
    label: "Enable", verb: "Enable",
    change: (job) => (stateOf(job) === "Enabled" ? null : `${stateOf(job)} → Enabled`),
    send: (path) => call("PATCH", path, { body: { properties: { state: "Enabled" } } }),
    done: "enabled",
  },
  disable: {
    label: "Disable", verb: "Disable",
    change: (job) => (stateOf(job) === "Disabled" ? null : `${stateOf(job)} → Disabled`),
    send: (path) => call("PATCH", path, { body: { properties: { state: "Disabled" } } }),
    done: "disabled",
  },
  run: {
    label: "Run now", verb: "Run now, once, outside their schedule,",
    change: () => "runs once now",
    send: (path) => call("POST", `${path}/run`),
    done: "run requested",
  },
  delete: {
    label: "Delete", verb: "Delete", danger: true,
    change: () => "deleted with its history (cannot be undone)",
    send: (path) => call("DELETE", path),
    done: "deleted",
  },
};

/** The toolbar for `selected()` (jobs); `after()` runs once a bulk action has finished. */
export function bulkBar(group, collection, selected, after) {
  const count = h("span", { class: "muted", id: "bulk-count" });
  const results = h("div", { id: "bulk-results" });
  const buttons = Object.entries(ACTIONS).map(([kind, action]) =>
    h("button", { type: "button", id: `bulk-${kind}`, class: action.danger ? "danger" : null, onclick: () => run(kind) }, action.label));

  async function run(kind) {
    const action = ACTIONS[kind];
    const jobs = selected();
    const changing = jobs.filter((j) => action.change(j) !== null);
    const unchanged = jobs.filter((j) => action.change(j) === null);
    const items = [
      ...changing.map((j) => `${shortName(j)}: ${action.change(j)}`),
      ...unchanged.map((j) => `${shortName(j)}: already ${stateOf(j)}, unchanged`),
    ];
    const noun = changing.length === 1 ? "job" : "jobs";
    if (!changing.length) {
      results.replaceChildren(h("div", { class: "note", role: "status" }, "Nothing to change."));
      return;
    }
    if (!(await confirmAction(`${action.verb} ${changing.length} ${noun}?`, action.label, items))) return;
    const outcome = new Map();
    await eachLimited(changing, 4, async (job) => {
      try {
        await action.send(paths.job(group, collection, shortName(job)));
        outcome.set(shortName(job), null);
      } catch (e) {
        if (e.status === 401) throw e;
        outcome.set(shortName(job), e);
      }
    });
    const failed = [...outcome.values()].filter(Boolean).length;
    results.replaceChildren(h("div", { class: failed ? "bulk-results error-box" : "bulk-results note", role: "status" },
      h("p", {}, `${action.label}: ${changing.length - failed} done, ${failed} refused.`),
      h("ul", {}, changing.map((job) => {
        const error = outcome.get(shortName(job));
        return h("li", { class: error ? "bulk-refused" : "bulk-done", "data-job": shortName(job) },
          `${shortName(job)}: `, error ? `${error.code ? `${error.code}: ` : ""}${error.message}` : action.done);
      }))));
    await after();
  }

  function update() {
    const n = selected().length;
    count.textContent = n ? `${n} selected` : "Select jobs for bulk actions";
    for (const button of buttons) button.disabled = n === 0;
  }
  update();
  return { element: h("div", { class: "toolbar bulk", id: "bulk" }, count, buttons), results, update };
}

const shortName = (job) => job.name.split("/").at(-1);
