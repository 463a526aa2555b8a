// Job collections of the subscription: plan, state, jobs used of the quota, notifications; a form
// to add one.
import { call, eachLimited, listAll, parseId, paths, session } from "./api.js";
import { badge, errorBox, h, heading, table } from "./dom.js";
import { pauseText, utc } from "./format.js";

// Jobs a plan allows (docs/api.md, Quotas and limits); a collection's quota may lower it.
const PLAN_JOBS = { Free: 5, Standard: 50, P10Premium: 50, P20Premium: 1000, Seconds: 1000 };
const PLANS = Object.keys(PLAN_JOBS);

export function jobsLink(group, collection) {
  return `#/jobs/${encodeURIComponent(group)}/${encodeURIComponent(collection)}`;
}

function quotaCell(used, limit) {
  if (used === undefined) return h("span", { class: "muted" }, "…");
  const share = limit ? Math.min(1, used / limit) : 0;
  const meter = h("meter", { min: 0, max: limit, value: used, high: limit * 0.8, optimum: 0 });
  return h("span", { class: "quota", title: `${Math.round(share * 100)}% of the quota` },
    meter, ` ${used} of ${limit}`);
}

// A collection's notifications (Horarium extension): the events each sends; on hover its uri
// (a channel's format before it), or an email channel's recipients.
const notificationTarget = (n) =>
  n.email ? `email ${(n.email.to ?? []).join(", ")}` : `${n.format ? `${n.format} ` : ""}${n.uri}`;

function notificationsCell(collection) {
  const listed = collection.properties?.notifications ?? [];
  if (!listed.length) return h("span", { class: "muted" }, "—");
  return h("span", { class: "notifications" }, ...listed.flatMap((n, i) => [
    ...(i ? ["; "] : []),
    h("span", { title: notificationTarget(n) }, (n.events ?? []).join(", ")),
  ]));
}

export async function collectionsPage(view) {
  const found = (await call("GET", paths.collections())).value;
  const used = new Map();
  const list = h("div", {});

  function draw() {
    const columns = [
      { title: "Name", cell: (c) => h("a", { href: jobsLink(parseId(c.id).group, c.name) }, c.name) },
      { title: "Resource group", cell: (c) => parseId(c.id).group },
      { title: "Plan", cell: (c) => c.properties?.sku?.name ?? "—" },
      { title: "State", cell: (c) => (c.properties?.pause
        ? h("span", { class: "paused", title: `Paused ${pauseText(c.properties.pause)}` }, badge(c.properties?.state),
          h("span", { class: "muted small" }, ` until ${utc(c.properties.pause.until)} UTC${c.properties.pause.reason ? ` — ${c.properties.pause.reason}` : ""}`))
        : badge(c.properties?.state)) },
      { title: "Jobs (used of quota)", cell: (c) => quotaCell(used.get(c.id), limitOf(c)) },
      { title: "Notifications", cell: notificationsCell },
      { title: "Location", cell: (c) => c.location ?? "—" },
    ];
    list.replaceChildren(table(columns, found, { empty: "No job collections in this subscription yet." }));
  }

  view.append(
    heading(`Job collections of ${session.subscription}`),
    list,
    newCollectionForm(),
  );
  draw();
  await eachLimited(found, 4, async (c) => {
    const { group } = parseId(c.id);
    const jobs = await listAll(`${paths.collection(group, c.name)}/jobs`);
    used.set(c.id, jobs.length);
    draw();
  });
}

function limitOf(collection) {
  const plan = PLAN_JOBS[collection.properties?.sku?.name] ?? 0;
  const own = collection.properties?.quota?.maxJobCount;
  return own ? Math.min(own, plan || own) : plan;
}

function newCollectionForm() {
  const name = h("input", { id: "collection-name", required: true, placeholder: "jc1" });
  const group = h("input", { id: "collection-group", required: true, value: "default" });
  const plan = h("select", { id: "collection-plan" }, PLANS.map((p) => h("option", { value: p, selected: p === "Standard" }, p)));
  const location = h("input", { id: "collection-location", value: "West US" });
  const result = h("div", {});

  async function submit(event) {
    event.preventDefault();
    result.replaceChildren();
    try {
      const body = { location: location.value.trim() || undefined, properties: { sku: { name: plan.value } } };
      await call("PUT", paths.collection(group.value.trim(), name.value.trim()), { body });
      window.location.hash = jobsLink(group.value.trim(), name.value.trim());
    } catch (e) {
      result.append(errorBox(e));
    }
  }

  return h("details", { class: "card", open: false },
    h("summary", {}, "New job collection"),
    h("form", { class: "grid-form", onsubmit: submit },
      h("label", { for: "collection-name" }, "Name"), name,
      h("label", { for: "collection-group" }, "Resource group"), group,
      h("label", { for: "collection-plan" }, "Plan"), plan,
      h("label", { for: "collection-location" }, "Location"), location,
      h("span", {}), h("div", { class: "buttons" }, h("button", { type: "submit", class: "primary", id: "collection-create" }, "Create collection")),
      result));
}
