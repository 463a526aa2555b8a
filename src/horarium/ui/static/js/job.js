// One job: its status, actions (run now, enable, disable, delete), the next 20 executions with
// daylight saving marks, start lag and duration of recent executions, history, its definition.
import { call, paths } from "./api.js";
import { barChart } from "./chart.js";
import { badge, capital, confirmAction, errorBox, h, heading, pager, replace, table } from "./dom.js";
import { duration, parseTime, pauseText, relative, utc, wallClock } from "./format.js";
import { jobsLink } from "./collections.js";

const HISTORY_PAGE = 20;
const CHART_ENTRIES = 100;
const STATUSES = ["", "Completed", "Failed", "Postponed", "Skipped"];

const lag = (e) => parseTime(e.properties.startTime) - parseTime(e.properties.expectedExecutionTime);
const took = (e) => parseTime(e.properties.endTime) - parseTime(e.properties.startTime);

/** `Overlap: Skip · Missed: RunAll (catch-up window 1.00:00:00)`, a job's executionPolicy. */
export function policyLine(policy) {
  const window = policy.missed === "RunAll" ? ` (catch-up window ${policy.catchUpWindow})` : "";
  return h("p", { class: "policy muted", id: "execution-policy" },
    `Overlap: ${policy.overlap} · Missed: ${policy.missed}${window}`);
}

export async function jobPage(view, [group, collection, name]) {
  const path = paths.job(group, collection, name);
  const history = { status: "", offset: 0 };
  const parts = {
    summary: h("div", { id: "job-summary" }),
    chart: h("div", { class: "card", id: "job-chart" }),
    upcoming: h("div", { class: "card", id: "job-upcoming" }),
    history: h("div", { id: "job-history", class: "history" }),
    definition: h("pre", { class: "json", id: "job-definition" }),
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

  async function loadJob() {
    const job = await call("GET", path, { query: { $expand: "scheduleDescription" } });
    const props = job.properties ?? {};
    const status = props.status ?? {};
    stateBadge.replaceChildren(badge(props.state));
    buttons.enable.disabled = capital(props.state) !== "Disabled";
    buttons.disable.disabled = capital(props.state) !== "Enabled";
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
    const columns = [
      { title: "#", class: "num", cell: (e) => e.repeatCount },
      { title: "UTC", cell: (e) => utc(e.executionTime) },
      { title: "Local time", cell: (e) => h("span", { title: `UTC${e.utcOffset}` }, wallClock(e.localTime)) },
      { title: "DST", class: "wrap", cell: dst },
    ];
    // Executions already due that no process has run yet: what executionPolicy.missed does.
    if (found.some((e) => e.overdue)) {
      columns.push({ title: "Overdue", class: "wrap", cell: (e) => (e.overdue
        ? h("span", { class: "overdue", title: "Due already; once found later than the grace period, the missed policy decides" },
          e.ifMissed === "Runs" ? "runs if missed" : "postponed if missed")
        : "") });
    }
    replace(parts.upcoming, h("h2", {}, `Next 20 executions (${zone})`),
      listing.executionPolicy ? policyLine(listing.executionPolicy) : null,
      table(columns, found, { empty: "No executions are scheduled.", compact: true, rowClass: (e) => (e.overdue ? "overdue-row" : null) }));
  }

  async function loadChart() {
    const found = (await call("GET", `${path}/history`, { query: { $top: CHART_ENTRIES } })).value
      .filter((e) => e.properties.startTime && e.properties.expectedExecutionTime)
      .sort((a, b) => parseTime(a.properties.startTime) - parseTime(b.properties.startTime));
    const rows = (value, cls, label) => found.map((e) => ({ label: utc(e.properties.startTime).slice(11), parts: [{ value: value(e), class: cls, name: label }] }));
    const size = { format: duration, width: 380, height: 120 };
    if (!found.length) {
      parts.chart.replaceChildren(h("h2", {}, "Start lag and duration"), h("p", { class: "muted" }, "No executions yet."));
      return;
    }
    parts.chart.replaceChildren(
      h("h2", {}, `Start lag and duration of the last ${found.length} executions`),
      h("div", { class: "charts" },
        barChart(rows(lag, "lag", "lag"), { caption: "Start lag (start − expected time)", ...size }),
        barChart(rows(took, "took", "duration"), { caption: "Duration (end − start)", ...size })),
    );
  }

  async function loadHistory() {
    const query = { $top: HISTORY_PAGE, $skip: history.offset || undefined };
    if (history.status) query.$filter = `status eq ${history.status}`;
    const page = await call("GET", `${path}/history`, { query });
    const filter = h("select", { id: "history-status", onchange: () => { history.status = filter.value; history.offset = 0; loadHistory(); } },
      STATUSES.map((s) => h("option", { value: s, selected: s === history.status }, s || "Any status")));
    parts.history.replaceChildren(
      h("div", { class: "heading" }, h("h2", {}, "History"), h("div", { class: "actions" }, filter,
        h("button", { type: "button", id: "history-refresh", onclick: refresh }, "Refresh"))),
      table([
        { title: "Started (UTC)", cell: (e) => utc(e.properties.startTime ?? e.properties.expectedExecutionTime) },
        { title: "Status", cell: (e) => badge(e.properties.status ?? "Completed") },
        { title: "Retry", class: "num", cell: (e) => e.properties.retryCount },
        { title: "Lag", class: "num", cell: (e) => duration(lag(e)) },
        { title: "Duration", class: "num", cell: (e) => duration(took(e)) },
        { title: "Message", cell: (e) => h("span", { class: "message", title: e.properties.message }, e.properties.message) },
      ], page.value, { empty: "No history entries.", rowClass: () => "history-row", compact: true }),
      pager({ offset: history.offset, size: HISTORY_PAGE, shown: page.value.length, more: Boolean(page.nextLink),
        go: (offset) => { history.offset = offset; loadHistory(); } }),
    );
    return page.value.length;
  }

  async function refresh() {
    await Promise.all([loadJob(), loadHistory(), loadChart(), loadUpcoming()]);
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
    h("div", { class: "columns even" }, parts.upcoming, h("div", { class: "card" }, parts.history)),
    h("details", { class: "card", open: true }, h("summary", {}, "Definition (as the API returns it: secrets left out)"), parts.definition),
  );
  await refresh().catch((e) => { if (e.status !== 401) parts.message.replaceChildren(errorBox(e)); });
  return () => clearInterval(timer);
}
