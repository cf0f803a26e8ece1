// A small SVG price chart: the last trade price per bucket (GET /v1/prices-history) as a step
// line held until the next point, the last one held until `end`; a price axis with round steps
// and a time axis. No library: a few path commands in the SVG's own coordinates.

const NS = 'http://www.w3.org/2000/svg';
const W = 640,
  H = 260,
  L = 44,
  R = 12,
  T = 12,
  B = 26;

function el(name, attrs, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

const STEPS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25];

function timeLabel(t, span) {
  const d = new Date(t * 1000);
  const hm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  return span > 2 * 86_400 ? `${d.getMonth() + 1}/${d.getDate()}` : span > 86_400 ? `${d.getDate()}, ${hm}` : hm;
}

/**
 * Draws `points` ({ t: unix s, p: decimal string }, oldest first) between `start` and `end`
 * (unix s) into `svg`, replacing what it held.
 */
export function drawChart(svg, points, start, end) {
  svg.replaceChildren();
  const ps = points.map((x) => ({ t: x.t, p: Number(x.p) }));
  const from = Math.min(start, ps.length ? ps[0].t : start);
  const to = Math.max(end, from + 60);
  let lo = ps.length ? Math.min(...ps.map((x) => x.p)) : 0;
  let hi = ps.length ? Math.max(...ps.map((x) => x.p)) : 1;
  const pad = Math.max(0.02, (hi - lo) * 0.15);
  lo = Math.max(0, lo - pad);
  hi = Math.min(1, hi + pad);
  const step = STEPS.find((s) => (hi - lo) / s <= 6) ?? 0.25;
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  if (hi - lo < step) hi = lo + step;
  const x = (t) => L + ((t - from) / (to - from)) * (W - L - R);
  const y = (p) => T + (1 - (p - lo) / (hi - lo)) * (H - T - B);

  const grid = el('g', { class: 'grid' });
  for (let v = lo; v <= hi + 1e-9; v += step) {
    grid.append(el('line', { x1: L, x2: W - R, y1: y(v), y2: y(v) }));
    grid.append(el('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end' }, v.toFixed(step < 0.01 ? 3 : 2)));
  }
  for (let i = 0; i <= 4; i++) {
    const t = from + ((to - from) * i) / 4;
    grid.append(el('text', { x: x(t), y: H - 8, 'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle' }, timeLabel(t, to - from)));
  }
  svg.append(grid);

  if (!ps.length) {
    svg.append(el('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty' }, 'No trades in this window'));
    return;
  }
  let d = `M${x(ps[0].t).toFixed(1)},${y(ps[0].p).toFixed(1)}`;
  for (let i = 1; i < ps.length; i++) d += `H${x(ps[i].t).toFixed(1)}V${y(ps[i].p).toFixed(1)}`;
  d += `H${x(to).toFixed(1)}`;
  const last = ps[ps.length - 1];
  svg.append(el('path', { d, class: 'line' }));
  svg.append(el('circle', { cx: x(last.t), cy: y(last.p), r: 3, class: 'last' }));
  svg.append(
    el(
      'text',
      { x: W - R, y: Math.max(T + 10, y(last.p) - 6), 'text-anchor': 'end', class: 'last-label' },
      String(points[points.length - 1].p),
    ),
  );
}
