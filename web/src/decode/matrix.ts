// Small matrices drawn cell by cell on a canvas (the K and V caches, attention rows): one canvas
// pixel block per cell at a fixed cell size, so a matrix that grows by a column grows by a cell.
// Cells not filled yet are blank; cells a recompute step computes again (waste) are hatched red;
// one column or row can be outlined as new.
import { VIRIDIS_LUT, lutIndex } from '../ui/colormap';

export interface MatrixSpec {
  rows: number;
  /** Columns drawn (the full length); columns ≥ filled are blank. */
  cols: number;
  filled: number;
  value(i: number, j: number): number;
  lo: number;
  hi: number;
  /** 'seq': viridis (weights, 0…1); 'div': blue–white–red around 0 (keys, values). */
  palette: 'seq' | 'div';
  cell: number;
  wasted?: (i: number, j: number) => boolean;
  newCol?: number;
  newRow?: number;
  /** Columns (positions) outlined as a region, e.g. the first copy of s. */
  bands?: { from: number; to: number; color: string }[];
}

function divColor(v: number, lo: number, hi: number): [number, number, number] {
  const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
  const t = Math.max(-1, Math.min(1, v / m));
  const a = Math.abs(t);
  // white → #2166ac (negative) / #b2182b (positive)
  const [r, g, b] = t < 0 ? [33, 102, 172] : [178, 24, 43];
  return [Math.round(255 + (r - 255) * a), Math.round(255 + (g - 255) * a), Math.round(255 + (b - 255) * a)];
}

export function drawMatrix(canvas: HTMLCanvasElement, m: MatrixSpec): void {
  const c = m.cell;
  const W = m.cols * c,
    H = m.rows * c;
  if (canvas.width !== W) canvas.width = W;
  if (canvas.height !== H) canvas.height = H;
  canvas.style.width = `${W}px`;
  canvas.style.height = `${H}px`;
  const g = canvas.getContext('2d');
  if (!g) return;
  g.clearRect(0, 0, W, H);
  g.fillStyle = '#f3f4f6';
  g.fillRect(0, 0, W, H);
  for (let i = 0; i < m.rows; i++) {
    for (let j = 0; j < Math.min(m.filled, m.cols); j++) {
      const v = m.value(i, j);
      if (Number.isNaN(v)) continue;
      let rgb: [number, number, number];
      if (m.palette === 'seq') {
        const k = lutIndex(v, m.lo, m.hi) * 3;
        rgb = [VIRIDIS_LUT[k], VIRIDIS_LUT[k + 1], VIRIDIS_LUT[k + 2]];
      } else rgb = divColor(v, m.lo, m.hi);
      g.fillStyle = `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`;
      g.fillRect(j * c, i * c, c, c);
      if (m.wasted?.(i, j)) {
        g.fillStyle = 'rgba(214,36,110,0.55)';
        for (let s = 0; s < c; s += 3) g.fillRect(j * c + s, i * c, 1, c);
      }
    }
  }
  for (const b of m.bands ?? []) {
    g.strokeStyle = b.color;
    g.lineWidth = 1;
    g.strokeRect(b.from * c + 0.5, 0.5, (b.to - b.from) * c - 1, H - 1);
  }
  g.strokeStyle = '#111';
  g.lineWidth = 2;
  if (m.newCol !== undefined && m.newCol < m.cols) g.strokeRect(m.newCol * c + 1, 1, c - 2, H - 2);
  if (m.newRow !== undefined && m.newRow < m.rows) g.strokeRect(1, m.newRow * c + 1, W - 2, c - 2);
}
