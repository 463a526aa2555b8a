// The job form's fields (where each lives in the job body, how it reads and writes), the body
// helpers, and the mapping from an API error message's field path to a form field.
import { h } from "./dom.js";

const WEEK_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const ZONES = ["UTC", "Europe/London", "Europe/Berlin", "America/New_York", "America/Chicago",
  "America/Los_Angeles", "Asia/Tokyo", "Australia/Sydney", "W. Europe Standard Time",
  "Central Standard Time", "Pacific Standard Time"];

// -- the job body: read and write values at a path, drop what is left empty --------------------

export function getIn(obj, keys) {
  return keys.reduce((o, k) => (o && typeof o === "object" ? o[k] : undefined), obj);
}

export function setIn(obj, keys, value) {
  let o = obj;
  for (const k of keys.slice(0, -1)) {
    if (!o[k] || typeof o[k] !== "object") o[k] = {};
    o = o[k];
  }
  if (value === undefined) delete o[keys.at(-1)];
  else o[keys.at(-1)] = value;
}

export function pruneEmpty(obj, keys) {
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
export const S = ["recurrence", "schedule"];
export const P = ["action", "retryPolicy"];

export function input(id, attrs = {}) {
  return h("input", { id, name: id, autocomplete: "off", ...attrs });
}

export function select(id, options) {
  return h("select", { id, name: id }, options.map(([value, label]) => h("option", { value }, label)));
}

export const FIELDS = [
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
    make: () => select("frequency", [["", "One time (no recurrence)"], ...["Second", "Minute", "Hour", "Day", "Week", "Month"].map((f) => [f, f])]),
    read: (v) => (v ? v[0].toUpperCase() + v.slice(1) : ""), write: orUndefined },
  { id: "cron", label: "Cron", keys: [...R, "cron"], group: "recurrence", hint: "instead of a frequency, e.g. 0 9 * * MON-FRI (six fields: seconds first)",
    make: () => input("cron", { placeholder: "0 9 * * MON-FRI" }), read: text, write: orUndefined },
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
    make: () => select("retryType", [["", "Default (Fixed: 4 × 30 s)"], ["None", "None"], ["Fixed", "Fixed"], ["Exponential", "Exponential"]]),
    read: (v) => (v ? v[0].toUpperCase() + v.slice(1) : ""), write: orUndefined },
  { id: "retryInterval", label: "Retry interval", keys: [...P, "retryInterval"], group: "retry", hint: "00:00:30 or PT30S",
    make: () => input("retryInterval", { placeholder: "00:00:30" }), read: text, write: orUndefined },
  { id: "retryCount", label: "Retry count", keys: [...P, "retryCount"], group: "retry",
    make: () => input("retryCount", { inputmode: "numeric", placeholder: "4" }), read: text, write: number },
  { id: "maxRetryInterval", label: "Max retry interval", keys: [...P, "maxRetryInterval"], group: "retry",
    hint: "Exponential only; empty: 1 day", make: () => input("maxRetryInterval", { placeholder: "1.00:00:00" }),
    read: text, write: orUndefined },
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
export function withoutMaskedSecrets(body, original) {
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
