// The dashboard's entry point: hash routes to pages, the sign-in gate, the header.
import { session } from "./api.js";
import { errorBox, h } from "./dom.js";
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
  document.getElementById("who-subscription").textContent = session.subscription ?? "";
  for (const link of document.querySelectorAll("#nav a[data-section]")) {
    link.classList.toggle("active", link.dataset.section === section);
  }
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
document.getElementById("sign-out").addEventListener("click", () => {
  session.signOut();
  location.hash = "#/signin";
});
render();
