// "Why this weight?": the zoomed head's selected cell (click it, or move to it with the arrow keys)
// taken apart by the core (core.scoreBreakdown): the query's and the key's vectors as the score
// uses them, their elementwise products, the sum, the scale, ALiBi's bias and the score, and how it
// stands against the best other key of the row. The core runs on the page's thread (one row's
// work); the Q and K it reads are the example's (or the student's) under the state's variant.
// Panels draw; every number is the core's.
import { el, clear, fmt, tokenRef } from '../ui/dom';
import { Heatmap } from '../ui/heatmap';
import { loadCore, type AttnCore } from '../wasm/load-core';
import { preferenceFromSearch } from '../wasm/core-build';
import type { CoreScoreBreakdown } from '../wasm/attn-core';
import type { VariantState } from '../shared/variant';
import type { AttentionContext } from './context';
import { HeadRows, type Rows } from './head-rows';
import { elementOf, keyCount, whatIf, type Change } from './what-if';
import { parseWhatIf } from './state';

/** The state the panel reads besides the model (the page's state has both). */
interface Extra {
  lesson?: VariantState;
}

export class BreakdownPanel {
  readonly root: HTMLElement;
  private core: AttnCore | null = null;
  private loading = false;
  private strips = new Heatmap({
    label: 'q, k and their products, one column per dimension',
    maxSize: 420,
    minCell: 6,
    maxCell: 28,
    showLabels: true,
    interactive: false,
    rowNumbers: false,
    axisTitles: ['dimension →', ''],
  });
  private title = el('h4', { class: 'bd-title', text: 'Why this weight?' });
  private lines = el('div', { class: 'bd-lines', 'aria-live': 'polite' });
  /** "Change it": one element of q or k, and what the core then computes for the row. */
  private whatIfBox = el('div', { class: 'bd-whatif', 'data-testid': 'what-if' });
  private change: Change | null = null;
  private appliedWif = '';
  private headRows = new HeadRows();
  private cell: { head: number; query: number; key: number } | null = null;
  private ctx: AttentionContext | null = null;

  constructor() {
    this.root = el(
      'section',
      { class: 'breakdown', 'data-testid': 'breakdown', hidden: true },
      this.title,
      this.lines,
      this.strips.root,
      this.whatIfBox,
    );
  }

  /** The state's cell (the link's `cell`) on the zoomed head is explained; none, or a cell of
   *  another head than the one zoomed, hides the panel. A redraw re-explains it. */
  render(ctx: AttentionContext): void {
    this.ctx = ctx;
    const c = ctx.state.page.cell ?? [];
    const head = Math.min(ctx.state.page.head, ctx.result.heads - 1);
    if (c.length !== 3 || c[0] !== head || c[1] >= ctx.result.t || c[2] >= ctx.result.tk) {
      this.cell = null;
      this.root.hidden = true;
      return;
    }
    if (!this.cell || this.cell.head !== c[0] || this.cell.query !== c[1] || this.cell.key !== c[2]) {
      this.cell = { head: c[0], query: c[1], key: c[2] };
      this.change = null;
    }
    // A change the link records (`wif`) is applied once, when it arrives.
    const wif = ctx.state.page.wif ?? '';
    if (wif !== this.appliedWif) {
      this.appliedWif = wif;
      const w = parseWhatIf(wif);
      if (w) this.change = w;
    }
    this.explain();
  }

  private explain(): void {
    const ctx = this.ctx,
      cell = this.cell;
    if (!ctx || !cell) return;
    this.root.hidden = false;
    if (!this.core) {
      this.lines.textContent = 'Loading the core…';
      if (!this.loading) {
        this.loading = true;
        loadCore(preferenceFromSearch(location.search)).then(
          (c) => {
            this.core = c;
            this.explain();
          },
          (e: Error) => (this.lines.textContent = `The core did not load: ${e.message}`),
        );
      }
      return;
    }
    const rows = this.rows(this.core, ctx);
    clear(this.lines);
    if (typeof rows === 'string') {
      this.title.textContent = 'Why this weight?';
      this.strips.root.hidden = true;
      this.whatIfBox.hidden = true;
      this.lines.append(el('p', { class: 'muted', text: rows }));
      return;
    }
    let b: CoreScoreBreakdown;
    try {
      b = this.core.scoreBreakdown(rows.q, rows.k, {
        ...(rows.opts as object),
        heads: rows.heads,
        kvHeads: rows.kvHeads,
        tq: rows.t,
        tk: keyCount(rows),
        dk: rows.dk,
        dv: rows.dv,
        head: cell.head,
        query: cell.query,
        key: cell.key,
      } as Parameters<AttnCore['scoreBreakdown']>[2]);
    } catch (e) {
      this.lines.append(
        el('p', { class: 'muted', text: `The core could not take this score apart: ${(e as Error).message}` }),
      );
      return;
    }
    this.draw(ctx, rows, b);
  }

  /** Q and K of the drawn computation, or why there are none to take apart. */
  private rows(core: AttnCore, ctx: AttentionContext): Rows | string {
    return this.headRows.get(core, ctx);
  }

  private draw(ctx: AttentionContext, rows: Rows, b: CoreScoreBreakdown): void {
    const cell = this.cell!;
    const T = rows.t,
      Tk = keyCount(rows),
      tokens = ctx.result.tokens;
    const w = ctx.result.weights[(cell.head * T + cell.query) * Tk + cell.key];
    this.title.textContent = `Why this weight? Head ${cell.head + 1}, query ${tokenRef(tokens, cell.query)} → key ${tokenRef(ctx.result.keyTokens, cell.key)}`;
    this.root.dataset.cell = `${cell.head},${cell.query},${cell.key}`;
    this.root.dataset.score = String(b.score);
    const d = rows.dk;
    const linear = ctx.state && (ctx.state as Extra).lesson?.normalizer === 'linear';
    const transformed = (ctx.state as Extra).lesson;
    const changed = transformed && (transformed.qkNorm || transformed.position === 'rope' || linear);
    const p = (text: string, cls = '') => this.lines.append(el('p', { class: cls, text }));
    p(`Weight ${fmt(w)}.`);
    const bias = b.bias !== 0 ? ` ${b.bias < 0 ? '−' : '+'} ${fmt(Math.abs(b.bias))} (ALiBi’s distance penalty)` : '';
    p(
      linear
        ? `Score: φ(q)·φ(k) = ${fmt(b.dot)} (linear attention has no scale; φ = elu + 1).`
        : `Score: ${fmt(b.scale)} (the scale) × ${fmt(b.dot)} (the sum of q ⊙ k)${bias} = ${fmt(b.score)}.`,
    );
    // The dimensions that contribute most, by the size of their product.
    const order = Array.from({ length: d }, (_, c) => c).sort(
      (x, y) => Math.abs(b.products[y]) - Math.abs(b.products[x]),
    );
    const big = Math.abs(b.products[order[0]]);
    const top = order
      .slice(0, Math.min(3, d))
      .filter((c) => Math.abs(b.products[c]) > 1e-3 * big)
      .map((c) => `dim ${c} (${b.products[c] < 0 ? '−' : '+'}${fmt(Math.abs(b.products[c]))})`);
    p(
      big === 0
        ? `Every product is 0: q and k share no direction.`
        : `Largest products: ${top.join(', ')}${top.length < d ? ` (of ${d} dimensions${top.length === 1 ? ': the match is this one dimension' : ''})` : ''}.`,
    );
    if (!b.allowed) p('The mask forbids this key: its weight is 0 whatever the score.', 'bd-why');
    else if (Number.isFinite(b.nextBest) && Math.abs(b.score - b.nextBest) <= 1e-6 * Math.max(1, Math.abs(b.score)))
      p(
        `This score ties with the best other allowed score of the row (${fmt(b.nextBest)}): they share the weight.`,
        'bd-why',
      );
    else if (Number.isFinite(b.nextBest))
      p(
        `This score is ${fmt(Math.abs(b.score - b.nextBest))} ${b.score >= b.nextBest ? 'above' : 'below'} the best other allowed score of the row (${fmt(b.nextBest)}).`,
        'bd-why',
      );
    else p('This is the only key the query may attend to.', 'bd-why');
    if (changed) p('q and k are shown as the score uses them (after qk-norm, RoPE or φ).', 'muted');
    // q, k and q ⊙ k as three strips over the dimensions, on one symmetric scale.
    const vals = new Float32Array(3 * d);
    vals.set(b.q, 0);
    vals.set(b.k, d);
    vals.set(b.products, 2 * d);
    let m = 1e-6;
    for (const x of vals) if (Number.isFinite(x)) m = Math.max(m, Math.abs(x));
    this.strips.root.hidden = false;
    // The strips fit the view's width beside their row labels (a phone's 375 px included).
    this.strips.setMaxSize(Math.max(48, Math.min(420, ctx.width - 90)));
    this.strips.update({
      rows: 3,
      cols: d,
      values: vals,
      forbidden: null,
      lo: -m,
      hi: m,
      rowLabels: ['q', 'k', 'q ⊙ k'],
      colLabels: Array.from({ length: d }, (_, c) => String(c)),
    });
    this.drawWhatIf(rows, b, order[0]);
  }

  /** The "Change it" row: which vector, which dimension, its value; the core's answer below. */
  private drawWhatIf(rows: Rows, b: CoreScoreBreakdown, topDim: number): void {
    const cell = this.cell!;
    clear(this.whatIfBox);
    this.whatIfBox.hidden = false;
    let c = this.change ?? { which: 'q' as const, dim: topDim, value: elementOf(rows, cell, 'q', topDim) };
    let note = '';
    if (c.dim >= rows.dk) {
      note = `The link’s change names dimension ${c.dim}, past this head’s d_k = ${rows.dk}: it is not applied.`;
      c = { which: 'q', dim: topDim, value: elementOf(rows, cell, 'q', topDim) };
      this.change = null;
    }
    let range = Math.max(1, 2 * Math.abs(c.value));
    for (const x of [...b.qRaw, ...b.kRaw]) range = Math.max(range, 2 * Math.abs(x));
    const which = el('select', { 'aria-label': 'change the query or the key', 'data-testid': 'what-if-which' });
    for (const [v, t] of [
      ['q', 'q (the query)'],
      ['k', 'k (the key)'],
    ])
      which.append(el('option', { value: v, text: t }));
    which.value = c.which;
    const dim = el('select', { 'aria-label': 'dimension', 'data-testid': 'what-if-dim' });
    for (let i = 0; i < rows.dk; i++) dim.append(el('option', { value: String(i), text: `dim ${i}` }));
    dim.value = String(c.dim);
    const slider = el('input', {
      type: 'range',
      min: String(-range),
      max: String(range),
      step: 'any',
      value: String(c.value),
      'aria-label': 'the element’s value',
      'data-testid': 'what-if-value',
    });
    const reset = el('button', { type: 'button', class: 'btn small', text: 'Reset' });
    // The link records the change only when asked.
    const inLink = el('button', {
      type: 'button',
      class: 'btn small',
      text: 'Put this change in the link',
      'data-testid': 'what-if-link',
    });
    const out = el('p', { class: 'bd-whatif-out', 'aria-live': 'polite', 'data-testid': 'what-if-out' });
    const run = () => {
      const ch: Change = { which: which.value as 'q' | 'k', dim: Number(dim.value), value: Number(slider.value) };
      this.change = ch;
      try {
        const r = whatIf(this.core!, rows, cell, ch);
        const vec = (x: Float32Array) =>
          `[${Array.from(x.slice(0, 4), (y) => fmt(y)).join(', ')}${x.length > 4 ? ', …' : ''}]`;
        out.textContent =
          `${ch.which}[${ch.dim}]: ${fmt(r.before.value)} → ${fmt(r.after.value)}. ` +
          `Score ${fmt(r.before.score)} → ${fmt(r.after.score)}; weight ${fmt(r.before.weight)} → ${fmt(r.after.weight)}; ` +
          `the query's output ${vec(r.before.output)} → ${vec(r.after.output)}. The model itself is unchanged.`;
        out.dataset.after = JSON.stringify({ score: r.after.score, weight: r.after.weight, value: r.after.value });
      } catch (e) {
        out.textContent = `The core refused this change: ${(e as Error).message}`;
      }
    };
    // A new vector or dimension starts from its own value.
    const restart = () => {
      slider.value = String(elementOf(rows, cell, which.value as 'q' | 'k', Number(dim.value)));
      run();
    };
    which.addEventListener('change', restart);
    dim.addEventListener('change', restart);
    slider.addEventListener('input', run);
    reset.addEventListener('click', () => {
      restart();
      if (this.ctx?.state.page.wif) this.ctx.update({ page: { wif: '' } });
    });
    inLink.addEventListener('click', () => {
      const ch = this.change;
      if (ch) this.ctx?.update({ page: { wif: `${ch.which},${ch.dim},${Number(ch.value.toPrecision(6))}` } });
    });
    this.whatIfBox.append(
      el('p', { class: 'bd-whatif-head' }, el('strong', { text: 'Change it: ' }), which, dim, slider, reset, inLink),
      out,
    );
    if (note) this.whatIfBox.append(el('p', { class: 'muted', text: note }));
    run();
  }
}
