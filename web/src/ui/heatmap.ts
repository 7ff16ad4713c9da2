// A canvas heatmap drawn at data resolution (one canvas pixel per cell), scaled up by CSS with
// `image-rendering: pixelated`. Labels are DOM text (textContent) around the canvas; a second
// canvas at display resolution draws the hatching of forbidden cells, NaN marks and the focus box.
// Hover and keyboard focus (arrow keys) report the cell under the pointer / cursor.
import { MASKED_RGB, NAN_RGB, VIRIDIS_LUT, lutIndex } from './colormap';
import { el, clear } from './dom';
import { niceStep } from './axis';
import { drawMaskAndNaN } from './heatmap-overlay';

export interface HeatmapData {
  rows: number;
  cols: number;
  values: Float32Array;
  /** 1 = forbidden (masked), drawn distinctly from a learned 0. */
  forbidden?: Uint8Array | null;
  lo: number;
  hi: number;
  rowLabels?: readonly string[];
  colLabels?: readonly string[];
}

export interface HeatmapOptions {
  /** Accessible name, e.g. "Head 1 attention weights". */
  label: string;
  /** Largest edge in CSS px; the cell size follows from it. */
  maxSize: number;
  minCell?: number;
  maxCell?: number;
  showLabels?: boolean;
  interactive?: boolean;
  axisTitles?: [string, string];
  /** Sentence for a cell, e.g. "query 'cat' (8) → key 'cat' (1): 0.471". */
  describe?: (i: number, j: number, v: number, forbidden: boolean) => string;
  onCell?: (text: string, i: number, j: number, fromKeyboard: boolean) => void;
  /** false: row labels without their row numbers (rows that are not positions, e.g. q, k). */
  rowNumbers?: boolean;
  /** A cell chosen by a click or by the arrow keys (not by hovering). */
  onSelect?: (i: number, j: number) => void;
  /** Several rows or columns picked: Ctrl/⌘-click or Q toggles the cell's row, Shift-click or
   *  Shift+Q the span of rows from the last one picked, Alt-click or K toggles its column. */
  onMark?: (axis: 'row' | 'col', index: number, span: boolean) => void;
  onActivate?: () => void;
}

function interactiveLabel(o: HeatmapOptions): string {
  const marks = o.onMark ? ' Q picks the cell’s query (Shift+Q a span of queries), K its key.' : '';
  return `${o.label}. Arrow keys move between cells; Home and End jump within a row.${marks}`;
}

/** The colours as RGBA words in the platform's byte order (written through a Uint32Array). */
const PACKED = (() => {
  const word = (r: number, g: number, b: number) => new Uint32Array(new Uint8Array([r, g, b, 255]).buffer)[0];
  const lut = new Uint32Array(256);
  for (let i = 0; i < 256; i++) lut[i] = word(VIRIDIS_LUT[i * 3], VIRIDIS_LUT[i * 3 + 1], VIRIDIS_LUT[i * 3 + 2]);
  return { lut, masked: word(...MASKED_RGB), nan: word(...NAN_RGB) };
})();

export class Heatmap {
  readonly root: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly overlay: HTMLCanvasElement;
  private readonly frame: HTMLElement;
  private readonly rowAxis: HTMLElement;
  private readonly colAxis: HTMLElement;
  private data: HeatmapData | null = null;
  private cell = 10;
  private focusCell: [number, number] | null = null;
  private hoverCell: [number, number] | null = null;
  private labelKey = '';
  private img: ImageData | null = null;
  /** Rows and columns outlined as picked (setMarks). */
  private marks: { rows: ReadonlySet<number>; cols: ReadonlySet<number> } = { rows: new Set(), cols: new Set() };

  constructor(private opts: HeatmapOptions) {
    this.canvas = el('canvas', { class: 'hm-data', 'aria-hidden': 'true' });
    this.overlay = el('canvas', { class: 'hm-overlay', 'aria-hidden': 'true' });
    this.frame = el('div', { class: 'hm-frame' }, this.canvas, this.overlay);
    this.rowAxis = el('div', { class: 'hm-rows', 'aria-hidden': 'true' });
    this.colAxis = el('div', { class: 'hm-cols', 'aria-hidden': 'true' });
    const [colTitle, rowTitle] = opts.axisTitles ?? ['keys →', 'queries ↓'];
    this.root = el(
      'div',
      { class: 'hm' + (opts.showLabels ? ' hm-labelled' : '') },
      opts.showLabels
        ? el(
            'div',
            { class: 'hm-corner', 'aria-hidden': 'true' },
            el('span', { class: 'hm-axis-title', text: colTitle }),
            el('span', { class: 'hm-axis-title', text: rowTitle }),
          )
        : null,
      opts.showLabels ? this.colAxis : null,
      opts.showLabels ? this.rowAxis : null,
      this.frame,
    );
    if (opts.interactive) {
      this.frame.tabIndex = 0;
      this.frame.setAttribute('role', 'application');
      this.frame.setAttribute('aria-roledescription', 'heatmap');
      this.frame.setAttribute('aria-label', interactiveLabel(opts));
      this.frame.addEventListener('keydown', (e) => this.onKey(e));
      this.frame.addEventListener('focus', () => {
        if (!this.focusCell && this.data) this.focusCell = [0, 0];
        this.report(true);
        this.drawOverlay();
      });
      this.frame.addEventListener('blur', () => this.drawOverlay());
      this.frame.addEventListener('mousemove', (e) => this.onMove(e));
      this.frame.addEventListener('mouseleave', () => {
        this.hoverCell = null;
        this.drawOverlay();
      });
      this.frame.addEventListener('click', (e) => {
        const c = this.cellAt(e);
        if (c && opts.onMark && (e.ctrlKey || e.metaKey || e.shiftKey || e.altKey)) {
          e.preventDefault();
          this.focusCell = c;
          if (e.altKey) opts.onMark('col', c[1], false);
          else opts.onMark('row', c[0], e.shiftKey);
          this.drawOverlay();
          return;
        }
        if (c) this.focusCell = c;
        this.report(false);
        if (c) this.opts.onSelect?.(c[0], c[1]);
        this.drawOverlay();
      });
    } else if (opts.onActivate) {
      this.frame.tabIndex = 0;
      this.frame.setAttribute('role', 'button');
      this.frame.setAttribute('aria-label', opts.label);
      this.frame.addEventListener('click', () => opts.onActivate?.());
      this.frame.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          opts.onActivate?.();
        }
      });
    } else {
      this.frame.setAttribute('role', 'img');
      this.frame.setAttribute('aria-label', opts.label);
    }
  }

  setLabel(label: string): void {
    this.opts.label = label;
    if (this.opts.interactive) this.frame.setAttribute('aria-label', interactiveLabel(this.opts));
    else this.frame.setAttribute('aria-label', label);
  }

  setMaxSize(px: number): void {
    this.opts.maxSize = px;
    if (this.data) this.layout();
  }

  /** Outline these rows and columns (the picked queries and keys). */
  setMarks(rows: readonly number[], cols: readonly number[]): void {
    this.marks = { rows: new Set(rows), cols: new Set(cols) };
    this.drawOverlay();
  }

  get focused(): [number, number] | null {
    return this.focusCell;
  }

  focusAt(i: number, j: number): void {
    this.focusCell = [i, j];
    this.frame.focus();
    this.report(true);
    this.drawOverlay();
  }

  /** CSS px per row as laid out (no layout read: from the size this heatmap set). */
  get rowHeight(): number {
    return this.data ? Math.round(this.cell * this.data.rows) / this.data.rows : 0;
  }

  /** The data-resolution canvas (for PNG export). */
  get dataCanvas(): HTMLCanvasElement {
    return this.canvas;
  }

  get current(): HeatmapData | null {
    return this.data;
  }

  update(d: HeatmapData): void {
    const shapeChanged = !this.data || this.data.rows !== d.rows || this.data.cols !== d.cols;
    this.data = d;
    if (shapeChanged && this.focusCell && (this.focusCell[0] >= d.rows || this.focusCell[1] >= d.cols))
      this.focusCell = null;
    this.paint();
    this.layout();
    if (this.focusCell && document.activeElement === this.frame) this.report(true);
  }

  private paint(): void {
    const d = this.data!;
    if (this.canvas.width !== d.cols) this.canvas.width = d.cols;
    if (this.canvas.height !== d.rows) this.canvas.height = d.rows;
    const ctx = this.canvas.getContext('2d')!;
    // One ImageData per size, reused: a fresh one per redraw was a fresh buffer each time (at
    // T = 256 with 8 heads, 2.3 MB of new pages per change). Pixels are written as whole RGBA
    // words from a packed copy of the colour map.
    if (!this.img || this.img.width !== d.cols || this.img.height !== d.rows)
      this.img = ctx.createImageData(d.cols, d.rows);
    const img = this.img;
    const px = new Uint32Array(img.data.buffer, img.data.byteOffset, d.rows * d.cols);
    const n = d.rows * d.cols;
    for (let k = 0; k < n; k++) {
      const v = d.values[k];
      // NaN wins; a forbidden cell is grey only when it holds no weight (the −1e9 fill gives a
      // fully masked row real, uniform weight, which is drawn in colour under the hatching).
      if (v !== v) px[k] = PACKED.nan;
      else if (d.forbidden && d.forbidden[k] && v === 0) px[k] = PACKED.masked;
      else px[k] = PACKED.lut[lutIndex(v, d.lo, d.hi)];
    }
    ctx.putImageData(img, 0, 0);
  }

  private layout(): void {
    const d = this.data!;
    const o = this.opts;
    const edge = Math.max(d.rows, d.cols);
    const cell = Math.max(o.minCell ?? 1, Math.min(o.maxCell ?? 48, o.maxSize / edge));
    this.cell = cell;
    const w = Math.round(cell * d.cols);
    const h = Math.round(cell * d.rows);
    this.frame.style.width = `${w}px`;
    this.frame.style.height = `${h}px`;
    const dpr = Math.min(2, globalThis.devicePixelRatio || 1);
    // Setting a canvas's size, even to the same value, reallocates and clears it.
    const ow = Math.round(w * dpr),
      oh = Math.round(h * dpr);
    if (this.overlay.width !== ow) this.overlay.width = ow;
    if (this.overlay.height !== oh) this.overlay.height = oh;
    if (o.showLabels) this.layoutLabels(w, h);
    this.drawOverlay();
  }

  private layoutLabels(w: number, h: number): void {
    const d = this.data!;
    const cell = this.cell;
    const font = Math.max(10, Math.min(15, cell * 0.62));
    // Cells too small to hold text: label every k-th position, k a round step (1, 2, 5, 10, 20,
    // 25, 50, …) so the labels stay readable and easy to count along.
    const every = niceStep(Math.ceil((font * 1.4) / cell));
    const key = `${d.rows}x${d.cols}|${cell}|${(d.rowLabels ?? []).join('\u0001')}|${(d.colLabels ?? []).join('\u0001')}`;
    this.root.style.setProperty('--hm-font', `${font}px`);
    this.rowAxis.style.height = `${h}px`;
    this.colAxis.style.width = `${w}px`;
    if (key === this.labelKey) return;
    this.labelKey = key;
    clear(this.rowAxis);
    clear(this.colAxis);
    const same = (lab: string, k: number) => lab === String(k);
    // Only the labelled positions get an element (every k-th): at T = 256 one span per row and
    // column of every heatmap was most of the page's paint time on each redraw (a trace of the
    // Output view: 25 of 38 ms per change). A row label keeps its cell's height and is centred on
    // it; the rows up to the next label are a margin below it.
    for (let i = 0; i < d.rows; i += every) {
      const lab = d.rowLabels?.[i];
      const span = el('span', { class: 'hm-rl' });
      span.style.height = `${cell}px`;
      const gapRows = Math.min(every, d.rows - i) - 1;
      if (gapRows > 0) span.style.marginBottom = `${gapRows * cell}px`;
      if (lab !== undefined) {
        if (same(lab, i)) span.append(el('span', { class: 'pos', text: lab }));
        else if (this.opts.rowNumbers === false) span.append(el('span', { class: 'tok', text: lab }));
        else span.append(el('span', { class: 'tok', text: lab }), el('span', { class: 'pos', text: String(i) }));
      }
      this.rowAxis.append(span);
    }
    let longest = 0;
    for (let j = 0; j < d.cols; j += every) {
      const lab = d.colLabels?.[j];
      const span = el('span', { class: 'hm-cl' });
      // A thinned label is wider than its cell (it would be clipped to a sliver): centre a
      // font-wide box on the cell; the step keeps neighbours apart.
      const wide = Math.max(cell, font + 4);
      span.style.left = `${Math.min(Math.max(0, j * cell + cell / 2 - wide / 2), d.cols * cell - wide)}px`;
      span.style.width = `${wide}px`;
      if (lab !== undefined) {
        const chars = same(lab, j) ? lab.length : Math.min(12, Array.from(lab).length) + String(j).length + 1;
        longest = Math.max(longest, chars);
        if (same(lab, j)) span.append(el('span', { class: 'pos', text: lab }));
        else span.append(el('span', { class: 'pos', text: String(j) }), el('span', { class: 'tok', text: lab }));
      }
      this.colAxis.append(span);
    }
    this.colAxis.style.height = `${Math.round(Math.min(92, 12 + font * 0.66 * longest))}px`;
  }

  private drawOverlay(): void {
    const d = this.data;
    if (!d) return;
    const ctx = this.overlay.getContext('2d')!;
    const sx = this.overlay.width / d.cols;
    const sy = this.overlay.height / d.rows;
    ctx.clearRect(0, 0, this.overlay.width, this.overlay.height);
    drawMaskAndNaN(ctx, d, sx, sy);
    const box = (c: [number, number] | null, color: string, width: number) => {
      if (!c) return;
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      const inset = width / 2;
      ctx.strokeRect(c[1] * sx + inset, c[0] * sy + inset, Math.max(sx - width, 1), Math.max(sy - width, 1));
    };
    // Picked rows and columns: a dark-and-light double outline, visible on every colour.
    for (const [color, width] of [
      ['#000', 3],
      ['#fff', 1.5],
    ] as const) {
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      for (const i of this.marks.rows)
        if (i < d.rows) ctx.strokeRect(width / 2, i * sy + width / 2, d.cols * sx - width, Math.max(sy - width, 1));
      for (const j of this.marks.cols)
        if (j < d.cols) ctx.strokeRect(j * sx + width / 2, width / 2, Math.max(sx - width, 1), d.rows * sy - width);
    }
    box(this.hoverCell, 'rgba(255,255,255,0.9)', Math.max(2, Math.min(4, sx / 6)));
    if (this.focusCell && document.activeElement === this.frame) {
      box(this.focusCell, '#000', Math.max(3, Math.min(6, sx / 4)));
      box(this.focusCell, '#fff', Math.max(1.5, Math.min(3, sx / 8)));
    }
  }

  private cellAt(e: MouseEvent): [number, number] | null {
    const d = this.data;
    if (!d) return null;
    const r = this.frame.getBoundingClientRect();
    const j = Math.floor(((e.clientX - r.left) / r.width) * d.cols);
    const i = Math.floor(((e.clientY - r.top) / r.height) * d.rows);
    if (i < 0 || j < 0 || i >= d.rows || j >= d.cols) return null;
    return [i, j];
  }

  private onMove(e: MouseEvent): void {
    const c = this.cellAt(e);
    if (!c) return;
    if (this.hoverCell && c[0] === this.hoverCell[0] && c[1] === this.hoverCell[1]) return;
    this.hoverCell = c;
    this.emit(c, false);
    this.drawOverlay();
  }

  private emit(c: [number, number], fromKeyboard: boolean): void {
    const d = this.data!;
    const k = c[0] * d.cols + c[1];
    const forb = !!(d.forbidden && d.forbidden[k]);
    const text = this.opts.describe ? this.opts.describe(c[0], c[1], d.values[k], forb) : String(d.values[k]);
    this.opts.onCell?.(text, c[0], c[1], fromKeyboard);
  }

  private report(fromKeyboard: boolean): void {
    if (this.focusCell && this.data) this.emit(this.focusCell, fromKeyboard);
  }

  private onKey(e: KeyboardEvent): void {
    const d = this.data;
    if (!d) return;
    let [i, j] = this.focusCell ?? [0, 0];
    switch (e.key) {
      case 'ArrowUp':
        i -= 1;
        break;
      case 'ArrowDown':
        i += 1;
        break;
      case 'ArrowLeft':
        j -= 1;
        break;
      case 'ArrowRight':
        j += 1;
        break;
      case 'Home':
        j = 0;
        break;
      case 'End':
        j = d.cols - 1;
        break;
      case 'PageUp':
        i = 0;
        break;
      case 'PageDown':
        i = d.rows - 1;
        break;
      case 'q':
      case 'Q':
      case 'k':
      case 'K':
        if (!this.opts.onMark || e.ctrlKey || e.metaKey || e.altKey) return;
        e.preventDefault();
        this.focusCell = [i, j];
        if (e.key === 'q' || e.key === 'Q') this.opts.onMark('row', i, e.shiftKey);
        else this.opts.onMark('col', j, false);
        this.drawOverlay();
        return;
      default:
        return;
    }
    e.preventDefault();
    this.focusCell = [Math.max(0, Math.min(d.rows - 1, i)), Math.max(0, Math.min(d.cols - 1, j))];
    this.report(true);
    this.opts.onSelect?.(this.focusCell[0], this.focusCell[1]);
    this.drawOverlay();
  }
}
