// Painting the map of queries and keys (and, with d_v = 2, the values and the output) on a 2-D
// canvas: the same function draws the page's canvas and the PNG. Points come from the core
// (map.ts); this file only places them. The origin is the zero vector, at the centre.
import { cssColor } from '../ui/colormap';

export interface PlotPoint {
  x: number;
  y: number;
  label: string;
}

export interface MapPicture {
  queries: PlotPoint[];
  keys: PlotPoint[];
  /** The selected query: its arrow from the origin; keys coloured by its weights. */
  query: number | null;
  /** (T_k) the selected query's weights, or null. */
  weights: ArrayLike<number> | null;
  /** The point with the keyboard's (or pointer's) focus. */
  focus: { which: 'q' | 'k'; index: number } | null;
  /** Draw every label (few points), else only the selected query's, the focused and the top keys. */
  allLabels: boolean;
  axisTitles: [string, string];
}

export const Q_COLOR = '#c2410c';
export const K_COLOR = '#2c5cc5';

/** Half the side of the square the data fits in, from the points' largest coordinate. */
export function extent(points: readonly PlotPoint[]): number {
  let m = 0;
  for (const p of points) m = Math.max(m, Math.abs(p.x), Math.abs(p.y));
  return m > 0 && Number.isFinite(m) ? m * 1.12 : 1;
}

/** Data → canvas px, and back (the pointer's drag). */
export function frame(size: number, m: number) {
  const half = size / 2,
    r = half - 18;
  return {
    px: (x: number) => half + (x / m) * r,
    py: (y: number) => half - (y / m) * r,
    dataX: (px: number) => ((px - half) / r) * m,
    dataY: (py: number) => ((half - py) / r) * m,
  };
}

/** A cleared square with the two axes through the origin. */
function clearWithAxes(g: CanvasRenderingContext2D, size: number, f: ReturnType<typeof frame>): void {
  g.clearRect(0, 0, size, size);
  g.strokeStyle = 'rgba(120,120,130,0.45)';
  g.lineWidth = 1;
  g.beginPath();
  g.moveTo(8, f.py(0));
  g.lineTo(size - 8, f.py(0));
  g.moveTo(f.px(0), 8);
  g.lineTo(f.px(0), size - 8);
  g.stroke();
}

export function paintMap(g: CanvasRenderingContext2D, size: number, p: MapPicture, ink = '#16181d'): void {
  const all = [...p.queries, ...p.keys];
  const m = extent(all);
  const f = frame(size, m);
  clearWithAxes(g, size, f);
  g.fillStyle = ink;
  g.font = '11px system-ui, sans-serif';
  g.textAlign = 'right';
  g.textBaseline = 'bottom';
  g.fillText(`→ ${p.axisTitles[0]}`, size - 4, size - 3);
  g.textAlign = 'left';
  g.textBaseline = 'top';
  g.fillText(`↑ ${p.axisTitles[1]}`, 4, 3);
  // The selected query's arrow.
  if (p.query !== null && p.queries[p.query]) {
    const q = p.queries[p.query];
    arrow(g, f.px(0), f.py(0), f.px(q.x), f.py(q.y), Q_COLOR);
  }
  let top = -1;
  if (p.weights) for (let j = 0; j < p.weights.length; j++) if (top < 0 || p.weights[j] > p.weights[top]) top = j;
  // Keys: squares, filled by the selected query's weight on them (viridis), else hollow.
  p.keys.forEach((k, j) => {
    const x = f.px(k.x),
      y = f.py(k.y),
      s = 7;
    if (p.weights) {
      g.fillStyle = cssColor(p.weights[j]);
      g.fillRect(x - s, y - s, 2 * s, 2 * s);
    }
    g.strokeStyle = K_COLOR;
    g.lineWidth = 2;
    g.strokeRect(x - s, y - s, 2 * s, 2 * s);
  });
  // Queries: circles.
  p.queries.forEach((q, i) => {
    g.beginPath();
    g.arc(f.px(q.x), f.py(q.y), i === p.query ? 5 : 4, 0, 2 * Math.PI);
    g.fillStyle = i === p.query ? Q_COLOR : 'rgba(194,65,12,0.55)';
    g.fill();
  });
  // Focus ring.
  if (p.focus) {
    const pt = (p.focus.which === 'q' ? p.queries : p.keys)[p.focus.index];
    if (pt) {
      g.strokeStyle = ink;
      g.lineWidth = 2;
      g.beginPath();
      g.arc(f.px(pt.x), f.py(pt.y), 11, 0, 2 * Math.PI);
      g.stroke();
    }
  }
  // Labels: points drawn on the same spot share one label ("sat 2, on 3, …"); a label that would
  // run past the right edge goes to the point's left.
  g.font = '12px system-ui, sans-serif';
  g.textBaseline = 'middle';
  const groups: { x: number; y: number; color: string; names: string[]; first: boolean }[] = [];
  const add = (pt: PlotPoint, color: string, first = false) => {
    const x = f.px(pt.x),
      y = f.py(pt.y);
    const same = groups.find((q) => q.color === color && Math.abs(q.x - x) < 4 && Math.abs(q.y - y) < 4);
    if (same) {
      same.names.push(pt.label);
      same.first ||= first;
    } else groups.push({ x, y, color, names: [pt.label], first });
  };
  p.keys.forEach((k, j) => {
    const key = j === top || (p.focus?.which === 'k' && p.focus.index === j);
    if (p.allLabels || key) add(k, K_COLOR, key);
  });
  p.queries.forEach((q, i) => {
    const key = i === p.query || (p.focus?.which === 'q' && p.focus.index === i);
    if (p.allLabels || key) add(q, Q_COLOR, key);
  });
  // Drawn in order of importance (the picked query, the top key, the focused point first); a label
  // that would overlap one already drawn is left out (the readout and the table name every point).
  const boxes: [number, number, number, number][] = [];
  const rank = (q: (typeof groups)[number]) => (q.first ? 0 : 1);
  for (const q of [...groups].sort((a, b) => rank(a) - rank(b))) {
    const text = q.names.length > 3 ? `${q.names.slice(0, 3).join(', ')}, … (${q.names.length})` : q.names.join(', ');
    const w = g.measureText(text).width;
    const right = q.x + 9 + w <= size - 2;
    const dy = q.color === Q_COLOR ? -8 : 8;
    const x0 = right ? q.x + 9 : q.x - 9 - w,
      y0 = q.y + dy - 7;
    if (x0 < 2) continue;
    if (boxes.some(([a, b, c, d]) => x0 < c + 6 && x0 + w + 6 > a && y0 < d && y0 + 14 > b)) continue;
    boxes.push([x0, y0, x0 + w, y0 + 14]);
    g.textAlign = 'left';
    g.fillStyle = q.color;
    g.fillText(text, x0, q.y + dy);
  }
}

function arrow(g: CanvasRenderingContext2D, x0: number, y0: number, x1: number, y1: number, color: string): void {
  const a = Math.atan2(y1 - y0, x1 - x0),
    h = 9;
  g.strokeStyle = color;
  g.fillStyle = color;
  g.lineWidth = 2;
  g.beginPath();
  g.moveTo(x0, y0);
  g.lineTo(x1, y1);
  g.stroke();
  if (Math.hypot(x1 - x0, y1 - y0) < h) return;
  g.beginPath();
  g.moveTo(x1, y1);
  g.lineTo(x1 - h * Math.cos(a - 0.4), y1 - h * Math.sin(a - 0.4));
  g.lineTo(x1 - h * Math.cos(a + 0.4), y1 - h * Math.sin(a + 0.4));
  g.closePath();
  g.fill();
}

/** The convex hull of 2-D points (Andrew's monotone chain), as indices, counter-clockwise: the
 *  outline drawn around the values. A drawing aid: the numbers are the core's. */
export function hull(pts: readonly PlotPoint[]): number[] {
  const idx = pts.map((_, i) => i).sort((a, b) => pts[a].x - pts[b].x || pts[a].y - pts[b].y);
  if (idx.length < 3) return idx;
  const cross = (o: number, a: number, b: number) =>
    (pts[a].x - pts[o].x) * (pts[b].y - pts[o].y) - (pts[a].y - pts[o].y) * (pts[b].x - pts[o].x);
  const lower: number[] = [],
    upper: number[] = [];
  for (const i of idx) {
    while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], i) <= 0) lower.pop();
    lower.push(i);
  }
  for (const i of [...idx].reverse()) {
    while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], i) <= 0) upper.pop();
    upper.push(i);
  }
  return [...lower.slice(0, -1), ...upper.slice(0, -1)];
}

/** The values (d_v = 2) as points, their convex hull, and the selected query's output: a mix of
 *  the values with weights that sum to 1 lies inside the hull. */
export function paintValues(
  g: CanvasRenderingContext2D,
  size: number,
  values: PlotPoint[],
  output: PlotPoint | null,
  weights: ArrayLike<number> | null,
  ink = '#16181d',
): void {
  const m = extent(output ? [...values, output] : values);
  const f = frame(size, m);
  clearWithAxes(g, size, f);
  const h = hull(values);
  if (h.length >= 2) {
    g.fillStyle = 'rgba(19,121,91,0.12)';
    g.strokeStyle = '#13795b';
    g.lineWidth = 1.5;
    g.beginPath();
    h.forEach((i, n) =>
      n === 0 ? g.moveTo(f.px(values[i].x), f.py(values[i].y)) : g.lineTo(f.px(values[i].x), f.py(values[i].y)),
    );
    g.closePath();
    g.fill();
    g.stroke();
  }
  g.font = '12px system-ui, sans-serif';
  g.textBaseline = 'middle';
  values.forEach((v, j) => {
    g.beginPath();
    g.arc(f.px(v.x), f.py(v.y), 4 + (weights ? 6 * Math.max(0, Math.min(1, weights[j])) : 0), 0, 2 * Math.PI);
    g.fillStyle = weights ? cssColor(weights[j]) : '#13795b';
    g.fill();
    g.strokeStyle = '#13795b';
    g.lineWidth = 1.5;
    g.stroke();
  });
  // Labels that would overlap one already drawn are left out (the output's first).
  const boxes: [number, number, number, number][] = [];
  const place = (text: string, x: number, y: number, color: string) => {
    const w = g.measureText(text).width;
    const x0 = x + 10 + w <= size - 2 ? x + 10 : x - 10 - w;
    if (boxes.some(([a, b, c, d]) => x0 < c && x0 + w > a && y - 7 < d && y + 7 > b)) return;
    boxes.push([x0, y - 7, x0 + w, y + 7]);
    g.fillStyle = color;
    g.textAlign = 'left';
    g.fillText(text, x0, y);
  };
  if (output) place(output.label, f.px(output.x), f.py(output.y) - 12, Q_COLOR);
  values.forEach((v) => place(v.label, f.px(v.x), f.py(v.y), ink));
  if (output) {
    const x = f.px(output.x),
      y = f.py(output.y);
    g.strokeStyle = Q_COLOR;
    g.lineWidth = 3;
    g.beginPath();
    g.moveTo(x - 7, y - 7);
    g.lineTo(x + 7, y + 7);
    g.moveTo(x + 7, y - 7);
    g.lineTo(x - 7, y + 7);
    g.stroke();
  }
}

/** The map as a PNG with a title line (white background, dark ink). */
export function mapPng(p: MapPicture, title: string): Promise<Blob | null> {
  const size = 640,
    top = 40;
  const c = document.createElement('canvas');
  c.width = size;
  c.height = size + top;
  const g = c.getContext('2d')!;
  g.fillStyle = '#fff';
  g.fillRect(0, 0, size, size + top);
  g.fillStyle = '#111';
  g.font = '600 16px system-ui, sans-serif';
  g.fillText(title, 10, 26);
  g.translate(0, top);
  paintMap(g, size, { ...p, focus: null }, '#111');
  return new Promise((resolve) => c.toBlob(resolve));
}

/** Device pixels per CSS pixel the canvases draw at (at most 2). */
export const dpr = () => Math.min(2, globalThis.devicePixelRatio || 1);
/** The page's ink colour (dark mode included). */
export const ink = () => getComputedStyle(document.documentElement).getPropertyValue('--ink').trim() || '#16181d';

/** A square canvas of `size` CSS px at the device's resolution. */
export function setSize(c: HTMLCanvasElement, size: number): void {
  const px = Math.round(size * dpr());
  if (c.width !== px) c.width = px;
  if (c.height !== px) c.height = px;
  c.style.width = c.style.height = `${size}px`;
}
