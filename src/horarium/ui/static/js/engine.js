// The scheduler processes sharing the database (Horarium's GET /providers/Microsoft.Scheduler/
// engine; it spans every subscription, so it needs a key for all of them).
import { call, paths } from "./api.js";
import { barChart } from "./chart.js";
import { errorBox, h, heading, table } from "./dom.js";
import { duration, parseTime, utc } from "./format.js";

const REFRESH_MS = 5000;

function tile(label, value, detail) {
  return h("div", { class: "tile" }, h("div", { class: "tile-value" }, value), h("div", { class: "tile-label" }, label),
    detail ? h("div", { class: "muted small" }, detail) : null);
}

export async function enginePage(view) {
  const body = h("div", { id: "engine" });
  const stamp = h("span", { class: "muted" });

  async function load() {
    let status;
    try {
      status = await call("GET", paths.engine());
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
        tile("in flight", String(status.inFlight), `${status.processes.length} process(es) holding work`),
        tile("due backlog", String(backlog.jobs + backlog.executions), oldest),
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
