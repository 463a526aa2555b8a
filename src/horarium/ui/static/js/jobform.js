// Create or edit a job: a form for an HTTP action, its recurrence, start time and retry policy,
// a raw JSON tab for anything else, and a live preview of the next executions (the API's
// POST …/upcoming, which validates like a PUT and stores nothing). The API's error messages
// start with the field's path; they are shown next to that field.
import { ApiError, call, paths } from "./api.js";
import { errorBox, h, replace } from "./dom.js";
import { livePreview } from "./preview.js";
import {
  FIELDS, P, S, fieldOf, getIn, input, mergePatch, pruneEmpty, select, setIn, withoutMaskedSecrets,
} from "./jobfields.js";
import { jobLink } from "./joblist.js";
import { policyLine } from "./job.js";
import { utc, wallClock } from "./format.js";

const PREVIEW_COUNT = 10;

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
    // A recurrence is kept while it has a frequency or a cron expression (with whatever else
    // it holds that the form does not show: jitter, excludeCalendars, onExcluded).
    if (!props.recurrence?.frequency && !props.recurrence?.cron) delete props.recurrence;
    pruneEmpty(props, S);
    pruneEmpty(props, P);
    if (!editing) props.state = state.value;
  }

  function syncRecurrence() {
    const oneTime = elementOf("frequency").value === "" && elementOf("cron").value.trim() === "";
    for (const { field } of controls.values()) {
      if (field.group === "recurrence" && field.id !== "frequency" && field.id !== "cron") {
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

  function ask() {
    const sent = current();
    const previewName = name.value.trim() || "new-job";
    const probe = original ? withoutMaskedSecrets(sent, original) : sent;
    return call("POST", `${paths.job(group, collection, previewName)}/upcoming`,
      { body: probe, query: { count: PREVIEW_COUNT } });
  }

  // `touched`: a new job's empty form shows no error before the user changes it.
  function drawPreview(found, error, touched) {
    clearErrors();
    const title = h("h2", {}, "Next executions");
    if (error && !touched) {
      preview.replaceChildren(title, h("p", { class: "muted", id: "preview-hint" }, "Fill in the form to see the next executions."));
      return;
    }
    if (error) {
      showError(error);
      preview.replaceChildren(title, h("p", { class: "preview-error", id: "preview-error" }, error.message));
      return;
    }
    // Executions a calendar skips are listed, unnumbered: they do not run, nor count.
    let ordinal = 0;
    const local = (e) => `${wallClock(e.localTime)} ${e.timeZone === "UTC" ? "" : `(${e.timeZone}, UTC${e.utcOffset})`}`;
    const rows = found.value.map((e) => (e.skippedByCalendar
      ? h("li", { class: "preview-row calendar-skipped-row" },
        h("span", { class: "skipped-time" }, `${utc(e.executionTime)} UTC`),
        h("span", { class: "calendar-skipped" }, `skipped: excluded by ${e.skippedByCalendar}`))
      : h("li", { class: "preview-row", value: ++ordinal },
        h("span", { class: "utc" }, `${utc(e.executionTime)} UTC`),
        h("span", { class: "local" }, local(e)),
        e.movedByCalendar ? h("span", { class: "calendar-moved" }, `moved by ${e.movedByCalendar}`) : null,
        e.movedBySpringForward ? h("span", { class: "dst" }, `moved: ${wallClock(e.scheduledLocalTime)} does not exist`) : null,
        e.mergedByFallBack ? h("span", { class: "dst" }, "fall back: runs once") : null)));
    const described = found.scheduleDescription;
    const policy = found.executionPolicy;
    const words = described ? h("p", { class: "muted", id: "preview-schedule" }, described) : null;
    replace(preview, title, words, policy ? policyLine(policy) : null, rows.length
      ? h("ol", { id: "preview-list" }, rows)
      : h("p", { class: "muted" }, "It would not run (the series is over)."));
  }

  const live = livePreview(preview, { touched: editing, ask, draw: drawPreview });
  const schedulePreview = live.changed;

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
    if (e.target.id === "frequency" || e.target.id === "cron") syncRecurrence();
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
  live.now();
  return live.stop;
}
