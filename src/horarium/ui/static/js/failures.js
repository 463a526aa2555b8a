// Recent Failed, Postponed and Skipped executions of the subscription, across its collections
// (Horarium's GET …/providers/Microsoft.Scheduler/failures), with each job's state now and, for a
// failure, whether a retry follows.
import { call, parseId, paths } from "./api.js";
import { badge, h, heading, pager, table } from "./dom.js";
import { utc } from "./format.js";
import { jobLink } from "./joblist.js";

const PAGE = 50;

/** For a Failed attempt: whether a retry follows or it was the last (the API's finalAttempt). */
function fate(entry) {
  const final = entry.properties.finalAttempt;
  if (final === undefined) return null;
  const main = entry.properties.actionName !== "ErrorAction";
  return final
    ? h("span", { class: "fate final" }, main ? "final: the execution faulted" : "final: the error action failed")
    : h("span", { class: "fate retried" }, "a retry follows");
}

export async function failuresPage(view) {
  const state = { status: "", offset: 0 };
  const list = h("div", { id: "failures" });

  async function load() {
    const query = { $top: PAGE, $skip: state.offset || undefined };
    if (state.status) query.$filter = `status eq ${state.status}`;
    const page = await call("GET", paths.failures(), { query });
    const job = (e) => {
      const id = parseId(e.properties.jobId);
      return h("a", { href: jobLink(id.group, id.collection, id.job) }, `${id.collection} / ${id.job}`);
    };
    list.replaceChildren(
      table([
        { title: "When (UTC)", cell: (e) => utc(e.properties.endTime ?? e.properties.startTime ?? e.properties.expectedExecutionTime) },
        { title: "Job", cell: job },
        { title: "Status", class: "wrap", cell: (e) => [badge(e.properties.status), fate(e)] },
        { title: "Job state", cell: (e) => badge(e.properties.jobState) },
        { title: "Action", cell: (e) => e.properties.actionName },
        { title: "Retry", class: "num", cell: (e) => e.properties.retryCount },
        { title: "Message", class: "message-cell", cell: (e) => h("span", { class: "message" }, e.properties.message) },
      ], page.value, {
        empty: "No failed, postponed or skipped executions.",
        rowClass: (e) => (String(e.properties.jobState).toLowerCase() === "faulted" ? "faulted" : null),
      }),
      pager({ offset: state.offset, size: PAGE, shown: page.value.length, more: Boolean(page.nextLink),
        go: (offset) => { state.offset = offset; load(); } }),
    );
  }

  const filter = h("select", { id: "failures-status", "aria-label": "Status", onchange: () => { state.status = filter.value; state.offset = 0; load(); } },
    ["", "Failed", "Postponed", "Skipped"].map((s) => h("option", { value: s }, s || "Failed, postponed, skipped")));
  view.append(
    heading("Failures", filter, h("button", { type: "button", onclick: () => load() }, "Refresh")),
    h("p", { class: "muted" }, "Failed attempts, postponed (missed) and skipped (overlapping) executions of every job in this subscription,",
      " newest first. Rows of jobs that are Faulted now are marked."),
    list,
  );
  await load();
}
