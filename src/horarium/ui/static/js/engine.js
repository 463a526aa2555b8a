// The scheduler processes sharing the database (Horarium's GET /providers/Microsoft.Scheduler/
// engine; it spans every subscription, so it needs a key for all of them), and whether any is
// alive (the live nodes of /readyz?verbose: their heartbeats).
import { call, paths } from "./api.js";
import { barChart } from "./chart.js";
import { errorBox, h, heading, table } from "./dom.js";
import { duration, parseTime, utc } from "./format.js";

const REFRESH_MS = 5000;

function tile(label, value, detail, id) {
  return h("div", { class: "tile", id }, h("div", { class: "tile-value" }, value), h("div", { class: "tile-label" }, label),
    detail ? h("div", { class: "muted small" }, detail) : null);
}

/** The scheduler nodes whose heartbeat is recent (/readyz?verbose), or the reason they are not
 *  known: {nodes} | {problem}. A 503 (not ready) still carries the node's view. */
async function liveNodes() {
  let answer;
  try {
    answer = await call("GET", "/readyz", { query: { verbose: "1" } });
  } catch (e) {
    if (e.status !== 503 || !e.body?.node) return { problem: e.message };
    answer = e.body;
  }
  const nodes = answer.node?.liveNodes;
  return nodes ? { nodes, notReady: answer.error?.message } : { problem: "the database could not be read" };
}

function schedulerTile(seen) {
  const id = "scheduler-alive";
  if (seen.problem) return tile("scheduler", "unknown", seen.problem, id);
  const beats = seen.nodes.map((n) => n.lastBeatAgeSeconds ?? 0);
  if (!seen.nodes.length) {
    return tile("scheduler", "none alive", "No scheduler process has a recent heartbeat: nothing runs.", id);
  }
  const latest = `latest heartbeat ${duration(Math.min(...beats) * 1000)} ago`;
  return tile("scheduler", "alive", `${seen.nodes.length} process(es) beating; ${latest}${seen.notReady ? `. ${seen.notReady}` : ""}`, id);
}

export async function enginePage(view) {
  const body = h("div", { id: "engine" });
  const stamp = h("span", { class: "muted" });

  async function load() {
    let status;
    let seen;
    try {
      [status, seen] = await Promise.all([call("GET", paths.engine()), liveNodes()]);
    } catch (e) {
      if (e.status === 403) {
        body.replaceChildren(errorBox(e), h("p", { class: "muted" },
          "The engine page spans every subscription: it needs a key for all of them (horarium keys create --subscription '*')."));
        return false;
      }
      throw e;
    }
    const perMinute = status.executionsPerMinute;
    const total = perMinute.reduce((n, m) => n + m.completed + m.failed + m.postponed + (m.skipped ?? 0), 0);
    const backlog = status.dueBacklog;
    const oldest = backlog.oldestDueTime ? `oldest due ${duration(parseTime(status.time) - parseTime(backlog.oldestDueTime))} ago` : "nothing waiting";
    // Due work of collections that are not Enabled waits for them, not for a process.
    const heldBack = (backlog.heldByCollections?.jobs ?? 0) + (backlog.heldByCollections?.executions ?? 0);
    const backlogDetail = heldBack ? `${oldest}; ${heldBack} more held by disabled collections (not counted)` : oldest;
    const lastMinute = perMinute.at(-2) ?? perMinute.at(-1);
    const rows = perMinute.map((m) => ({
      label: utc(m.minute).slice(11, 16),
      parts: [
        { value: m.completed, class: "ok", name: "completed" },
        { value: m.failed, class: "failed", name: "failed" },
        { value: m.postponed, class: "postponed", name: "postponed" },
        { value: m.skipped ?? 0, class: "skipped", name: "skipped" },
      ],
    }));
    body.replaceChildren(
      h("div", { class: "tiles" },
        schedulerTile(seen),
        tile("in flight", String(status.inFlight), `${status.processes.length} process(es) holding work`),
        tile("due backlog", String(backlog.jobs + backlog.executions), backlogDetail, "due-backlog"),
        tile("event loop lag", `${Math.round((status.eventLoopLag ?? 0) * 1000)} ms`,
          "worst of the last 10 s in the process answering"),
        tile("executions in the last hour", String(total),
          `${lastMinute.completed + lastMinute.failed + lastMinute.postponed + (lastMinute.skipped ?? 0)} in the last full minute`)),
      h("div", { class: "card" }, barChart(rows, { caption: "Executions per minute (UTC): completed, failed, postponed, skipped", width: 900, height: 160 }),
        h("p", { class: "legend" }, h("span", { class: "key ok" }), "completed ", h("span", { class: "key failed" }), "failed ",
          h("span", { class: "key postponed" }), "postponed ", h("span", { class: "key skipped" }), "skipped")),
      h("h2", {}, "Processes"),
      table([
        { title: "Process (host:pid:id)", cell: (p) => h("code", {}, p.owner) },
        { title: "Jobs running", class: "num", cell: (p) => p.jobs },
        { title: "Retries and runs", class: "num", cell: (p) => p.executions },
        { title: "In flight", class: "num", cell: (p) => p.inFlight },
        { title: "Lease until (UTC)", cell: (p) => utc(p.leaseExpiresAt) },
      ], status.processes, { empty: "No process holds work right now." }),
    );
    stamp.textContent = `as of ${utc(status.time)} UTC`;
    return true;
  }

  view.append(heading("Engine", stamp), body);
  if (!(await load())) return undefined;
  const timer = setInterval(() => load().catch(() => {}), REFRESH_MS);
  return () => clearInterval(timer);
}
