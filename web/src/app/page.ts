// The page: owns the state, keeps it in the URL hash, asks the Worker to compute, renders the
// current view, and wires sharing, embedding and export. Text from the URL only ever reaches the
// page through textContent. start() is called once, by app/main.ts.
import { computeKey, decodeHash, defaultState, encodeState, hashOf, normalizeState, statesEqual, withLinkFields, withPatch, type Patch, type State } from './state';
import { createPathBar, stepFields } from '../lesson/path-bar';
import { ComputeClient, type ComputeOutcome } from '../attention/worker-client';
import { Computer } from '../attention/compute';
import { createScheduler } from '../attention/scheduler';
import { createLinkWriter } from './link-writer';
import { createReadiness, type Status } from './readiness';
import { loadCore, type AttnCore } from '../wasm/load-core';
import { preferenceFromSearch } from '../wasm/core-build';
import type { AttentionResult } from '../attention/protocol';
import { createControls } from '../attention/controls';
import { VIEW_FACTORIES } from './features';
import type { LabContext, View } from '../ui/view';
import { createCheckPanel } from '../attention/check';
import { el, clear, fmt } from '../ui/dom';
import { parseEmbed, startResizeMessages, type Section } from '../embed/embed';
import { openEmbedDialog } from '../embed/dialog';
import { pageHeader, presetGallery, pageFooter } from './layout';
import { getTrainedAttention, setTrainedAttention, type TrainedAttention } from '../shared/trained-model';
import { createArraysPanel } from '../attention/arrays-panel';
import { arraysFitLink, arraysMode, NO_ARRAYS } from '../attention/arrays-state';
import { ARRAY_LINK_KEYS, ARRAYS_BY_MESSAGE_PARAM } from '../shared/arrays';
import { receiveArrays } from './arrays-message';
import { createExportBar } from './export-bar';
import { createNanBanner } from './nan-banner';
import { createTrainedBanner } from './trained-banner';
import { PRESETS } from './presets';

/** What the page gives a lab (a view that renders without an attention result). */
interface PageLabContext extends LabContext<State, Patch> {
  client: ComputeClient<State>;
  /** The link of the default state with a patch laid over it (app/state.ts). */
  hashOf(patch: Patch): string;
  /** Open the guided path (the Lesson feature's steps) at step 1. */
  startPath(): void;
}
/** What the page gives an attention view. */
interface PageResultContext extends PageLabContext {
  result: AttentionResult;
  /** Uint8Array(T*T), 1 = forbidden by the mask. */
  forbidden: Uint8Array;
  selectHead(h: number): void;
}
type PageView = { needsResult: true; view: View<PageResultContext> } | { needsResult: false; view: View<PageLabContext> };

/** startupMs: the part of the first figure spent starting the Worker and the wasm core (0 later);
 *  local: computed on the page's thread; checkMs: the Check when it ran with the computation;
 *  drawMs: the view's redraw. */
interface Timing { t: number; heads: number; computeMs: number; totalMs: number; startupMs: number; local: boolean; checkMs: number | null; drawMs: number }
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
  const initial = decodeHash(location.hash);
  let state: State = initial.state;
  /** onPage: computed by the page's own core (else by the Worker): where its arrays go back to. */
  let shown: { state: State; result: AttentionResult; requestedAt: number; onPage: boolean } | null = null;
  let startedUp = false;
  const timings: Timing[] = [];
  const html = document.documentElement;
  html.dataset.status = 'loading';
  if (cfg.embed) html.classList.add('embed');
  if (cfg.fit) html.classList.add('fit');

  // ---------- layout ----------
  const app = document.getElementById('app')!;
  const noticeList = el('ul');
  const notices = el('div', { class: 'notice', role: 'status', 'data-testid': 'notices', hidden: true },
    el('div', { class: 'notice-head' }, el('strong', { text: 'Some settings were corrected' }), el('button', { type: 'button', class: 'link-btn', text: 'Dismiss', 'aria-label': 'Dismiss the notice' })),
    noticeList);
  notices.querySelector('button')!.addEventListener('click', () => (notices.hidden = true));
  const errorBanner = el('div', { class: 'banner error', role: 'alert', 'data-testid': 'error-banner', hidden: true });
  const nanBanner = createNanBanner();
  const live = el('div', { class: 'sr-only', 'aria-live': 'polite' });
  const status = el('span', { class: 'status', 'aria-live': 'polite' });

  const copyLink = el('button', { type: 'button', class: 'btn primary', 'data-testid': 'copy-link', text: 'Copy link' });
  const copyEmbed = el('button', { type: 'button', class: 'btn', 'data-testid': 'copy-embed', text: 'Embed…' });
  const header = pageHeader(copyLink, copyEmbed, status);

  const embedPanel = el('dialog', { class: 'embed-dialog', 'aria-labelledby': 'embed-title' });

  const controls = createControls((p) => setState(p, 'control'));
  const aside = el('aside', { class: 'controls', 'data-section': 'controls', 'aria-label': 'Controls' }, controls.root);

  const tabs = el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Views', 'data-section': 'tabs' });
  const viewHost = el('div', { class: 'view-host', id: 'main-stage', role: 'tabpanel', tabindex: '-1' });
  const exportBar = createExportBar({ shown: () => shown, heatmaps: () => currentView().view.heatmaps(), core: () => loadPageCore() });
  const stageHead = el('div', { class: 'stage-head' }, tabs, exportBar.root);
  const checkPanel = createCheckPanel(() => client);
  // The student's own arrays (state.arrays): pasted, dropped, from a link or from the notebook.
  const arraysPanel = createArraysPanel({
    apply: (arrays, heads) => setState({ arrays, ...(heads ? { model: { heads, kvHeads: heads } } : {}) }, 'control'),
    lesson2: () => setState(PRESETS.find((p) => p.id === 'lesson2')!.state, 'control'),
    autoOpen: !cfg.embed,
  });
  // "Open in Heads view" from the Train tab (app/trained-banner.ts).
  const trainedBanner = createTrainedBanner({
    layer: (l) => {
      const a = getTrainedAttention();
      if (a) a.layer = l;
      renderView();
    },
    back: () => setState({ page: { view: 'train' } }, 'control'),
    leave: () => {
      setTrainedAttention(null);
      setState({}, 'control');
      renderView();
    },
  });
  /** the trained weights last brought into view (scroll and focus once per "Open in Heads view") */
  let arrivedTa: TrainedAttention | null = null;
  // The guided path (the Lesson feature's "Start here"): a step is a whole state, over the default.
  const goStep = (n: number) => setState(n === 0 ? { lesson: { step: 0 } } : normalizeState(withLinkFields(defaultState(), stepFields(n))).state, 'control');
  const pathBar = createPathBar(goStep);
  const stage = el('section', { class: 'stage', 'aria-label': 'Attention views' }, stageHead, pathBar.root, errorBanner, nanBanner.root, trainedBanner.root, viewHost, arraysPanel.root, checkPanel.root);

  const gallery = presetGallery();
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
      window.addEventListener('scrollend', () => {
        if (Math.abs(stage.getBoundingClientRect().top) > 2) stage.scrollIntoView({ block: 'start', behavior: 'auto' });
      }, { once: true });
    }
  }
  for (const a of gallery.querySelectorAll<HTMLAnchorElement>('a[data-preset]')) {
    a.addEventListener('click', (e) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return; // new tab/window
      if (a.href === location.href) reveal(); // the same link again: no hashchange will come
      else revealPending = true;
    });
  }

  app.append(header, notices, el('main', { class: 'layout' }, aside, stage), gallery, footer, live, embedPanel);
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
  // TimingContext, TrainContext, DecodeContext) is a part of one of these two, so the views are
  // created below without a cast; the compiler checks each against the page's.
  const views = new Map<string, PageView>();
  const tabButtons = VIEW_FACTORIES.map((f, i) => {
    const b = el('button', { type: 'button', role: 'tab', id: `tab-${f.id}`, 'data-view': f.id, text: f.label, tabindex: '-1' });
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
      const made: PageView = f.needsResult ? { needsResult: true, view: f.create() } : { needsResult: false, view: f.create() };
      views.set(f.id, made);
      return made;
    }
    return v;
  }

  function renderView(): void {
    pathBar.update(state.lesson.step);
    // Trained weights are shown in the Heads view only; leaving it drops them (ephemeral).
    if (state.page.view !== 'heads') setTrainedAttention(null);
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
    // The Check recomputes; weights the student gave have nothing to recompute.
    checkPanel.root.hidden = !pv.needsResult || !shown || shown.result.arrays?.mode === 'weights';
    arraysPanel.root.hidden = !pv.needsResult || cfg.hidden.has('arrays');
    if (!pv.needsResult) {
      viewHost.querySelector('.placeholder')?.remove();
      pv.view.render(labContext(state));
      return;
    }
    const rv = pv.view;
    const ta = getTrainedAttention();
    if (!ta) trainedBanner.hide();
    if (ta) {
      viewHost.querySelector('.placeholder')?.remove();
      checkPanel.root.hidden = true;
      nanBanner.hide();
      const r = trainedBanner.show(ta);
      const s: State = { ...state, page: { ...state.page, head: Math.min(state.page.head, r.heads - 1) } };
      rv.render({ ...labContext(s), result: r, forbidden: r.allowed.map((a) => 1 - a), selectHead: (h) => setState({ page: { head: h } }, 'control') });
      if (ta !== arrivedTa) {
        // Just arrived from Train's "Open in Heads view" (clicked far down that tab): bring the
        // banner and the trained heatmap into view and put the keyboard on the heatmap (the
        // view's first interactive map, the zoomed head), not on the body.
        arrivedTa = ta;
        trainedBanner.root.scrollIntoView({ block: 'start' });
        viewHost.querySelector<HTMLElement>('.hm-frame[tabindex]')?.focus({ preventScroll: true });
      }
      exportBar.update(v.heatmaps(), { trained: true });
      return;
    }
    if (!shown) {
      if (!viewHost.querySelector('.placeholder')) viewHost.prepend(el('p', { class: 'placeholder muted', text: 'Loading the WebAssembly core…' }));
      return;
    }
    viewHost.querySelector('.placeholder')?.remove();
    const r = shown.result;
    arraysPanel.update(state.arrays, state.model.heads, r, state.page.head);
    if (r.arrays?.mode === 'weights' && state.page.view !== 'heads') {
      // Only the Heads view draws given weights: the others need scores and values.
      clear(viewHost);
      viewHost.append(el('p', { class: 'placeholder muted', 'data-testid': 'arrays-weights-only', text: 'Your weights W are shown in the Heads view. The Mask effect, Scale and Output views need the scores and values: give Q, K and V (or X, W_q, W_k, W_v) under “Your arrays”.' }));
      nanBanner.update(r, shown.state);
      return;
    }
    // Head and view come from the live state; everything else from the state that was computed.
    const s: State = { ...shown.state, page: { head: Math.min(state.page.head, r.heads - 1), view: state.page.view } };
    // The mask as the core applies it (core.allowedMask, computed in the Worker).
    const forbidden = new Uint8Array(r.allowed.length);
    for (let k = 0; k < forbidden.length; k++) forbidden[k] = 1 - r.allowed[k];
    rv.render({ ...labContext(s), result: r, forbidden, selectHead: (h) => setState({ page: { head: h } }, 'control') });
    // In the Heads view the PNG starts at the zoomed head.
    exportBar.update(v.heatmaps(), { preferred: `head-${s.page.head + 1}-weights`, trained: false });
    nanBanner.update(r, s);
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
    return { state: s, announce: (t) => (live.textContent = t), client, width, height: fitHeight(), update: (p) => setState(p, 'control'), hashOf, startPath: () => goStep(1) };
  }

  // One core on the page's own thread, loaded on first use: the scheduler computes small states on
  // it, and the JSON export projects each head's q, k, v with it (not carried with every result).
  let pageCore: Promise<AttnCore> | null = null;
  const loadPageCore = (): Promise<AttnCore> => (pageCore ??= loadCore(preferenceFromSearch(location.search)));

  // ---------- state ----------
  // The table's `compute` column says which fields rerun the Worker.
  function needsCompute(a: State, b: State): boolean {
    return computeKey(a) !== computeKey(b);
  }

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
    controls.update(state);
    if (needsCompute(prev, state) || !shown) request();
    else renderView();
  }

  // The link: written at once after a single change, once the changes pause during a drag, and
  // on leaving or hiding the page (app/link-writer.ts says why).
  const link = createLinkWriter({
    encode: () => linkOf(state),
    current: () => location.hash,
    replace: (hash) => history.replaceState(history.state, '', hash),
    onPending: () => readiness.busyIfReady(),
    onFlushed: () => shown && settle(),
  });
  const writeHash = () => link.changed();
  window.addEventListener('pagehide', () => link.flush());
  document.addEventListener('visibilitychange', () => document.visibilityState === 'hidden' && link.flush());

  // Where each computation runs (the page's core for small states, else the Worker), where its
  // arrays go back, and the Check of a page-computed result (attention/scheduler.ts).
  const scheduler = createScheduler<State>({
    client: { request: (s) => client.request(s), recycle: (r) => client.recycle(r), check: (s) => client.check(s), get busy() { return client.busy; } },
    loadLocal: () => loadPageCore().then((core) => new Computer(core)),
    state: () => state,
    shown: () => shown,
    onOutcome,
    onWorkerRequest: () => readiness.busy(),
    whenIdle: (fn) => ('requestIdleCallback' in window ? requestIdleCallback(fn, { timeout: 2000 }) : setTimeout(fn, 200)),
    check: { show: (c, s, r) => checkPanel.show(c, s, r), pending: () => checkPanel.pending(), failed: (m) => checkPanel.failed(m) },
    onCheckDone: () => settle(),
  });
  const request = () => scheduler.request();
  const recycle = (r: AttentionResult, onPage: boolean) => scheduler.recycle(r, onPage);
  /** Ready once nothing is computing or waiting to be checked, and the link is written (app/readiness.ts). */
  const readiness = createReadiness({
    blockers: [() => client.busy, () => scheduler.checking, () => link.pending],
    failed: () => !errorBanner.hidden,
    set: (s) => (html.dataset.status = s),
    get: () => html.dataset.status as Status,
  });
  const settle = () => readiness.settle();

  function onOutcome(o: ComputeOutcome<State>, onPage = false): void {
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
      renderView();
      const drawMs = performance.now() - drawStart;
      // The views now read the new result: the old one's arrays go back to the core that made
      // them, which copies a later result into them (two sets in turn instead of fresh arrays).
      if (replaced && replaced.result !== o.result) recycle(replaced.result, replaced.onPage);
      if (onPage) {
        readiness.busy();
        scheduler.scheduleCheck(o.state, o.result);
      } else {
        scheduler.cancelCheck();
        checkPanel.show(o.result.check, o.state, o.result);
      }
      if (o.latest && revealPending) reveal();
      if (o.latest) {
        const end = performance.now();
        const totalMs = end - o.requestedAt;
        // The first figure also pays for starting the Worker and loading the wasm core; report
        // that apart, or it reads as the cost of the computation.
        const first = !startedUp;
        startedUp = true;
        const startupMs = first ? Math.max(0, drawStart - o.requestedAt - o.result.computeMs - (o.result.check?.ms ?? 0)) : 0;
        try {
          performance.measure('attention-playground:recompute+redraw', { start: o.requestedAt, end });
        } catch { /* older browsers */ }
        timings.push({ t: o.result.t, heads: o.result.heads, computeMs: o.result.computeMs, totalMs, startupMs, local: onPage, checkMs: o.result.check?.ms ?? null, drawMs });
        if (timings.length > 200) timings.shift();
        const what = `T = ${o.result.t}, ${o.result.heads} head${o.result.heads > 1 ? 's' : ''}`;
        const work = `compute ${fmt(o.result.computeMs, 1)} ms, drawn in ${fmt(totalMs - startupMs, 1)} ms`;
        status.textContent = first ? `${what}: ${work} · start-up ${fmt(startupMs, 0)} ms (loading the WebAssembly core, once)` : `${what}: ${work}${onPage ? ' (on the page)' : ''}`;
        status.title = 'compute: time inside the wasm core; drawn in: from the change to the new picture (compute included)';
      }
    } else if (o.error) {
      if (o.error.field && (o.error.field === 'arrays' || Object.values(ARRAY_LINK_KEYS).includes(o.error.field as never))) arraysPanel.refused(o.error.message);
      errorBanner.hidden = false;
      errorBanner.textContent = '';
      errorBanner.append(
        el('strong', { text: o.error.fatal ? 'The compute core is unavailable. ' : 'The core refused these settings. ' }),
        el('span', { text: `${o.error.message}${o.error.field ? ` (field: ${o.error.field})` : ''}. ${shown ? 'Showing the last good result.' : ''}` }),
      );
      if (!shown) renderView();
    }
    if (o.latest) settle();
    if (startedUp) scheduler.startLocalCore();
  }

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
  copyEmbed.addEventListener('click', () => openEmbedDialog(embedPanel, linkOf(state), (text, what) => void copyText(text, what)));

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
    if (revealPending && !client.busy) reveal(); // nothing to compute: the view is already drawn
  });

  // ---------- start ----------
  const client = new ComputeClient<State>(onOutcome);
  window.__attentionPlayground = {
    timings,
    state: () => state,
    ready: () => html.dataset.status === 'ready',
    weights: () => {
      const ta = getTrainedAttention();
      if (!shown || ta) return null;
      const r = shown.result;
      return { tokens: [...r.tokens], heads: r.heads, t: r.t, weights: Array.from(r.weights.subarray(0, r.heads * r.t * r.t)), arrays: r.arrays?.mode ?? null };
    },
  };
  showNotices(initial.notices);
  controls.update(state);
  renderView();
  request();

  let resizeRaf = 0;
  new ResizeObserver(() => {
    cancelAnimationFrame(resizeRaf);
    resizeRaf = requestAnimationFrame(() => shown && renderView());
  }).observe(viewHost);
  if (cfg.fit) window.addEventListener('resize', () => {
    cancelAnimationFrame(resizeRaf);
    resizeRaf = requestAnimationFrame(() => shown && renderView());
  });
  if (cfg.embed && cfg.autosize) startResizeMessages(cfg.frameId, cfg.maxHeight);
  if (new URLSearchParams(location.search).get(ARRAYS_BY_MESSAGE_PARAM[0]) === ARRAYS_BY_MESSAGE_PARAM[1]) receiveArrays(cfg.frameId, (arrays) => {
      // As in a link: X, W_q… without `heads` in the hash are one head (attention/state.ts).
      const one = arraysMode(arrays) === 'projections' && !new URLSearchParams(location.hash.slice(1)).has('heads');
      setState({ arrays, ...(one ? { model: { heads: 1, kvHeads: 1 } } : {}) }, 'control');
    });
}

/** The share link of a state: the student's arrays only when they fit (docs/arrays.md). */
//  The trained model's weights cannot go into a link, and neither do the Train run controls that
//  brought them here (play, until): a link copied from the trained Heads view would otherwise
//  start training when its reader opens the Train tab.
function linkOf(s: State): string {
  const t = getTrainedAttention() && s.page.view !== 'train' ? { ...s, train: { ...s.train, play: false, until: 0 } } : s;
  return encodeState(arraysFitLink(t.arrays) ? t : { ...t, arrays: { ...NO_ARRAYS } });
}
