// "Several queries, several keys": pick query rows and key columns of the zoomed head (chips below
// the heatmap, or Ctrl/⌘-, Shift- and Alt-click and the Q and K keys on it) and see, from the
// core (core.weightSelection), where the picked queries' attention goes (the mean and the sum per
// key, as bars over the keys) and who attends to the picked keys (each query's total weight on
// them, as bars over the queries). The picks are the state's `qsel` and `ksel` (in the link).
import { el, clear, fmt, tokenRef } from '../ui/dom';
import { svgEl } from '../ui/svg';
import { niceStep } from '../ui/axis';
import { loadCore, type AttnCore } from '../wasm/load-core';
import { preferenceFromSearch } from '../wasm/core-build';
import type { AttentionContext } from './context';
import { span, summarize, toggle, type SelectionSummary } from './selection';

export class SelectionPanel {
  readonly root: HTMLElement;
  private core: AttnCore | null = null;
  private loading = false;
  private ctx: AttentionContext | null = null;
  /** The last query picked one by one: Shift extends a span from it. */
  private anchor: number | null = null;
  private title = el('summary', { class: 'sel-title', text: 'Several queries, several keys' });
  private opened = false;
  private qChips = el('div', { class: 'sel-chips', role: 'group', 'data-testid': 'sel-queries' });
  private kChips = el('div', { class: 'sel-chips', role: 'group', 'data-testid': 'sel-keys' });
  private clearBtn = el('button', { type: 'button', class: 'btn small', text: 'Clear the picks' });
  private out = el('div', { class: 'sel-out', 'data-testid': 'selection' });
  private chipTokens = '';
  /** The last summary drawn (the JSON export's `selection`). */
  summary: SelectionSummary | null = null;

  constructor() {
    this.root = el(
      'details',
      { class: 'selection' },
      this.title,
      el('p', {
        class: 'small muted',
        text: 'Pick queries and keys below (Shift picks a span), or on the heatmap: Ctrl/⌘-click or Q picks the cell’s query, Shift-click or Shift+Q a span of queries, Alt-click or K its key.',
      }),
      el('div', { class: 'sel-row' }, el('span', { class: 'sel-label', text: 'Queries' }), this.qChips),
      el('div', { class: 'sel-row' }, el('span', { class: 'sel-label', text: 'Keys' }), this.kChips),
      this.clearBtn,
      this.out,
    );
    this.root.addEventListener('toggle', () => {
      if ((this.root as HTMLDetailsElement).open && this.ctx) this.render(this.ctx);
    });
    this.clearBtn.addEventListener('click', () => {
      this.anchor = null;
      this.ctx?.update({ page: { qsel: [], ksel: [] } });
    });
  }

  /** A row or column picked on the heatmap (or a chip). */
  mark(axis: 'row' | 'col', i: number, extend: boolean): void {
    const ctx = this.ctx;
    if (!ctx) return;
    const p = ctx.state.page;
    if (axis === 'row') {
      const q = extend ? span(p.qsel ?? [], this.anchor, i) : toggle(p.qsel ?? [], i);
      if (!extend) this.anchor = i;
      ctx.update({ page: { qsel: q } });
    } else ctx.update({ page: { ksel: toggle(p.ksel ?? [], i) } });
  }

  render(ctx: AttentionContext): void {
    this.ctx = ctx;
    const r = ctx.result;
    const head = Math.min(ctx.state.page.head, r.heads - 1);
    const qsel = ctx.state.page.qsel ?? [],
      ksel = ctx.state.page.ksel ?? [];
    this.title.textContent = `Several queries, several keys: head ${head + 1}`;
    // Fit mode (a slide) shows the panel only when the link picks queries or keys; it is closed
    // until picks (a link's, or Q and K on the heatmap) open it, or the reader does.
    const asked = qsel.length + ksel.length > 0;
    this.root.classList.toggle('asked', asked);
    if (asked && !this.opened) (this.root as HTMLDetailsElement).open = this.opened = true;
    if (!(this.root as HTMLDetailsElement).open) return;
    this.chips(r.tokens, qsel, ksel, r.keyTokens);
    this.clearBtn.disabled = qsel.length + ksel.length === 0;
    clear(this.out);
    this.summary = null;
    if (qsel.length + ksel.length === 0) {
      this.out.append(el('p', { class: 'muted small', text: 'Nothing picked yet.' }));
      return;
    }
    if (!this.core) {
      this.out.append(el('p', { class: 'muted', text: 'Loading the core…' }));
      if (!this.loading) {
        this.loading = true;
        loadCore(preferenceFromSearch(location.search)).then(
          (c) => {
            this.core = c;
            if (this.ctx) this.render(this.ctx);
          },
          (e: Error) => (this.out.textContent = `The core did not load: ${e.message}`),
        );
      }
      return;
    }
    let s: SelectionSummary;
    try {
      s = summarize(this.core, r.weights, { heads: r.heads, tq: r.t, tk: r.tk }, head, qsel, ksel);
    } catch (e) {
      this.out.append(el('p', { class: 'muted', text: `The core could not sum the picks: ${(e as Error).message}` }));
      return;
    }
    this.summary = s;
    const tokens = r.tokens,
      keyTokens = r.keyTokens;
    if (s.beyond.length > 0)
      this.out.append(
        el('p', {
          class: 'small muted',
          text: `Positions ${s.beyond.join(', ')} are past this sentence’s ${r.t === r.tk ? r.t : `${r.t} queries or ${r.tk} keys`}${r.t === r.tk ? ' tokens' : ''}: kept in the link, not counted.`,
        }),
      );
    const width = Math.max(200, Math.min(560, ctx.width - 24));
    if (s.queries.length > 0) {
      const best = argmax(s.mean);
      const who =
        s.queries.length === 1 ? `query ${tokenRef(tokens, s.queries[0])}` : `the ${s.queries.length} picked queries`;
      this.out.append(
        el('p', {
          'data-testid': 'sel-mean-text',
          text: `Where ${who} attend${s.queries.length === 1 ? 's' : ''}: most to key ${tokenRef(keyTokens, best)}, mean weight ${fmt(s.mean[best])} (sum ${fmt(s.sum[best])} over ${s.queries.length} row${s.queries.length === 1 ? '' : 's'}). Bars: the mean per key.`,
        }),
        bars(s.mean, keyTokens, s.keys, width, `Mean weight of the picked queries on each key`, 'sel-mean'),
      );
    }
    if (s.keys.length > 0) {
      const best = argmax(s.column);
      const what = s.keys.length === 1 ? `key ${tokenRef(keyTokens, s.keys[0])}` : `the ${s.keys.length} picked keys`;
      this.out.append(
        el('p', {
          'data-testid': 'sel-column-text',
          text: `Who attends to ${what}: query ${tokenRef(tokens, best)} the most (${fmt(s.column[best])} of its weight). Bars: each query’s total weight on ${s.keys.length === 1 ? 'it' : 'them'}.`,
        }),
        bars(s.column, tokens, s.queries, width, `Each query’s weight on the picked keys`, 'sel-column'),
      );
    }
    this.out.append(table(s, tokens, keyTokens));
  }

  /** One toggle button per token in each group; one tab stop per group, arrows move within. */
  private chips(
    queryTokens: readonly string[],
    qsel: readonly number[],
    ksel: readonly number[],
    keyTokens: readonly string[] = queryTokens,
  ): void {
    const key = queryTokens.join('\u0001') + '\u0002' + keyTokens.join('\u0001');
    if (key !== this.chipTokens) {
      this.chipTokens = key;
      for (const [box, axis] of [
        [this.qChips, 'row'],
        [this.kChips, 'col'],
      ] as const) {
        clear(box);
        box.setAttribute('aria-label', axis === 'row' ? 'Queries to pick' : 'Keys to pick');
        const tokens = axis === 'row' ? queryTokens : keyTokens;
        tokens.forEach((t, i) => {
          const b = el('button', {
            type: 'button',
            class: 'sel-chip',
            'aria-pressed': 'false',
            tabindex: i === 0 ? 0 : -1,
            'aria-label': `${axis === 'row' ? 'query' : 'key'} ${tokenRef(tokens, i)}`,
            'data-index': i,
            text: t,
          });
          b.addEventListener('click', (e) => this.mark(axis, i, axis === 'row' && e.shiftKey));
          b.addEventListener('keydown', (e) => {
            const step =
              e.key === 'ArrowRight' || e.key === 'ArrowDown'
                ? 1
                : e.key === 'ArrowLeft' || e.key === 'ArrowUp'
                  ? -1
                  : 0;
            const to = e.key === 'Home' ? 0 : e.key === 'End' ? tokens.length - 1 : step ? i + step : -1;
            if (to < 0 || to >= tokens.length) return;
            e.preventDefault();
            const next = box.children[to] as HTMLElement;
            (box.children[i] as HTMLElement).tabIndex = -1;
            next.tabIndex = 0;
            next.focus();
          });
          box.append(b);
        });
      }
    }
    const press = (box: HTMLElement, sel: readonly number[]) => {
      const set = new Set(sel);
      Array.from(box.children).forEach((c, i) => c.setAttribute('aria-pressed', String(set.has(i))));
    };
    press(this.qChips, qsel);
    press(this.kChips, ksel);
  }
}

function argmax(v: readonly number[]): number {
  let b = 0;
  for (let i = 1; i < v.length; i++) if (v[i] > v[b]) b = i;
  return b;
}

/** Bars over the tokens (0…1), the picked positions of the other axis outlined. */
function bars(
  values: readonly number[],
  tokens: readonly string[],
  picked: readonly number[],
  width: number,
  label: string,
  testid: string,
): SVGSVGElement {
  const n = values.length;
  const H = 120,
    B = 34,
    bw = width / n;
  const svg = svgEl('svg', {
    class: 'sel-bars',
    width,
    height: H + B,
    viewBox: `0 0 ${width} ${H + B}`,
    role: 'img',
    'aria-label': `${label}: ${values.map((v, i) => `${tokens[i]} ${fmt(v)}`).join(', ')}`,
    'data-testid': testid,
  });
  svg.append(svgEl('line', { x1: 0, x2: width, y1: H, y2: H, class: 'axis' }));
  const set = new Set(picked);
  const every = niceStep(Math.ceil(14 / bw));
  values.forEach((v, i) => {
    const h = Math.max(0, Math.min(1, v)) * (H - 4);
    const bar = svgEl('rect', {
      x: i * bw + Math.min(1, bw * 0.1),
      y: H - h,
      width: Math.max(0.5, bw - Math.min(2, bw * 0.2)),
      height: h,
      class: set.has(i) ? 'sel-bar picked' : 'sel-bar',
    });
    bar.append(svgEl('title', {}, `${tokenRef(tokens, i)}: ${fmt(v)}`));
    svg.append(bar);
    if (i % every === 0) {
      const lab = bw >= 14 ? tokens[i] : String(i);
      svg.append(
        svgEl(
          'text',
          { x: i * bw + bw / 2, y: H + 14, class: 'tick', 'text-anchor': 'middle' },
          Array.from(lab)
            .slice(0, Math.max(1, Math.floor((bw * every) / 7)))
            .join(''),
        ),
      );
    }
  });
  return svg;
}

/** The exact numbers, for screen readers and for copying. */
function table(s: SelectionSummary, tokens: readonly string[], keyTokens: readonly string[] = tokens): HTMLElement {
  // Cross-attention: a position is a key of the second sentence and a query of the first.
  const cross = keyTokens !== tokens && keyTokens.join('\u0001') !== tokens.join('\u0001');
  const n = Math.max(tokens.length, keyTokens.length);
  const t = el('table', { class: 'small' });
  t.append(
    el(
      'tr',
      {},
      el('th', { text: 'position' }),
      el('th', { text: cross ? 'key token' : 'token' }),
      cross ? el('th', { text: 'query token' }) : null,
      s.mean.length ? el('th', { text: 'mean (as a key)' }) : null,
      s.sum.length ? el('th', { text: 'sum (as a key)' }) : null,
      s.column.length ? el('th', { text: 'on the picked keys (as a query)' }) : null,
    ),
  );
  const cell = (a: number[], i: number) => el('td', { text: i < a.length ? fmt(a[i], 4) : '' });
  for (let i = 0; i < n; i++)
    t.append(
      el(
        'tr',
        {},
        el('td', { text: String(i) }),
        el('td', { text: (cross ? keyTokens : tokens)[i] ?? '' }),
        cross ? el('td', { text: tokens[i] ?? '' }) : null,
        s.mean.length ? cell(s.mean, i) : null,
        s.sum.length ? cell(s.sum, i) : null,
        s.column.length ? cell(s.column, i) : null,
      ),
    );
  return el('details', { class: 'sr-table' }, el('summary', { text: 'These numbers as a table' }), t);
}
