// The signed-in session and calls to the management API.
//
// The token lives in sessionStorage (this tab only, gone when it closes) and goes out only as
// `Authorization: Bearer` on the page's own fetch calls; no cookie is ever a credential, so
// another site cannot make the browser call the API on the user's behalf.

export const API_VERSION = "2016-03-01";
const PROVIDER = "Microsoft.Scheduler";
const KEYS = { token: "horarium.token", subscription: "horarium.subscription" };

export const session = {
  get token() { return sessionStorage.getItem(KEYS.token); },
  get subscription() { return sessionStorage.getItem(KEYS.subscription); },
  signIn(token, subscription) {
    sessionStorage.setItem(KEYS.token, token);
    sessionStorage.setItem(KEYS.subscription, subscription);
  },
  signOut() {
    sessionStorage.removeItem(KEYS.token);
  },
};

/** An ARM error answer: status, code, the API's own message, and the whole answer (`body`). */
export class ApiError extends Error {
  constructor(status, code, message, body = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** Calls the API; resolves to the JSON answer (null when empty), rejects with an ApiError.
 *  A 401 ends the session and sends the user back to sign-in (unless `token` is given: the
 *  sign-in form checks a token that way). */
export async function call(method, path, { query = {}, body, token } = {}) {
  const url = new URL(path, location.origin);
  url.searchParams.set("api-version", API_VERSION);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, value);
  }
  const headers = { Authorization: `Bearer ${token ?? session.token ?? ""}` };
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(url, init);
  } catch (e) {
    throw new ApiError(0, "NetworkError", `The service did not answer (${e.message}).`);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (response.ok) return data;
  const error = data?.error ?? { code: String(response.status), message: text || response.statusText };
  if (response.status === 401 && token === undefined) {
    session.signOut();
    window.dispatchEvent(new CustomEvent("horarium:signed-out", { detail: error.message }));
  }
  throw new ApiError(response.status, error.code, error.message, data);
}

/** Every entry of a paged list, $top at a time; `progress(entries)` after each page. After
 *  the first page, `parallel` pages are asked at once (a 1,000-job collection in 4 round trips
 *  rather than 10); the entries keep the list's order. */
export async function listAll(path, { query = {}, top = 100, progress, parallel = 1 } = {}) {
  const entries = [];
  for (let skip = 0; ;) {
    const wave = skip === 0 ? 1 : parallel;
    const pages = await Promise.all(Array.from({ length: wave }, (_, i) =>
      call("GET", path, { query: { ...query, $top: top, $skip: skip + i * top || undefined } })));
    for (const page of pages) entries.push(...page.value);
    progress?.(entries);
    if (pages.some((page) => !page.nextLink || page.value.length === 0)) return entries;
    skip += wave * top;
  }
}

/** Runs `work(item)` for each item, at most `limit` at once. */
export async function eachLimited(items, limit, work) {
  const queue = [...items];
  const workers = Array.from({ length: Math.min(limit, queue.length) }, async () => {
    while (queue.length) await work(queue.shift());
  });
  await Promise.all(workers);
}

const enc = encodeURIComponent;

/** API paths of the signed-in subscription. */
export const paths = {
  collections: (subscription = session.subscription) =>
    `/subscriptions/${enc(subscription)}/providers/${PROVIDER}/jobCollections`,
  collection: (group, name) =>
    `/subscriptions/${enc(session.subscription)}/resourceGroups/${enc(group)}/providers/${PROVIDER}/jobCollections/${enc(name)}`,
  job: (group, collection, name) => `${paths.collection(group, collection)}/jobs/${enc(name)}`,
  failures: () => `/subscriptions/${enc(session.subscription)}/providers/${PROVIDER}/failures`,
  engine: () => `/providers/${PROVIDER}/engine`,
  outcomes: (group, collection) => `${paths.collection(group, collection)}/outcomes`,
};

/** {subscription, group, collection, job} of an ARM id. */
export function parseId(id) {
  const parts = id.split("/");
  const at = (word) => {
    const i = parts.findIndex((p) => p.toLowerCase() === word.toLowerCase());
    return i >= 0 ? decodeURIComponent(parts[i + 1] ?? "") : undefined;
  };
  return {
    subscription: at("subscriptions"),
    group: at("resourceGroups"),
    collection: at("jobCollections"),
    job: at("jobs"),
  };
}
