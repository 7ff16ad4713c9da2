// "Queries and keys as points": the zoomed head's query and key vectors on a 2-D map from the core
// (map.ts): a query picked (its cell) draws its arrow and colours the keys by its weights. A toggle
// shows the weights without the 1/√d_k scale, with the spread of q·k measured on the map's points.
// With d_k = 2 the map is the vectors themselves: drag a point (or move it with Shift+arrows) and
// the weights, the scores and, with d_v = 2, the output among the values follow, on a what-if copy.
import { keyCount } from './what-if';
import { el, fmt, tokenRef } from '../ui/dom';
import { Heatmap } from '../ui/heatmap';
import { loadCore, type AttnCore } from '../wasm/load-core';
import { preferenceFromSearch } from '../wasm/core-build';
import { download } from '../shared/export';
import type { VariantState } from '../shared/variant';
import type { AttentionContext } from './context';
import { HeadRows, type Rows } from './head-rows';
import { drawn, headMap, headRows, headValues, moved, type HeadMap } from './map';
import {
  dpr,
  frame,
  extent,
  ink,
  mapPng,
  paintMap,
  paintValues,
  setSize,
  type MapPicture,
  type PlotPoint,
} from './map-plot';
import { infoText, pct, playText, spreadText } from './map-text';

type Focus = { which: 'q' | 'k'; index: number };

export class MapPanel {
  readonly root: HTMLElement;
  private core: AttnCore | null = null;
  private loading = false;
  private ctx: AttentionContext | null = null;
  private rowsOf = new HeadRows();
  private title = el('summary', { class: 'map-title', text: 'Queries and keys as points' });
  /** Opened once by a link's cell (the map is closed otherwise until the reader opens it). */
  private opened = false;
  private info = el('p', { class: 'small', 'data-testid': 'qk-map-info' });
  private canvas = el('canvas', { class: 'map-canvas', tabindex: 0, 'data-testid': 'qk-map-canvas' });
  private readout = el('p', { class: 'map-readout small', 'aria-live': 'polite', 'data-testid': 'qk-map-readout' });
  private unscaled = el('input', { type: 'checkbox', 'data-testid': 'qk-unscaled' });
  private spread = el('p', { class: 'small', 'data-testid': 'qk-spread' });
  private playNote = el('p', { class: 'small', 'data-testid': 'qk-play-note' });
  private reset = el('button', { type: 'button', class: 'btn small', text: 'Put the vectors back', hidden: true });
  private mini = new Heatmap({ label: 'The head’s weights with the moved vector', maxSize: 180, showLabels: false });
  private miniBox = el('div', { class: 'map-mini', hidden: true });
  private valuesCanvas = el('canvas', { class: 'map-canvas', 'data-testid': 'qk-values', 'aria-hidden': 'true' });
  private valuesBox = el('div', { class: 'map-values', hidden: true });
  private valuesText = el('p', { class: 'small', 'data-testid': 'qk-values-text' });
  private png = el('button', {
    type: 'button',
    class: 'btn small',
    text: 'PNG of the map',
    'data-testid': 'qk-map-png',
  });
  private focus: Focus | null = null;
  /** The d_k = 2 playground's moved vectors (a copy; the model is untouched), for one state. */
  private whatIf: { key: string; rows: Rows } | null = null;
  private drag: Focus | null = null;
  private picture: MapPicture | null = null;
  private map: HeadMap | null = null;
  private mapCache: { q: Float32Array; k: Float32Array; key: string; map: HeadMap } | null = null;
  private size = 320;
  /** The last drag frame's compute-and-paint time (ms): the frames bench reads it. */
  lastFrameMs = 0;

  constructor() {
    this.canvas.setAttribute('role', 'application');
    this.canvas.setAttribute('aria-roledescription', 'map of queries and keys');
    this.root = el(
      'details',
      { class: 'qk-map', 'data-testid': 'qk-map', hidden: true },
      this.title,
      this.info,
      el('div', { class: 'map-row' }, this.canvas, this.valuesBox),
      this.readout,
      el(
        'label',
        { class: 'small' },
        this.unscaled,
        ' Without the scale 1/√d_k (the keys’ colours and the numbers below)',
      ),
      this.spread,
      this.playNote,
      el('p', {}, this.reset, ' ', this.png),
      this.miniBox,
    );
    this.valuesBox.append(this.valuesCanvas, this.valuesText);
    this.miniBox.append(
      el('p', { class: 'small', text: 'The head’s weights with your moved vector (the model is unchanged):' }),
      this.mini.root,
    );
    this.unscaled.addEventListener('change', () => this.redraw());
    this.root.addEventListener('toggle', () => {
      if ((this.root as HTMLDetailsElement).open && this.ctx) this.render(this.ctx);
    });
    this.reset.addEventListener('click', () => {
      this.whatIf = null;
      this.redraw();
    });
    this.png.addEventListener('click', () => this.savePng());
    this.canvas.addEventListener('keydown', (e) => this.onKey(e));
    this.canvas.addEventListener('focus', () => {
      if (!this.focus && this.map) this.focus = { which: 'q', index: this.selectedQuery() ?? 0 };
      this.redraw();
    });
    this.canvas.addEventListener('blur', () => this.paint());
    this.canvas.addEventListener('pointerdown', (e) => this.onDown(e));
    this.canvas.addEventListener('pointermove', (e) => this.onDragMove(e));
    const end = () => (this.drag = null);
    this.canvas.addEventListener('pointerup', end);
    this.canvas.addEventListener('pointercancel', end);
  }

  render(ctx: AttentionContext): void {
    this.ctx = ctx;
    this.root.hidden = false;
    // Fit mode (a slide) shows the map only when the link picks a cell (the stylesheet reads this).
    const asked = (ctx.state.page.cell ?? []).length === 3;
    this.root.classList.toggle('asked', asked);
    // Closed until asked: a link with a cell opens it once; otherwise the reader does (its work,
    // a projection on the page's thread, runs only while it is open).
    if (asked && !this.opened) (this.root as HTMLDetailsElement).open = this.opened = true;
    if (!(this.root as HTMLDetailsElement).open) {
      this.title.textContent = `Queries and keys as points: head ${this.head() + 1}`;
      return;
    }
    if (!this.core) {
      this.info.textContent = 'Loading the core…';
      if (!this.loading) {
        this.loading = true;
        loadCore(preferenceFromSearch(location.search)).then(
          (c) => {
            this.core = c;
            if (this.ctx) this.render(this.ctx);
          },
          (e: Error) => (this.info.textContent = `The core did not load: ${e.message}`),
        );
      }
      return;
    }
    this.redraw();
  }

  private head(): number {
    const ctx = this.ctx!;
    return Math.min(ctx.state.page.head, ctx.result.heads - 1);
  }

  /** The query of the state's cell, when the cell is on this head. */
  private selectedQuery(): number | null {
    const c = this.ctx?.state.page.cell ?? [];
    return c.length === 3 && c[0] === this.head() && c[1] < this.ctx!.result.t ? c[1] : null;
  }

  private stateKey(): string {
    const s = this.ctx!.state as AttentionContext['state'] & { lesson?: unknown; arrays?: unknown };
    return JSON.stringify([s.model, s.lesson ?? null, s.arrays ?? null, this.head()]);
  }

  /** d_k = 2 and the score reads the vectors as given (no qk-norm, RoPE or φ): points can move. */
  private draggable(rows: Rows): boolean {
    const l = (this.ctx!.state as { lesson?: VariantState }).lesson;
    return rows.dk === 2 && !(l && (l.qkNorm || l.position === 'rope' || l.normalizer === 'linear'));
  }

  private redraw(): void {
    const ctx = this.ctx,
      core = this.core;
    if (!ctx || !core) return;
    const t0 = performance.now();
    const base = this.rowsOf.get(core, ctx);
    const show = (on: boolean) => {
      for (const e of [this.canvas, this.readout, this.spread, this.png, this.unscaled.parentElement!]) e.hidden = !on;
    };
    const head = this.head();
    this.title.textContent = `Queries and keys as points: head ${head + 1}`;
    if (typeof base === 'string') {
      show(false);
      this.valuesBox.hidden = this.miniBox.hidden = this.reset.hidden = true;
      this.playNote.textContent = '';
      this.info.textContent = base;
      return;
    }
    show(true);
    if (this.whatIf && this.whatIf.key !== this.stateKey()) this.whatIf = null;
    const rows = this.whatIf?.rows ?? base;
    let map: HeadMap, scaled: ReturnType<typeof headRows>, plain: ReturnType<typeof headRows> | null;
    try {
      // The map reads only Q and K: kept while they and the head stay (a mask or a slider's change
      // redraws without a new projection). The weights on the model's vectors are the drawn ones.
      const { causal, window, keyPadding, maskFill, ...rest } = rows.opts as Record<string, unknown>;
      const key = JSON.stringify([head, rest]);
      let c = this.mapCache;
      if (!c || c.q !== rows.q || c.k !== rows.k || c.key !== key)
        c = this.mapCache = { q: rows.q, k: rows.k, key, map: headMap(core, rows, head) };
      map = c.map;
      // The Train tab's model comes with weights only (no outputs): the core recomputes its rows.
      scaled = this.whatIf || ctx.result.source ? headRows(core, rows, head) : drawn(ctx.result, head);
      plain = this.unscaled.checked ? headRows(core, rows, head, { unscaled: true }) : null;
    } catch (e) {
      show(false);
      this.info.textContent = `The core could not map this head: ${(e as Error).message}`;
      return;
    }
    this.map = map;
    const tokens = ctx.result.tokens,
      keyTokens = ctx.result.keyTokens,
      T = rows.t,
      Tk = keyCount(rows);
    const q = this.selectedQuery();
    const shown = plain ?? scaled;
    const weights = q === null ? null : shown.weights.subarray(q * Tk, (q + 1) * Tk);
    // Queries and keys of very different lengths (lesson 1's queries carry the sharpness 14, its
    // keys are unit vectors): the keys are drawn longer or shorter by one factor, so both read.
    // Not while dragging (the playground's points are the vectors themselves).
    const norm = (pts: [number, number][]) => Math.max(0, ...pts.map(([x, y]) => Math.hypot(x, y)));
    const nq = norm(map.queries),
      nk = norm(map.keys);
    const ks = !this.draggable(rows) && nq > 0 && nk > 0 && (nq / nk > 2.5 || nk / nq > 2.5) ? nq / nk : 1;
    this.picture = {
      queries: map.queries.map(([x, y], i) => ({ x, y, label: `${tokens[i]} ${i}` })),
      keys: map.keys.map(([x, y], j) => ({ x: ks * x, y: ks * y, label: `${keyTokens[j]} ${j}` })),
      query: q,
      weights,
      focus: this.focus,
      allLabels: Math.max(T, Tk) <= 12,
      axisTitles: map.exact
        ? ['dim 0', 'dim 1']
        : [`axis 1 (${pct(map.explained[0])})`, `axis 2 (${pct(map.explained[1])})`],
    };
    this.root.dataset.map = JSON.stringify({
      queries: map.queries,
      keys: map.keys,
      explained: map.explained,
      keyScale: ks,
    });
    this.info.textContent = infoText(map, T, ks, q !== null, Tk);
    this.spread.textContent = spreadText(map, T, scaled.weights, plain?.weights ?? null, q, tokens, Tk, keyTokens);
    this.playText(rows);
    this.valuesPlot(rows, head, q, shown, keyTokens, tokens);
    this.miniBox.hidden = !this.whatIf;
    if (this.whatIf)
      this.mini.update({ rows: T, cols: Tk, values: shown.weights, forbidden: ctx.forbidden, lo: 0, hi: 1 });
    this.paint();
    this.announce();
    this.lastFrameMs = performance.now() - t0;
    this.root.dataset.frameMs = this.lastFrameMs.toFixed(2);
  }

  private playText(rows: Rows): void {
    const can = this.draggable(rows);
    this.reset.hidden = !this.whatIf;
    this.canvas.style.cursor = can ? 'grab' : 'pointer';
    this.playNote.textContent = playText(rows.dk, can);
  }

  private valuesPlot(
    rows: Rows,
    head: number,
    q: number | null,
    shown: ReturnType<typeof headRows>,
    tokens: readonly string[],
    queryTokens: readonly string[] = tokens,
  ): void {
    this.valuesBox.hidden = rows.dv !== 2;
    if (rows.dv !== 2) return;
    const T = keyCount(rows);
    const v = headValues(rows, head);
    const pts: PlotPoint[] = Array.from({ length: T }, (_, j) => ({
      x: v[2 * j],
      y: v[2 * j + 1],
      label: `v ${tokens[j]} ${j}`,
    }));
    const out =
      q === null
        ? null
        : { x: shown.output[2 * q], y: shown.output[2 * q + 1], label: `output of ${queryTokens[q]} ${q}` };
    const size = Math.min(300, this.size);
    setSize(this.valuesCanvas, size);
    const g = this.valuesCanvas.getContext('2d')!;
    g.setTransform(dpr(), 0, 0, dpr(), 0, 0);
    paintValues(g, size, pts, out, q === null ? null : shown.weights.subarray(q * T, (q + 1) * T), ink());
    this.valuesText.textContent =
      q === null
        ? 'd_v = 2: the values (green) and their convex hull. Pick a query to see its output.'
        : `The output of ${tokenRef(queryTokens, q)} (×) = Σ weight · value: weights of at least 0 that sum to 1 keep it inside the values’ hull: attention averages, it cannot amplify.`;
  }

  private paint(): void {
    if (!this.picture || !this.ctx) return;
    this.size = Math.max(200, Math.min(380, this.ctx.width - 40));
    setSize(this.canvas, this.size);
    const g = this.canvas.getContext('2d')!;
    g.setTransform(dpr(), 0, 0, dpr(), 0, 0);
    paintMap(
      g,
      this.size,
      { ...this.picture, focus: document.activeElement === this.canvas ? this.focus : null },
      ink(),
    );
  }

  /** What the focused point is, said once (the canvas's name carries the instructions). */
  private announce(): void {
    const p = this.picture,
      ctx = this.ctx;
    if (!p || !ctx) return;
    this.canvas.setAttribute(
      'aria-label',
      `Map of head ${this.head() + 1}'s queries and keys. Left and right arrows move between points (Home, End: the first, the last), up and down between queries and keys; Enter picks.${this.draggable(this.whatIf?.rows ?? (this.rowsOf.get(this.core!, ctx) as Rows)) ? ' Shift+arrows move the point.' : ''}`,
    );
    const f = this.focus;
    if (!f) return;
    const tokens = ctx.result.tokens,
      keyTokens = ctx.result.keyTokens;
    if (f.which === 'q') {
      this.readout.textContent = `query ${tokenRef(tokens, f.index)}${f.index === p.query ? ' (picked)' : ''}`;
      return;
    }
    if (p.query === null || !p.weights) {
      this.readout.textContent = `key ${tokenRef(keyTokens, f.index)}: pick a query to read its weight`;
      return;
    }
    const core = this.core!,
      rows = this.whatIf?.rows ?? (this.rowsOf.get(core, ctx) as Rows);
    const r = headRows(core, rows, this.head(), { unscaled: this.unscaled.checked });
    const Tk = keyCount(rows);
    this.readout.textContent = `key ${tokenRef(keyTokens, f.index)}: weight ${fmt(p.weights[f.index])}, score ${fmt(r.scores[p.query * Tk + f.index], 2)}${this.unscaled.checked ? ' (without the scale)' : ''}`;
  }

  private onKey(e: KeyboardEvent): void {
    const p = this.picture;
    if (!p) return;
    const f = this.focus ?? { which: 'q' as const, index: 0 };
    const ctx = this.ctx!;
    if (e.shiftKey && e.key.startsWith('Arrow')) {
      const rows = this.whatIf?.rows ?? (this.rowsOf.get(this.core!, ctx) as Rows);
      if (!this.draggable(rows)) return;
      e.preventDefault();
      const pt = (f.which === 'q' ? p.queries : p.keys)[f.index];
      const step = extent([...p.queries, ...p.keys]) / 20;
      const dx = e.key === 'ArrowRight' ? step : e.key === 'ArrowLeft' ? -step : 0;
      const dy = e.key === 'ArrowUp' ? step : e.key === 'ArrowDown' ? -step : 0;
      this.moveTo(f, pt.x + dx, pt.y + dy);
      return;
    }
    const T = (f.which === 'q' ? p.queries : p.keys).length;
    let next: Focus = f;
    if (e.key === 'ArrowRight') next = { ...f, index: Math.min(T - 1, f.index + 1) };
    else if (e.key === 'ArrowLeft') next = { ...f, index: Math.max(0, f.index - 1) };
    else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') next = { ...f, which: f.which === 'q' ? 'k' : 'q' };
    else if (e.key === 'Home') next = { ...f, index: 0 };
    else if (e.key === 'End') next = { ...f, index: T - 1 };
    else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      this.pick(f);
      return;
    } else if (e.key === 'Escape' && this.whatIf) {
      this.whatIf = null;
      this.redraw();
      return;
    } else return;
    e.preventDefault();
    this.focus = next;
    if (this.picture) this.picture.focus = next;
    this.paint();
    this.announce();
  }

  /** A query picked: the state's cell moves to its row (at its top key); a key: to that key. */
  private pick(f: Focus): void {
    const ctx = this.ctx!,
      p = this.picture!;
    const head = this.head();
    if (f.which === 'q') {
      const T = ctx.result.t,
        Tk = ctx.result.tk;
      const row = ctx.result.weights.subarray((head * T + f.index) * Tk, (head * T + f.index + 1) * Tk);
      let b = 0;
      for (let j = 1; j < Tk; j++) if (row[j] > row[b]) b = j;
      ctx.update({ page: { cell: [head, f.index, b], wif: '' } });
    } else ctx.update({ page: { cell: [head, p.query ?? 0, f.index], wif: '' } });
  }

  private hit(e: PointerEvent): Focus | null {
    const p = this.picture;
    if (!p) return null;
    const r = this.canvas.getBoundingClientRect();
    const fr = frame(this.size, extent([...p.queries, ...p.keys]));
    const x = ((e.clientX - r.left) / r.width) * this.size,
      y = ((e.clientY - r.top) / r.height) * this.size;
    let best: Focus | null = null,
      d = 14;
    for (const which of ['q', 'k'] as const)
      (which === 'q' ? p.queries : p.keys).forEach((pt, index) => {
        const dd = Math.hypot(fr.px(pt.x) - x, fr.py(pt.y) - y);
        if (dd < d) {
          d = dd;
          best = { which, index };
        }
      });
    return best;
  }

  private onDown(e: PointerEvent): void {
    const f = this.hit(e);
    if (!f) return;
    this.focus = f;
    const rows = this.whatIf?.rows ?? (this.rowsOf.get(this.core!, this.ctx!) as Rows);
    if (this.draggable(rows)) {
      this.drag = f;
      this.canvas.setPointerCapture?.(e.pointerId);
    }
    this.pick(f);
  }

  private onDragMove(e: PointerEvent): void {
    if (!this.drag || !this.picture) return;
    const r = this.canvas.getBoundingClientRect();
    // The frame the drag started in: the square rescales only when the drag ends.
    const fr = frame(this.size, extent([...this.picture.queries, ...this.picture.keys]));
    this.moveTo(
      this.drag,
      fr.dataX(((e.clientX - r.left) / r.width) * this.size),
      fr.dataY(((e.clientY - r.top) / r.height) * this.size),
    );
  }

  /** Move one vector of the d_k = 2 head to (x, y) on a what-if copy, and recompute. */
  moveTo(f: Focus, x: number, y: number): void {
    const ctx = this.ctx!,
      core = this.core!;
    const base = this.whatIf?.rows ?? (this.rowsOf.get(core, ctx) as Rows);
    this.whatIf = { key: this.stateKey(), rows: moved(base, this.head(), f.which, f.index, [x, y]) };
    this.focus = f;
    this.redraw();
  }

  private savePng(): void {
    if (!this.picture) return;
    const head = this.head();
    mapPng(this.picture, `Attention Playground — ${this.title.textContent}`).then(
      (b) => b && download(`head-${head + 1}-map.png`, b),
    );
  }
}
