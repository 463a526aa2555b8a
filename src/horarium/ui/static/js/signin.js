// Sign-in: a token (API key or OpenID Connect token) and the subscription to look at.
import { call, paths, session } from "./api.js";
import { h } from "./dom.js";

export async function signInPage(view, _params, { reason }) {
  const error = h("p", { class: "field-error", id: "signin-error", role: "alert" }, reason ?? "");
  const subscription = h("input", {
    id: "signin-subscription", name: "subscription", required: true, autocomplete: "off",
    value: session.subscription ?? "", placeholder: "my-sub",
  });
  const token = h("input", {
    id: "signin-token", name: "token", type: "password", required: true, autocomplete: "off",
    placeholder: "hrm_… or an OpenID Connect token",
  });
  const button = h("button", { type: "submit", class: "primary" }, "Sign in");

  async function submit(event) {
    event.preventDefault();
    error.textContent = "";
    button.disabled = true;
    const wanted = { token: token.value.trim(), subscription: subscription.value.trim() };
    try {
      await call("GET", paths.collections(wanted.subscription), { token: wanted.token });
      session.signIn(wanted.token, wanted.subscription);
      location.hash = "#/collections";
    } catch (e) {
      error.textContent = e.message;
    } finally {
      button.disabled = false;
    }
  }

  view.append(h("form", { class: "card signin", onsubmit: submit },
    h("h1", {}, "Sign in"),
    h("p", { class: "muted" },
      "Paste an API key (horarium keys create) or an OpenID Connect token. It is kept in this tab",
      " only and sent to the API as a bearer token; the API decides what you may see and do."),
    h("p", { class: "muted", id: "signin-admin-token" },
      "A new service's first key, an administrator's, is the file admin-token in its data",
      " folder: horarium-data/admin-token where horarium serve started, or the folder",
      " --data-dir (HORARIUM_DATA_DIR) names."),
    h("label", { for: "signin-subscription" }, "Subscription"),
    subscription,
    h("label", { for: "signin-token" }, "Token"),
    token,
    error,
    h("div", { class: "buttons" }, button)));
  (subscription.value ? token : subscription).focus();
}
