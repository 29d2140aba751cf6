// The rating history chart of a profile and the winning-chance graph of an
// analysis: SVG drawn here, no library.
// `chartGeometry` and `graphGeometry` are pure (unit-tested under Node);
// `ratingChart` and js/analysis.js make the SVG elements from them.

/** Deviation above which a rating is provisional (API.md). */
export const PROVISIONAL_ABOVE = 110;

const SVG = 'http://www.w3.org/2000/svg';

function round(v) {
  return Math.round(v * 10) / 10;
}

/** The "nice" step for about `count` ticks over `span`. */
function tickStep(span, count) {
  const raw = span / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

/**
 * Lays out `points` ([{t (ms), rating, deviation}], oldest first) in a
 * `width` × `height` box: the rating line, the rating ± deviation band,
 * the time spans in which the rating was provisional (deviation above 110,
 * crossings interpolated), and the rating ticks.
 */
export function chartGeometry(points, { width = 600, height = 220, pad = 36 } = {}) {
  if (!points.length) return null;
  const t0 = points[0].t;
  const t1 = points[points.length - 1].t;
  const tSpan = Math.max(1, t1 - t0);
  let lo = Math.min(...points.map((p) => p.rating - p.deviation));
  let hi = Math.max(...points.map((p) => p.rating + p.deviation));
  const step = tickStep(hi - lo || 100, 4);
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  if (hi === lo) hi = lo + step;
  const x = (t) => round(pad + ((t - t0) / tSpan) * (width - 2 * pad));
  const y = (r) => round(height - pad / 2 - ((r - lo) / (hi - lo)) * (height - pad));
  const xy = points.map((p) => [x(p.t), y(p.rating)]);
  const line = xy.map(([px, py], i) => `${i ? 'L' : 'M'}${px} ${py}`).join(' ');
  const upper = points.map((p) => `${x(p.t)} ${y(p.rating + p.deviation)}`);
  const lower = points.map((p) => `${x(p.t)} ${y(p.rating - p.deviation)}`).reverse();
  const band = `M${upper.join(' L')} L${lower.join(' L')} Z`;
  // Provisional spans: where the deviation is above 110, linear between points.
  const spans = [];
  let start = points[0].deviation > PROVISIONAL_ABOVE ? points[0].t : null;
  for (let i = 1; i < points.length; i += 1) {
    const a = points[i - 1];
    const b = points[i];
    const aOver = a.deviation > PROVISIONAL_ABOVE;
    const bOver = b.deviation > PROVISIONAL_ABOVE;
    if (aOver !== bOver) {
      const f = (PROVISIONAL_ABOVE - a.deviation) / (b.deviation - a.deviation);
      const cross = a.t + f * (b.t - a.t);
      if (bOver) start = cross;
      else {
        spans.push([start, cross]);
        start = null;
      }
    }
  }
  if (start !== null) spans.push([start, t1]);
  const provisional = spans.map(([s, e]) => ({ x: x(s), width: round(Math.max(x(e) - x(s), 2)) }));
  const ticks = [];
  for (let r = lo; r <= hi + 1e-9; r += step) ticks.push({ rating: r, y: y(r) });
  return { width, height, pad, line, band, dots: xy, provisional, ticks };
}

/**
 * The graph of X's winning chance: one point before each move and one after
 * the last, in a `width` × `height` box, 1 (X wins) at the top.
 */
export function graphGeometry(plies, { width = 600, height = 160, pad = 12 } = {}) {
  if (!plies.length) return null;
  const chances = plies.map((p) => p.win_x);
  const last = plies[plies.length - 1];
  // After the last move: the mover's chance after it, from X's side.
  const after = last.best_win - last.loss;
  chances.push(last.seat === 'x' ? after : 1 - after);
  const n = chances.length - 1;
  const x = (i) => Math.round((pad + (i / n) * (width - 2 * pad)) * 10) / 10;
  const y = (v) => Math.round((pad + (1 - v) * (height - 2 * pad)) * 10) / 10;
  const dots = chances.map((v, i) => [x(i), y(v)]);
  const line = dots.map(([px, py], i) => `${i ? 'L' : 'M'}${px} ${py}`).join(' ');
  const area = `${line} L${x(n)} ${y(0)} L${x(0)} ${y(0)} Z`;
  return { width, height, pad, dots, line, area, middle: y(0.5), x };
}

/** An SVG element: `svgElement('line', {x1: 0, …}, child…)` (also used by the analysis graph). */
export function svgElement(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  node.append(...children);
  return node;
}

/**
 * The chart of a rating history (API.md's `history`, plus the rating as of
 * now at `now`) as an SVG element; `null` without any rated game.
 */
export function ratingChart(history, current, now = Date.now()) {
  const points = history.map((p) => ({ t: Date.parse(p.at), rating: p.rating, deviation: p.deviation }));
  if (!points.length) return null;
  const last = points[points.length - 1];
  if (now > last.t) points.push({ t: now, rating: current.rating, deviation: current.deviation });
  const g = chartGeometry(points);
  const title = `Rating after each of ${history.length} rated games; shaded: provisional (deviation above ${PROVISIONAL_ABOVE})`;
  return svgElement('svg', { viewBox: `0 0 ${g.width} ${g.height}`, class: 'rating-chart', role: 'img', 'aria-label': title },
    svgElement('title', {}, title),
    ...g.provisional.map((s) => svgElement('rect', {
      class: 'provisional-band', x: s.x, y: 0, width: s.width, height: g.height,
    })),
    ...g.ticks.map((tk) => svgElement('g', { class: 'tick' },
      svgElement('line', { x1: g.pad, x2: g.width - g.pad, y1: tk.y, y2: tk.y }),
      svgElement('text', { x: g.pad - 4, y: tk.y + 4, 'text-anchor': 'end' }, String(Math.round(tk.rating))))),
    svgElement('text', { class: 'date', x: g.pad, y: g.height - 2 }, new Date(points[0].t).toLocaleDateString()),
    svgElement('text', { class: 'date', x: g.width - g.pad, y: g.height - 2, 'text-anchor': 'end' },
      now > last.t ? 'now' : new Date(last.t).toLocaleDateString()),
    svgElement('path', { class: 'deviation-band', d: g.band }),
    svgElement('path', { class: 'rating-line', d: g.line }),
    ...g.dots.slice(0, history.length).map(([cx, cy], i) => svgElement('circle', { class: 'game', cx, cy, r: 3 },
      svgElement('title', {}, `${Math.round(history[i].rating)} ± ${Math.round(history[i].deviation)} · ${new Date(history[i].at).toLocaleDateString()}`))));
}
