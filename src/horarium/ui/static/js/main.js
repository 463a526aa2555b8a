// The dashboard's entry point: hash routes to pages, the sign-in gate, the header.
import { call, paths, session } from "./api.js";
import { errorBox, h } from "./dom.js";
import { calendarFormPage } from "./calendarform.js";
import { calendarPage } from "./calendars.js";
import { collectionsPage } from "./collections.js";
import { enginePage } from "./engine.js";
import { failuresPage } from "./failures.js";
import { jobFormPage } from "./jobform.js";
import { jobPage } from "./job.js";
import { jobsPage } from "./joblist.js";
import { monitorPage, monitorsPage } from "./monitors.js";
import { signInPage } from "./signin.js";
import { timelinePage } from "./timeline.js";

// [pattern, page, section highlighted in the navigation]; captured parts are URI-encoded.
const ROUTES = [
  [/^#\/signin$/, signInPage, null],
  [/^#\/collections$/, collectionsPage, "collections"],
  [/^#\/jobs\/([^/]+)\/([^/]+)$/, jobsPage, "collections"],
  [/^#\/job\/([^/]+)\/([^/]+)\/([^/]+)$/, jobPage, "collections"],
  [/^#\/timeline\/([^/]+)\/([^/]+)$/, timelinePage, "collections"],
  [/^#\/calendar\/([^/]+)\/([^/]+)\/([^/]+)$/, calendarPage, "collections"],
  [/^#\/calendar-new\/([^/]+)\/([^/]+)$/, calendarFormPage, "collections"],
  [/^#\/calendar-edit\/([^/]+)\/([^/]+)\/([^/]+)$/, calendarFormPage, "collections"],
  [/^#\/new\/([^/]+)\/([^/]+)$/, jobFormPage, "collections"],
  [/^#\/edit\/([^/]+)\/([^/]+)\/([^/]+)$/, jobFormPage, "collections"],
  [/^#\/monitors\/([^/]+)\/([^/]+)$/, monitorsPage, "collections"],
  [/^#\/monitor\/([^/]+)\/([^/]+)\/([^/]+)$/, monitorPage, "collections"],
  [/^#\/failures$/, failuresPage, "failures"],
  [/^#\/engine$/, enginePage, "engine"],
];

const main = document.getElementById("main");
let leave = null; // the current page's clean-up (timers)
let signedOutReason = "";

function header(section) {
  const signedIn = Boolean(session.token);
  document.getElementById("nav").hidden = !signedIn;
  document.getElementById("who").hidden = !signedIn;
  document.getElementById("who-subscription").value = session.subscription ?? "";
  document.getElementById("switch-error").textContent = "";
  for (const link of document.querySelectorAll("#nav a[data-section]")) {
    link.classList.toggle("active", link.dataset.section === section);
  }
}

// Another subscription with the same token: checked by listing its collections (the API's
// refusal is shown and the session stays as it was), then its collections page.
async function switchSubscription(event) {
  event.preventDefault();
  const wanted = document.getElementById("who-subscription").value.trim();
  const error = document.getElementById("switch-error");
  error.textContent = "";
  if (!wanted || wanted === session.subscription) return;
  try {
    await call("GET", paths.collections(wanted), { token: session.token });
  } catch (e) {
    error.textContent = `${wanted}: ${e.message}`;
    return;
  }
  session.signIn(session.token, wanted);
  if (location.hash === "#/collections") render();
  else location.hash = "#/collections";
}

async function render() {
  leave?.();
  leave = null;
  const hash = location.hash || "#/collections";
  if (!session.token && hash !== "#/signin") {
    location.replace("#/signin");
    return;
  }
  const match = ROUTES.map(([re, page, section]) => [hash.match(re), page, section]).find(([m]) => m);
  if (!match) {
    location.replace("#/collections");
    return;
  }
  const [found, page, section] = match;
  header(section);
  const view = h("div", { class: "view" });
  main.replaceChildren(view);
  const params = found.slice(1).map(decodeURIComponent);
  try {
    const cleanup = await page(view, params, { reason: signedOutReason, editing: hash.startsWith("#/edit/") });
    signedOutReason = "";
    if (typeof cleanup === "function") {
      if (view.isConnected) leave = cleanup;
      else cleanup();
    }
  } catch (error) {
    if (error.status !== 401) view.append(errorBox(error));
  }
}

window.addEventListener("horarium:signed-out", (event) => {
  signedOutReason = event.detail;
  location.hash = "#/signin";
});
window.addEventListener("hashchange", render);
document.getElementById("switch").addEventListener("submit", switchSubscription);
document.getElementById("sign-out").addEventListener("click", () => {
  session.signOut();
  location.hash = "#/signin";
});
render();
