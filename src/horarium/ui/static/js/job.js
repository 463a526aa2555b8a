// One job: its status, actions (run now, enable, disable, delete), the next 20 executions with
// daylight saving marks, start lag and duration of recent executions, history, its definition.
import { call, paths } from "./api.js";
import { barChart } from "./chart.js";
import { badge, capital, confirmAction, errorBox, h, heading, pager, replace, table } from "./dom.js";
import { duration, parseTime, pauseText, relative, utc, wallClock } from "./format.js";
import { jobsLink } from "./collections.js";
import { failureFate, statusOf } from "./outcomes.js";

const HISTORY_PAGE = 20;
const CHART_ENTRIES = 100;
const STATUSES = ["", "Completed", "Failed", "Postponed", "Skipped"];

// Start lag is a first attempt's alone: a retry starts late by its retry policy's wait.
const firstAttempt = (e) => (e.properties.retryCount ?? 0) === 0 && e.properties.actionName !== "ErrorAction";
const lag = (e) => (firstAttempt(e) ? parseTime(e.properties.startTime) - parseTime(e.properties.expectedExecutionTime) : NaN);
const took = (e) => parseTime(e.properties.endTime) - parseTime(e.properties.startTime);

/** `Overlap: Skip · Missed: RunAll (catch-up window 1.00:00:00) · Start within: 00:05:00`,
 * a job's executionPolicy (its deadlines when it has any). */
export function policyLine(policy) {
  const window = policy.missed === "RunAll" ? ` (catch-up window ${policy.catchUpWindow})` : "";
  const due = policy.deadlines || {};
  const deadlines = (due.startWithin ? ` · Start within: ${due.startWithin}` : "")
    + (due.finishWithin ? ` · Finish within: ${due.finishWithin}` : "");
  return h("p", { class: "policy muted", id: "execution-policy" },
    `Overlap: ${policy.overlap} · Missed: ${policy.missed}${window}${deadlines}`);
}

/** The columns of an `upcoming` listing (a job's executions, a monitor's expected check-ins):
 *  UTC, local time, daylight saving (`dst`: an entry's mark) and, when an entry has one, what a
 *  calendar does: a skipped execution does not run (nor count); a moved one runs at another time. */
export function whenColumns(found, dst) {
  const columns = [
    { title: "UTC", class: "when", cell: (e) => utc(e.executionTime) },
    { title: "Local time", class: "when", cell: (e) => h("span", { title: `UTC${e.utcOffset}` }, wallClock(e.localTime)) },
    { title: "DST", class: "marks", cell: dst },
  ];
  if (found.some((e) => e.skippedByCalendar || e.movedByCalendar)) {
    columns.push({ title: "Calendar", class: "marks", cell: (e) => {
      if (e.skippedByCalendar) return h("span", { class: "calendar-skipped" }, `skipped: excluded by ${e.skippedByCalendar}`);
      if (e.movedByCalendar) return h("span", { class: "calendar-moved", title: (e.scheduledExecutionTimes ?? []).map(utc).join(", ") }, `moved by ${e.movedByCalendar}`);
      return "";
    } });
  }
  return columns;
}

export async function jobPage(view, [group, collection, name]) {
  const path = paths.job(group, collection, name);
  const history = { status: "", offset: 0 };
  const parts = {
    summary: h("div", { id: "job-summary" }),
    chart: h("div", { class: "card", id: "job-chart" }),
    upcoming: h("div", { class: "card", id: "job-upcoming" }),
    history: h("div", { id: "job-history", class: "history" }),
    definition: h("pre", { class: "json", id: "job-definition", tabindex: "0" }),
    message: h("div", { id: "job-message" }),
  };
  const buttons = {
    run: h("button", { type: "button", id: "job-run", onclick: () => act("run") }, "Run now"),
    enable: h("button", { type: "button", id: "job-enable", onclick: () => act("enable") }, "Enable"),
    disable: h("button", { type: "button", id: "job-disable", onclick: () => act("disable") }, "Disable"),
    edit: h("a", { class: "button", id: "job-edit", href: `#/edit/${[group, collection, name].map(encodeURIComponent).join("/")}` }, "Edit"),
    remove: h("button", { type: "button", id: "job-delete", class: "danger", onclick: () => act("delete") }, "Delete"),
  };
  const stateBadge = h("span", {});
  let timer = null;
  let jobProps = {}; // the job's properties as last loaded (its retry policy, its state)
  let held = null; // {until (ms, Infinity: until enabled), why}: when the job runs nothing

  /** Until when the job runs nothing, and why (null when it runs): a collection that is not
   *  Enabled holds it until the collection's pause ends, or until the collection is enabled
   *  (which enables its jobs too); else a Disabled job, until its own pause ends or until it is
   *  enabled. */
  function holdOf(props, collectionInfo) {
    const hold = (pause, why) => ({ until: pause ? parseTime(pause.until) : Infinity, untilText: pause?.until, why });
    const cprops = collectionInfo.properties ?? {};
    if (capital(cprops.state) !== "Enabled") {
      return hold(cprops.pause, cprops.pause ? `its collection is paused ${pauseText(cprops.pause)}` : `its collection is ${cprops.state}`);
    }
    if (capital(props.state) === "Disabled") {
      return hold(props.pause, props.pause ? `the job is paused ${pauseText(props.pause)}` : "the job is Disabled");
    }
    return null;
  }

  async function loadJob() {
    const [job, collectionInfo] = await Promise.all([
      call("GET", path, { query: { $expand: "scheduleDescription" } }),
      call("GET", paths.collection(group, collection)),
    ]);
    const props = job.properties ?? {};
    jobProps = props;
    held = holdOf(props, collectionInfo);
    const status = props.status ?? {};
    stateBadge.replaceChildren(badge(props.state));
    buttons.enable.disabled = capital(props.state) !== "Disabled";
    buttons.disable.disabled = capital(props.state) !== "Enabled";
    // The API refuses to run a Disabled job, or any job of a collection that is not Enabled.
    const refusal = capital(props.state) === "Disabled" ? "The job is Disabled: enable it to run it."
      : capital(collectionInfo.properties?.state) !== "Enabled" ? `Its collection is ${collectionInfo.properties?.state}: enable the collection to run it.`
        : null;
    buttons.run.disabled = refusal !== null;
    buttons.run.title = refusal ?? "";
    const item = (term, value) => [h("dt", {}, term), h("dd", {}, value)];
    parts.summary.replaceChildren(h("dl", { class: "summary" },
      ...(props.pause ? item("Paused", pauseText(props.pause)) : []),
      item("Schedule", props.scheduleDescription ?? "—"),
      ...(props.executionPolicy ? item("Execution policy", policyLine(props.executionPolicy).textContent) : []),
      item("Next run", status.nextExecutionTime ? `${utc(status.nextExecutionTime)} UTC (${relative(status.nextExecutionTime)})` : "—"),
      item("Last run", status.lastExecutionTime ? `${utc(status.lastExecutionTime)} UTC (${relative(status.lastExecutionTime)})` : "—"),
      item("Runs", String(status.executionCount ?? 0)),
      item("Failures", String(status.failureCount ?? 0)),
      item("Faulted", String(status.faultedCount ?? 0)),
      item("Action", `${props.action?.type ?? ""} ${props.action?.request?.method ?? ""} ${props.action?.request?.uri ?? ""}`.trim()),
    ));
    const { scheduleDescription: _, ...definition } = props; // shown as the API answers without $expand
    parts.definition.textContent = JSON.stringify({ ...job, properties: definition }, null, 2);
  }

  async function loadUpcoming() {
    const listing = await call("GET", `${path}/upcoming`, { query: { count: 20 } });
    const found = listing.value;
    const dst = (e) => {
      if (e.movedBySpringForward) return h("span", { class: "dst", title: "The asked-for time does not exist that day" }, `moved: ${wallClock(e.scheduledLocalTime)} does not exist`);
      if (e.mergedByFallBack) return h("span", { class: "dst", title: "The asked-for time occurs twice that day; it runs once" }, "fall back: runs once");
      return e.daylightSavingTime ? h("span", { class: "muted" }, "summer time") : "";
    };
    const zone = found[0]?.timeZone ?? "UTC";
    const heldAt = (e) => held !== null && !e.skippedByCalendar && parseTime(e.executionTime) < held.until;
    const columns = [{ title: "#", class: "num", cell: (e) => e.repeatCount ?? "" }, ...whenColumns(found, dst)];
    // A Disabled or paused job, or one of a collection that is not Enabled, runs none of these
    // before it is enabled (a pause's end enables it).
    if (found.some(heldAt) && Number.isFinite(held.until)) {
      columns.push({ title: "Runs?", class: "marks", cell: (e) => (heldAt(e) ? h("span", { class: "held" }, "does not run") : "") });
    }
    const rowClass = (e) => (e.skippedByCalendar ? "calendar-skipped-row" : heldAt(e) ? "held-row" : e.overdue ? "overdue-row" : null);
    // Executions already due that no process has run yet: what executionPolicy.missed does.
    if (found.some((e) => e.overdue)) {
      columns.push({ title: "Overdue", class: "marks", cell: (e) => (e.overdue
        ? h("span", { class: "overdue", title: "Due already; once found later than the grace period, the missed policy decides" },
          e.ifMissed === "Runs" ? "runs if missed" : "postponed if missed")
        : "") });
    }
    const holdNote = held === null ? null : h("p", { class: "note pause", id: "upcoming-held" },
      Number.isFinite(held.until)
        ? `Nothing runs before ${utc(held.untilText)} UTC: ${held.why}.`
        : `None of these runs: ${held.why}. They are when it would run once enabled.`);
    replace(parts.upcoming, h("h2", {}, `Next 20 executions (${zone})`), holdNote,
      listing.executionPolicy ? policyLine(listing.executionPolicy) : null,
      table(columns, found, { empty: "No executions are scheduled.", compact: true, rowClass }));
  }

  async function loadChart() {
    const found = (await call("GET", `${path}/history`, { query: { $top: CHART_ENTRIES } })).value
      .filter((e) => e.properties.startTime && e.properties.expectedExecutionTime)
      .sort((a, b) => parseTime(a.properties.startTime) - parseTime(b.properties.startTime));
    // Each bar coloured by its outcome; start lag of first attempts only (a retry's start is
    // late by its policy's wait, not by the scheduler).
    const rows = (entries, value, label) => entries.map((e) => ({ label: utc(e.properties.startTime).slice(11),
      parts: [{ value: value(e), class: `outcome-${statusOf(e)}`, name: `${statusOf(e)}, ${label}` }] }));
    const size = { format: duration, width: 380, height: 120 };
    if (!found.length) {
      parts.chart.replaceChildren(h("h2", {}, "Start lag and duration"), h("p", { class: "muted" }, "No executions yet."));
      return;
    }
    parts.chart.replaceChildren(
      h("h2", {}, `Start lag and duration of the last ${found.length} executions`),
      h("div", { class: "charts" },
        barChart(rows(found.filter(firstAttempt), lag, "lag"), { caption: "Start lag of first attempts (start − expected time)", ...size }),
        barChart(rows(found, took, "duration"), { caption: "Duration (end − start)", ...size })),
      h("p", { class: "legend" }, h("span", { class: "key ok" }), "completed ", h("span", { class: "key failed" }), "failed ",
        h("span", { class: "key postponed" }), "postponed ", h("span", { class: "key skipped" }), "skipped"),
    );
  }

  async function loadHistory() {
    const query = { $top: HISTORY_PAGE, $skip: history.offset || undefined };
    if (history.status) query.$filter = `status eq ${history.status}`;
    const page = await call("GET", `${path}/history`, { query });
    const filter = h("select", { id: "history-status", "aria-label": "History status", onchange: () => { history.status = filter.value; history.offset = 0; loadHistory(); } },
      STATUSES.map((s) => h("option", { value: s, selected: s === history.status }, s || "Any status")));
    parts.history.replaceChildren(
      h("div", { class: "heading" }, h("h2", {}, "History"), h("div", { class: "actions" }, filter,
        h("button", { type: "button", id: "history-refresh", onclick: refresh }, "Refresh"))),
      table([
        { title: "Started (UTC)", class: "when", cell: (e) => utc(e.properties.startTime ?? e.properties.expectedExecutionTime) },
        { title: "Status", class: "wrap", cell: (e) => {
          const fate = failureFate(e, jobProps);
          return [badge(e.properties.status ?? "Completed"),
            fate ? h("span", { class: fate.final ? "fate final" : "fate retried" }, fate.text) : null];
        } },
        { title: "Retry", class: "num", cell: (e) => e.properties.retryCount },
        { title: "Lag", class: "num", cell: (e) => (firstAttempt(e) ? duration(lag(e)) : h("span", { class: "muted", title: "A retry starts after its retry policy's wait" }, "retry")) },
        { title: "Duration", class: "num", cell: (e) => duration(took(e)) },
        { title: "Message", class: "message-cell", cell: (e) => h("span", { class: "message" }, e.properties.message) },
      ], page.value, { empty: "No history entries.", rowClass: () => "history-row", compact: true }),
      pager({ offset: history.offset, size: HISTORY_PAGE, shown: page.value.length, more: Boolean(page.nextLink),
        go: (offset) => { history.offset = offset; loadHistory(); } }),
    );
    return page.value.length;
  }

  async function refresh() {
    await loadJob(); // first: the others read its retry policy and whether it is held
    await Promise.all([loadHistory(), loadChart(), loadUpcoming()]);
  }

  // After "Run now": look at the history every 2 s for a minute, until a new entry shows.
  function watchForRun(before) {
    clearInterval(timer);
    let tries = 0;
    timer = setInterval(async () => {
      tries += 1;
      const latest = (await call("GET", `${path}/history`, { query: { $top: 1 } })).value[0]?.id;
      if (latest !== before || tries >= 30) {
        clearInterval(timer);
        await refresh();
      }
    }, 2000);
  }

  const ACTIONS = {
    run: { ask: `Run job “${name}” now, once, outside its schedule?`, ok: "Run now", done: "Run requested.",
      send: () => call("POST", `${path}/run`) },
    enable: { ask: `Enable job “${name}”? It runs again from its next scheduled time.`, ok: "Enable", done: "Enabled.",
      send: () => call("PATCH", path, { body: { properties: { state: "Enabled" } } }) },
    disable: { ask: `Disable job “${name}”? It will not run until it is enabled again.`, ok: "Disable", done: "Disabled.",
      send: () => call("PATCH", path, { body: { properties: { state: "Disabled" } } }) },
    delete: { ask: `Delete job “${name}” and its history? This cannot be undone.`, ok: "Delete", done: "Deleted.",
      send: () => call("DELETE", path) },
  };

  async function act(kind) {
    const action = ACTIONS[kind];
    if (!(await confirmAction(action.ask, action.ok))) return;
    parts.message.replaceChildren();
    try {
      const before = (await call("GET", `${path}/history`, { query: { $top: 1 } })).value[0]?.id;
      await action.send();
      if (kind === "delete") {
        location.hash = jobsLink(group, collection);
        return;
      }
      parts.message.replaceChildren(h("div", { class: "note", role: "status" }, action.done));
      await refresh();
      if (kind === "run") watchForRun(before);
    } catch (e) {
      parts.message.replaceChildren(errorBox(e));
    }
  }

  view.append(
    h("p", { class: "crumbs" }, h("a", { href: "#/collections" }, "Collections"), " / ",
      h("a", { href: jobsLink(group, collection) }, `${group} / ${collection}`), " / ", name),
    heading(name, stateBadge, buttons.run, buttons.enable, buttons.disable, buttons.edit, buttons.remove),
    parts.message,
    h("div", { class: "columns" }, h("div", { class: "card" }, h("h2", {}, "Status"), parts.summary), parts.chart),
    h("div", { class: "columns lists" }, parts.upcoming, h("div", { class: "card" }, parts.history)),
    h("details", { class: "card", open: true }, h("summary", {}, "Definition (as the API returns it: secrets left out)"), parts.definition),
  );
  await refresh().catch((e) => { if (e.status !== 401) parts.message.replaceChildren(errorBox(e)); });
  return () => clearInterval(timer);
}
