// Check-in monitors of a collection: a page listing them (status, last check-in, next expected)
// and a page per monitor (its next expected check-ins with calendar and daylight saving marks,
// its check-in history, and a new ping URL on demand, with a copy button).
import { call, listAll, paths } from "./api.js";
import { confirmAction, errorBox, h, heading, pager, replace, table } from "./dom.js";
import { relative, utc, wallClock } from "./format.js";
import { jobsLink } from "./collections.js";
import { whenColumns } from "./job.js";

const enc = encodeURIComponent;
const shortName = (resource) => resource.name.split("/").at(-1);
const HISTORY_PAGE = 20;

// A status's badge: its word, coloured as the job states of the same meaning.
const STATUS_CLASS = { Up: "badge-completed", Late: "badge-postponed", Down: "badge-failed", New: "badge-skipped" };
const KIND_CLASS = { Success: "badge-completed", Start: "badge-skipped", Fail: "badge-failed" };

const statusBadge = (status) =>
  h("span", { class: `badge monitor-status ${STATUS_CLASS[status] ?? "badge-none"}` }, status || "—");

export function monitorsLink(group, collection) {
  return `#/monitors/${enc(group)}/${enc(collection)}`;
}

function monitorLink(group, collection, name) {
  return `#/monitor/${[group, collection, name].map(enc).join("/")}`;
}

const monitorsPath = (group, collection) => `${paths.collection(group, collection)}/monitors`;

/** `2024-03-10 08:30:00 UTC (in 4 min)`, or — */
function when(text) {
  return text ? `${utc(text)} UTC (${relative(text)})` : "—";
}

/** The schedule as the API holds it: `cron 0 6 * * * (Europe/Berlin)`, `every 1 Minute`. */
function scheduleText(props) {
  const r = props.recurrence;
  if (!r) return props.startTime ? `once, at ${utc(props.startTime)} UTC` : "—";
  const base = r.cron ? `cron ${r.cron}` : `every ${r.interval ?? 1} ${r.frequency ?? ""}`.trim();
  const zone = r.timeZone ? ` (${r.timeZone})` : "";
  const calendars = r.excludeCalendars?.length ? `, excluding ${r.excludeCalendars.join(", ")}` : "";
  return base + zone + calendars;
}

export async function monitorsPage(view, [group, collection]) {
  const list = h("div", { id: "monitors-list" }, h("p", { class: "muted" }, "Loading…"));
  layout(view, group, collection, "monitors", [
    heading("Monitors", h("span", { class: "muted" }, `check-ins expected in ${collection}`)),
    list,
    h("p", { class: "hint" },
      "A monitor watches work that runs elsewhere: it expects a check-in (a request to its ping URL) on its schedule. "
      + "The API (or horarium monitors put) creates and changes them."),
  ]);
  const found = await listAll(monitorsPath(group, collection));
  const columns = [
    { title: "Name", cell: (m) => h("a", { href: monitorLink(group, collection, shortName(m)) }, shortName(m)) },
    { title: "Status", cell: (m) => statusBadge(m.properties?.status) },
    { title: "Last check-in", class: "when", cell: (m) => when(m.properties?.lastCheckIn) },
    { title: "Next expected", class: "when", cell: (m) => when(m.properties?.nextExpected) },
    { title: "Grace", class: "num", cell: (m) => m.properties?.grace ?? "—" },
    { title: "Schedule", class: "wrap", cell: (m) => scheduleText(m.properties ?? {}) },
  ];
  list.replaceChildren(table(columns, found, {
    empty: "No monitors in this collection.", compact: true,
    rowClass: (m) => `monitor-row monitor-${String(m.properties?.status ?? "").toLowerCase()}`,
  }));
}

/** Crumbs, then `children`, appended to `view`. */
function layout(view, group, collection, last, children) {
  view.append(
    h("p", { class: "crumbs" }, h("a", { href: "#/collections" }, "Collections"), " / ",
      h("a", { href: jobsLink(group, collection) }, `${group} / ${collection}`), " / ", last),
    ...children);
}

export async function monitorPage(view, [group, collection, name]) {
  const path = `${monitorsPath(group, collection)}/${enc(name)}`;
  const history = { offset: 0 };
  const parts = {
    summary: h("div", { id: "monitor-summary" }),
    upcoming: h("div", { class: "card", id: "monitor-upcoming" }),
    history: h("div", { id: "monitor-history", class: "history" }),
    ping: h("div", { id: "monitor-ping" }),
    definition: h("pre", { class: "json", id: "monitor-definition" }),
    message: h("div", { id: "monitor-message" }),
  };
  const statusHolder = h("span", {});

  async function loadMonitor() {
    const monitor = await call("GET", path);
    const props = monitor.properties ?? {};
    statusHolder.replaceChildren(statusBadge(props.status));
    const item = (term, value) => [h("dt", {}, term), h("dd", {}, value)];
    parts.summary.replaceChildren(h("dl", { class: "summary" },
      item("Status", props.status ?? "—"),
      item("State", props.state ?? "—"),
      item("Last check-in", when(props.lastCheckIn)),
      item("Next expected", props.state === "Disabled" ? "— (paused: no check-in is expected)" : when(props.nextExpected)),
      item("Schedule", scheduleText(props)),
      item("Grace", props.grace ?? "—"),
      item("Max runtime", props.maxRuntime ?? "—"),
    ));
    parts.definition.textContent = JSON.stringify(monitor, null, 2);
  }

  async function loadUpcoming() {
    const listing = await call("GET", `${path}/upcoming`, { query: { count: 10 } });
    const found = listing.value ?? [];
    const zone = found[0]?.timeZone ?? "UTC";
    const dst = (e) => {
      if (e.movedBySpringForward) return h("span", { class: "dst" }, `moved: ${wallClock(e.scheduledLocalTime)} does not exist`);
      if (e.mergedByFallBack) return h("span", { class: "dst" }, "fall back: expected once");
      return e.daylightSavingTime ? h("span", { class: "muted" }, "summer time") : "";
    };
    const columns = whenColumns(found, dst);
    const rowClass = (e) => (e.skippedByCalendar ? "calendar-skipped-row" : null);
    replace(parts.upcoming, h("h2", {}, `Next expected check-ins (${zone})`),
      table(columns, found, { empty: "No check-in is expected any more (the schedule has ended).", compact: true, rowClass }));
  }

  async function loadHistory() {
    const page = await call("GET", `${path}/checkIns`, { query: { $top: HISTORY_PAGE, $skip: history.offset || undefined } });
    parts.history.replaceChildren(
      h("div", { class: "heading" }, h("h2", {}, "Check-ins"), h("div", { class: "actions" },
        h("button", { type: "button", id: "checkins-refresh", onclick: refresh }, "Refresh"))),
      table([
        { title: "Received (UTC)", class: "when", cell: (c) => utc(c.properties.time) },
        { title: "Kind", cell: (c) => h("span", { class: `badge ${KIND_CLASS[c.properties.kind] ?? "badge-none"}` }, c.properties.kind) },
        { title: "Exit code", class: "num", cell: (c) => c.properties.exitCode ?? "" },
        // The body as sent (a job's output: its lines kept), scrolled within its box.
        { title: "Body", class: "message-cell", cell: (c) => (c.properties.body ? h("pre", { class: "json checkin-body" }, c.properties.body) : "") },
      ], page.value, { empty: "No check-ins yet.", rowClass: () => "checkin-row", compact: true }),
      pager({ offset: history.offset, size: HISTORY_PAGE, shown: page.value.length, more: Boolean(page.nextLink),
        go: (offset) => { history.offset = offset; loadHistory(); } }),
    );
  }

  // The token is shown only in the answer that makes it: the page offers a new one.
  function pingCard() {
    parts.ping.replaceChildren(
      h("p", { class: "muted" },
        "The ping URL is shown once, when it is made; it cannot be read back. A new one replaces it: "
        + "the old URL stops working at once. Contributors only."),
      h("button", { type: "button", id: "ping-regenerate", onclick: regenerate }, "Regenerate ping URL"));
  }

  function showUrl(url) {
    const field = h("input", { id: "ping-url", type: "text", readonly: true, value: url, size: 60, "aria-label": "Ping URL" });
    const said = h("span", { id: "ping-copied", class: "muted", role: "status" });
    const copy = async () => {
      try {
        await navigator.clipboard.writeText(url);
        said.textContent = "Copied.";
      } catch {
        field.select(); // no clipboard access (an insecure origin, a refusal): select it instead
        said.textContent = "Selected: press Ctrl+C to copy.";
      }
    };
    parts.ping.replaceChildren(
      h("p", {}, "The new ping URL (shown only now; keep it where the job that checks in runs):"),
      h("div", { class: "toolbar" }, field, h("button", { type: "button", id: "ping-copy", onclick: copy }, "Copy"), said),
      h("p", { class: "hint" }, "From a crontab: ", h("code", {}, `curl -fsS -m 10 --retry 3 ${url}`),
        " after the job; add /start before it and /fail (or the exit code: /$?) on failure."));
  }

  async function regenerate() {
    const ok = await confirmAction(`Make a new ping URL for monitor “${name}”? The current one stops working at once.`, "Regenerate");
    if (!ok) return;
    parts.message.replaceChildren();
    try {
      const answer = await call("POST", `${path}/regeneratePingUrl`);
      showUrl(answer.properties.pingUrl);
    } catch (e) {
      parts.message.replaceChildren(errorBox(e));
    }
  }

  async function refresh() {
    await Promise.all([loadMonitor(), loadUpcoming(), loadHistory()]);
  }

  layout(view, group, collection, [h("a", { href: monitorsLink(group, collection) }, "monitors"), " / ", name], [
    heading(name, statusHolder),
    parts.message,
    h("div", { class: "columns" },
      h("div", { class: "card" }, h("h2", {}, "Status"), parts.summary),
      h("div", { class: "card" }, h("h2", {}, "Ping URL"), parts.ping)),
    h("div", { class: "columns lists" }, parts.upcoming, h("div", { class: "card" }, parts.history)),
    h("details", { class: "card" }, h("summary", {}, "Definition (JSON)"), parts.definition),
  ]);
  pingCard();
  await refresh().catch((e) => { if (e.status !== 401) parts.message.replaceChildren(errorBox(e)); });
}
