// The page (the shell): owns the state, keeps it in the URL hash, lays out the frame (header,
// side column, tabs, the view, gallery, footer), renders the current view, and wires sharing and
// embedding. The views that need a computed result are drawn by their feature's controller
// (app/features.ts: the attention views'), which owns the computation and the panels around them.
// Text from the URL only ever reaches the page through textContent. start() is called once, by
// app/main.ts.
import {
  computeKey,
  decodeHash,
  defaultState,
  encodeState,
  hashOf,
  linkFields,
  normalizeState,
  statesEqual,
  withLinkFields,
  withPatch,
  type Patch,
  type State,
} from './state';
import { createPathBar, stepFields } from '../lesson/path-bar';
import { lineQuiz } from '../lesson/code-lines';
import { createLinkWriter } from './link-writer';
import { createReadiness, type Status } from './readiness';
import { createResultController, VIEW_FACTORIES, type ResultParts, type Timing } from './features';
import { arraysMode, linkArrays } from '../attention/arrays/state';
import { lessonInputs } from '../attention/arrays/compute';
import type { LessonContext } from '../lesson/lesson-context';
import type { LabContext, View } from '../ui/view';
import { el, clear } from '../ui/dom';
import { exerciseFromQuery, parseEmbed, showExerciseControls, startResizeMessages, type Section } from '../embed/embed';
import { openEmbedDialog } from '../embed/dialog';
import { exerciseOf, teacherPredictId } from '../attention/exercise/catalogue';
import { effectiveHeads } from '../attention/state';
import { exerciseGallery, pageHeader, presetGallery, pageFooter } from './layout';
import { getTrainedAttention } from '../shared/trained-model';
import { PRESETS } from './presets';

/** What the page gives a lab (a view that renders without an attention result). */
interface PageLabContext extends LabContext<State, Patch> {
  /** The attention views' compute client (the Timing lab asks it about the core). */
  client: ReturnType<typeof createResultController<State, PageLabContext>>['client'];
  /** The link of the default state with a patch laid over it (app/state.ts). */
  hashOf(patch: Patch): string;
  /** Open the guided path (the Lesson feature's steps) at step 1. */
  startPath(): void;
  /** The student's arrays as the Lesson view runs them. */
  student: LessonContext['student'];
}
/** What a view drawn from a result gets: the page's context and its controller's parts. */
type PageResultContext = PageLabContext & ResultParts;
type PageView =
  { needsResult: true; view: View<PageResultContext> } | { needsResult: false; view: View<PageLabContext> };

declare global {
  interface Window {
    __attentionPlayground?: {
      timings: Timing[];
      state: () => State;
      ready: () => boolean;
      /** The weights on screen (H, T, T) as plain numbers, for scripts and tests (the notebook test). */
      weights: () => { tokens: string[]; heads: number; t: number; weights: number[]; arrays: string | null } | null;
    };
  }
}

export function start(): void {
  document.getElementById('boot-fallback')?.remove(); // the file:// message (index.html)
  const cfg = parseEmbed(location.search);
  const initial = decodeHash(exerciseFromQuery(location.search, location.hash));
  let state: State = initial.state;
  // An embedded mask or fix exercise is solved with the controls (a predict needs none of them).
  const kind = exerciseOf(state.exercise.id)?.kind;
  if (cfg.embed && (kind === 'mask' || kind === 'fix')) showExerciseControls(cfg, location.search);
  const html = document.documentElement;
  html.dataset.status = 'loading';
  if (cfg.embed) html.classList.add('embed');
  if (cfg.fit) html.classList.add('fit');

  // ---------- layout ----------
  const app = document.getElementById('app')!;
  const noticeList = el('ul');
  const notices = el(
    'div',
    { class: 'notice', role: 'status', 'data-testid': 'notices', hidden: true },
    el(
      'div',
      { class: 'notice-head' },
      el('strong', { text: 'Some settings were corrected' }),
      el('button', { type: 'button', class: 'link-btn', text: 'Dismiss', 'aria-label': 'Dismiss the notice' }),
    ),
    noticeList,
  );
  notices.querySelector('button')!.addEventListener('click', () => (notices.hidden = true));
  const live = el('div', { class: 'sr-only', 'aria-live': 'polite' });
  const status = el('span', { class: 'status', 'aria-live': 'polite' });

  const copyLink = el('button', {
    type: 'button',
    class: 'btn primary',
    'data-testid': 'copy-link',
    text: 'Copy link',
  });
  const copyEmbed = el('button', { type: 'button', class: 'btn', 'data-testid': 'copy-embed', text: 'Embed…' });
  const header = pageHeader(copyLink, copyEmbed, status);

  const embedPanel = el('dialog', { class: 'embed-dialog', 'aria-labelledby': 'embed-title' });

  const viewHost = el('div', { class: 'view-host', id: 'main-stage', role: 'tabpanel', tabindex: '-1' });
  // The attention views' controller: their computation, the model controls, the Export bar, the
  // banners, "Your arrays" and the Check (attention/controller.ts).
  const attention = createResultController<State, PageLabContext>({
    state: () => state,
    context: (s) => labContext(s),
    update: (p) => setState(p, 'control'),
    lesson2: () => setState(PRESETS.find((p) => p.id === 'lesson2')!.state, 'control'),
    redraw: () => renderView(),
    computeKey,
    linkFields,
    link: () => linkOf(state),
    lineQuiz: (variant) => {
      const v = normalizeState(withLinkFields(state, variant)).state.lesson;
      return lineQuiz(state.model.scale, state.model.fill, v);
    },
    applyLinkFields: (fields) => setState(normalizeState(withLinkFields(state, fields)).state, 'control'),
    host: viewHost,
    status,
    heatmaps: () => currentView().view.heatmaps(),
    readiness: { busy: () => readiness.busy(), settle: () => readiness.settle() },
    drawn: () => revealPending && reveal(),
    embed: {
      autoOpen: !cfg.embed,
      arraysHidden: cfg.hidden.has('arrays'),
      frameId: cfg.frameId,
      search: location.search,
    },
  });
  const aside = el(
    'aside',
    { class: 'controls', 'data-section': 'controls', 'aria-label': 'Controls' },
    attention.panels.aside,
  );

  const tabs = el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Views', 'data-section': 'tabs' });
  const stageHead = el('div', { class: 'stage-head' }, tabs, attention.panels.head);
  // The guided path (the Lesson feature's "Start here"): a step is a whole state, over the default.
  const goStep = (n: number) =>
    setState(
      n === 0 ? { lesson: { step: 0 } } : normalizeState(withLinkFields(defaultState(), stepFields(n))).state,
      'control',
    );
  const pathBar = createPathBar(goStep, () => renderView());
  const stage = el(
    'section',
    { class: 'stage', 'aria-label': 'Attention views' },
    stageHead,
    pathBar.root,
    ...attention.panels.above,
    viewHost,
    ...attention.panels.below,
  );

  const gallery = presetGallery();
  const exercises = exerciseGallery();
  const footer = pageFooter();

  // A preset card is a share link: following it changes the state (hashchange); then bring the view
  // into sight, or the page seems to do nothing while it stays scrolled at the gallery. The scroll
  // waits for the new picture (its height moves the stage; a smooth scroll started earlier stopped
  // short of it).
  let revealPending = false;
  function reveal(): void {
    revealPending = false;
    const reduce = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    stage.scrollIntoView({ block: 'start', behavior: reduce ? 'auto' : 'smooth' });
    viewHost.focus({ preventScroll: true });
    if (!reduce) {
      // A redraw during the animation (the views re-render on resize) can stop a smooth scroll
      // short of its target: when it ends, finish the last stretch at once.
      window.addEventListener(
        'scrollend',
        () => {
          if (Math.abs(stage.getBoundingClientRect().top) > 2)
            stage.scrollIntoView({ block: 'start', behavior: 'auto' });
        },
        { once: true },
      );
    }
  }
  for (const a of [
    ...gallery.querySelectorAll<HTMLAnchorElement>('a[data-preset]'),
    ...exercises.querySelectorAll<HTMLAnchorElement>('a[data-exercise]'),
  ]) {
    a.addEventListener('click', (e) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return; // new tab/window
      if (a.href === location.href)
        reveal(); // the same link again: no hashchange will come
      else revealPending = true;
    });
  }

  app.append(
    header,
    notices,
    el('main', { class: 'layout' }, aside, stage),
    gallery,
    exercises,
    footer,
    live,
    embedPanel,
  );
  for (const b of exercises.querySelectorAll<HTMLButtonElement>('button[data-embed-exercise]'))
    b.addEventListener('click', () =>
      openEmbedDialog(embedPanel, `#v=1&ex=${b.dataset.embedExercise}`, (text, what) => void copyText(text, what)),
    );
  applySections(cfg.hidden);

  function applySections(hidden: Set<Section>): void {
    for (const node of document.querySelectorAll<HTMLElement>('[data-section]')) {
      node.hidden = hidden.has(node.dataset.section as Section);
    }
    const groups = ['tokens', 'model', 'mask', 'scale'] as Section[];
    aside.hidden = hidden.has('controls') || groups.every((g) => hidden.has(g));
    html.classList.toggle('no-controls', aside.hidden);
  }

  // ---------- views ----------
  // What the page gives a view: every feature's context type (attention/context.ts, the labs'
  // TimingContext, TrainContext, DecodeContext, LessonContext) is a part of one of these two, so
  // the views are created below without a cast; the compiler checks each against the page's.
  const views = new Map<string, PageView>();
  const tabButtons = VIEW_FACTORIES.map((f, i) => {
    const b = el('button', {
      type: 'button',
      role: 'tab',
      id: `tab-${f.id}`,
      'data-view': f.id,
      text: f.label,
      tabindex: '-1',
    });
    b.addEventListener('click', () => setState({ page: { view: f.id } }, 'control'));
    b.addEventListener('keydown', (e) => {
      const d = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
      if (!d) return;
      e.preventDefault();
      const next = VIEW_FACTORIES[(i + d + VIEW_FACTORIES.length) % VIEW_FACTORIES.length];
      setState({ page: { view: next.id } }, 'control');
      document.getElementById(`tab-${next.id}`)?.focus();
    });
    tabs.append(b);
    return b;
  });

  function currentView(): PageView {
    let v = views.get(state.page.view);
    if (!v) {
      const f = VIEW_FACTORIES.find((x) => x.id === state.page.view) ?? VIEW_FACTORIES[0];
      const made: PageView = f.needsResult
        ? { needsResult: true, view: f.create() }
        : { needsResult: false, view: f.create() };
      views.set(f.id, made);
      return made;
    }
    return v;
  }

  function renderView(): void {
    pathBar.update(state.lesson.step);
    for (const b of tabButtons) {
      const on = b.dataset.view === state.page.view;
      b.setAttribute('aria-selected', on ? 'true' : 'false');
      b.tabIndex = on ? 0 : -1;
    }
    viewHost.setAttribute('aria-labelledby', `tab-${state.page.view}`);
    const pv = currentView();
    const v = pv.view;
    if (viewHost.firstElementChild !== v.root) {
      clear(viewHost);
      viewHost.append(v.root);
    }
    // A view that needs no attention result (the timing lab) renders at once, without the heatmap
    // chrome (model controls, export, NaN banner).
    html.classList.toggle('static-view', !pv.needsResult);
    if (!pv.needsResult) {
      attention.render(null);
      viewHost.querySelector('.placeholder')?.remove();
      pv.view.render(labContext(state));
      return;
    }
    attention.render(pv.view);
  }

  /** In fit mode, the height the view may use: the frame's height less everything around it. */
  function fitHeight(): number | undefined {
    if (!cfg.fit) return undefined;
    // The document's own height (not scrollHeight, which is at least the window's).
    const around = html.getBoundingClientRect().height - viewHost.getBoundingClientRect().height;
    return Math.max(80, window.innerHeight - around);
  }

  function labContext(s: State): PageLabContext {
    // No floor near a phone's width: a notebook's output cell on a phone is 233 px wide, and a
    // view laid out for more overflowed it sideways.
    const width = Math.max(120, viewHost.clientWidth || 320);
    return {
      state: s,
      announce: (t) => (live.textContent = t),
      client: attention.client,
      width,
      height: fitHeight(),
      update: (p) => setState(p, 'control'),
      hashOf,
      startPath: () => goStep(1),
      student: studentArrays(s),
    };
  }

  /** "Your arrays", when it holds a complete set, for the Lesson view (which runs its lines on them). */
  function studentArrays(s: State): LessonContext['student'] {
    const mode = arraysMode(s.arrays);
    if (mode === 'none') return null;
    return {
      key: JSON.stringify([s.arrays, s.model]),
      what: mode === 'weights' ? 'your W' : mode === 'qkv' ? 'your Q, K, V' : 'your X, W_q, W_k, W_v',
      inputs: (core) => lessonInputs(core, s),
    };
  }

  // ---------- state ----------
  function showNotices(list: string[]): void {
    if (list.length === 0) return;
    clear(noticeList);
    for (const n of list.slice(0, 20)) noticeList.append(el('li', { text: n }));
    if (list.length > 20) noticeList.append(el('li', { text: `… and ${list.length - 20} more` }));
    notices.hidden = false;
  }

  function setState(patch: Patch, origin: 'control' | 'hash'): void {
    const prev = state;
    const merged = withPatch(state, patch);
    const { state: next, notices: n } = normalizeState(merged);
    if (origin === 'control') showNotices(n);
    state = next;
    if (origin === 'control') writeHash();
    // The table's `compute` column says which fields rerun the computation (the controller asks
    // for it; the view is drawn when it lands).
    if (!attention.changed(prev, state)) renderView();
  }

  // The link: written at once after a single change, once the changes pause during a drag, and
  // on leaving or hiding the page (app/link-writer.ts says why).
  const link = createLinkWriter({
    encode: () => linkOf(state),
    current: () => location.hash,
    replace: (hash) => history.replaceState(history.state, '', hash),
    onPending: () => readiness.busyIfReady(),
    onFlushed: () => attention.hasResult && settle(),
  });
  const writeHash = () => link.changed();
  window.addEventListener('pagehide', () => link.flush());
  document.addEventListener('visibilitychange', () => document.visibilityState === 'hidden' && link.flush());

  /** Ready once nothing is computing or waiting to be checked, and the link is written (app/readiness.ts). */
  const readiness = createReadiness({
    blockers: [() => attention.busy, () => link.pending],
    failed: () => attention.failed,
    set: (s) => (html.dataset.status = s),
    get: () => html.dataset.status as Status,
  });
  const settle = () => readiness.settle();

  // ---------- sharing ----------
  function flash(text: string): void {
    status.textContent = text;
  }

  async function copyText(text: string, what: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(text);
      flash(`${what} copied`);
    } catch {
      window.prompt(`Copy the ${what.toLowerCase()}:`, text);
    }
  }

  function shareUrl(): string {
    const u = new URL(location.href);
    u.search = '';
    u.hash = linkOf(state);
    return u.toString();
  }

  copyLink.addEventListener('click', () => void copyText(shareUrl(), 'Link'));
  copyEmbed.addEventListener('click', () => {
    // "Make an exercise": the attention views' state as a predict exercise on a row.
    const heads = effectiveHeads(state);
    const maker = VIEW_FACTORIES.find((f) => f.id === state.page.view)?.needsResult
      ? {
          heads,
          tokens: state.model.tokens,
          head: state.page.head,
          hash: (h: number, q: number) => linkOf({ ...state, exercise: { id: teacherPredictId(h, q), grid: '' } }),
        }
      : null;
    openEmbedDialog(embedPanel, linkOf(state), (text, what) => void copyText(text, what), maker);
  });

  // The skip link moves focus to the views; it must never reach the hash (the URL codec would read
  // "#main-stage" as a setting and reset the state).
  document.querySelector<HTMLAnchorElement>('a.skip')?.addEventListener('click', (e) => {
    e.preventDefault();
    viewHost.focus({ preventScroll: true });
    viewHost.scrollIntoView({ block: 'start', behavior: 'auto' });
  });

  window.addEventListener('hashchange', () => {
    // A fragment that names an element on the page (not a share link) is an in-page jump: keep the
    // state and put its hash back.
    if (/^#[\w-]+$/.test(location.hash) && document.getElementById(location.hash.slice(1))) {
      history.replaceState(history.state, '', linkOf(state));
      return;
    }
    const d = decodeHash(location.hash);
    if (statesEqual(d.state, state)) {
      showNotices(d.notices); // a link that changes nothing may still have had parts ignored
      if (revealPending) reveal();
      return;
    }
    showNotices(d.notices);
    notices.hidden = d.notices.length === 0;
    setState(d.state, 'hash');
    if (revealPending && !attention.computing) reveal(); // nothing to compute: the view is already drawn
  });

  // ---------- start ----------
  window.__attentionPlayground = {
    timings: attention.timings,
    state: () => state,
    ready: () => html.dataset.status === 'ready',
    weights: () => attention.weights(),
  };
  showNotices(initial.notices);
  renderView();

  let resizeRaf = 0;
  new ResizeObserver(() => {
    cancelAnimationFrame(resizeRaf);
    resizeRaf = requestAnimationFrame(() => attention.hasResult && renderView());
  }).observe(viewHost);
  if (cfg.fit)
    window.addEventListener('resize', () => {
      cancelAnimationFrame(resizeRaf);
      resizeRaf = requestAnimationFrame(() => attention.hasResult && renderView());
    });
  if (cfg.embed && cfg.autosize) startResizeMessages(cfg.frameId, cfg.maxHeight);
  // The first computation, and the notebook's arrays by postMessage when the query asks for them.
  attention.start();
}

/** The share link of a state: the student's arrays only when they fit (docs/arrays.md). */
//  The trained model's weights cannot go into a link, and neither do the Train run controls that
//  brought them here (play, until): a link copied from the trained Heads view would otherwise
//  start training when its reader opens the Train tab.
function linkOf(s: State): string {
  const t =
    getTrainedAttention() && s.page.view !== 'train' ? { ...s, train: { ...s.train, play: false, until: 0 } } : s;
  return encodeState({ ...t, arrays: linkArrays(t.arrays) });
}
