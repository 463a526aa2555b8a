// The jobs of a collection: state filter (by the API), name filter, sorting and paging (here,
// over every job of the collection: a collection holds at most 1,000), last result per row;
// below them, the collection's exclusion calendars.
import { call, eachLimited, listAll, paths } from "./api.js";
import { calendarsCard } from "./calendars.js";
import { badge, h, heading, pager, table } from "./dom.js";
import { inZone, parseTime, pauseText, relative, utc, wallClock } from "./format.js";

const PAGE = 50;
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
  const lastResult = new Map(); // job name -> history entry (or null)
  const localNext = new Map(); // job name -> local time text from …/upcoming
  const list = h("div", { id: "jobs-list" });
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
  const result = (j) => {
    const entry = lastResult.get(shortName(j));
    if (entry === undefined) return h("span", { class: "muted" }, "…");
    if (entry === null) return h("span", { class: "muted" }, "never ran");
    return h("span", { title: entry.properties.message }, badge(entry.properties.status ?? "Completed"));
  };
  const columns = [
    { title: "Name", sort: "name", cell: link },
    { title: "State", sort: "state", cell: (j) => badge(j.properties?.state) },
    { title: "Schedule", class: "wrap small", cell: (j) => j.properties?.scheduleDescription ?? "—" },
    { title: "Next run (UTC)", sort: "next", cell: (j) => {
      const next = j.properties?.status?.nextExecutionTime;
      return next ? h("span", { title: relative(next) }, utc(next)) : "—";
    } },
    { title: "Next run (local)", cell: nextLocal },
    { title: "Last run (UTC)", sort: "last", cell: (j) => utc(j.properties?.status?.lastExecutionTime) },
    { title: "Last result", cell: result },
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
    list.replaceChildren(
      table(columns, page, { sorting, compact: true, empty: state.loading ? "Loading…" : "No jobs match." }),
      pager({ offset: state.offset, size: PAGE, shown: page.length, total: all.length, more, go }),
    );
    fillRows(page);
  }

  // The last result (and, for zones the browser cannot convert, the local next run) of the
  // rows on screen: one small call each, once.
  async function fillRows(page) {
    const todo = page.filter((j) => !lastResult.has(shortName(j)));
    for (const j of todo) lastResult.set(shortName(j), undefined);
    await eachLimited(todo, 6, async (j) => {
      const path = paths.job(group, collection, shortName(j));
      const history = await call("GET", `${path}/history`, { query: { $top: 1 } }).catch(() => ({ value: [] }));
      lastResult.set(shortName(j), history.value[0] ?? null);
      const zone = j.properties?.recurrence?.timeZone;
      if (zone && j.properties?.status?.nextExecutionTime && !inZone(j.properties.status.nextExecutionTime, zone)) {
        const next = await call("GET", `${path}/upcoming`, { query: { count: 1 } }).catch(() => ({ value: [] }));
        const first = next.value[0];
        if (first) localNext.set(shortName(j), `${wallClock(first.localTime)} (UTC${first.utcOffset})`);
      }
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
    state.jobs = await listAll(`${base}/jobs`, { query, progress: (jobs) => { state.jobs = [...jobs]; redraw(); } });
    state.loading = false;
    draw();
  }

  const filter = h("select", { id: "jobs-state", onchange: () => { state.filter = filter.value; state.offset = 0; load(); } },
    STATES.map((s) => h("option", { value: s }, s || "Any state")));
  const name = h("input", { id: "jobs-name", type: "search", placeholder: "Filter by name",
    oninput: () => { state.name = name.value; state.offset = 0; draw(); } });

  view.append(
    h("p", { class: "crumbs" }, h("a", { href: "#/collections" }, "Collections"), " / ", `${group} / ${collection}`),
    heading(collection,
      badge(info.properties?.state),
      h("span", { class: "muted" }, info.properties?.sku?.name ?? ""),
      h("a", { class: "button", id: "timeline-link", href: `#/timeline/${encodeURIComponent(group)}/${encodeURIComponent(collection)}` }, "Timeline"),
      h("a", { class: "button primary", id: "new-job", href: `#/new/${encodeURIComponent(group)}/${encodeURIComponent(collection)}` }, "New job")),
    pauseNote(info.properties?.pause, "collection-pause", "None of its jobs runs until then."),
    h("div", { class: "toolbar" }, filter, name, count),
    list,
    calendarsCard(group, collection),
  );
  await load();
}
