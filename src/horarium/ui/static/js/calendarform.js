// Create or edit an exclusion calendar: weekends, public holidays by country and subdivision,
// dates, ranges and an iCalendar document (typed, or a file read in the browser), with a live
// preview of the days it excludes and of the executions it would skip or move for the jobs
// that list it (the API's POST …/calendars/{name}/upcoming: validated like a PUT, nothing
// stored). As in the job form, the API is the one validator: its messages, which start with
// the field's path, are shown next to that field.
import { call, listAll, paths } from "./api.js";
import { calendarLink, daysTable, effectsList, zonesOf } from "./calendars.js";
import { errorBox, h, replace } from "./dom.js";
import { livePreview } from "./preview.js";

const enc = encodeURIComponent;
const WINDOWS = [["7", "next 7 days"], ["31", "next 31 days"], ["92", "next 92 days"]];

// Error path prefix (longest first) -> the field it is shown next to.
const ERROR_FIELDS = [
  ["properties.holidays.subdivision", "calendar-subdivision"],
  ["properties.holidays", "calendar-country"],
  ["properties.dates", "calendar-dates"],
  ["properties.ranges", "calendar-ranges"],
  ["properties.ical", "calendar-ical"],
  ["properties.weekends", "calendar-weekends"],
  ["calendarName", "calendar-name"],
  ["name", "calendar-name"],
  ["timeZone", "calendar-zone"],
];

/** The field an API message is about (its leading path; `calendarName` anywhere), or null. */
export function calendarFieldOf(message) {
  if (/calendarName/.test(message)) return "calendar-name";
  const path = message.split(":")[0].replace(/\[\d+\]/g, "");
  const found = ERROR_FIELDS.find(([prefix]) => path === prefix || path.startsWith(`${prefix}.`));
  return found ? found[1] : null;
}

/** The lines of a ranges text (`START END`, `START – END` or `START to END`) as ranges. */
export function readRanges(text) {
  return text.split("\n").map((line) => line.trim()).filter(Boolean).map((line) => {
    const [start, end, ...more] = line.split(/\s+[–—]\s+|\s+to\s+|\s+/).filter(Boolean);
    const range = end === undefined ? { start } : { start, end };
    if (more.length) range.end = [end, ...more].join(" "); // the API names what is wrong
    return range;
  });
}

export async function calendarFormPage(view, [group, collection, calendarName]) {
  const editing = calendarName !== undefined;
  const base = paths.collection(group, collection);
  const [loaded, jobs] = await Promise.all([
    editing ? call("GET", `${base}/calendars/${enc(calendarName)}`) : null,
    listAll(`${base}/jobs`),
  ]);
  const props = loaded?.properties ?? {};
  const zones = zonesOf(jobs, calendarName ?? "");

  const errors = new Map();
  const control = (id, label, el, hint) => {
    const error = h("p", { class: "field-error", id: `${id}-error`, "data-for": id });
    errors.set(id, error);
    const hintEl = hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null;
    el.setAttribute("aria-describedby", [hintEl ? `${id}-hint` : null, `${id}-error`].filter(Boolean).join(" "));
    return h("div", { class: el.tagName === "TEXTAREA" ? "field wide" : "field", id: `field-${id}` },
      label ? h("label", { for: id }, label) : null, el, hintEl, error);
  };

  const name = h("input", { id: "calendar-name", required: true, value: calendarName ?? "", disabled: editing, placeholder: "business", autocomplete: "off" });
  const weekends = h("input", { type: "checkbox", id: "calendar-weekends", checked: Boolean(props.weekends) });
  const country = h("input", { id: "calendar-country", value: props.holidays?.country ?? "", placeholder: "US", autocomplete: "off" });
  const subdivision = h("input", { id: "calendar-subdivision", value: props.holidays?.subdivision ?? "", placeholder: "NY", autocomplete: "off" });
  const dates = h("textarea", { id: "calendar-dates", rows: 4, spellcheck: "false", value: (props.dates ?? []).join("\n") });
  const ranges = h("textarea", { id: "calendar-ranges", rows: 3, spellcheck: "false",
    value: (props.ranges ?? []).map((r) => `${r.start} – ${r.end}`).join("\n") });
  const ical = h("textarea", { id: "calendar-ical", rows: 6, spellcheck: "false", class: "json", value: props.ical ?? "" });
  const icalFile = h("input", { type: "file", id: "calendar-ical-file", accept: ".ics,text/calendar" });
  const icalNote = h("p", { class: "hint", id: "calendar-ical-note", "aria-live": "polite" });
  const windowSelect = h("select", { id: "calendar-window" }, WINDOWS.map(([v, t]) => h("option", { value: v, selected: v === "31" }, t)));
  const zoneSelect = h("select", { id: "calendar-zone" }, zones.map((z) => h("option", { value: z }, z)));
  const generalError = h("div", { id: "calendar-form-error" });
  const preview = h("div", { id: "calendar-preview", class: "preview", "data-version": "0", "aria-live": "polite" });

  function body() {
    const p = {};
    if (weekends.checked) p.weekends = true;
    const c = country.value.trim();
    const s = subdivision.value.trim();
    if (c || s) p.holidays = s ? { country: c, subdivision: s } : { country: c };
    const listed = dates.value.split(/[\s,;]+/).filter(Boolean);
    if (listed.length) p.dates = listed;
    const spans = readRanges(ranges.value);
    if (spans.length) p.ranges = spans;
    if (ical.value.trim()) p.ical = ical.value;
    return { properties: p };
  }

  function clearErrors() {
    generalError.replaceChildren();
    for (const error of errors.values()) error.textContent = "";
    for (const el of view.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  }

  function showError(error) {
    const id = calendarFieldOf(error.message);
    const target = errors.get(id);
    if (target) {
      target.textContent = error.message;
      view.querySelector(`#${id}`)?.setAttribute("aria-invalid", "true");
    } else {
      generalError.replaceChildren(errorBox(error));
    }
  }

  // -- the live preview
  function ask() {
    const days = Number(windowSelect.value);
    const start = new Date();
    const end = new Date(start.getTime() + days * 86_400_000);
    const previewName = name.value.trim() || "new-calendar";
    return call("POST", `${base}/calendars/${enc(previewName)}/upcoming`, {
      body: body(), query: { from: start.toISOString(), to: end.toISOString(), timeZone: zoneSelect.value },
    });
  }

  function draw(answer, error, touched) {
    clearErrors();
    const title = h("h2", {}, "Preview");
    if (error && !touched) {
      replace(preview, title, h("p", { class: "muted" }, "Fill in the form to see what it excludes."));
      return;
    }
    if (error) {
      showError(error);
      replace(preview, title, h("p", { class: "preview-error", id: "calendar-preview-error" }, error.message));
      return;
    }
    const zone = answer.timeZone;
    replace(preview, title,
      h("h3", {}, `Days it excludes (${answer.excludedDates.length})`),
      daysTable(answer.excludedDates, zone, "preview-days"),
      h("h3", {}, "Executions it skips or moves"),
      editing ? null : h("p", { class: "hint" }, "No job can list a calendar before it is saved."),
      effectsList(answer.jobs, group, collection, zone, "preview-effects"));
  }

  const live = livePreview(preview, { touched: editing, ask, draw });
  const schedulePreview = live.changed;

  async function readFile() {
    const file = icalFile.files?.[0];
    if (!file) return;
    ical.value = await file.text();
    icalNote.textContent = `Read ${file.name} (${file.size} bytes); it is sent as the calendar's ical.`;
    schedulePreview();
  }

  async function save(event) {
    event.preventDefault();
    clearErrors();
    const chosen = name.value.trim();
    const path = `${base}/calendars/${enc(chosen || "-")}`;
    try {
      if (!editing && chosen) {
        const exists = await call("GET", path).then(() => true, (e) => (e.status === 404 ? false : Promise.reject(e)));
        if (exists) {
          showError({ message: `calendarName: a calendar '${chosen}' already exists in this collection; edit it instead.` });
          return;
        }
      }
      await call("PUT", path, { body: body() });
      location.hash = calendarLink(group, collection, chosen);
    } catch (e) {
      if (e.status !== 401) showError(e);
    }
  }

  const back = editing ? calendarLink(group, collection, calendarName) : `#/jobs/${enc(group)}/${enc(collection)}`;
  const clearIcal = h("button", { type: "button", id: "calendar-ical-clear", onclick: () => {
    ical.value = "";
    icalFile.value = "";
    icalNote.textContent = "The iCalendar document is removed.";
    schedulePreview();
  } }, "Remove the document");
  const form = h("form", { class: "job-form", id: "calendar-form", onsubmit: save, oninput: schedulePreview, onchange: (e) => {
    if (e.target === icalFile) readFile();
    else schedulePreview();
  } },
    h("div", { class: "fields" }, control("calendar-name", "Calendar name", name, editing ? null : "Letters, digits, - and _ (as job names).")),
    h("fieldset", { class: "fields" }, h("legend", {}, "Whole days"),
      h("div", { class: "field wide" }, h("label", { class: "check" }, weekends, " Weekends (Saturdays and Sundays)"), (() => {
        const error = h("p", { class: "field-error", id: "calendar-weekends-error" });
        errors.set("calendar-weekends", error);
        return error;
      })()),
      control("calendar-country", "Public holidays: country", country, "ISO 3166 code, e.g. US, FR, DE; empty: none."),
      control("calendar-subdivision", "Subdivision", subdivision, "Optional: NY, BY, …"),
      control("calendar-dates", "Dates", dates, "One YYYY-MM-DD a line (or separated by commas), each excluded whole.")),
    h("fieldset", { class: "fields" }, h("legend", {}, "Spans"),
      control("calendar-ranges", "Ranges", ranges, "One a line: START – END (ISO 8601, END exclusive); without an offset, on each job's wall clock.")),
    h("fieldset", { class: "fields" }, h("legend", {}, "iCalendar"),
      h("div", { class: "field wide" }, h("label", { for: "calendar-ical-file" }, "Read an .ics file"), icalFile, icalNote),
      control("calendar-ical", "iCalendar document", ical, "Its events (recurring ones too) are excluded; at most 1 MB and 10,000 lines, parameters and list values. TZIDs name IANA or Windows time zones."),
      h("div", { class: "field" }, clearIcal)),
    h("fieldset", { class: "fields" }, h("legend", {}, "Preview"),
      control("calendar-window", "Window", windowSelect),
      control("calendar-zone", "Days read in", zoneSelect)),
    generalError,
    h("div", { class: "buttons" },
      h("a", { class: "button", href: back }, "Cancel"),
      h("button", { type: "submit", class: "primary", id: "calendar-save" }, editing ? "Save changes" : "Create calendar")));

  view.append(
    h("p", { class: "crumbs" }, h("a", { href: "#/collections" }, "Collections"), " / ",
      h("a", { href: `#/jobs/${enc(group)}/${enc(collection)}` }, `${group} / ${collection}`),
      " / ", editing ? `calendar ${calendarName}` : "new calendar"),
    h("div", { class: "heading" }, h("h1", {}, editing ? `Edit calendar ${calendarName}` : "New calendar")),
    h("div", { class: "form-layout" }, h("div", { class: "card" }, form), h("aside", { class: "card" }, preview)));
  live.now();
  return live.stop;
}
