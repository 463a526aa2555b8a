// Exclusion calendars of a collection (read-only): a card on the collection's jobs page (what
// each excludes, which jobs list it) and a page per calendar with its content.
import { call, listAll, paths } from "./api.js";
import { add, errorBox, h, heading, table } from "./dom.js";

const enc = encodeURIComponent;
const shortName = (resource) => resource.name.split("/").at(-1);

export function calendarLink(group, collection, name) {
  return `#/calendar/${[group, collection, name].map(enc).join("/")}`;
}

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
function usersByCalendar(jobs) {
  const found = new Map();
  for (const job of jobs) {
    for (const name of job.properties?.recurrence?.excludeCalendars ?? []) {
      const key = name.toLowerCase();
      found.set(key, [...(found.get(key) ?? []), shortName(job)]);
    }
  }
  return found;
}

function usedBy(group, collection, jobs) {
  if (!jobs?.length) return h("span", { class: "muted" }, "no job");
  return jobs.flatMap((job, i) => [i ? ", " : null, jobLink(group, collection, job)]);
}

/** The card on a collection's page; loads by itself (the jobs list does not wait for it). */
export function calendarsCard(group, collection) {
  const base = paths.collection(group, collection);
  const body = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  const card = h("section", { class: "card", id: "calendars" },
    h("h2", {}, "Exclusion calendars"),
    body,
    h("p", { class: "hint" }, "Read-only here: the API (or horarium calendars put) changes them."));
  (async () => {
    try {
      const [calendars, jobs] = await Promise.all([listAll(`${base}/calendars`), listAll(`${base}/jobs`)]);
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
  add(view, [
    h("p", { class: "crumbs" },
      h("a", { href: "#/collections" }, "Collections"), " / ",
      h("a", { href: `#/jobs/${enc(group)}/${enc(collection)}` }, `${group} / ${collection}`), " / calendars"),
    heading(shortName(calendar), h("span", { class: "muted" }, "exclusion calendar (read-only)")),
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
    props.ical
      ? h("details", { class: "card" }, h("summary", {}, "iCalendar document"), h("pre", { class: "json", id: "calendar-ical" }, props.ical))
      : null,
    h("details", { class: "card" }, h("summary", {}, "Definition (JSON)"),
      h("pre", { class: "json", id: "calendar-definition" }, JSON.stringify(calendar, null, 2))),
  ]);
}
