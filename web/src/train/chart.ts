// Small canvas line charts for the Train tab (loss curve, head scores over steps). Canvas, not
// SVG: they redraw up to once per animation frame while training. Drawn at device resolution.

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
  const L = 44, R = hasRight ? 38 : 10, T = 10, B = 30;
  const pw = Math.max(10, c.width - L - R);
  const ph = Math.max(10, c.height - T - B);
  const xMax = Math.max(1, c.xMax);
  const X = (x: number) => L + (x / xMax) * pw;
  const Y = (y: number) => T + ph - ((y - c.yMin) / (c.yMax - c.yMin || 1)) * ph;
  const YR = (y: number) => T + ph - y * ph;
  g.font = '11px system-ui, sans-serif';
  g.strokeStyle = '#e3e6ec';
  g.lineWidth = 1;
  g.fillStyle = '#5b6270';
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  for (const v of niceTicks(c.yMin, c.yMax, 4)) {
    const y = Y(v);
    g.beginPath();
    g.moveTo(L, y);
    g.lineTo(L + pw, y);
    g.stroke();
    g.fillText(String(v), L - 5, y);
  }
  if (hasRight) {
    g.textAlign = 'left';
    for (const v of [0, 0.5, 1]) g.fillText(String(v), L + pw + 5, YR(v));
  }
  g.textAlign = 'center';
  g.textBaseline = 'top';
  for (const v of niceTicks(0, xMax, Math.max(2, Math.floor(pw / 70)))) g.fillText(String(v), X(v), T + ph + 4);
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
      const py = y(Math.min(Math.max(v, c.yMin - 1e3), c.yMax + 1e3));
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
