// The exercise panel above the attention views: the task, hints, a predict exercise's bars, Check
// (a button; Enter anywhere outside a text field or button), the verdict, and the report of each
// check to the host page (report.ts). The check runs on the core's result for the state on screen
// (check.ts); a check asked while a computation is under way waits for it.
import { el, clear } from '../../ui/dom';
import './exercise.css';
import type { AttnCore } from '../../wasm/load-core';
import { coreMaskOptions } from '../../shared/core-options';
import type { VariantSlice } from '../../shared/variant';
import type { ModelSlice } from '../state';
import { exerciseOf, type Exercise, type PredictExercise } from './catalogue';
import {
  checkFix,
  checkMask,
  checkPredict,
  normalizedPrediction,
  targetMask,
  type CheckedResult,
  type Verdict,
} from './check';
import { reportExercise } from './report';
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
}

const KIND_LABEL: Record<Exercise['kind'], string> = {
  mask: 'Make the mask',
  fix: 'Fix it',
  predict: 'Predict, then check',
};

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
  const root = el(
    'section',
    { class: 'exercise', 'data-testid': 'exercise', 'aria-labelledby': 'exercise-heading', hidden: true },
    el('h2', { class: 'exercise-head', id: 'exercise-heading' }, kind, title),
    task,
    bars,
    el('div', { class: 'exercise-actions' }, check, leave),
    hints,
    verdict,
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
      input.addEventListener('input', () => shares(e, r));
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

  async function run(): Promise<void> {
    const e = exercise();
    if (!e) return;
    const r = deps.current();
    if (!r) {
      waiting = true;
      showVerdict(null, 'Checking when the computation lands…');
      return;
    }
    waiting = false;
    let v: Verdict;
    if (e.kind === 'mask') {
      const core = await deps.core();
      const target = core.allowedMask({ t: r.t, ...coreMaskOptions(targetMask(e.target, r.tokens), r.t) });
      v = checkMask(e, r, target);
    } else if (e.kind === 'fix') {
      const now = deps.linkFields();
      const changed = e.keep.filter((k) => k in e.start && JSON.stringify(now[k]) !== JSON.stringify(e.start[k]));
      const tol = deps.state().lesson?.precision === 'float16' ? 5e-3 : 1e-3;
      v = checkFix(e, r, changed, tol);
    } else {
      v = checkPredict(e, r, prediction(r.t));
      if (v.score > 0 || v.passed) revealed = true;
    }
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
        showVerdict(null, e.kind === 'predict' ? 'The weights are hidden until you check.' : null);
      }
      bars.hidden = e.kind !== 'predict';
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
