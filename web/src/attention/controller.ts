// The attention views' controller: computes the state (in the Worker, or on the page's own core for
// small states: scheduler.ts), keeps the result on screen, and draws the Heads, Mask effect, Scale
// and Output views with the panels around them: the model controls, the Export bar, the banners
// (the core's refusal, NaN rows, the trained model), "Your arrays" and the Check. The page
// (app/page.ts) owns the state, the link and the layout: it places these panels, tells the
// controller of every state change and lets it draw whichever of its views is current
// (ui/view.ts, ResultController). One per page.
import { el, clear, fmt } from '../ui/dom';
import type { Heatmap } from '../ui/heatmap';
import type { ResultController, View } from '../ui/view';
import { loadCore, type AttnCore } from '../wasm/load-core';
import { preferenceFromSearch } from '../wasm/core-build';
import { getTrainedAttention, setTrainedAttention, type TrainedAttention } from '../shared/trained-model';
import type { VariantSlice } from '../shared/variant';
import { ComputeClient, type ComputeOutcome } from './worker-client';
import { Computer } from './compute';
import { createScheduler } from './scheduler';
import type { AttentionResult } from './protocol';
import type { ResultParts } from './context';
import type { ModelSlice, ModelState } from './state';
import { createControls } from './controls';
import { createCheckPanel } from './check';
import { createExportBar } from './export-bar';
import { createNanBanner } from './nan-banner';
import { createTrainedBanner } from './trained-banner';
import { createArraysPanel } from './arrays/panel';
import { receiveArrays } from './arrays/receive';
import { arraysMode, type ArraysSlice, type ArraysState } from './arrays/state';
import { ARRAY_LINK_KEYS, ARRAYS_BY_MESSAGE_PARAM } from './arrays/index';
import { createExercisePanel } from './exercise/panel';
import type { ExerciseSlice, ExerciseState } from './exercise/state';

/** The part of the page's state the controller reads. */
export type ControllerSlice = ModelSlice &
  ArraysSlice &
  ExerciseSlice &
  VariantSlice & {
    page: { view: string; head: number; cell?: number[]; qsel?: number[]; ksel?: number[]; wif?: string };
  };

/** The changes the controller and its panels ask the page for. */
export interface ControllerPatch {
  model?: Partial<ModelState>;
  arrays?: ArraysState;
  exercise?: Partial<ExerciseState>;
  page?: { view?: 'train'; head?: number };
}

/** One recompute+redraw. startupMs: the part of the first figure spent starting the Worker and the
 *  wasm core (0 later); local: computed on the page's thread; checkMs: the Check when it ran with
 *  the computation; drawMs: the view's redraw. */
export interface Timing {
  t: number;
  heads: number;
  computeMs: number;
  totalMs: number;
  startupMs: number;
  local: boolean;
  checkMs: number | null;
  drawMs: number;
}

/** What the controller needs of the page. `L`: the page's context for a view drawing a state. */
export interface ControllerDeps<S extends ControllerSlice, L> {
  state(): S;
  /** The page's context for a view drawing state `s` (its width, announce, update, …). */
  context(s: S): L;
  /** Change the state (normalised with notices, written to the link). */
  update(p: ControllerPatch): void;
  /** Open lesson 2's example (the preset gallery's; the arrays panel offers it). */
  lesson2(): void;
  /** Redraw the page's current view (tabs, path bar and all). */
  redraw(): void;
  /** Changes exactly when a field that needs a computation changes (the table's compute column). */
  computeKey(s: S): string;
  /** The state keyed by link keys (the JSON export records them). */
  linkFields(s: S): Record<string, unknown>;
  /** The share link's hash of the current state (an exercise's report carries it). */
  link(): string;
  /** "Which line?" exercises: the Lesson feature's code lines (exercise/panel.ts says what). */
  lineQuiz(variant: Record<string, unknown>): { lines: { id: string; code: string }[]; changed: string[] };
  /** Lay link fields over the state (normalised with notices, written to the link). */
  applyLinkFields(fields: Record<string, unknown>): void;
  /** The element the current view is drawn in. */
  host: HTMLElement;
  /** The header's status line: the last computation's timing. */
  status: HTMLElement;
  /** The current view's heatmaps (the PNG export's choices). */
  heatmaps(): { name: string; heatmap: Heatmap }[];
  /** The page's readiness (app/readiness.ts): busy until a computation lands, settle after. */
  readiness: { busy(): void; settle(): void };
  /** A computation's result was drawn (the page may bring the view into sight). */
  drawn(): void;
  /** Embedding: open "Your arrays" at start, the arrays section hidden, the frame's id (arrays by
   *  postMessage), the page's query (core build, arrays by message). */
  embed: { autoOpen: boolean; arraysHidden: boolean; frameId: string | null; search: string };
}

export interface AttentionController<S extends ControllerSlice, L> extends ResultController<S, View<L & ResultParts>> {
  /** The compute client (the Timing lab asks it about the core). */
  readonly client: ComputeClient<S>;
  readonly timings: Timing[];
  /** The weights on screen (H, T, T) as plain numbers, for scripts and tests (the notebook test). */
  weights(): { tokens: string[]; heads: number; t: number; weights: number[]; arrays: string | null } | null;
}

export function createAttentionController<S extends ControllerSlice, L>(
  deps: ControllerDeps<S, L>,
): AttentionController<S, L> {
  const host = deps.host;
  const status = deps.status;
  /** onPage: computed by the page's own core (else by the Worker): where its arrays go back to. */
  let shown: { state: S; result: AttentionResult; requestedAt: number; onPage: boolean } | null = null;
  let startedUp = false;
  const timings: Timing[] = [];

  const controls = createControls((p) => deps.update(p));
  const errorBanner = el('div', { class: 'banner error', role: 'alert', 'data-testid': 'error-banner', hidden: true });
  const nanBanner = createNanBanner();
  const exportBar = createExportBar<S>({
    shown: () => shown,
    cell: () => deps.state().page.cell ?? [],
    picks: () => {
      const p = deps.state().page;
      return { head: p.head, qsel: p.qsel ?? [], ksel: p.ksel ?? [] };
    },
    heatmaps: () => deps.heatmaps(),
    core: () => loadPageCore(),
    linkFields: deps.linkFields,
  });
  const checkPanel = createCheckPanel(() => client);
  // The student's own arrays (state.arrays): pasted, dropped, from a link or from the notebook.
  const arraysPanel = createArraysPanel({
    apply: (arrays, heads) => deps.update({ arrays, ...(heads ? { model: { heads, kvHeads: heads } } : {}) }),
    lesson2: () => deps.lesson2(),
    autoOpen: deps.embed.autoOpen,
  });
  // The exercise a link opens: checked on the result for the state on screen.
  const exercisePanel = createExercisePanel({
    state: () => deps.state(),
    current: () =>
      shown && !getTrainedAttention() && deps.computeKey(shown.state) === deps.computeKey(deps.state())
        ? shown.result
        : null,
    core: () => loadPageCore(),
    linkFields: () => deps.linkFields(deps.state()),
    link: () => deps.link(),
    leave: () => deps.update({ exercise: { id: '' } }),
    lineQuiz: (v) => deps.lineQuiz(v),
    apply: (f) => deps.applyLinkFields(f),
    setGrid: (grid) => deps.update({ exercise: { grid } }),
  });
  // "Open in Heads view" from the Train tab (trained-banner.ts).
  const trainedBanner = createTrainedBanner({
    layer: (l) => {
      const a = getTrainedAttention();
      if (a) a.layer = l;
      deps.redraw();
    },
    back: () => deps.update({ page: { view: 'train' } }),
    leave: () => {
      setTrainedAttention(null);
      deps.update({});
      deps.redraw();
    },
  });
  /** the trained weights last brought into view (scroll and focus once per "Open in Heads view") */
  let arrivedTa: TrainedAttention | null = null;

  const selectHead = (h: number) => deps.update({ page: { head: h } });

  function render(view: View<L & ResultParts> | null): void {
    const state = deps.state();
    // Trained weights are shown in the Heads view only; leaving it drops them (ephemeral).
    if (state.page.view !== 'heads') setTrainedAttention(null);
    // The Check recomputes; weights the student gave have nothing to recompute.
    checkPanel.root.hidden = !view || !shown || shown.result.arrays?.mode === 'weights';
    arraysPanel.root.hidden = !view || deps.embed.arraysHidden;
    exercisePanel.update();
    if (!view) return;
    const ta = getTrainedAttention();
    if (!ta) trainedBanner.hide();
    if (ta) {
      host.querySelector('.placeholder')?.remove();
      checkPanel.root.hidden = true;
      nanBanner.hide();
      const r = trainedBanner.show(ta);
      const s: S = { ...state, page: { ...state.page, head: Math.min(state.page.head, r.heads - 1) } };
      view.render({ ...deps.context(s), result: r, forbidden: r.allowed.map((a) => 1 - a), selectHead });
      if (ta !== arrivedTa) {
        // Just arrived from Train's "Open in Heads view" (clicked far down that tab): bring the
        // banner and the trained heatmap into view and put the keyboard on the heatmap (the
        // view's first interactive map, the zoomed head), not on the body.
        arrivedTa = ta;
        trainedBanner.root.scrollIntoView({ block: 'start' });
        host.querySelector<HTMLElement>('.hm-frame[tabindex]')?.focus({ preventScroll: true });
      }
      exportBar.update(view.heatmaps(), { trained: true });
      return;
    }
    if (!shown) {
      if (!host.querySelector('.placeholder'))
        host.prepend(el('p', { class: 'placeholder muted', text: 'Loading the WebAssembly core…' }));
      return;
    }
    host.querySelector('.placeholder')?.remove();
    const r = shown.result;
    arraysPanel.update(state.arrays, state.model.heads, r, state.page.head);
    if (r.arrays?.mode === 'weights' && state.page.view !== 'heads') {
      // Only the Heads view draws given weights: the others need scores and values.
      clear(host);
      host.append(
        el('p', {
          class: 'placeholder muted',
          'data-testid': 'arrays-weights-only',
          text: 'Your weights W are shown in the Heads view. The Mask effect, Scale and Output views need the scores and values: give Q, K and V (or X, W_q, W_k, W_v) under “Your arrays”.',
        }),
      );
      nanBanner.update(r, shown.state);
      return;
    }
    // Head, view and the selected cell come from the live state; everything else from the state
    // that was computed.
    const s: S = {
      ...shown.state,
      page: {
        ...shown.state.page,
        head: Math.min(state.page.head, r.heads - 1),
        view: state.page.view,
        cell: state.page.cell,
        qsel: state.page.qsel,
        ksel: state.page.ksel,
        wif: state.page.wif,
      },
    };
    // The mask as the core applies it (core.allowedMask, computed in the Worker).
    const forbidden = new Uint8Array(r.allowed.length);
    for (let k = 0; k < forbidden.length; k++) forbidden[k] = 1 - r.allowed[k];
    view.render({ ...deps.context(s), result: r, forbidden, selectHead });
    // In the Heads view the PNG starts at the zoomed head.
    exportBar.update(view.heatmaps(), { preferred: `head-${s.page.head + 1}-weights`, trained: false });
    nanBanner.update(r, s);
  }

  // One core on the page's own thread, loaded on first use: the scheduler computes small states on
  // it, and the JSON export projects each head's q, k, v with it (not carried with every result).
  let pageCore: Promise<AttnCore> | null = null;
  const loadPageCore = (): Promise<AttnCore> => (pageCore ??= loadCore(preferenceFromSearch(deps.embed.search)));

  // Where each computation runs (the page's core for small states, else the Worker), where its
  // arrays go back, and the Check of a page-computed result (scheduler.ts).
  const scheduler = createScheduler<S>({
    client: {
      request: (s) => client.request(s),
      recycle: (r) => client.recycle(r),
      check: (s) => client.check(s),
      get busy() {
        return client.busy;
      },
    },
    loadLocal: () => loadPageCore().then((core) => new Computer(core)),
    state: () => deps.state(),
    shown: () => shown,
    onOutcome,
    onWorkerRequest: () => deps.readiness.busy(),
    whenIdle: (fn) =>
      'requestIdleCallback' in window ? requestIdleCallback(fn, { timeout: 2000 }) : setTimeout(fn, 200),
    check: {
      show: (c, s, r) => checkPanel.show(c, s, r),
      pending: () => checkPanel.pending(),
      failed: (m) => checkPanel.failed(m),
    },
    onCheckDone: () => deps.readiness.settle(),
  });
  const recycle = (r: AttentionResult, onPage: boolean) => scheduler.recycle(r, onPage);
  const settle = () => deps.readiness.settle();

  function onOutcome(o: ComputeOutcome<S>, onPage = false): void {
    // A Worker's answer for an older state than the one on screen (the page computed a newer one
    // itself meanwhile) is dropped.
    if (shown && o.requestedAt < shown.requestedAt) {
      if (o.result) recycle(o.result, onPage);
      if (o.latest) settle();
      return;
    }
    if (o.result) {
      const replaced = shown;
      shown = { state: o.state, result: o.result, requestedAt: o.requestedAt, onPage };
      errorBanner.hidden = true;
      const drawStart = performance.now();
      deps.redraw();
      const drawMs = performance.now() - drawStart;
      // The views now read the new result: the old one's arrays go back to the core that made
      // them, which copies a later result into them (two sets in turn instead of fresh arrays).
      if (replaced && replaced.result !== o.result) recycle(replaced.result, replaced.onPage);
      if (onPage) {
        deps.readiness.busy();
        scheduler.scheduleCheck(o.state, o.result);
      } else {
        scheduler.cancelCheck();
        checkPanel.show(o.result.check, o.state, o.result);
      }
      if (o.latest) deps.drawn();
      exercisePanel.resultChanged();
      if (o.latest) {
        const end = performance.now();
        const totalMs = end - o.requestedAt;
        // The first figure also pays for starting the Worker and loading the wasm core; report
        // that apart, or it reads as the cost of the computation.
        const first = !startedUp;
        startedUp = true;
        const startupMs = first
          ? Math.max(0, drawStart - o.requestedAt - o.result.computeMs - (o.result.check?.ms ?? 0))
          : 0;
        try {
          performance.measure('attention-playground:recompute+redraw', { start: o.requestedAt, end });
        } catch {
          /* older browsers */
        }
        timings.push({
          t: o.result.t,
          heads: o.result.heads,
          computeMs: o.result.computeMs,
          totalMs,
          startupMs,
          local: onPage,
          checkMs: o.result.check?.ms ?? null,
          drawMs,
        });
        if (timings.length > 200) timings.shift();
        const shape = o.result.cross ? `T_q = ${o.result.t}, T_k = ${o.result.tk}` : `T = ${o.result.t}`;
        const what = `${shape}, ${o.result.heads} head${o.result.heads > 1 ? 's' : ''}`;
        const work = `compute ${fmt(o.result.computeMs, 1)} ms, drawn in ${fmt(totalMs - startupMs, 1)} ms`;
        status.textContent = first
          ? `${what}: ${work} · start-up ${fmt(startupMs, 0)} ms (loading the WebAssembly core, once)`
          : `${what}: ${work}${onPage ? ' (on the page)' : ''}`;
        status.title =
          'compute: time inside the wasm core; drawn in: from the change to the new picture (compute included)';
      }
    } else if (o.error) {
      if (
        o.error.field &&
        (o.error.field === 'arrays' || Object.values(ARRAY_LINK_KEYS).includes(o.error.field as never))
      )
        arraysPanel.refused(o.error.message);
      errorBanner.hidden = false;
      errorBanner.textContent = '';
      errorBanner.append(
        el('strong', {
          text: o.error.fatal ? 'The compute core is unavailable. ' : 'The core refused these settings. ',
        }),
        el('span', {
          text: `${o.error.message}${o.error.field ? ` (field: ${o.error.field})` : ''}. ${shown ? 'Showing the last good result.' : ''}`,
        }),
      );
      if (!shown) deps.redraw();
    }
    if (o.latest) settle();
    if (startedUp) scheduler.startLocalCore();
  }

  const client = new ComputeClient<S>(onOutcome);

  return {
    panels: {
      aside: controls.root,
      head: exportBar.root,
      above: [exercisePanel.root, errorBanner, nanBanner.root, trainedBanner.root],
      below: [arraysPanel.root, checkPanel.root],
    },
    client,
    timings,
    changed(prev, next) {
      controls.update(next);
      if (deps.computeKey(prev) === deps.computeKey(next) && shown) return false;
      scheduler.request();
      return true;
    },
    render,
    start() {
      controls.update(deps.state());
      scheduler.request();
      const [param, value] = ARRAYS_BY_MESSAGE_PARAM;
      if (new URLSearchParams(deps.embed.search).get(param) === value)
        receiveArrays(deps.embed.frameId, (arrays) => {
          // As in a link: X, W_q… without `heads` in the hash are one head (attention/state.ts).
          const one = arraysMode(arrays) === 'projections' && !new URLSearchParams(location.hash.slice(1)).has('heads');
          deps.update({ arrays, ...(one ? { model: { heads: 1, kvHeads: 1 } } : {}) });
        });
    },
    get busy() {
      return client.busy || scheduler.checking;
    },
    get computing() {
      return client.busy;
    },
    get failed() {
      return !errorBanner.hidden;
    },
    get hasResult() {
      return shown !== null;
    },
    weights() {
      const ta = getTrainedAttention();
      if (!shown || ta) return null;
      const r = shown.result;
      return {
        tokens: [...r.tokens],
        heads: r.heads,
        t: r.t,
        weights: Array.from(r.weights.subarray(0, r.heads * r.t * r.tk)),
        arrays: r.arrays?.mode ?? null,
      };
    },
  };
}
