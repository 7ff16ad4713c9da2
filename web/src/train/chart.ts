// Small canvas line charts for the Train tab (loss curve, head scores over steps). Canvas, not
// SVG: they redraw up to ten times a second while training. Drawn at device resolution.
import { pow10 } from './numbers';

export interface Series {
  x: ArrayLike<number>;
  y: ArrayLike<number>;
  color: string;
  width?: number;
  dash?: number[];
  /** 'right' = plotted against the right axis (0…1) */
  axis?: 'left' | 'right';
  label?: string;
  dots?: boolean;
}

export interface Marker {
  x: number;
  label: string;
  color: string;
}

export interface Band {
  x0: number;
  x1: number;
  y: number;
  label: string;
  color: string;
}

export interface ChartSpec {
  width: number;
  height: number;
  xMax: number;
  yMin: number;
  yMax: number;
  yLabel: string;
  rightLabel?: string;
  series: Series[];
  markers?: Marker[];
  bands?: Band[];
  xLabel?: string;
  /** logarithmic left axis (yMin > 0): for losses that span decades, e.g. a saturated softmax */
  yLog?: boolean;
  /** logarithmic step axis (log of 1 + step), so the first steps of a long run are not squeezed */
  xLog?: boolean;
}

/** A tick label short enough for the margin: 0.5, 12, 1.5k, 10⁶. */
function tickText(v: number, log: boolean): string {
  if (log) {
    const e = Math.round(Math.log10(v));
    return e === 0 ? '1' : e === 1 ? '10' : pow10(e);
  }
  const a = Math.abs(v);
  if (a >= 1e4) return `${+(v / 1000).toPrecision(3)}k`;
  return String(v);
}
/** Powers of ten from lo to hi (both > 0), thinned to about n. */
function logTicks(lo: number, hi: number, n: number): number[] {
  const a = Math.floor(Math.log10(lo)),
    b = Math.ceil(Math.log10(hi));
  const every = Math.max(1, Math.ceil((b - a) / n));
  const out: number[] = [];
  for (let e = a; e <= b; e += every) if (10 ** e >= lo * 0.999 && 10 ** e <= hi * 1.001) out.push(10 ** e);
  return out;
}
/** Step ticks for a log(1 + step) axis: 0, 1, 10, 100, … and 2×, 5× where there is room. */
function logStepTicks(xMax: number, pw: number): number[] {
  const out = [0];
  for (let p = 1; p <= xMax; p *= 10) for (const m of pw > 400 ? [1, 2, 5] : [1]) if (m * p <= xMax) out.push(m * p);
  return out;
}

function niceTicks(lo: number, hi: number, n: number): number[] {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / n;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(+v.toFixed(10));
  return out;
}

export function drawChart(canvas: HTMLCanvasElement, c: ChartSpec): void {
  const dpr = Math.min(2, window.devicePixelRatio || 1);
  const W = Math.round(c.width * dpr);
  const H = Math.round(c.height * dpr);
  if (canvas.width !== W) canvas.width = W;
  if (canvas.height !== H) canvas.height = H;
  canvas.style.width = `${c.width}px`;
  canvas.style.height = `${c.height}px`;
  const g = canvas.getContext('2d');
  if (!g) return;
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.fillStyle = '#fff';
  g.fillRect(0, 0, c.width, c.height);
  const hasRight = c.series.some((s) => s.axis === 'right');
  g.font = '11px system-ui, sans-serif';
  const yLog = !!c.yLog && c.yMin > 0 && c.yMax > c.yMin;
  const yTicks = yLog ? logTicks(c.yMin, c.yMax, 4) : niceTicks(c.yMin, c.yMax, 4);
  const yTexts = yTicks.map((v) => tickText(v, yLog));
  // The left margin fits the widest tick label and the rotated axis title beside it.
  const labelW = Math.max(0, ...yTexts.map((t) => g.measureText(t).width));
  const L = Math.max(44, Math.ceil(labelW) + 27),
    R = hasRight ? 38 : 10,
    T = 10,
    B = 30;
  const pw = Math.max(10, c.width - L - R);
  const ph = Math.max(10, c.height - T - B);
  const xMax = Math.max(1, c.xMax);
  const lx = Math.log10(1 + xMax);
  const X = c.xLog ? (x: number) => L + (Math.log10(1 + Math.max(0, x)) / lx) * pw : (x: number) => L + (x / xMax) * pw;
  const ly0 = yLog ? Math.log10(c.yMin) : 0,
    ly1 = yLog ? Math.log10(c.yMax) : 1;
  const Y = yLog
    ? (y: number) => T + ph - ((Math.log10(Math.max(y, c.yMin * 1e-3)) - ly0) / (ly1 - ly0)) * ph
    : (y: number) => T + ph - ((y - c.yMin) / (c.yMax - c.yMin || 1)) * ph;
  // What was drawn, for tests and for people reading the DOM: the scales, the range, the labels.
  canvas.dataset.yScale = yLog ? 'log' : 'linear';
  canvas.dataset.xScale = c.xLog ? 'log' : 'linear';
  canvas.dataset.yRange = `${c.yMin} ${c.yMax}`;
  canvas.dataset.yTicks = yTexts.join(' ');
  canvas.dataset.yLabelRoom = String(L - 5 - 16 - Math.ceil(labelW));
  /** where step 150 falls across the plot (0…1), to see whether the first steps are squeezed */
  canvas.dataset.x150 = ((X(Math.min(150, xMax)) - L) / pw).toFixed(3);
  const YR = (y: number) => T + ph - y * ph;
  g.strokeStyle = '#e3e6ec';
  g.lineWidth = 1;
  g.fillStyle = '#5b6270';
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  yTicks.forEach((v, i) => {
    const y = Y(v);
    g.beginPath();
    g.moveTo(L, y);
    g.lineTo(L + pw, y);
    g.stroke();
    g.fillText(yTexts[i], L - 5, y);
  });
  if (hasRight) {
    g.textAlign = 'left';
    for (const v of [0, 0.5, 1]) g.fillText(String(v), L + pw + 5, YR(v));
  }
  g.textAlign = 'center';
  g.textBaseline = 'top';
  for (const v of c.xLog ? logStepTicks(xMax, pw) : niceTicks(0, xMax, Math.max(2, Math.floor(pw / 70))))
    g.fillText(String(v), X(v), T + ph + 4);
  if (c.xLabel) {
    g.textAlign = 'right';
    g.fillText(c.xLabel, L + pw, T + ph + 16);
  }
  g.save();
  g.translate(10, T + ph / 2);
  g.rotate(-Math.PI / 2);
  g.textAlign = 'center';
  g.textBaseline = 'middle';
  g.fillText(c.yLabel, 0, 0);
  g.restore();
  if (hasRight && c.rightLabel) {
    g.save();
    g.translate(c.width - 6, T + ph / 2);
    g.rotate(Math.PI / 2);
    g.textAlign = 'center';
    g.textBaseline = 'middle';
    g.fillText(c.rightLabel, 0, 0);
    g.restore();
  }
  g.strokeStyle = '#9aa1ad';
  g.strokeRect(L, T, pw, ph);

  g.save();
  g.beginPath();
  g.rect(L, T, pw, ph);
  g.clip();
  for (const b of c.bands ?? []) {
    g.strokeStyle = b.color;
    g.lineWidth = 6;
    g.globalAlpha = 0.35;
    g.beginPath();
    g.moveTo(X(b.x0), Y(b.y));
    g.lineTo(X(b.x1), Y(b.y));
    g.stroke();
    g.globalAlpha = 1;
  }
  for (const s of c.series) {
    const y = s.axis === 'right' ? YR : Y;
    g.strokeStyle = s.color;
    g.fillStyle = s.color;
    g.lineWidth = s.width ?? 1.5;
    g.setLineDash(s.dash ?? []);
    g.beginPath();
    let pen = false;
    for (let i = 0; i < s.x.length; i++) {
      const v = s.y[i];
      if (!Number.isFinite(v)) {
        pen = false;
        continue;
      }
      const px = X(s.x[i]);
      const py = s.axis === 'right' || !yLog ? y(Math.min(Math.max(v, c.yMin - 1e3), c.yMax + 1e3)) : y(v);
      if (pen) g.lineTo(px, py);
      else g.moveTo(px, py);
      pen = true;
    }
    g.stroke();
    g.setLineDash([]);
  }
  g.restore();
  g.textBaseline = 'top';
  g.textAlign = 'left';
  for (const m of c.markers ?? []) {
    const x = X(m.x);
    g.strokeStyle = m.color;
    g.lineWidth = 1;
    g.setLineDash([4, 3]);
    g.beginPath();
    g.moveTo(x, T);
    g.lineTo(x, T + ph);
    g.stroke();
    g.setLineDash([]);
    g.fillStyle = m.color;
    const w = g.measureText(m.label).width;
    g.fillText(m.label, Math.min(x + 3, L + pw - w - 2), T + 2 + (c.markers!.indexOf(m) % 3) * 12);
  }
  for (const b of c.bands ?? []) {
    g.fillStyle = b.color;
    g.textBaseline = 'bottom';
    g.fillText(b.label, X(b.x0) + 2, Y(b.y) - 4);
  }
}
