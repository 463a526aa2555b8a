// A form's live preview: asked again DEBOUNCE_MS after the last change, the element marked
// `busy` meanwhile; only the answer to the latest question is drawn (an older one arriving late
// is dropped), and a 401 is left to the sign-in page. Each drawing bumps the element's
// `data-version` (the tests wait on it).

export const DEBOUNCE_MS = 400;

// `ask()` returns (or resolves to) the answer, or throws; `draw(answer, error, touched)` fills
// the element (`touched`: the user has changed the form since it opened, or it edits an
// existing resource — a new, untouched form shows a hint rather than an error).
// Returns { changed, now, stop }: call `changed` on every edit, `now` for a first drawing, `stop`
// when the page goes.
export function livePreview(element, { touched, ask, draw }) {
  let timer = null;
  let asked = 0;
  let edited = touched;

  async function now() {
    const ticket = ++asked;
    let answer = null;
    let error = null;
    try {
      answer = await ask();
    } catch (e) {
      error = e;
    }
    if (ticket !== asked || error?.status === 401) return;
    element.classList.remove("busy");
    element.dataset.version = String(Number(element.dataset.version) + 1);
    draw(answer, error, edited);
  }

  function changed() {
    edited = true;
    clearTimeout(timer);
    element.classList.add("busy");
    timer = setTimeout(now, DEBOUNCE_MS);
  }

  return { changed, now, stop: () => clearTimeout(timer) };
}
