// "Your arrays": the student pastes what NumPy printed or drops .npy / .npz / .json / .csv files,
// as weights W, as Q, K, V (+ mask), or as X, W_q, W_k, W_v. The arrays are read and checked here
// (the parsers beside it) before anything changes: a bad paste says what is wrong and the picture on
// screen stays. Good arrays go into the state (state.arrays, as link values), which the compute
// Worker reads; the result's findings and, for W, the comparison with the page's own W are shown
// below (the difference heatmap and max |Δ|).
import {
  ArrayParseError,
  checkAttentionInputs,
  checkProjectionInputs,
  checkWeights,
  parseArrayText,
  readArrayFile,
  ARRAY_LINK_MAX_CHARS,
  COMPARE_SLACK,
  type NdArray,
} from './index';
import { Heatmap } from '../../ui/heatmap';
import { el, clear, fmt, tokenRef } from '../../ui/dom';
import { legend } from '../../ui/legend';
import { arraysFitLink, arraysLinkChars, arraysMode, NO_ARRAYS, type ArraysState } from './state';
import type { AttentionResult } from '../protocol';
import { MODEL_LIMITS } from '../state';
import { assignRoles, encodeRoles, summaryOf, MODE_LABEL, type Mode } from './assign';

export { assignRoles, encodeRoles } from './assign';

export interface ArraysPanel {
  root: HTMLElement;
  /** The state and the result on screen (null before the first). */
  update(arrays: ArraysState, heads: number, result: AttentionResult | null, head: number): void;
  /** The core refused the arrays (shown here too; the error banner says it as well). */
  refused(message: string | null): void;
}

export interface ArraysPanelHooks {
  /** New arrays (and, for X, W_q…, the heads to split them into). */
  apply(arrays: ArraysState, heads: number | null): void;
  /** Set the page up as lesson 2's example (T = 6, causal, NumPy's default_rng(0)). */
  lesson2(): void;
  /** Open the panel when arrays arrive (not in a compact embed: the summary line says enough). */
  autoOpen: boolean;
}

export function createArraysPanel(hooks: ArraysPanelHooks): ArraysPanel {
  let mode: Mode = 'weights';
  const radios = (Object.keys(MODE_LABEL) as Mode[]).map((m) => {
    const input = el('input', { type: 'radio', name: 'arrays-mode', value: m, checked: m === mode });
    input.addEventListener('change', () => {
      if (input.checked) setMode(m);
    });
    return { m, input, label: el('label', { class: 'arrays-mode' }, input, ` ${MODE_LABEL[m]}`) };
  });
  const modeSet = el(
    'fieldset',
    { class: 'arrays-modes' },
    el('legend', { text: 'They are' }),
    ...radios.map((r) => r.label),
  );
  const hint = el('p', { class: 'muted arrays-hint', id: 'arrays-hint' });
  const paste = el('textarea', {
    rows: 5,
    spellcheck: 'false',
    'data-testid': 'arrays-paste',
    'aria-describedby': 'arrays-hint',
    placeholder: 'W = [[1.   0.  ]\n     [0.53 0.47]]',
  });
  const heads = el('input', {
    type: 'number',
    min: 1,
    max: MODEL_LIMITS.maxHeads,
    step: 1,
    value: 1,
    'data-testid': 'arrays-heads',
  });
  const headsRow = el('label', { class: 'arrays-heads', hidden: true }, 'Heads (W_q’s columns split evenly) ', heads);
  const show = el('button', {
    type: 'button',
    class: 'btn primary small',
    'data-testid': 'arrays-show',
    text: 'Show my arrays',
  });
  const file = el('input', {
    type: 'file',
    multiple: true,
    accept: '.npy,.npz,.json,.csv,.tsv,.txt',
    class: 'sr-only',
    id: 'arrays-file',
    'data-testid': 'arrays-file',
  });
  // A real button: Enter and Space both open the picker, as on any button (a label with
  // role=button opened it on Space only).
  const pick = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'arrays-pick',
    'aria-controls': 'arrays-file',
    text: 'Choose files…',
  });
  const remove = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'arrays-remove',
    text: 'Remove my arrays',
    hidden: true,
  });
  const drop = el(
    'div',
    { class: 'arrays-drop', 'data-testid': 'arrays-drop' },
    el('span', { text: 'or drop .npy, .npz, .json or .csv files here, or ' }),
    pick,
    file,
  );
  const error = el('div', { class: 'arrays-error', role: 'alert', 'data-testid': 'arrays-error', hidden: true });
  const findings = el('ul', { class: 'arrays-findings', 'data-testid': 'arrays-findings', 'aria-live': 'polite' });
  const linkNote = el('p', { class: 'muted arrays-link', 'data-testid': 'arrays-link' });
  const lesson2 = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'arrays-lesson2',
    text: 'Compare with lesson 2’s example (T = 6, causal, default_rng(0))',
  });
  const compareText = el('p', { class: 'arrays-compare-text', 'data-testid': 'arrays-compare' });
  const mk = (label: string) =>
    new Heatmap({
      label,
      maxSize: 200,
      minCell: 0.5,
      maxCell: 28,
      showLabels: true,
      interactive: true,
      describe: () => '',
    });
  const hmMine = mk('Your W'),
    hmRef = mk('The playground’s W'),
    hmDiff = mk('Difference |yours − playground’s|');
  const diffLegend = el('div', { class: 'legend-row' });
  const fig = (hm: Heatmap, cap: string) =>
    el('figure', { class: 'arrays-fig' }, hm.root, el('figcaption', { text: cap }));
  const compareFigs = el(
    'div',
    { class: 'arrays-figs', hidden: true },
    fig(hmMine, 'Yours'),
    fig(hmRef, 'The playground’s'),
    fig(hmDiff, '|Δ|'),
  );
  const compareBox = el(
    'section',
    { class: 'arrays-compare', 'aria-label': 'Compare with the playground', hidden: true },
    el('h4', { text: 'Compare with the playground' }),
    compareText,
    lesson2,
    compareFigs,
    diffLegend,
  );
  const body = el(
    'div',
    { class: 'arrays-body' },
    el('p', {
      class: 'muted',
      text: 'Paste what NumPy printed (print(W), np.round, repr, .tolist(), several named arrays), or drop files. The page checks them and shows them here.',
    }),
    modeSet,
    hint,
    el('label', { class: 'arrays-paste' }, el('span', { text: 'Paste' }), paste),
    headsRow,
    el('div', { class: 'arrays-actions' }, show, remove),
    drop,
    error,
    findings,
    linkNote,
    compareBox,
  );
  const summaryNote = el('span', { class: 'arrays-summary muted', 'data-testid': 'arrays-summary' });
  const details = el(
    'details',
    { class: 'arrays-panel', 'data-testid': 'arrays-panel', 'data-section': 'arrays' },
    el('summary', {}, 'Your arrays', summaryNote),
    body,
  );
  const root = details;

  function setMode(m: Mode): void {
    mode = m;
    hint.textContent =
      m === 'weights'
        ? 'One matrix (T, T), or (heads, T, T). The page checks that rows sum to 1, the causal shape and NaN.'
        : m === 'qkv'
          ? 'Q (T, d_k), K (T, d_k), V (T, d_v), 2-D or 3-D with heads first, and an optional mask (T, T) or (T,) with 1 / True = may attend. The core applies the page’s mask, fill and scale too.'
          : 'X (T, d_model), W_q and W_k (d_model, d_k), W_v (d_model, d_v), as lesson 2 writes them. The core computes Q = X W_q, … with the page’s mask, fill and scale.';
    headsRow.hidden = m !== 'projections';
  }
  setMode(mode);

  function fail(e: unknown): void {
    error.hidden = false;
    error.textContent = `Nothing was changed: ${e instanceof Error ? e.message : String(e)}`;
  }

  /** Read, assign, check; then apply. Throws nothing: a problem is shown and nothing changes. */
  function take(list: NdArray[]): void {
    try {
      const roles = assignRoles(mode, list);
      const h = Math.max(1, Math.min(MODEL_LIMITS.maxHeads, Math.round(Number(heads.value) || 1)));
      if (mode === 'weights') {
        const c = checkWeights(roles.weights!, 'W');
        if (c.tq !== c.tk)
          throw new ArrayParseError(
            `W is ${c.tq} × ${c.tk}: the page draws a W you give as square weights (one query per key); give Q, K, V for cross-attention`,
          );
      } else if (mode === 'qkv') {
        // T_q ≠ T_k is drawn as cross-attention (T_q × T_k weights).
        checkAttentionInputs({ Q: roles.q!, K: roles.k!, V: roles.v!, mask: roles.mask ?? null });
      } else checkProjectionInputs({ X: roles.x!, W_q: roles.wq!, W_k: roles.wk!, W_v: roles.wv! }, h);
      const s = encodeRoles(roles);
      error.hidden = true;
      hooks.apply(s, mode === 'projections' ? h : null);
    } catch (e) {
      fail(e);
    }
  }

  show.addEventListener('click', () => {
    if (paste.value.trim() === '') return fail(new Error('the paste box is empty'));
    try {
      take(parseArrayText(paste.value));
    } catch (e) {
      fail(e);
    }
  });
  async function readFiles(files: FileList | File[]): Promise<void> {
    const list: NdArray[] = [];
    try {
      for (const f of Array.from(files)) list.push(...readArrayFile(f.name, new Uint8Array(await f.arrayBuffer())));
    } catch (e) {
      return fail(e);
    }
    take(list);
  }
  file.addEventListener('change', () => {
    if (file.files && file.files.length > 0) void readFiles(file.files).finally(() => (file.value = ''));
  });
  pick.addEventListener('click', () => file.click());
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.classList.add('over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    if (e.dataTransfer?.files.length) void readFiles(e.dataTransfer.files);
  });
  remove.addEventListener('click', () => {
    error.hidden = true;
    hooks.apply({ ...NO_ARRAYS }, null);
  });
  lesson2.addEventListener('click', () => hooks.lesson2());

  function update(a: ArraysState, modelHeads: number, r: AttentionResult | null, head: number): void {
    const m = arraysMode(a);
    remove.hidden = m === 'none';
    if (m !== 'none' && hooks.autoOpen && !details.open && details.dataset.opened !== '1') {
      details.open = true; // arrays from a link or the notebook: show what was found
      details.dataset.opened = '1';
    }
    if (m !== 'none' && m !== mode) {
      radios.find((x) => x.m === m)!.input.checked = true;
      setMode(m);
    }
    if (m === 'projections') heads.value = String(modelHeads); // the heads the link or notebook chose
    clear(findings);
    const info = r?.arrays;
    summaryNote.textContent = m === 'none' || !info ? '' : ` — ${summaryOf(info, r!)}`;
    if (m === 'none' || !info) {
      linkNote.textContent = '';
      compareBox.hidden = true;
      return;
    }
    for (const f of info.findings) findings.append(el('li', { text: f }));
    if (info.fromPositions)
      findings.append(el('li', { text: `Labelled by position: type ${r!.t} tokens in the Tokens box to name them.` }));
    const chars = arraysLinkChars(a);
    linkNote.textContent = arraysFitLink(a)
      ? `In the share link (${chars.toLocaleString('en')} characters${a.step > 0 ? `; printed to ${a.step}` : ', exact'}).`
      : `Not in the share link: ${chars.toLocaleString('en')} characters is more than the link’s ${ARRAY_LINK_MAX_CHARS.toLocaleString('en')}. Copy link shares the settings only; export the JSON to keep them.`;
    compareBox.hidden = info.mode !== 'weights';
    if (info.mode !== 'weights') return;
    const c = info.compare;
    lesson2.hidden = !!c;
    compareFigs.hidden = !c;
    clear(diffLegend);
    if (!c) {
      compareText.textContent = info.compareNote ?? '';
      return;
    }
    const T = r!.t;
    const h = Math.min(head, r!.heads - 1);
    const at =
      c.at.length === 3
        ? `head ${c.at[0] + 1}, query ${tokenRef(r!.tokens, c.at[1])} → key ${tokenRef(r!.tokens, c.at[2])}`
        : `query ${tokenRef(r!.tokens, c.at[0])} → key ${tokenRef(r!.tokens, c.at[1])}`;
    // The tolerance is half the printed step (the student's rounding) + COMPARE_SLACK (float32, the
    // page's core, against the student's float64): name the part that explains the difference.
    const half = info.printStep / 2;
    const halfText = info.printStep > 0 ? `±${fmt(half, Math.max(3, -Math.floor(Math.log10(half))))}` : '';
    const f32 = `float32 rounding: the page’s core computes in float32 (about 7 significant digits), your NumPy most likely in float64`;
    const close = c.maxAbs <= c.tolerance; // apart from NaN entries
    const why = close
      ? info.printStep > 0 && c.maxAbs <= half
        ? `, the rounding you printed with (${halfText})`
        : `: ${f32}${info.printStep > 0 ? `; the rounding you printed with is only ${halfText}` : ''}`
      : ` (${info.printStep > 0 ? `${halfText} for the rounding you printed with + ` : ''}${COMPARE_SLACK.toExponential(0)} for ${f32.split(':')[0]})`;
    const tol = c.tolerance.toPrecision(2);
    const nans =
      c.nanMismatches > 0
        ? `${c.nanMismatches} entr${c.nanMismatches > 1 ? 'ies are' : 'y is'} NaN in only one of the two`
        : '';
    compareText.textContent = c.matches
      ? `Matches: max |Δ| = ${c.maxAbs.toPrecision(2)} at ${at}, within ${tol}${why}.`
      : close
        ? `Differs only in NaN: ${nans}; the other entries match (max |Δ| = ${c.maxAbs.toPrecision(2)} at ${at}, within ${tol}${why}).`
        : `Differs: max |Δ| = ${c.maxAbs.toPrecision(3)} at ${at}, more than ${tol}${why}.${nans ? ` ${nans}.` : ''}`;
    compareText.className = `arrays-compare-text ${c.matches ? 'pass' : 'fail'}`;
    compareText.dataset.maxAbs = String(c.maxAbs);
    compareText.dataset.tolerance = String(c.tolerance);
    const size = Math.max(90, Math.min(220, (details.clientWidth - 40) / (details.clientWidth > 620 ? 3 : 1) - 60));
    const slice = (x: Float32Array) => x.subarray(h * T * T, (h + 1) * T * T);
    const absDiff = slice(c.diff).map(Math.abs);
    const hi = Math.max(c.maxAbs, c.tolerance);
    for (const [hm, values, lo, top] of [
      [hmMine, slice(r!.weights), 0, 1],
      [hmRef, slice(c.reference), 0, 1],
      [hmDiff, absDiff, 0, hi],
    ] as const) {
      hm.setMaxSize(size);
      hm.update({ rows: T, cols: T, values, lo, hi: top, rowLabels: r!.tokens, colLabels: r!.tokens });
    }
    diffLegend.append(legend({ lo: 0, hi, title: `|Δ| from 0 to ${hi.toPrecision(2)}`, masked: false }));
  }

  function refused(message: string | null): void {
    if (message === null) return;
    error.hidden = false;
    error.textContent = `The core refused your arrays: ${message}. The last picture is kept.`;
  }

  return { root, update, refused };
}
