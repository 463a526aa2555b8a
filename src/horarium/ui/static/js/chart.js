// A small SVG bar chart, drawn by hand: one bar per row, stacked parts, a max label on the
// axis, a <title> tooltip per bar. Styling comes from CSS classes (no inline styles).

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  el.append(...children);
  return el;
}

/** rows: [{label, parts: [{value, class}]}]; format(value) for the axis and tooltips.
 *  Returns a <figure> with the chart and `caption`. */
export function barChart(rows, { caption, format = String, width = 560, height = 120 }) {
  const left = 56;
  const top = 8;
  const plotH = height - top - 18;
  const plotW = width - left - 4;
  const total = (row) => row.parts.reduce((sum, p) => sum + Math.max(0, p.value), 0);
  const max = Math.max(0, ...rows.map(total));
  const chart = svg("svg", {
    viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img", "aria-label": caption,
  });
  chart.append(
    svg("line", { x1: left, x2: width, y1: top + plotH + 0.5, y2: top + plotH + 0.5, class: "axis" }),
    svg("text", { x: left - 6, y: top + 8, class: "tick", "text-anchor": "end" }, format(max)),
    svg("text", { x: left - 6, y: top + plotH, class: "tick", "text-anchor": "end" }, format(0)),
  );
  const step = rows.length ? plotW / rows.length : 0;
  const barW = Math.max(1, Math.min(24, step * 0.8));
  rows.forEach((row, i) => {
    const x = left + i * step + (step - barW) / 2;
    let y = top + plotH;
    const bar = svg("g", { class: "bar" });
    for (const part of row.parts) {
      const h = max > 0 ? (Math.max(0, part.value) / max) * plotH : 0;
      if (h <= 0) continue;
      y -= h;
      bar.append(svg("rect", { x, y, width: barW, height: h, class: part.class }));
    }
    const detail = row.parts.map((p) => `${p.name ?? ""} ${format(p.value)}`.trim()).join(", ");
    // an invisible full-height target, so that a tooltip shows for small bars too
    bar.append(svg("rect", { x: left + i * step, y: top, width: step, height: plotH, class: "hit" },
      svg("title", {}, `${row.label}: ${detail}`)));
    chart.append(bar);
  });
  if (rows.length) {
    chart.append(
      svg("text", { x: left, y: height - 4, class: "tick" }, rows[0].label),
      svg("text", { x: width - 2, y: height - 4, class: "tick", "text-anchor": "end" }, rows.at(-1).label),
    );
  }
  const figure = document.createElement("figure");
  const text = document.createElement("figcaption");
  text.textContent = caption;
  figure.append(text, chart);
  return figure;
}
