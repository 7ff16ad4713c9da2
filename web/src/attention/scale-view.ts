// Scale view: lesson 1's entropy study (mean softmax entropy vs d_k, scaled and unscaled, with
// the ln 16 ceiling) as an SVG chart, plus the live entropy of the current rows.
import { el, clear, fmt, setText, tokenRef } from '../ui/dom';
import type { StudyResult } from './protocol';
import type { View, ViewFactory } from '../ui/view';
import type { AttentionContext } from './context';

const SVG = 'http://www.w3.org/2000/svg';
function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  text?: string,
): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

class ScaleView implements View<AttentionContext> {
  readonly id = 'scale';
  readonly root: HTMLElement;
  private chart = el('div', { class: 'study-chart' });
  private studyTable = el('table', { class: 'study-table' });
  private live = el('div', { class: 'live-entropy' });
  private liveTitle = el('h3', { class: 'panel-title' });
  private initNote = el('p', { class: 'init-note', 'data-testid': 'init-note' });
  private study: StudyResult | null = null;
  private studyError: string | null = null;
  private requested = false;
  private ctx: AttentionContext | null = null;
  private drawnStudy: StudyResult | string | null | undefined = undefined;
  /** The live rows' elements, kept across redraws (only their text and bar widths change). */
  private rows: { li: HTMLElement; tok: HTMLElement; bar: HTMLElement; val: HTMLElement }[] = [];
  private list = el('ol', { class: 'entropy-bars', start: 0 });
  private more = el('li', { class: 'muted' });
  private mean = el('p', { class: 'ent-mean' });

  constructor() {
    this.root = el(
      'div',
      { class: 'view-scale' },
      el(
        'section',
        { class: 'study' },
        el('h3', { class: 'panel-title', text: 'Why divide by √d_k: mean softmax entropy of 16 random keys' }),
        el('p', {
          class: 'muted fit-hide',
          text: '1000 Gaussian queries against 16 Gaussian keys per d_k, computed by the wasm core. Without the scale the rows collapse towards one-hot (entropy → 0) as d_k grows; with it they stay near a soft average.',
        }),
        this.chart,
        this.studyTable,
      ),
      el(
        'section',
        { class: 'live' },
        this.liveTitle,
        this.initNote,
        el('p', {
          class: 'muted fit-hide',
          text: 'Entropy of each row of the selected head, against its ceiling ln(number of allowed keys). A short bar means a peaked, nearly one-hot row.',
        }),
        this.live,
      ),
    );
  }

  heatmaps() {
    return [];
  }

  render(ctx: AttentionContext): void {
    this.ctx = ctx;
    if (!this.requested) {
      this.requested = true;
      ctx.client.study().then(
        (st) => {
          this.study = st;
          this.drawStudy();
        },
        (err: Error) => {
          this.studyError = err.message;
          this.drawStudy();
        },
      );
    }
    if (this.drawnStudy !== (this.study ?? this.studyError)) this.drawStudy();
    this.drawLive(ctx);
  }

  private drawStudy(): void {
    // Drawn once per study (not on every redraw: it does not depend on the state).
    this.drawnStudy = this.study ?? this.studyError;
    clear(this.chart);
    clear(this.studyTable);
    if (!this.study) {
      this.chart.append(
        el('p', {
          class: 'muted',
          text: this.studyError ? `The study could not run: ${this.studyError}` : 'Computing the study…',
        }),
      );
      return;
    }
    const st = this.study;
    const W = 560,
      H = 300,
      L = 56,
      R = 150,
      Tp = 16,
      B = 44;
    const x = (dk: number) =>
      L +
      ((Math.log2(dk) - Math.log2(st.dk[0])) /
        Math.max(1e-9, Math.log2(st.dk[st.dk.length - 1]) - Math.log2(st.dk[0]))) *
        (W - L - R);
    const ymax = Math.ceil(st.ceiling * 2) / 2;
    const y = (v: number) => Tp + (1 - v / ymax) * (H - Tp - B);
    const svg = s('svg', {
      viewBox: `0 0 ${W} ${H}`,
      role: 'img',
      'aria-label': `Line chart: mean entropy with scaling stays near ${fmt(st.scaled[st.scaled.length - 1], 2)} nats at d_k ${st.dk[st.dk.length - 1]}; without scaling it falls to ${fmt(st.unscaled[st.unscaled.length - 1], 2)} nats. Ceiling ln 16 = ${fmt(st.ceiling, 2)}.`,
    });
    for (let v = 0; v <= ymax + 1e-9; v += 0.5) {
      svg.append(s('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }));
      svg.append(s('text', { x: L - 8, y: y(v) + 4, class: 'tick', 'text-anchor': 'end' }, v.toFixed(1)));
    }
    for (const dk of st.dk)
      svg.append(s('text', { x: x(dk), y: H - B + 18, class: 'tick', 'text-anchor': 'middle' }, String(dk)));
    svg.append(s('text', { x: (L + W - R) / 2, y: H - 6, class: 'axis', 'text-anchor': 'middle' }, 'd_k (log scale)'));
    svg.append(
      s(
        'text',
        {
          x: 14,
          y: (Tp + H - B) / 2,
          class: 'axis',
          'text-anchor': 'middle',
          transform: `rotate(-90 14 ${(Tp + H - B) / 2})`,
        },
        'mean entropy (nats)',
      ),
    );
    svg.append(s('line', { x1: L, x2: W - R, y1: y(st.ceiling), y2: y(st.ceiling), class: 'ceiling' }));
    svg.append(
      s(
        'text',
        { x: W - R + 6, y: y(st.ceiling) + 4, class: 'series-label ceiling-label' },
        `ln 16 = ${fmt(st.ceiling, 2)}`,
      ),
    );
    const series = (vals: number[], cls: string, label: string) => {
      const pts = vals.map((v, i) => `${x(st.dk[i])},${y(v)}`).join(' ');
      svg.append(s('polyline', { points: pts, class: `series ${cls}` }));
      vals.forEach((v, i) => svg.append(s('circle', { cx: x(st.dk[i]), cy: y(v), r: 4, class: `dot ${cls}` })));
      const last = vals[vals.length - 1];
      svg.append(s('text', { x: W - R + 6, y: y(last) + 4, class: `series-label ${cls}` }, label));
    };
    series(st.scaled, 's-scaled', 'with 1/√d_k');
    series(st.unscaled, 's-unscaled', 'without');
    this.chart.append(svg);
    this.studyTable.append(el('caption', { text: 'Mean entropy (nats) per d_k' }));
    const hr = el(
      'tr',
      {},
      el('th', { scope: 'col', text: 'd_k' }),
      el('th', { scope: 'col', text: 'with 1/√d_k' }),
      el('th', { scope: 'col', text: 'without' }),
    );
    this.studyTable.append(el('thead', {}, hr));
    const tb = el('tbody');
    st.dk.forEach((dk, i) =>
      tb.append(
        el(
          'tr',
          {},
          el('th', { scope: 'row', text: String(dk) }),
          el('td', { text: fmt(st.scaled[i], 3) }),
          el('td', { text: fmt(st.unscaled[i], 3) }),
        ),
      ),
    );
    this.studyTable.append(tb);
  }

  private drawLive(ctx: AttentionContext): void {
    const r = ctx.result;
    const T = r.t;
    const h = Math.min(ctx.state.page.head, r.heads - 1);
    const scaleText =
      ctx.state.model.scale === 'sqrt'
        ? `1/√${r.dk} = ${fmt(r.scale, 4)}`
        : ctx.state.model.scale === 'none'
          ? '1 (no scaling)'
          : `custom ${fmt(r.scale, 4)}`;
    this.liveTitle.textContent = `Live: head ${h + 1}, d_k = ${r.dk}, scale ${scaleText}`;
    // Why the live rows can disagree with the study: its queries and keys have unit variance;
    // with N(0,1) weights a query entry sums d_model unit-variance products.
    const s = ctx.state;
    this.initNote.hidden = s.model.source !== 'random';
    this.initNote.textContent =
      s.model.init === 'normal'
        ? `These weights are N(0, 1) as lesson 2 draws them, so each query and key entry sums d_model = ${s.model.dModel} products and has variance ${s.model.dModel}, not 1 as in the study: the scores are ${fmt(Math.sqrt(s.model.dModel), 3)}× larger even with 1/√d_k and the rows saturate; choose the N(0, 1/d_model) init (Model › Weights init) to match the study.`
        : `These weights are N(0, 1/d_model), so each query and key entry has variance 1, as in the study, and with 1/√d_k the rows stay soft (lesson 2's N(0, 1) weights would give them variance d_model = ${s.model.dModel}).`;
    // Up to 64 rows are listed; their elements are reused, so a redraw changes text and widths
    // only (rebuilding the list and the chart each time cost a whole-page layout per change).
    if (!this.live.firstChild) this.live.append(this.mean, this.list);
    const shown = Math.min(T, 64);
    while (this.rows.length > shown) this.rows.pop()!.li.remove();
    while (this.rows.length < shown) {
      const tok = el('span', { class: 'ent-tok' });
      const bar = el('span', { class: 'bar' });
      const val = el('span', { class: 'ent-val' });
      const li = el('li', {}, tok, el('span', { class: 'bar-track' }, bar), val);
      this.list.insertBefore(li, this.more.parentNode === this.list ? this.more : null);
      this.rows.push({ li, tok, bar, val });
    }
    let sum = 0,
      n = 0;
    for (let i = 0; i < T; i++) {
      const e = r.entropy[h * T + i];
      if (Number.isFinite(e)) {
        sum += e;
        n++;
      }
      if (i >= shown) continue;
      let allowed = 0;
      for (let j = 0; j < r.tk; j++) if (!ctx.forbidden[i * r.tk + j]) allowed++;
      const ceil = allowed > 0 ? Math.log(allowed) : 0;
      const frac = ceil > 0 && Number.isFinite(e) ? Math.min(1, e / ceil) : 0;
      const row = this.rows[i];
      setText(row.tok, tokenRef(r.tokens, i));
      setText(row.val, `${fmt(e, 2)} / ${fmt(ceil, 2)}`);
      const width = `${(frac * 100).toFixed(1)}%`;
      if (row.bar.style.width !== width) row.bar.style.width = width;
    }
    if (T > shown) {
      setText(this.more, `… ${T - shown} more rows`);
      if (this.more.parentNode !== this.list) this.list.append(this.more);
    } else this.more.remove();
    setText(this.mean, `mean entropy ${n ? fmt(sum / n, 3) : 'NaN'} nats over ${n} rows`);
  }
}

export const scaleView: ViewFactory<AttentionContext, 'scale', true> = {
  id: 'scale',
  label: 'Scale (√d_k)',
  needsResult: true,
  create: () => new ScaleView(),
};
