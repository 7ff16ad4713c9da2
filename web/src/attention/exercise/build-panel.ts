// "Build a head": the student's W_Q as one or two grids of cells (word → word, position →
// position; build.ts says what they mean), the head they make on the exercise's sentence (a
// heatmap and its role score, recomputed by the core on every edit) and the check on the shown
// and a hidden sentence. The grids are the state's (state.exercise.grid, in the link).
// Keyboard: Tab enters a grid at its last cell, the arrow keys move, typing edits.
import { el, clear } from '../../ui/dom';
import { Heatmap } from '../../ui/heatmap';
import { rowLabelWidth } from '../../ui/axis';
import type { AttnCore } from '../../wasm/load-core';
import { BUILD_PASS, type BuildExercise, type GridName } from './catalogue';
import { buildHead, vocabulary, type BuiltHead } from './build';
import { cellKey, cellValue, formatGrid, parseGrid, type Grid } from './grid';
import type { Verdict } from './check';

const ROLE_NAME = {
  previousToken: 'previous-token',
  duplicateToken: 'duplicate-token',
  induction: 'induction',
} as const;
const GRID_TEXT: Record<GridName, { title: string; corner: string; what: string }> = {
  word: { title: 'W_Q, word part', corner: 'query word ↓ key →', what: 'word grid' },
  position: { title: 'W_Q, position part', corner: 'query pos ↓ key →', what: 'position grid' },
  previous: {
    title: 'Layer 2’s W_Q: query word → the key’s previous word',
    corner: 'query word ↓ key’s previous →',
    what: 'layer 2 grid',
  },
};

export interface BuildPanel {
  root: HTMLElement;
  /** Show exercise `e` with the grids' text `grid` (the state's). */
  show(e: BuildExercise, grid: string): void;
  /** The check: the role score on the shown and the hidden sentence. */
  check(): Verdict | null;
}

export function createBuildPanel(deps: { core(): AttnCore | null; setGrid(text: string): void }): BuildPanel {
  const grids = el('div', { class: 'exercise-grids' });
  const heat = new Heatmap({
    label: 'Your head’s weights on the sentence',
    maxSize: 220,
    minCell: 6,
    maxCell: 20,
    showLabels: true,
    interactive: true,
    describe: () => '',
  });
  const caption = el('figcaption', { text: 'Your head on the sentence' });
  const score = el('p', { class: 'exercise-score', 'data-testid': 'exercise-build-score', 'aria-live': 'polite' });
  const root = el(
    'div',
    { class: 'exercise-build', 'data-testid': 'exercise-build' },
    grids,
    el('figure', { class: 'exercise-head-fig' }, heat.root, caption),
    score,
  );
  let shown: BuildExercise | null = null;
  let text = '';
  /** `text` read (the state's grids, parsed once per change). */
  let grid: Grid = new Map();
  const inputs = new Map<string, HTMLInputElement>();

  function drawGrid(e: BuildExercise, g: GridName): HTMLElement {
    const labels = g === 'position' ? e.sentence.map((_, i) => String(i)) : vocabulary(e);
    const n = labels.length;
    const table = el('table', { class: 'exercise-grid', 'data-grid': g });
    const head = el('tr', {}, el('th', { text: GRID_TEXT[g].corner, scope: 'col' }));
    for (const l of labels) head.append(el('th', { scope: 'col', text: l }));
    table.append(el('thead', {}, head));
    const body = el('tbody');
    for (let r = 0; r < n; r++) {
      const tr = el('tr', {}, el('th', { scope: 'row', text: labels[r] }));
      for (let c = 0; c < n; c++) {
        const k = cellKey(g, r, c);
        const input = el('input', {
          type: 'text',
          inputmode: 'decimal',
          class: 'exercise-cell',
          'aria-label': `${GRID_TEXT[g].what}: query ${labels[r]}, key ${labels[c]}`,
          'data-cell': k,
          tabindex: r === n - 1 && c === n - 1 ? 0 : -1,
        });
        input.addEventListener('change', () => edit(k, input));
        input.addEventListener('keydown', (ev) => move(ev, g, r, c, n));
        inputs.set(k, input);
        tr.append(el('td', {}, input));
      }
      body.append(tr);
    }
    table.append(body);
    return el(
      'div',
      { class: 'exercise-grid-box' },
      el('p', {
        class: 'exercise-grid-title',
        text: e.role === 'induction' && g === 'position' ? 'Layer 1’s W_Q, position part' : GRID_TEXT[g].title,
      }),
      table,
    );
  }

  function move(ev: KeyboardEvent, g: GridName, r: number, c: number, n: number): void {
    const d = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[ev.key];
    if (!d) return;
    const input = ev.target as HTMLInputElement;
    // Left and right move the caret inside a value being typed; at its ends they move the cell.
    if (d[1] !== 0 && input.value !== '' && input.selectionStart !== (d[1] < 0 ? 0 : input.value.length)) return;
    const next = inputs.get(cellKey(g, Math.min(n - 1, Math.max(0, r + d[0])), Math.min(n - 1, Math.max(0, c + d[1]))));
    if (!next || next === input) return;
    ev.preventDefault();
    if (input.value !== String(valueOf(input.dataset.cell!) || '')) edit(input.dataset.cell!, input);
    for (const i of inputs.values())
      if (i.tabIndex === 0 && i !== next && i.closest('table') === next.closest('table')) i.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
    next.select();
  }

  const valueOf = (k: string) => grid.get(k) ?? 0;

  function edit(k: string, input: HTMLInputElement): void {
    const v = cellValue(input.value);
    if (v === null) {
      input.setAttribute('aria-invalid', 'true');
      input.title = 'a number from −100 to 100';
      return;
    }
    input.removeAttribute('aria-invalid');
    input.title = '';
    if (v === 0) grid.delete(k);
    else grid.set(k, v);
    text = formatGrid(grid);
    deps.setGrid(text);
    redraw();
  }

  function run(sentence: string[]): BuiltHead | null {
    const core = deps.core();
    if (!core || !shown) return null;
    return buildHead(core, shown, grid, sentence);
  }

  function redraw(): void {
    if (!shown) return;
    // The values the state holds, except in the cell being typed in.
    for (const [k, input] of inputs)
      if (document.activeElement !== input) input.value = valueOf(k) ? String(valueOf(k)) : '';
    const h = run(shown.sentence);
    if (!h) {
      score.textContent = 'Loading the WebAssembly core…';
      return;
    }
    const t = h.t;
    const forbidden = new Uint8Array(t * t);
    for (let i = 0; i < t; i++) for (let j = i + 1; j < t; j++) forbidden[i * t + j] = 1;
    // As wide as the panel allows (a 233-px notebook cell leaves about 110 px for the cells).
    heat.setMaxSize(Math.max(66, Math.min(220, (root.clientWidth || 240) - rowLabelWidth(shown.sentence) - 8)));
    heat.update({
      rows: t,
      cols: t,
      values: h.weights,
      forbidden,
      lo: 0,
      hi: 1,
      rowLabels: shown.sentence,
      colLabels: shown.sentence,
    });
    const s = h[shown.role];
    score.dataset.score = String(s);
    const layer1 = h.layer1 === null ? '' : `Layer 1’s previous-token score: ${h.layer1.toFixed(2)}. Layer 2’s `;
    score.textContent = `${layer1 || 'Its '}${ROLE_NAME[shown.role]} score on this sentence: ${s.toFixed(2)} (the core’s; ${BUILD_PASS} passes, on this sentence and on a hidden one).`;
  }

  return {
    root,
    show(e, gridText) {
      if (shown !== e) {
        shown = e;
        inputs.clear();
        clear(grids);
        for (const g of e.grids) grids.append(drawGrid(e, g));
        caption.textContent = e.role === 'induction' ? 'Layer 2’s head on the sentence' : 'Your head on the sentence';
      }
      if (gridText !== text) {
        text = gridText;
        grid = parseGrid(text).grid;
      }
      redraw();
    },
    check() {
      if (!shown) return null;
      const a = run(shown.sentence);
      const b = run(shown.hidden);
      if (!a || !b) return null;
      const name = ROLE_NAME[shown.role];
      const sa = a[shown.role];
      const sb = b[shown.role];
      const passed = sa >= BUILD_PASS && sb >= BUILD_PASS;
      const lines = [
        `The core’s ${name} score: ${sa.toFixed(2)} on the sentence, ${sb.toFixed(2)} on a hidden one (“${shown.hidden.join(' ')}”); ${BUILD_PASS} or more passes on both.`,
      ];
      if (!passed && shown.role === 'duplicateToken' && a.previousToken < 0.5 && sa >= 0.4 && sa < BUILD_PASS)
        lines.push(
          'Part of each row still goes to the token itself: the duplicate-token score counts only earlier copies.',
        );
      return { passed, score: Math.min(sa, sb), lines };
    },
  };
}
