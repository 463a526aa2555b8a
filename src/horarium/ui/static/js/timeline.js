// What runs when across a collection: every job's executions over the next 24 hours or 7 days,
// from one call to the API's collection timeline (GET …/jobCollections/{jc}/upcoming), one lane
// per job, in UTC or a chosen zone; calendar-skipped, moved, jittered, paused and daylight
// saving runs marked by shape and letter as well as colour, each explained on hover and focus.
import { call, paths } from "./api.js";
import { badge, errorBox, h, heading, replace, table } from "./dom.js";
import { inZone, parseTime } from "./format.js";
import { jobsLink } from "./collections.js";
import { jobLink } from "./joblist.js";

const HOUR = 3_600_000;
const QUARTER = HOUR / 4; // every zone's midnight falls on a quarter hour
// A window, and which of its local quarter hours ("HH:MM" on the chosen clock) get a tick.
const WINDOWS = {
  "24h": { label: "Next 24 hours", span: 24 * HOUR, tick: (hhmm) => hhmm.endsWith(":00") && Number(hhmm.slice(0, 2)) % 3 === 0 },
  "7d": { label: "Next 7 days", span: 7 * 24 * HOUR, tick: (hhmm) => hhmm === "00:00" },
};
const MAX_MARKS = 100; // marks a lane draws; beyond, plain runs become one band

// The kinds of mark, most telling first: [kind, glyph, words].
const KINDS = [
  ["skipped", "✕", "skipped by a calendar"],
  ["paused", "Ⅱ", "paused: the job or collection is disabled"],
  ["moved", "→", "moved by a calendar"],
  ["dst", "±", "moved or merged by daylight saving time"],
  ["jittered", "~", "started later by its jitter"],
  ["run", "●", "runs"],
];

function kindOf(e) {
  if (e.skippedByCalendar) return "skipped";
  if (e.paused) return "paused";
  if (e.movedByCalendar) return "moved";
  if (e.movedBySpringForward || e.mergedByFallBack) return "dst";
  if (e.jittered) return "jittered";
  return "run";
}

/** `2031-03-09 03:30:00 (UTC-04:00)` in the chosen zone (UTC when the browser lacks it). */
function shownTime(text, zone) {
  return inZone(text, zone) ?? inZone(text, "UTC");
}

/** What happens to execution `e` of `job`, as phrases (none for a plain run). */
function notesOf(e, job, zone) {
  const notes = [];
  if (e.skippedByCalendar) notes.push(`skipped: calendar ${e.skippedByCalendar} excludes it`);
  if (e.movedByCalendar) notes.push(`moved by calendar ${e.movedByCalendar} from ${(e.scheduledExecutionTimes ?? []).map((t) => shownTime(t, zone)).join(", ")}`);
  if (e.movedBySpringForward) notes.push(`daylight saving: ${String(e.scheduledLocalTime).slice(11, 19)} does not exist, runs at ${String(e.localTime).slice(11, 19)}`);
  if (e.mergedByFallBack) notes.push("daylight saving: the hour repeats, runs once");
  if (e.jittered) notes.push(`jitter: starts ${e.jitterOffset} after ${shownTime(e.scheduledExecutionTime, zone)}`);
  if (e.paused) notes.push(`paused: the ${job.heldBy?.by ?? "job"} is ${job.heldBy?.state ?? "Disabled"}`);
  return notes;
}

function explain(e, job, zone) {
  const notes = notesOf(e, job, zone);
  return `${job.name.split("/").at(-1)} — ${shownTime(e.executionTime, zone)}${notes.length ? ` — ${notes.join("; ")}` : ""}`;
}

export async function timelinePage(view, [group, collection]) {
  const base = paths.collection(group, collection);
  const state = { window: "24h", zone: "UTC" };
  const body = h("div", { id: "timeline" });
  const status = h("p", { class: "muted small", id: "timeline-window", role: "status" });

  const windowSelect = h("select", { id: "timeline-span", "aria-label": "Window", onchange: () => { state.window = windowSelect.value; load(); } },
    Object.entries(WINDOWS).map(([key, w]) => h("option", { value: key }, w.label)));
  const zones = h("datalist", { id: "timeline-zones" });
  const zoneInput = h("input", { id: "timeline-zone", list: "timeline-zones", value: "UTC", "aria-label": "Time zone",
    placeholder: "UTC or Europe/Paris", onchange: () => setZone(zoneInput.value.trim() || "UTC") });
  const zoneError = h("span", { class: "field-error", id: "timeline-zone-error", role: "alert" });
  let answer = null;

  function setZone(zone) {
    if (!inZone(new Date().toISOString(), zone)) {
      zoneError.textContent = `The browser does not know the time zone “${zone}”; times stay in ${state.zone}.`;
      return;
    }
    zoneError.textContent = "";
    state.zone = zone;
    if (answer) draw();
  }

  async function load() {
    const span = WINDOWS[state.window].span;
    const from = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const to = new Date(from.getTime() + span);
    replace(body, h("p", { class: "muted" }, "Loading…"));
    try {
      answer = await call("GET", `${base}/upcoming`, { query: { from: from.toISOString(), to: to.toISOString() } });
    } catch (error) {
      answer = null;
      replace(body, errorBox(error));
      return;
    }
    const known = new Set(["UTC", ...answer.value.map((j) => j.timeZone).filter(Boolean)]);
    replace(zones, [...known].map((z) => h("option", { value: z })));
    draw();
  }

  function draw() {
    const start = parseTime(answer.from);
    const end = parseTime(answer.to);
    const { tick } = WINDOWS[state.window];
    status.textContent = `From ${shownTime(answer.from, state.zone)} to ${shownTime(answer.to, state.zone)}, times in ${state.zone}.`;
    const place = (ms) => `${((ms - start) / (end - start)) * 100}%`;
    const ticks = []; // [instant, label]: local hours (24 h) or local midnights (7 days)
    for (let t = Math.ceil(start / QUARTER) * QUARTER; t < end; t += QUARTER) {
      const local = shownTime(new Date(t).toISOString(), state.zone);
      if (tick(local.slice(11, 16))) ticks.push([t, state.window === "24h" ? local.slice(11, 16) : local.slice(5, 10)]);
    }
    const labels = ticks.map(([t, label]) => {
      const mark = h("span", { class: "tick" }, label);
      mark.style.left = place(t);
      return mark;
    });
    const grid = () => ticks.map(([t]) => {
      const line = h("span", { class: "grid", "aria-hidden": "true" });
      line.style.left = place(t);
      return line;
    });
    const lanes = answer.value.map((job) => lane(job, place, grid()));
    replace(body,
      h("div", { class: "timeline-legend legend", id: "timeline-legend" }, KINDS.map(([kind, glyph, words]) =>
        h("span", { class: "legend-item" }, h("span", { class: `mark ${kind}`, "aria-hidden": "true" }, glyph), ` ${words}`))),
      h("div", { class: "timeline card" },
        h("div", { class: "lane axis" }, h("div", { class: "lane-label muted small" }, state.zone), h("div", { class: "track" }, labels)),
        lanes.length ? lanes : h("p", { class: "muted" }, "This collection has no jobs.")),
      listing());
  }

  function lane(job, place, grid) {
    const short = job.name.split("/").at(-1);
    const all = job.executions ?? [];
    // Too many to tell apart (a minute job over 7 days): a band for the plain runs, marks for
    // the others (at most MAX_MARKS).
    const dense = all.length > MAX_MARKS;
    const executions = dense ? all.filter((e) => kindOf(e) !== "run") : all;
    let band = null;
    if (dense) {
      const first = parseTime(all[0].executionTime);
      const last = parseTime(all.at(-1).executionTime);
      band = h("span", { class: "band", title: `${all.length} executions`, "data-count": all.length }, `${all.length} executions`);
      band.style.left = place(first);
      band.style.width = `calc(${place(last)} - ${place(first)})`;
    }
    const marks = executions.slice(0, MAX_MARKS).map((e) => {
      const kind = kindOf(e);
      const [, glyph] = KINDS.find(([k]) => k === kind);
      const words = explain(e, job, state.zone);
      const mark = h("span", { class: `mark ${kind}`, tabindex: "0", role: "img", "aria-label": words, title: words,
        "data-kind": kind, "data-time": e.executionTime }, glyph);
      mark.style.left = place(parseTime(e.executionTime));
      return mark;
    });
    const more = executions.length > MAX_MARKS ? h("span", { class: "muted small more" }, `+${executions.length - MAX_MARKS} more`) : null;
    const held = job.heldBy ? h("span", { class: "muted small" }, ` paused (${job.heldBy.by} ${job.heldBy.state})`) : null;
    return h("div", { class: "lane", "data-job": short },
      h("div", { class: "lane-label" },
        h("a", { href: jobLink(group, collection, short) }, short), " ", badge(job.state), held,
        h("div", { class: "muted small schedule" }, job.scheduleDescription ?? ""),
        job.error ? h("div", { class: "field-error" }, job.error) : null),
      h("div", { class: "track" }, grid, band, marks, more));
  }

  // The same executions as a table, by time (the first 200), for reading and for keyboards.
  function listing() {
    const rows = answer.value.flatMap((job) => (job.executions ?? []).map((e) => ({ job, e })))
      .sort((a, b) => parseTime(a.e.executionTime) - parseTime(b.e.executionTime)).slice(0, 200);
    const columns = [
      { title: `Time (${state.zone})`, cell: ({ e }) => shownTime(e.executionTime, state.zone) },
      { title: "Job", cell: ({ job }) => job.name.split("/").at(-1) },
      { title: "What happens", class: "wrap", cell: ({ job, e }) => {
        const kind = kindOf(e);
        const [, glyph, words] = KINDS.find(([k]) => k === kind);
        const detail = notesOf(e, job, state.zone).join("; ");
        return [h("span", { class: `mark inline ${kind}`, "aria-hidden": "true" }, glyph), ` ${detail || words}`];
      } },
    ];
    return h("details", { class: "card", id: "timeline-table" }, h("summary", {}, "As a list"),
      table(columns, rows, { compact: true, empty: "No executions in this window." }));
  }

  view.append(
    h("p", { class: "crumbs" }, h("a", { href: "#/collections" }, "Collections"), " / ",
      h("a", { href: jobsLink(group, collection) }, `${group} / ${collection}`), " / Timeline"),
    heading(`Timeline of ${collection}`),
    h("div", { class: "toolbar" }, windowSelect, zoneInput, zones, zoneError),
    status,
    body,
  );
  await load();
}
