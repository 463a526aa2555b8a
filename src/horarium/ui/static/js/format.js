// Times, durations and schedules as people read them.

/** Milliseconds since the epoch of an API date-time (any number of fraction digits). */
export function parseTime(text) {
  if (!text) return NaN;
  return Date.parse(String(text).replace(/(\.\d{3})\d+/, "$1"));
}

const pad = (n) => String(n).padStart(2, "0");

/** `2024-03-10 08:30:00` in UTC. */
export function utc(text) {
  const ms = parseTime(text);
  if (Number.isNaN(ms)) return "—";
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

const zoneFormats = new Map();

/** The formatter of an IANA zone, or null when the browser does not know it (Windows names). */
function zoneFormat(zone) {
  if (!zoneFormats.has(zone)) {
    let format = null;
    try {
      format = new Intl.DateTimeFormat("en-US", {
        timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
        hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "longOffset",
      });
    } catch {
      format = null;
    }
    zoneFormats.set(zone, format);
  }
  return zoneFormats.get(zone);
}

/** `2024-03-10 03:30:00 (UTC-05:00)` in `zone`, or null when the browser cannot convert to
 *  it (Windows zone names). */
export function inZone(text, zone) {
  const ms = parseTime(text);
  const format = zoneFormat(zone || "UTC");
  if (Number.isNaN(ms) || !format) return null;
  const p = Object.fromEntries(format.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  const offset = p.timeZoneName === "GMT" ? "UTC+00:00" : p.timeZoneName.replace("GMT", "UTC");
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} (${offset})`;
}

/** A local ISO time from the API (`2019-03-10T03:30:00-05:00`) as `2019-03-10 03:30:00`. */
export function wallClock(text) {
  return text ? String(text).replace("T", " ").replace(/(\.\d+)?([+-]\d\d:\d\d|Z)$/, "") : "—";
}

/** `350 ms`, `2.4 s`, `3 min 5 s`, `2 h 3 min`, `4 d 2 h` (negative: `-` in front). */
export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "—";
  const sign = ms < 0 ? "-" : "";
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${Math.round(rest)} ms`;
  if (rest < 60_000) return `${sign}${(rest / 1000).toFixed(rest < 10_000 ? 1 : 0)} s`;
  rest = Math.round(rest / 1000);
  const units = [["d", 86400], ["h", 3600], ["min", 60], ["s", 1]];
  const parts = [];
  for (const [unit, size] of units) {
    if (rest >= size && parts.length < 2) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    } else if (parts.length) break;
  }
  return sign + parts.join(" ");
}

/** `in 4 min` / `3 min ago`, relative to now. */
export function relative(text) {
  const ms = parseTime(text);
  if (Number.isNaN(ms)) return "";
  const delta = ms - Date.now();
  return delta >= 0 ? `in ${duration(delta)}` : `${duration(-delta)} ago`;
}

/** `until 2031-02-03 04:05:06 UTC (in 3 d 2 h) — vendor maintenance`: a pause. */
export function pauseText(pause) {
  const why = pause.reason ? ` — ${pause.reason}` : "";
  return `until ${utc(pause.until)} UTC (${relative(pause.until)})${why}`;
}
