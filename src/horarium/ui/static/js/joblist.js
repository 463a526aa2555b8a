// The jobs of a collection: its failing and faulted jobs on top, then every job with a state
// filter (by the API), name filter, sorting and paging (here, over every job of the
// collection: a collection holds at most 1,000), each job's recent outcomes (one read for the
// whole collection), row selection for bulk actions; below them, the exclusion calendars.
import { call, eachLimited, listAll, paths } from "./api.js";
import { bulkBar } from "./bulk.js";
import { calendarsCard } from "./calendars.js";
import { monitorsLink } from "./monitors.js";
import { add, badge, h, heading, pager, table } from "./dom.js";
import { outcomeStrip, statusOf } from "./outcomes.js";
import { inZone, parseTime, pauseText, relative, utc, wallClock } from "./format.js";

const PAGE = 50;
const OUTCOMES = 10; // the strip's length: the newest outcomes of each job
const STATES = ["", "Enabled", "Disabled", "Faulted", "Completed"];

/** A paused collection's or job's banner: until when, why, and `then`; nothing without one. */
export function pauseNote(pause, id, then) {
  if (!pause) return null;
  return h("div", { class: "note pause", id, role: "status" }, `Paused ${pauseText(pause)}. ${then}`);
}

export function jobLink(group, collection, job) {
  return `#/job/${[group, collection, job].map(encodeURIComponent).join("/")}`;
}

const SORTS = {
  name: (j) => j.name.toLowerCase(),
  state: (j) => j.properties?.state ?? "",
  next: (j) => parseTime(j.properties?.status?.nextExecutionTime) || Infinity,
  last: (j) => parseTime(j.properties?.status?.lastExecutionTime) || -Infinity,
  executions: (j) => j.properties?.status?.executionCount ?? 0,
  failures: (j) => j.properties?.status?.failureCount ?? 0,
  faulted: (j) => j.properties?.status?.faultedCount ?? 0,
};

export async function jobsPage(view, [group, collection]) {
  const base = paths.collection(group, collection);
  const info = await call("GET", base);
  const state = { filter: "", name: "", sort: "name", descending: false, offset: 0, jobs: [], loading: true };
  const outcomes = new Map(); // job name (lower case) -> its newest history entries
  const selected = new Set(); // job names (lower case) ticked for bulk actions
  const zoneAsked = new Set(); // job names whose local next run was asked of …/upcoming
  const localNext = new Map(); // job name -> local time text from …/upcoming
  const list = h("div", { id: "jobs-list" });
  const attention = h("section", { class: "card attention", id: "attention", hidden: true });
  const count = h("span", { class: "muted", id: "jobs-count" });

  const shortName = (j) => j.name.split("/").at(-1);
  const link = (j) => h("a", { href: jobLink(group, collection, shortName(j)) }, shortName(j));
  const nextLocal = (j) => {
    const next = j.properties?.status?.nextExecutionTime;
    const zone = j.properties?.recurrence?.timeZone;
    if (!next) return "—";
    if (!zone) return h("span", { class: "muted" }, "UTC");
    return inZone(next, zone) ?? localNext.get(shortName(j)) ?? h("span", { class: "muted" }, "…");
  };
  const key = (j) => shortName(j).toLowerCase();
  const strip = (j) => {
    const entries = outcomes.get(key(j));
    return entries === undefined ? h("span", { class: "muted" }, "…") : outcomeStrip(entries, j.properties);
  };
  const tick = (j) => h("input", {
    type: "checkbox", class: "select-job", "aria-label": `Select ${shortName(j)}`, checked: selected.has(key(j)),
    onchange: (event) => {
      if (event.target.checked) selected.add(key(j));
      else selected.delete(key(j));
      bulk.update();
    },
  });
  const columns = [
    { title: "", class: "select", cell: tick },
    { title: "Name", sort: "name", cell: link },
    { title: "State", sort: "state", cell: (j) => badge(j.properties?.state) },
    { title: "Schedule", class: "wrap small", cell: (j) => j.properties?.scheduleDescription ?? "—" },
    { title: `Last ${OUTCOMES} outcomes`, cell: strip },
    { title: "Next run (UTC)", sort: "next", class: "when", cell: (j) => {
      const next = j.properties?.status?.nextExecutionTime;
      return next ? h("span", { title: relative(next) }, utc(next)) : "—";
    } },
    { title: "Next run (local)", class: "when", cell: nextLocal },
    { title: "Last run (UTC)", sort: "last", class: "when", cell: (j) => utc(j.properties?.status?.lastExecutionTime) },
    { title: "Runs", sort: "executions", class: "num", cell: (j) => j.properties?.status?.executionCount ?? 0 },
    { title: "Failures", sort: "failures", class: "num", cell: (j) => j.properties?.status?.failureCount ?? 0 },
    { title: "Faulted", sort: "faulted", class: "num", cell: (j) => j.properties?.status?.faultedCount ?? 0 },
  ];

  function shown() {
    const needle = state.name.toLowerCase();
    const key = SORTS[state.sort];
    const sign = state.descending ? -1 : 1;
    return state.jobs
      .filter((j) => shortName(j).toLowerCase().includes(needle))
      .sort((a, b) => (key(a) < key(b) ? -sign : key(a) > key(b) ? sign : 0));
  }

  function draw() {
    const all = shown();
    state.offset = Math.min(state.offset, Math.max(0, Math.floor((all.length - 1) / PAGE) * PAGE));
    const page = all.slice(state.offset, state.offset + PAGE);
    count.textContent = state.loading ? `loading… ${state.jobs.length} jobs` : `${all.length} of ${state.jobs.length} jobs`;
    const sorting = {
      key: state.sort, descending: state.descending,
      onSort: (key) => {
        state.descending = state.sort === key ? !state.descending : false;
        state.sort = key;
        draw();
      },
    };
    const more = state.offset + PAGE < all.length;
    const go = (offset) => { state.offset = offset; draw(); };
    const everyTicked = page.length > 0 && page.every((j) => selected.has(key(j)));
    const tickPage = h("label", { class: "select-page" }, h("input", {
      type: "checkbox", id: "select-page", checked: everyTicked,
      onchange: (event) => {
        for (const j of page) {
          if (event.target.checked) selected.add(key(j));
          else selected.delete(key(j));
        }
        bulk.update();
        draw();
      },
    }), " select the jobs of this page");
    list.replaceChildren(
      tickPage,
      table(columns, page, { sorting, compact: true, empty: state.loading ? "Loading…" : "No jobs match." }),
      pager({ offset: state.offset, size: PAGE, shown: page.length, total: all.length, more, go }),
    );
    fillRows(page);
  }

  // Failing jobs (their latest outcome a failure) and Faulted ones, on top of the page.
  function drawAttention() {
    const faulted = (j) => String(j.properties?.state).toLowerCase() === "faulted";
    const failing = (j) => {
      const latest = outcomes.get(key(j))?.[0];
      return latest !== undefined && statusOf(latest) === "failed";
    };
    const found = state.jobs.filter((j) => faulted(j) || failing(j))
      .sort((a, b) => Number(faulted(b)) - Number(faulted(a)) || key(a).localeCompare(key(b)));
    attention.hidden = found.length === 0;
    attention.replaceChildren(
      h("h2", {}, `Failing and faulted jobs (${found.length})`),
      table([
        { title: "Job", cell: link },
        { title: "", cell: (j) => (faulted(j) ? badge("Faulted") : badge("Failing")) },
        { title: `Last ${OUTCOMES} outcomes`, cell: strip },
        { title: "Latest message", class: "wrap", cell: (j) => outcomes.get(key(j))?.[0]?.properties.message ?? "—" },
      ], found, { compact: true, rowClass: (j) => (faulted(j) ? "faulted" : "failing") }),
    );
  }

  // The newest outcomes of every job: one read for the whole collection.
  async function loadOutcomes() {
    const found = await call("GET", paths.outcomes(group, collection), { query: { count: OUTCOMES } })
      .catch((e) => { if (e.status === 401) throw e; return { value: [] }; });
    outcomes.clear();
    for (const job of found.value) outcomes.set(job.name.split("/").at(-1).toLowerCase(), job.outcomes);
    for (const j of state.jobs) if (!outcomes.has(key(j))) outcomes.set(key(j), []);
    drawAttention();
    redraw();
  }

  // For zones the browser cannot convert (Windows names): the local next run of the rows on
  // screen, one small call each, once.
  async function fillRows(page) {
    const todo = page.filter((j) => {
      const zone = j.properties?.recurrence?.timeZone;
      const next = j.properties?.status?.nextExecutionTime;
      return zone && next && !inZone(next, zone) && !zoneAsked.has(key(j));
    });
    for (const j of todo) zoneAsked.add(key(j));
    await eachLimited(todo, 6, async (j) => {
      const path = paths.job(group, collection, shortName(j));
      const next = await call("GET", `${path}/upcoming`, { query: { count: 1 } }).catch(() => ({ value: [] }));
      const first = next.value[0];
      if (first) localNext.set(shortName(j), `${wallClock(first.localTime)} (UTC${first.utcOffset})`);
    });
    if (todo.length && list.isConnected) redraw();
  }
  let pending = false;
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  }

  async function load() {
    state.loading = true;
    state.jobs = [];
    draw();
    // $expand: each job's schedule in words, from the API's one describer.
    const query = { $expand: "scheduleDescription", ...(state.filter ? { $filter: `state eq ${state.filter}` } : {}) };
    const [jobs] = await Promise.all([
      listAll(`${base}/jobs`, { query, parallel: 4, progress: (found) => { state.jobs = [...found]; redraw(); } }),
      loadOutcomes(),
    ]);
    state.jobs = jobs;
    state.loading = false;
    for (const name of [...selected]) if (!jobs.some((j) => key(j) === name)) selected.delete(name);
    for (const j of jobs) if (!outcomes.has(key(j))) outcomes.set(key(j), []);
    drawAttention();
    bulk.update();
    draw();
  }

  const bulk = bulkBar(group, collection, () => state.jobs.filter((j) => selected.has(key(j))), () => load());

  const filter = h("select", { id: "jobs-state", "aria-label": "State", onchange: () => { state.filter = filter.value; state.offset = 0; load(); } },
    STATES.map((s) => h("option", { value: s }, s || "Any state")));
  const name = h("input", { id: "jobs-name", type: "search", "aria-label": "Filter by name", placeholder: "Filter by name",
    oninput: () => { state.name = name.value; state.offset = 0; draw(); } });

  add(view, [
    h("p", { class: "crumbs" }, h("a", { href: "#/collections" }, "Collections"), " / ", `${group} / ${collection}`),
    heading(collection,
      badge(info.properties?.state),
      h("span", { class: "muted" }, info.properties?.sku?.name ?? ""),
      h("a", { class: "button", id: "timeline-link", href: `#/timeline/${encodeURIComponent(group)}/${encodeURIComponent(collection)}` }, "Timeline"),
      h("a", { class: "button", id: "monitors-link", href: monitorsLink(group, collection) }, "Monitors"),
      h("a", { class: "button primary", id: "new-job", href: `#/new/${encodeURIComponent(group)}/${encodeURIComponent(collection)}` }, "New job")),
    pauseNote(info.properties?.pause, "collection-pause", "None of its jobs runs until then."),
    attention,
    h("div", { class: "toolbar" }, filter, name, count),
    bulk.element,
    bulk.results,
    list,
    calendarsCard(group, collection),
  ]);
  await load();
}
