// The exercise panel above the attention views: the task, hints, a predict exercise's bars or a
// which-line exercise's code lines, Check
// (a button; Enter anywhere outside a text field or button), the verdict, and the report of each
// check to the host page (report.ts). The check runs on the core's result for the state on screen
// (check.ts); a check asked while a computation is under way waits for it.
import { el, clear } from '../../ui/dom';
import './exercise.css';
import type { AttnCore } from '../../wasm/load-core';
import { coreMaskOptions } from '../../shared/core-options';
import type { VariantSlice } from '../../shared/variant';
import type { ModelSlice } from '../state';
import { KIND_LABEL, exerciseOf, type Exercise, type PredictExercise } from './catalogue';
import {
  checkFix,
  checkLines,
  checkMask,
  checkPredict,
  normalizedPrediction,
  targetMask,
  type CheckedResult,
  type LineChoice,
  type Verdict,
} from './check';
import { reportExercise } from './report';
import { createBuildPanel } from './build-panel';
import type { ExerciseSlice } from './state';

export type ExercisePanelSlice = ExerciseSlice & ModelSlice & VariantSlice;

export interface ExercisePanelDeps {
  state(): ExercisePanelSlice;
  /** The core's result for the state on screen, or null while a newer one is computing. */
  current(): CheckedResult | null;
  core(): Promise<AttnCore>;
  /** The current state keyed by link keys (a fix's kept settings are compared by them). */
  linkFields(): Record<string, unknown>;
  /** The current share link's hash (reported with each check). */
  link(): string;
  /** Leave the exercise (the state stays as it is). */
  leave(): void;
  /** "Which line?": the standard computation's code lines and the ids of those the variant (link
   *  fields) changes — the Lesson view's own lines (the page asks its feature). */
  lineQuiz(variant: Record<string, unknown>): { lines: LineChoice[]; changed: string[] };
  /** Lay link fields over the state (the "two computations" a line exercise opens). */
  apply(fields: Record<string, unknown>): void;
  /** A "build a head" exercise's grids changed (grid.ts's text; it goes into the link). */
  setGrid(text: string): void;
}

export interface ExercisePanel {
  root: HTMLElement;
  /** The state changed: show the exercise it names (or hide). */
  update(): void;
  /** A new result was drawn: a check that was waiting for it runs now. */
  resultChanged(): void;
}

export function createExercisePanel(deps: ExercisePanelDeps): ExercisePanel {
  const kind = el('span', { class: 'exercise-kind' });
  const title = el('strong', { class: 'exercise-title' });
  const task = el('p', { class: 'exercise-task', 'data-testid': 'exercise-task' });
  const hintList = el('ul');
  const hints = el('details', { class: 'exercise-hints' }, el('summary', { text: 'Hints' }), hintList);
  const bars = el('div', { class: 'exercise-bars', role: 'group', 'data-testid': 'exercise-bars' });
  let coreNow: AttnCore | null = null;
  const build = createBuildPanel({ core: () => coreNow, setGrid: (t) => deps.setGrid(t) });
  // The build panel (grids and a heatmap) is in the document only while a build exercise is open.
  const buildSlot = el('div', { class: 'exercise-build-slot' });
  const lineList = el('fieldset', { class: 'exercise-lines', 'data-testid': 'exercise-lines' });
  const showBoth = el('button', {
    type: 'button',
    class: 'btn',
    'data-testid': 'exercise-show-both',
    text: 'Show the two computations',
    hidden: true,
  });
  const check = el('button', { type: 'button', class: 'btn primary', 'data-testid': 'exercise-check', text: 'Check' });
  const leave = el('button', {
    type: 'button',
    class: 'link-btn',
    'data-testid': 'exercise-leave',
    text: 'Leave the exercise',
  });
  const verdict = el('div', {
    class: 'exercise-verdict',
    'data-testid': 'exercise-verdict',
    role: 'status',
    'aria-live': 'polite',
  });
  // The task, read out once when an exercise opens (the verdict has its own live region).
  const announce = el('p', { class: 'sr-only', 'aria-live': 'polite', 'data-testid': 'exercise-announce' });
  const root = el(
    'section',
    { class: 'exercise', 'data-testid': 'exercise', 'aria-labelledby': 'exercise-heading', hidden: true },
    el('h2', { class: 'exercise-head', id: 'exercise-heading' }, kind, title),
    task,
    bars,
    lineList,
    buildSlot,
    el('div', { class: 'exercise-actions' }, check, showBoth, leave),
    hints,
    verdict,
    announce,
  );

  let shownId = '';
  let barKey = '';
  let barInputs: HTMLInputElement[] = [];
  let revealed = false;
  let waiting = false;
  const attempts = new Map<string, number>();

  const exercise = (): Exercise | null => exerciseOf(deps.state().exercise.id);

  function drawBars(e: PredictExercise, r: CheckedResult): void {
    const key = `${e.id}|${r.tokens.join(' ')}|${Array.from(r.allowed.subarray(e.query * r.t, (e.query + 1) * r.t)).join('')}`;
    if (key === barKey) return;
    barKey = key;
    clear(bars);
    barInputs = [];
    bars.setAttribute('aria-label', `Your prediction for row ${e.query}: one bar per key it may see`);
    for (let j = 0; j < r.t; j++) {
      if (!r.allowed[e.query * r.t + j]) continue;
      const id = `exercise-bar-${j}`;
      const input = el('input', {
        type: 'range',
        min: 0,
        max: 100,
        step: 5,
        value: 0,
        id,
        'data-key': j,
        'data-testid': 'exercise-bar',
      });
      const share = el('output', { for: id, class: 'exercise-share', text: '0.00' });
      // The result's arrays are reused by later computations: read the one on screen now.
      input.addEventListener('input', () => {
        const now = deps.current();
        if (now) shares(e, now);
      });
      barInputs.push(input);
      bars.append(
        el('div', { class: 'exercise-bar' }, el('label', { for: id, text: `${j} “${r.tokens[j]}”` }), input, share),
      );
    }
  }

  /** The bars' shares of 1, written beside them. */
  function shares(e: PredictExercise, r: CheckedResult): void {
    const p = normalizedPrediction(r, e.query, prediction(r.t));
    for (const input of barInputs) {
      const out = input.nextElementSibling as HTMLOutputElement;
      out.textContent = p ? p[Number(input.dataset.key)].toFixed(2) : '0.00';
    }
  }

  function prediction(t: number): number[] {
    const p = new Array<number>(t).fill(0);
    for (const input of barInputs) p[Number(input.dataset.key)] = Number(input.value);
    return p;
  }

  function drawLines(e: Exercise & { kind: 'line' }): void {
    clear(lineList);
    lineList.append(el('legend', { text: 'The standard computation: mark each line the variant changes' }));
    for (const l of deps.lineQuiz(e.variant).lines) {
      const id = `exercise-line-${l.id}`;
      const box = el('input', { type: 'checkbox', id, value: l.id, 'data-testid': 'exercise-line' });
      lineList.append(
        el('div', { class: 'exercise-line' }, box, el('label', { for: id }, el('code', { text: l.code }))),
      );
    }
  }

  async function run(): Promise<void> {
    const e = exercise();
    if (!e) return;
    if (e.kind === 'build') {
      const v = build.check();
      if (v) finish(e, v);
      else showVerdict(null, 'Loading the WebAssembly core…');
      return;
    }
    if (e.kind === 'line') {
      // Not a computation: the lines come from the Lesson view's code (no result to wait for).
      const quiz = deps.lineQuiz(e.variant);
      const marked = [...lineList.querySelectorAll<HTMLInputElement>('input:checked')].map((b) => b.value);
      const v = checkLines(quiz.lines, quiz.changed, marked);
      showBoth.hidden = false;
      finish(e, v);
      return;
    }
    // The core first (loaded once): the result's arrays are reused by later computations, so
    // nothing is awaited between reading the result and checking it.
    const core = e.kind === 'mask' ? await deps.core() : null;
    const r = deps.current();
    if (!r) {
      waiting = true;
      showVerdict(null, 'Checking when the computation lands…');
      return;
    }
    waiting = false;
    let v: Verdict;
    if (e.kind === 'mask' && core) {
      const target = core.allowedMask({ t: r.t, ...coreMaskOptions(targetMask(e.target, r.tokens), r.t) });
      v = checkMask(e, r, target);
    } else if (e.kind === 'fix') {
      const now = deps.linkFields();
      const changed = e.keep.filter((k) => k in e.start && JSON.stringify(now[k]) !== JSON.stringify(e.start[k]));
      const tol = deps.state().lesson?.precision === 'float16' ? 5e-3 : 1e-3;
      v = checkFix(e, r, changed, tol);
    } else if (e.kind === 'predict') {
      v = checkPredict(e, r, prediction(r.t));
      if (v.score > 0 || v.passed) revealed = true;
    } else return;
    finish(e, v);
  }

  function finish(e: Exercise, v: Verdict): void {
    const n = (attempts.get(e.id) ?? 0) + 1;
    attempts.set(e.id, n);
    showVerdict(v, null, n);
    syncHiding();
    reportExercise(root, {
      id: e.id,
      passed: v.passed,
      score: Math.round(v.score * 1000) / 1000,
      attempts: n,
      state: deps.link(),
    });
  }

  function showVerdict(v: Verdict | null, text: string | null, n = 0): void {
    clear(verdict);
    verdict.dataset.passed = v ? String(v.passed) : '';
    verdict.className = `exercise-verdict ${v ? (v.passed ? 'pass' : 'fail') : ''}`;
    if (!v) {
      if (text) verdict.append(el('p', { text }));
      return;
    }
    verdict.append(
      el(
        'p',
        {},
        el('strong', { text: v.passed ? 'Passed. ' : 'Not yet. ' }),
        `Score ${v.score.toFixed(2)} · attempt ${n}.`,
      ),
      ...v.lines.map((l) => el('p', { text: l })),
    );
  }

  const hidingNow = () => {
    const e = exercise();
    return !!e && e.kind === 'predict' && !revealed;
  };

  /** A predict exercise hides the views' weights until it is checked: the panel sits in the stage,
   *  whose class the stylesheet reads. */
  const syncHiding = () => root.parentElement?.classList.toggle('exercise-hiding', hidingNow());

  check.addEventListener('click', () => void run());
  showBoth.addEventListener('click', () => {
    const e = exercise();
    // The Lesson view with the variant on: its changed lines highlighted, and the card that
    // runs the two computations side by side.
    if (e?.kind !== 'line') return;
    deps.apply({ ...e.variant, lexp: e.card, view: 'lesson' });
    // The view is drawn under this panel: bring it into sight.
    requestAnimationFrame(() => root.parentElement?.querySelector('.view-host')?.scrollIntoView({ block: 'start' }));
  });
  leave.addEventListener('click', () => deps.leave());
  // Enter checks, except where Enter already means something (a button, a link, a text field, a list).
  document.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Enter' || ev.altKey || ev.ctrlKey || ev.metaKey || ev.shiftKey || root.hidden) return;
    const t = ev.target as HTMLElement | null;
    if (t?.closest('button, a, textarea, select, summary, dialog, [contenteditable]')) return;
    if (t instanceof HTMLInputElement && !['checkbox', 'radio', 'range'].includes(t.type)) return;
    ev.preventDefault();
    void run();
  });

  return {
    root,
    update() {
      const e = exercise();
      root.hidden = !e;
      if (!e) {
        shownId = '';
        buildSlot.replaceChildren();
        syncHiding();
        return;
      }
      if (e.id !== shownId) {
        shownId = e.id;
        revealed = false;
        waiting = false;
        barKey = '';
        kind.textContent = `Exercise · ${KIND_LABEL[e.kind]}: `;
        title.textContent = e.title;
        task.textContent = e.task;
        clear(hintList);
        for (const h of e.hints) hintList.append(el('li', { text: h }));
        hints.open = false;
        announce.textContent = `Exercise: ${e.title}. ${e.task}`;
        showVerdict(null, e.kind === 'predict' ? 'The weights are hidden until you check.' : null);
        showBoth.hidden = true;
        if (e.kind === 'line') drawLines(e);
      }
      bars.hidden = e.kind !== 'predict';
      if (e.kind !== 'build') buildSlot.replaceChildren();
      else if (!buildSlot.firstChild) buildSlot.append(build.root);
      if (e.kind === 'build') {
        build.show(e, deps.state().exercise.grid);
        // The head is run on the page's own core (loaded once): draw it when it arrives.
        if (!coreNow)
          void deps.core().then((c) => {
            coreNow = c;
            const now = exercise();
            if (now?.kind === 'build') build.show(now, deps.state().exercise.grid);
          });
      }
      lineList.hidden = e.kind !== 'line';
      const r = deps.current();
      if (e.kind === 'predict' && r) drawBars(e, r);
      syncHiding();
    },
    resultChanged() {
      this.update();
      if (waiting && deps.current()) void run();
    },
  };
}
