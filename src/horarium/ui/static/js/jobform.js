// Create or edit a job: a form for an HTTP action, its recurrence, start time and retry policy,
// a raw JSON tab for anything else, and a live preview of the next executions (the API's
// POST …/upcoming, which validates like a PUT and stores nothing). The API's error messages
// start with the field's path; they are shown next to that field.
import { ApiError, call, paths } from "./api.js";
import { errorBox, h } from "./dom.js";
import { jobLink } from "./joblist.js";
import { utc, wallClock } from "./format.js";

const PREVIEW_COUNT = 10;
const DEBOUNCE_MS = 400;
const WEEK_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const ZONES = ["UTC", "Europe/London", "Europe/Berlin", "America/New_York", "America/Chicago",
  "America/Los_Angeles", "Asia/Tokyo", "Australia/Sydney", "W. Europe Standard Time",
  "Central Standard Time", "Pacific Standard Time"];

// -- the job body: read and write values at a path, drop what is left empty --------------------

function getIn(obj, keys) {
  return keys.reduce((o, k) => (o && typeof o === "object" ? o[k] : undefined), obj);
}

function setIn(obj, keys, value) {
  let o = obj;
  for (const k of keys.slice(0, -1)) {
    if (!o[k] || typeof o[k] !== "object") o[k] = {};
    o = o[k];
  }
  if (value === undefined) delete o[keys.at(-1)];
  else o[keys.at(-1)] = value;
}

function pruneEmpty(obj, keys) {
  for (let n = keys.length; n > 0; n--) {
    const value = getIn(obj, keys.slice(0, n));
    if (value && typeof value === "object" && !Array.isArray(value) && !Object.keys(value).length) {
      setIn(obj, keys.slice(0, n), undefined);
    }
  }
}

const text = (v) => (v === undefined || v === null ? "" : String(v));
const orUndefined = (v) => (v.trim() === "" ? undefined : v.trim());
// "9, 17" -> [9, 17]; a word that is not a whole number goes as it is, for the API to name.
const numberList = (v) => {
  const items = v.split(/[\s,]+/).filter(Boolean).map((x) => (/^-?\d+$/.test(x) ? Number(x) : x));
  return items.length ? items : undefined;
};
const number = (v) => (v.trim() === "" ? undefined : /^-?\d+$/.test(v.trim()) ? Number(v) : v.trim());

// -- the form's fields: where each lives in the job body ----------------------------------------

const A = ["action"];
const R = ["recurrence"];
const S = ["recurrence", "schedule"];
const P = ["action", "retryPolicy"];

function input(id, attrs = {}) {
  return h("input", { id, name: id, autocomplete: "off", ...attrs });
}

function select(id, options) {
  return h("select", { id, name: id }, options.map(([value, label]) => h("option", { value }, label)));
}

const FIELDS = [
  { id: "action-type", label: "Action type", keys: [...A, "type"], group: "action",
    make: () => select("action-type", [["Http", "Http"], ["Https", "Https"]]),
    read: (v) => text(v) || "Http", write: (v) => v },
  { id: "method", label: "Method", keys: [...A, "request", "method"], group: "action",
    make: () => select("method", ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"].map((m) => [m, m])),
    read: (v) => text(v) || "GET", write: (v) => v },
  { id: "uri", wide: true, label: "URI", keys: [...A, "request", "uri"], group: "action",
    make: () => input("uri", { placeholder: "https://example.com/hook", class: "wide" }),
    read: text, write: orUndefined },
  { id: "headers", wide: true, label: "Headers", keys: [...A, "request", "headers"], group: "action",
    hint: "One per line: Name: value",
    make: () => h("textarea", { id: "headers", name: "headers", rows: 2, placeholder: "Content-Type: application/json" }),
    read: (v) => Object.entries(v ?? {}).map(([k, x]) => `${k}: ${x}`).join("\n"),
    write: (v, field) => {
      const headers = {};
      const bad = [];
      v.split("\n").forEach((line, i) => {
        if (!line.trim()) return;
        const at = line.indexOf(":");
        if (at <= 0) bad.push(i + 1);
        else headers[line.slice(0, at).trim()] = line.slice(at + 1).trim();
      });
      if (bad.length) field.localError = `Line ${bad.join(", ")}: write “Name: value”.`;
      return Object.keys(headers).length ? headers : undefined;
    } },
  { id: "body", wide: true, label: "Body", keys: [...A, "request", "body"], group: "action",
    make: () => h("textarea", { id: "body", name: "body", rows: 2 }), read: text, write: (v) => (v === "" ? undefined : v) },
  { id: "frequency", label: "Frequency", keys: [...R, "frequency"], group: "recurrence",
    make: () => select("frequency", [["", "One time (no recurrence)"], ...["Minute", "Hour", "Day", "Week", "Month"].map((f) => [f, f])]),
    read: (v) => (v ? v[0].toUpperCase() + v.slice(1) : ""), write: orUndefined },
  { id: "interval", label: "Interval", keys: [...R, "interval"], group: "recurrence", hint: "every N frequency units",
    make: () => input("interval", { inputmode: "numeric", placeholder: "1" }), read: text, write: number },
  { id: "hours", label: "Hours", keys: [...S, "hours"], group: "recurrence", hint: "0..23, comma-separated",
    make: () => input("hours", { placeholder: "9, 17" }), read: (v) => (v ?? []).join(", "), write: numberList },
  { id: "minutes", label: "Minutes", keys: [...S, "minutes"], group: "recurrence", hint: "0..59, comma-separated",
    make: () => input("minutes", { placeholder: "0, 30" }), read: (v) => (v ?? []).join(", "), write: numberList },
  { id: "weekDays", wide: true, label: "Week days", keys: [...S, "weekDays"], group: "recurrence",
    make: () => h("div", { id: "weekDays", class: "checks" }, WEEK_DAYS.map((d) =>
      h("label", {}, h("input", { type: "checkbox", value: d, name: "weekDays" }), d.slice(0, 3)))),
    read: (v) => v ?? [], write: (v) => (v.length ? v : undefined) },
  { id: "monthDays", label: "Month days", keys: [...S, "monthDays"], group: "recurrence", hint: "1..31 or -1..-31, comma-separated",
    make: () => input("monthDays", { placeholder: "1, 15, -1" }), read: (v) => (v ?? []).join(", "), write: numberList },
  { id: "timeZone", label: "Time zone", keys: [...R, "timeZone"], group: "recurrence", hint: "IANA or Windows name; empty: UTC",
    make: () => [input("timeZone", { list: "zones", placeholder: "UTC" }), h("datalist", { id: "zones" }, ZONES.map((z) => h("option", { value: z })))],
    read: text, write: orUndefined },
  { id: "count", label: "Count", keys: [...R, "count"], group: "recurrence", hint: "stop after N executions",
    make: () => input("count", { inputmode: "numeric" }), read: text, write: number },
  { id: "endTime", label: "End time", keys: [...R, "endTime"], group: "recurrence", hint: "e.g. 2030-01-01T00:00:00Z",
    make: () => input("endTime"), read: text, write: orUndefined },
  { id: "startTime", label: "Start time", keys: ["startTime"], group: "timing",
    hint: "…Z for UTC; without an offset: wall clock in the time zone; empty: now",
    make: () => input("startTime", { placeholder: "2030-01-01T09:00:00" }), read: text, write: orUndefined },
  { id: "retryType", label: "Retry", keys: [...P, "retryType"], group: "retry",
    make: () => select("retryType", [["", "Default (Fixed: 4 × 30 s)"], ["None", "None"], ["Fixed", "Fixed"]]),
    read: (v) => (v ? v[0].toUpperCase() + v.slice(1) : ""), write: orUndefined },
  { id: "retryInterval", label: "Retry interval", keys: [...P, "retryInterval"], group: "retry", hint: "00:00:30 or PT30S",
    make: () => input("retryInterval", { placeholder: "00:00:30" }), read: text, write: orUndefined },
  { id: "retryCount", label: "Retry count", keys: [...P, "retryCount"], group: "retry",
    make: () => input("retryCount", { inputmode: "numeric", placeholder: "4" }), read: text, write: number },
];

// Error paths that name a whole part of the job, shown next to the field that starts it.
const ALIASES = {
  "properties.action": "uri", "properties.action.request": "uri", "properties.recurrence": "frequency",
  "properties.recurrence.schedule": "hours", "properties.action.retryPolicy": "retryType",
  "jobName": "job-name",
};

/** The form field an API error message is about, by the path it names, or null. */
export function fieldOf(message) {
  const found = String(message).match(/\b(jobName|properties(?:\.[A-Za-z]+|\[\d+\])*)/);
  if (!found) return null;
  const path = found[1].replace(/\[\d+\]/g, "").toLowerCase();
  let best = null;
  let bestLength = -1;
  const candidates = [
    ...FIELDS.map((f) => [`properties.${f.keys.join(".")}`, f.id]),
    ...Object.entries(ALIASES),
  ];
  for (const [prefix, id] of candidates) {
    const p = prefix.toLowerCase();
    if ((path === p || path.startsWith(`${p}.`)) && p.length > bestLength) {
      best = id;
      bestLength = p.length;
    }
  }
  return best;
}

/** The JSON merge patch (RFC 7386) that turns `from` into `to`. */
export function mergePatch(from, to) {
  const patch = {};
  for (const key of Object.keys(from ?? {})) if (!(key in to)) patch[key] = null;
  for (const [key, value] of Object.entries(to)) {
    const old = from?.[key];
    const objects = [value, old].every((x) => x && typeof x === "object" && !Array.isArray(x));
    if (objects) {
      const inner = mergePatch(old, value);
      if (Object.keys(inner).length) patch[key] = inner;
    } else if (JSON.stringify(value) !== JSON.stringify(old)) {
      patch[key] = value;
    }
  }
  return patch;
}

/** A copy of `body` without the `authentication` objects the API returned without their
 *  secrets (unchanged from `original`): a preview would refuse them for the missing secret;
 *  a save by PATCH keeps the stored ones. */
function withoutMaskedSecrets(body, original) {
  const copy = structuredClone(body);
  for (const keys of [["action", "request"], ["errorAction", "request"]]) {
    const now = getIn(copy.properties, keys);
    const was = getIn(original, keys);
    if (now?.authentication && JSON.stringify(now.authentication) === JSON.stringify(was?.authentication)) {
      delete now.authentication;
    }
  }
  return copy;
}

// -- the page -----------------------------------------------------------------------------------

export async function jobFormPage(view, [group, collection, jobName], { editing }) {
  let original = null; // the job's properties as loaded (editing), without state and status
  let body = { properties: { action: { type: "Http", request: { method: "GET", uri: "" } } } };
  if (editing) {
    const job = await call("GET", paths.job(group, collection, jobName));
    original = structuredClone(job.properties);
    delete original.status;
    delete original.state;
    body = { properties: structuredClone(original) };
  }

  const controls = new Map(); // field id -> {field, control, error}
  const generalError = h("div", { id: "form-error" });
  const name = input("job-name", { required: true, placeholder: "my-job", value: jobName ?? "", disabled: editing });
  const nameError = h("p", { class: "field-error", "data-for": "job-name" });
  const state = select("state", [["Enabled", "Enabled"], ["Disabled", "Disabled"]]);
  const raw = h("textarea", { id: "raw-json", class: "json", rows: 24, spellcheck: "false" });
  const preview = h("div", { id: "preview", class: "preview", "data-version": "0" });
  let tab = "form";

  function fieldRow(field) {
    const control = field.make();
    const error = h("p", { class: "field-error", "data-for": field.id });
    controls.set(field.id, { field, control, error });
    return h("div", { class: field.wide ? "field wide" : "field", id: `field-${field.id}` },
      h("label", { for: field.id }, field.label), control,
      field.hint ? h("p", { class: "hint" }, field.hint) : null, error);
  }

  const elementOf = (id) => document.getElementById(id) ?? view.querySelector(`#${id}`);

  function fill() {
    for (const { field } of controls.values()) {
      const value = field.read(getIn(body.properties, field.keys));
      if (field.id === "weekDays") {
        for (const box of view.querySelectorAll("input[name=weekDays]")) {
          box.checked = value.some((d) => d.toLowerCase() === box.value.toLowerCase());
        }
      } else {
        elementOf(field.id).value = value;
      }
    }
    if (!editing) state.value = body.properties.state ?? "Enabled";
    syncRecurrence();
  }

  function collect() {
    const props = body.properties;
    for (const { field, error } of controls.values()) {
      field.localError = "";
      const value = field.id === "weekDays"
        ? [...view.querySelectorAll("input[name=weekDays]:checked")].map((b) => b.value)
        : elementOf(field.id).value;
      setIn(props, field.keys, field.write(value, field));
      error.textContent = field.localError;
    }
    if (!props.recurrence?.frequency) delete props.recurrence;
    pruneEmpty(props, S);
    pruneEmpty(props, P);
    if (!editing) props.state = state.value;
  }

  function syncRecurrence() {
    const oneTime = elementOf("frequency").value === "";
    for (const { field } of controls.values()) {
      if (field.group === "recurrence" && field.id !== "frequency") {
        view.querySelector(`#field-${field.id}`).classList.toggle("off", oneTime);
      }
    }
  }

  /** The body as the active tab has it; throws on JSON that does not parse. */
  function current() {
    if (tab === "json") {
      try {
        body = JSON.parse(raw.value);
      } catch (e) {
        throw new ApiError(0, "InvalidJson", `The JSON does not parse: ${e.message}`);
      }
      if (!body || typeof body !== "object" || typeof body.properties !== "object") {
        throw new ApiError(0, "InvalidJson", "The JSON must be an object with a 'properties' object.");
      }
    } else {
      collect();
    }
    return body;
  }

  function clearErrors() {
    generalError.replaceChildren();
    nameError.textContent = "";
    for (const { error } of controls.values()) error.textContent = "";
    for (const el of view.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  }

  function showError(error) {
    const id = tab === "form" ? fieldOf(error.message) : null;
    const target = id === "job-name" ? nameError : controls.get(id)?.error;
    if (target) {
      target.textContent = error.message;
      elementOf(id)?.setAttribute("aria-invalid", "true");
    } else {
      generalError.replaceChildren(errorBox(error));
    }
  }

  // -- the live preview

  let timer = null;
  let asked = 0;
  function schedulePreview() {
    clearTimeout(timer);
    preview.classList.add("busy");
    timer = setTimeout(runPreview, DEBOUNCE_MS);
  }

  async function runPreview() {
    const ticket = ++asked;
    let sent;
    try {
      sent = current();
    } catch (e) {
      drawPreview(null, e);
      return;
    }
    const previewName = name.value.trim() || "new-job";
    const probe = original ? withoutMaskedSecrets(sent, original) : sent;
    try {
      const found = await call("POST", `${paths.job(group, collection, previewName)}/upcoming`,
        { body: probe, query: { count: PREVIEW_COUNT } });
      if (ticket === asked) drawPreview(found.value, null);
    } catch (e) {
      if (ticket === asked && e.status !== 401) drawPreview(null, e);
    }
  }

  function drawPreview(executions, error) {
    preview.classList.remove("busy");
    preview.dataset.version = String(Number(preview.dataset.version) + 1);
    clearErrors();
    const title = h("h2", {}, "Next executions");
    if (error) {
      showError(error);
      preview.replaceChildren(title, h("p", { class: "preview-error", id: "preview-error" }, error.message));
      return;
    }
    const rows = executions.map((e) => h("li", { class: "preview-row" },
      h("span", { class: "utc" }, `${utc(e.executionTime)} UTC`),
      h("span", { class: "local" }, `${wallClock(e.localTime)} ${e.timeZone === "UTC" ? "" : `(${e.timeZone}, UTC${e.utcOffset})`}`),
      e.movedBySpringForward ? h("span", { class: "dst" }, `moved: ${wallClock(e.scheduledLocalTime)} does not exist`) : null,
      e.mergedByFallBack ? h("span", { class: "dst" }, "fall back: runs once") : null));
    preview.replaceChildren(title, rows.length
      ? h("ol", { id: "preview-list" }, rows)
      : h("p", { class: "muted" }, "It would not run (the series is over)."));
  }

  // -- saving

  async function save(event) {
    event.preventDefault();
    clearErrors();
    let sent;
    try {
      sent = current();
    } catch (e) {
      showError(e);
      return;
    }
    const jobPath = paths.job(group, collection, name.value.trim());
    try {
      if (editing) {
        const { state: _state, status: _status, ...wanted } = sent.properties;
        const patch = mergePatch(original, wanted);
        if (Object.keys(patch).length) await call("PATCH", jobPath, { body: { properties: patch } });
      } else {
        await call("PUT", jobPath, { body: sent });
      }
      location.hash = jobLink(group, collection, name.value.trim());
    } catch (e) {
      if (e.status !== 401) showError(e);
    }
  }

  // -- tabs

  const tabs = {
    form: h("button", { type: "button", role: "tab", id: "tab-form", onclick: () => switchTo("form") }, "Form"),
    json: h("button", { type: "button", role: "tab", id: "tab-json", onclick: () => switchTo("json") }, "JSON"),
  };
  const groups = (g) => FIELDS.filter((f) => f.group === g).map(fieldRow);
  const formPanel = h("div", { id: "panel-form" },
    h("fieldset", { class: "fields" }, h("legend", {}, "HTTP action"), groups("action")),
    h("fieldset", { class: "fields" }, h("legend", {}, "Recurrence"), groups("recurrence")),
    h("fieldset", { class: "fields" }, h("legend", {}, "Start"), groups("timing")),
    h("fieldset", { class: "fields three" }, h("legend", {}, "Retry policy"), groups("retry")),
  );
  const jsonPanel = h("div", { id: "panel-json", hidden: true },
    h("p", { class: "hint" }, "The whole job body, for what the form does not cover (other action types,",
      " authentication, errorAction, monthlyOccurrences, …)."), raw);

  function switchTo(next) {
    if (next === tab) return;
    try {
      current();
    } catch (e) {
      clearErrors();
      showError(e);
      return;
    }
    tab = next;
    if (tab === "json") raw.value = JSON.stringify(body, null, 2);
    else fill();
    formPanel.hidden = tab !== "form";
    jsonPanel.hidden = tab !== "json";
    tabs.form.setAttribute("aria-selected", String(tab === "form"));
    tabs.json.setAttribute("aria-selected", String(tab === "json"));
  }
  tabs.form.setAttribute("aria-selected", "true");

  const back = editing ? jobLink(group, collection, jobName) : `#/jobs/${encodeURIComponent(group)}/${encodeURIComponent(collection)}`;
  const form = h("form", { class: "job-form", id: "job-form", onsubmit: save, oninput: schedulePreview, onchange: (e) => {
    if (e.target.id === "frequency") syncRecurrence();
    schedulePreview();
  } },
    h("div", { class: "fields" },
      h("div", { class: "field" }, h("label", { for: "job-name" }, "Job name"), name, nameError),
      editing ? null : h("div", { class: "field" }, h("label", { for: "state" }, "State"), state)),
    h("div", { class: "tabs", role: "tablist" }, tabs.form, tabs.json),
    formPanel,
    jsonPanel,
    generalError,
    h("div", { class: "buttons" },
      h("a", { class: "button", href: back }, "Cancel"),
      h("button", { type: "submit", class: "primary", id: "job-save" }, editing ? "Save changes" : "Create job")));

  view.append(
    h("p", { class: "crumbs" }, h("a", { href: "#/collections" }, "Collections"), " / ",
      h("a", { href: `#/jobs/${encodeURIComponent(group)}/${encodeURIComponent(collection)}` }, `${group} / ${collection}`),
      " / ", editing ? jobName : "new job"),
    h("div", { class: "heading" }, h("h1", {}, editing ? `Edit ${jobName}` : "New job")),
    h("div", { class: "form-layout" }, h("div", { class: "card" }, form), h("aside", { class: "card" }, preview)),
  );
  fill();
  runPreview();
  return () => clearTimeout(timer);
}
