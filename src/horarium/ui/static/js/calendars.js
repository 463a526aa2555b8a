// Exclusion calendars of a collection: a card on the collection's jobs page (what each
// excludes, which jobs list it), a page per calendar (its content, the days it excludes in a
// window, the executions it skips or moves), and what the calendar form's preview draws.
import { call, listAll, paths } from "./api.js";
import { add, confirmAction, errorBox, h, heading, replace, table } from "./dom.js";
import { inZone, utc } from "./format.js";

const enc = encodeURIComponent;
const shortName = (resource) => resource.name.split("/").at(-1);

export function calendarLink(group, collection, name) {
  return `#/calendar/${[group, collection, name].map(enc).join("/")}`;
}

export const calendarEditLink = (group, collection, name) => `#/calendar-edit/${[group, collection, name].map(enc).join("/")}`;
export const calendarNewLink = (group, collection) => `#/calendar-new/${[group, collection].map(enc).join("/")}`;

const jobLink = (group, collection, job) => h("a", { href: `#/job/${[group, collection, job].map(enc).join("/")}` }, job);

function holidaysText(holidays) {
  if (!holidays) return "—";
  return holidays.subdivision ? `${holidays.country}/${holidays.subdivision}` : holidays.country;
}

const plural = (count, noun) => `${count} ${noun}${count === 1 ? "" : "s"}`;

/** What a calendar excludes, in a few words: "weekends, holidays US/NY, 3 dates". */
export function calendarSummary(properties = {}) {
  const parts = [];
  if (properties.weekends) parts.push("weekends");
  if (properties.holidays) parts.push(`holidays ${holidaysText(properties.holidays)}`);
  if (properties.dates?.length) parts.push(plural(properties.dates.length, "date"));
  if (properties.ranges?.length) parts.push(plural(properties.ranges.length, "range"));
  if (properties.ical) parts.push("iCalendar");
  return parts.join(", ") || "nothing";
}

/** Calendar name (lower case: names are case-insensitive) -> the jobs that list it. */
export function usersByCalendar(jobs) {
  const found = new Map();
  for (const job of jobs) {
    for (const name of job.properties?.recurrence?.excludeCalendars ?? []) {
      const key = name.toLowerCase();
      found.set(key, [...(found.get(key) ?? []), shortName(job)]);
    }
  }
  return found;
}

export function usedBy(group, collection, jobs) {
  if (!jobs?.length) return h("span", { class: "muted" }, "no job");
  return jobs.flatMap((job, i) => [i ? ", " : null, jobLink(group, collection, job)]);
}

/** The card on a collection's page; loads by itself (the jobs list does not wait for it). */
export function calendarsCard(group, collection) {
  const base = paths.collection(group, collection);
  const body = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  const card = h("section", { class: "card", id: "calendars" },
    h("div", { class: "heading small-heading" }, h("h2", {}, "Exclusion calendars"),
      h("a", { class: "button", href: calendarNewLink(group, collection), id: "calendar-new" }, "New calendar")),
    body);
  (async () => {
    try {
      // The jobs (for "Used by") only when there is a calendar they could list.
      const calendars = await listAll(`${base}/calendars`);
      const jobs = calendars.length ? await listAll(`${base}/jobs`, { parallel: 4 }) : [];
      const users = usersByCalendar(jobs);
      const columns = [
        { title: "Name", cell: (c) => h("a", { href: calendarLink(group, collection, shortName(c)) }, shortName(c)) },
        { title: "Excludes", class: "wrap", cell: (c) => calendarSummary(c.properties) },
        { title: "Used by", class: "wrap", cell: (c) => usedBy(group, collection, users.get(shortName(c).toLowerCase())) },
      ];
      body.replaceChildren(table(columns, calendars, { compact: true, empty: "No exclusion calendars in this collection." }));
    } catch (e) {
      body.replaceChildren(errorBox(e));
    }
  })();
  return card;
}

/** The zones of the jobs that list a calendar (the first is the default for its days). */
export function zonesOf(jobs, name) {
  const key = name.toLowerCase();
  const zones = jobs
    .filter((j) => (j.properties?.recurrence?.excludeCalendars ?? []).some((n) => n.toLowerCase() === key))
    .map((j) => j.properties?.recurrence?.timeZone)
    .filter((z) => z && inZone(new Date().toISOString(), z));
  return [...new Set([...zones, "UTC"])];
}

const KIND_WORDS = { date: "listed date", weekend: "weekend", holiday: "holiday", range: "range", event: "iCalendar event" };
const weekday = (day) => new Date(`${day}T00:00:00Z`).toLocaleDateString("en-GB", { weekday: "short", timeZone: "UTC" });
const clock = (text, zone) => (inZone(text, zone) ?? `${utc(text)} (UTC)`).slice(11);

/** The days a calendar excludes (`value` of excludedDates, or a preview's excludedDates). */
export function daysTable(days, zone, id) {
  const columns = [
    { title: "Date", cell: (d) => h("span", { class: "nowrap" }, d.date) },
    { title: "Day", cell: (d) => weekday(d.date) },
    { title: "Excluded", class: "wrap", cell: (d) => (d.wholeDay
      ? "whole day"
      : (d.spans ?? []).map((s) => `${clock(s.start, zone)} – ${clock(s.end, zone)}`).join(", ")) },
    { title: "Why", class: "wrap", cell: (d) => d.reasons.map((r) => (r.kind === "date" ? KIND_WORDS.date : `${KIND_WORDS[r.kind] ?? r.kind}: ${r.detail}`)).join("; ") },
  ];
  const wrap = table(columns, days, { compact: true, empty: "It excludes no day in this window." });
  wrap.id = id;
  return wrap;
}

const CHANGE_WORDS = { new: "new", same: "as now", released: "no longer" };

function effectText(e, zone) {
  if (e.skippedByCalendar) return "skipped";
  const from = (e.scheduledExecutionTimes ?? []).map((t) => inZone(t, zone) ?? utc(t)).join(", ");
  return `moved to ${inZone(e.executionTime, zone) ?? utc(e.executionTime)}${from ? ` (from ${from})` : ""}`;
}

/** What a calendar does to the jobs that list it (a preview answer's `jobs`). */
export function effectsList(jobs, group, collection, zone, id) {
  if (!jobs.length) return h("p", { class: "muted", id }, "No job lists this calendar.");
  return h("div", { id }, jobs.map((job) => {
    const rows = job.executions;
    const held = job.heldBy ? h("p", { class: "hint" }, `${job.heldBy.by === "collection" ? "The collection" : "The job"} is ${job.heldBy.state}: its executions do not run now.`) : null;
    const columns = [
      { title: `Scheduled (${zone})`, class: "when", cell: (e) => inZone(e.scheduledExecutionTime, zone) ?? utc(e.scheduledExecutionTime) },
      { title: "What the calendar does", class: "wrap", cell: (e) => h("span", { class: e.skippedByCalendar ? "calendar-skipped" : "calendar-moved" }, effectText(e, zone)) },
      { title: "Change", cell: (e) => h("span", { class: `change change-${e.change}` }, CHANGE_WORDS[e.change] ?? e.change) },
    ];
    return h("section", { class: "effect", "data-job": job.name },
      h("h3", {}, jobLink(group, collection, job.name), " ", h("span", { class: "muted small plain" }, job.scheduleDescription ?? "")),
      held,
      job.error ? h("p", { class: "field-error" }, job.error) : null,
      table(columns, rows, { compact: true, empty: "Nothing skipped or moved in this window.", rowClass: (e) => `change-row-${e.change}` }));
  }));
}

export async function calendarPage(view, [group, collection, name]) {
  const base = paths.collection(group, collection);
  const [calendar, jobs] = await Promise.all([
    call("GET", `${base}/calendars/${enc(name)}`),
    listAll(`${base}/jobs`),
  ]);
  const props = calendar.properties ?? {};
  const users = usersByCalendar(jobs).get(shortName(calendar).toLowerCase());
  const item = (term, ...value) => [h("dt", {}, term), h("dd", {}, ...value)];
  const ranges = props.ranges?.length
    ? table([{ title: "Start", cell: (r) => r.start }, { title: "End (exclusive)", cell: (r) => r.end }], props.ranges, { compact: true })
    : "—";
  const zones = zonesOf(jobs, shortName(calendar));
  const state = { zone: zones[0], months: "3" };
  const daysBody = h("div", { "aria-live": "polite" }, h("p", { class: "muted" }, "Loading…"));
  const effectsBody = h("div", { "aria-live": "polite" }, h("p", { class: "muted" }, "Loading…"));
  const monthsSelect = h("select", { id: "days-window", onchange: () => { state.months = monthsSelect.value; loadDays(); } },
    h("option", { value: "1" }, "next month"), h("option", { value: "3", selected: true }, "next 3 months"),
    h("option", { value: "12" }, "next 12 months"));
  const zoneSelect = h("select", { id: "days-zone", onchange: () => { state.zone = zoneSelect.value; loadDays(); loadEffects(); } },
    zones.map((z) => h("option", { value: z }, z)));

  async function loadDays() {
    const today = new Date().toISOString().slice(0, 10);
    const end = new Date();
    end.setUTCMonth(end.getUTCMonth() + Number(state.months));
    try {
      const answer = await call("GET", `${base}/calendars/${enc(name)}/excludedDates`,
        { query: { from: today, to: end.toISOString().slice(0, 10), timeZone: state.zone } });
      replace(daysBody, h("p", { class: "muted small" }, `${answer.value.length} day(s) from ${answer.from} to ${answer.to} (exclusive), read in ${answer.timeZone}.`),
        daysTable(answer.value, state.zone, "excluded-days"));
    } catch (e) {
      if (e.status !== 401) replace(daysBody, errorBox(e));
    }
  }

  async function loadEffects() {
    try {
      const answer = await call("POST", `${base}/calendars/${enc(name)}/upcoming`, { body: { properties: props }, query: { timeZone: state.zone } });
      replace(effectsBody, effectsList(answer.jobs, group, collection, state.zone, "calendar-effects"));
    } catch (e) {
      if (e.status !== 401) replace(effectsBody, errorBox(e));
    }
  }

  async function remove() {
    if (!(await confirmAction(`Delete calendar ${shortName(calendar)}?`, "Delete", [
      users?.length ? `It is listed by ${users.join(", ")}: the API refuses while a job lists it.` : "No job lists it.",
    ]))) return;
    try {
      await call("DELETE", `${base}/calendars/${enc(name)}`);
      location.hash = `#/jobs/${enc(group)}/${enc(collection)}`;
    } catch (e) {
      if (e.status !== 401) view.prepend(errorBox(e));
    }
  }

  add(view, [
    h("p", { class: "crumbs" },
      h("a", { href: "#/collections" }, "Collections"), " / ",
      h("a", { href: `#/jobs/${enc(group)}/${enc(collection)}` }, `${group} / ${collection}`), " / calendars"),
    heading(shortName(calendar), h("span", { class: "muted" }, "exclusion calendar"),
      h("a", { class: "button", href: calendarEditLink(group, collection, shortName(calendar)), id: "calendar-edit" }, "Edit"),
      h("button", { type: "button", class: "danger", id: "calendar-delete", onclick: remove }, "Delete")),
    h("div", { class: "card" },
      h("dl", { class: "summary", id: "calendar-summary" },
        ...item("Excludes", calendarSummary(props)),
        ...item("Weekends", props.weekends ? "Saturdays and Sundays" : "no"),
        ...item("Holidays", props.holidays ? `public holidays of ${holidaysText(props.holidays)}` : "—"),
        ...item("Dates", props.dates?.length ? props.dates.join(", ") : "—"),
        ...item("Ranges", ranges),
        ...item("iCalendar", props.ical ? `${props.ical.length} characters (below)` : "—"),
        ...item("Used by", usedBy(group, collection, users)),
      )),
    h("section", { class: "card", id: "calendar-days" },
      h("div", { class: "heading small-heading" }, h("h2", {}, "Days it excludes"),
        h("div", { class: "actions" },
          h("label", { for: "days-window" }, "Window"), monthsSelect,
          h("label", { for: "days-zone" }, "Time zone"), zoneSelect)),
      daysBody),
    h("section", { class: "card", id: "calendar-jobs" },
      h("h2", {}, "Executions it skips or moves (next 31 days)"), effectsBody),
    props.ical
      ? h("details", { class: "card" }, h("summary", {}, "iCalendar document"), h("pre", { class: "json", id: "calendar-ical", tabindex: "0" }, props.ical))
      : null,
    h("details", { class: "card" }, h("summary", {}, "Definition (JSON)"),
      h("pre", { class: "json", id: "calendar-definition", tabindex: "0" }, JSON.stringify(calendar, null, 2))),
  ]);
  loadDays();
  loadEffects();
}
