// Building the page with DOM calls only (never HTML strings): text from the API stays text.

/** An element: h("a", {href: "#/x", class: "y", onclick: f}, "text", child, [more]). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "value" || key === "checked") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  add(el, children);
  return el;
}

/** Appends children (nodes, text, nested arrays; null and false are skipped). */
export function add(el, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Replaces el's children with `children` (skipped as in `add`). */
export function replace(el, ...children) {
  el.replaceChildren();
  return add(el, children);
}

/** `enabled` -> `Enabled` (the API camel-cases some states, as Azure did). */
export const capital = (text) => (text ? text[0].toUpperCase() + text.slice(1) : text);

/** A badge for a state or status (Enabled, Failed, …). */
export function badge(text) {
  return h("span", { class: `badge badge-${String(text || "none").toLowerCase()}` }, capital(text) || "—");
}

/** A table: columns [{title, cell(row) -> node|text, sort?: key, class?}], with optional
 *  sortable headers (`sorting`: {key, descending, onSort(key)}). */
export function table(columns, rows, { sorting, empty = "Nothing here yet.", rowClass, compact } = {}) {
  const head = h("tr", {}, columns.map((col) => {
    if (!col.sort || !sorting) return h("th", { class: col.class }, col.title);
    const active = sorting.key === col.sort;
    const arrow = active ? (sorting.descending ? " ▼" : " ▲") : "";
    return h("th", { class: col.class, "aria-sort": active ? (sorting.descending ? "descending" : "ascending") : null },
      h("button", { type: "button", class: "sort", onclick: () => sorting.onSort(col.sort) }, col.title + arrow));
  }));
  const body = rows.length
    ? rows.map((row) => h("tr", { class: rowClass?.(row) }, columns.map((col) => h("td", { class: col.class }, col.cell(row)))))
    : h("tr", {}, h("td", { colspan: columns.length, class: "empty" }, empty));
  const wrap = h("div", { class: "table-wrap" }, h("table", { class: compact ? "compact" : null }, h("thead", {}, head), h("tbody", {}, body)));
  scrollables.observe(wrap);
  return wrap;
}

// A table wider than its box scrolls sideways: keyboard users reach it (Tab, then the arrow
// keys) only when it is focusable, so it is made so, as a named region, while it scrolls.
const scrollables = new ResizeObserver((entries) => {
  for (const { target } of entries) {
    if (!target.isConnected) {
      scrollables.unobserve(target);
      continue;
    }
    const scrolls = target.scrollWidth > target.clientWidth + 1;
    if (scrolls && !target.hasAttribute("tabindex")) {
      target.setAttribute("tabindex", "0");
      target.setAttribute("role", "region");
      target.setAttribute("aria-label", "Table (scrolls sideways)");
    } else if (!scrolls && target.hasAttribute("tabindex")) {
      for (const name of ["tabindex", "role", "aria-label"]) target.removeAttribute(name);
    }
  }
});

/** A box with an error message (an ApiError or any Error). */
export function errorBox(error) {
  const code = error.code ? `${error.code}: ` : "";
  return h("div", { class: "error-box", role: "alert" }, code + error.message);
}

/** Keeps Tab and Shift+Tab inside an open modal dialog (the browser would move on to its own
 *  address bar after the last button): from the last control to the first, and back. */
function trapTab(dialog) {
  if (dialog.dataset.trapped) return;
  dialog.dataset.trapped = "1";
  dialog.addEventListener("keydown", (event) => {
    if (event.key !== "Tab") return;
    const controls = [...dialog.querySelectorAll("button, [href], input, select, textarea, [tabindex]")]
      .filter((el) => !el.disabled && el.tabIndex >= 0 && el.getClientRects().length);
    if (!controls.length) return;
    const first = controls[0];
    const last = controls.at(-1);
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  });
}

/** Asks for confirmation in the page's <dialog>, listing `items` (what will change) under
 *  `text`; resolves to true when confirmed. */
export function confirmAction(text, okLabel = "Confirm", items = []) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  document.getElementById("confirm-list").replaceChildren(...items.map((item) => h("li", {}, item)));
  document.getElementById("confirm-ok").textContent = okLabel;
  dialog.returnValue = "";
  // A modal dialog keeps the keyboard inside it (the page behind is inert) and Escape cancels;
  // once it closes, focus goes back to what opened it.
  const opener = document.activeElement;
  trapTab(dialog);
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
      resolve(dialog.returnValue === "ok");
    }, { once: true });
  });
}

/** A page's heading with optional buttons on the right. */
export function heading(title, ...extra) {
  return h("div", { class: "heading" }, h("h1", {}, title), h("div", { class: "actions" }, extra));
}

/** Prev / next paging controls for `page` = {offset, size, shown, more, go(offset)}. */
export function pager({ offset, size, shown, total, more, go }) {
  const last = offset + shown;
  const label = shown ? `${offset + 1}–${last}${total !== undefined ? ` of ${total}` : ""}` : "none";
  return h("div", { class: "pager" },
    h("button", { type: "button", disabled: offset === 0, onclick: () => go(Math.max(0, offset - size)) }, "‹ Previous"),
    h("span", { class: "muted" }, label),
    h("button", { type: "button", disabled: !more, onclick: () => go(offset + size) }, "Next ›"));
}
