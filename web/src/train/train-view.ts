// The Train tab: a two-layer attention-only transformer learns induction heads, live. Training
// runs in its own module Worker (train/worker.ts) driven by a run/session object with no DOM
// (train/session.ts: play/pause, the stop step, divergence, compare, history, status); this view
// composes the panels that show it (controls, live charts, the probe maps, "Heads now", the
// experiment cards, exports), redraws at most once per animation frame, and follows the page's
// `train` sub-state (train/state.ts), so a link replays the run: same config and seed → the same
// loss history bit for bit.
import './train.css';
import { clear, el, fmt } from '../ui/dom';
import type { Heatmap } from '../ui/heatmap';
import {
  getTrainedModel,
  setTrainedAttention,
  setTrainedModel,
  trainedAttentionOptions,
} from '../shared/trained-model';
import type { LabContext, View, ViewFactory } from '../ui/view';
import { TrainClient } from './client';
import { NORMALIZER_LABEL, type TrainNormalizer, type TrainState } from './config';
import type { History } from './history';
import { trainOf, trainPatch, type TrainSlice } from './state';
import { trainPresetHash, type TrainLinkPatch } from './links';
import { TRAIN_PRESETS } from './presets';
import { TrainSession, type RunState } from './session';
import { Controls } from './controls';
import { LiveCharts } from './live-charts';
import { ProbePanel } from './probe-panel';
import { HeadsPanel } from './heads-panel';
import { ExperimentCards } from './cards';
import { VariantsCard } from './variants-card';
import { ExportBar } from './export-bar';

/** ms between redraws while training (10 a second: the curves still move smoothly) */
const LIVE_DRAW_MS = 100;

/** What the page gives the Train tab: its settings, a way to change them (and to open the
 *  trained model in the Heads view), and the page's share-link writer. */
export interface TrainContext extends LabContext<
  TrainSlice,
  { train?: TrainState; page?: { view: 'heads'; head: number } }
> {
  hashOf(patch: TrainLinkPatch): string;
}

interface TrainDebug {
  history: History;
  run: () => RunState;
  step: () => number;
  stepsPerSec: () => number;
  gflops: () => number;
  frames: number[];
  /** ms spent in each redraw (the page's own work per frame) */
  drawMs: number[];
  compare: () => number[] | null;
  /** the step of the model last handed to the other tabs (shared/trained-model.ts), or null */
  published: () => number | null;
  /** Workers computing each step's shards now */
  workers: () => number;
  /** ms totals of the run: wall, inside the steps, evaluating, head scores, snapshots */
  split: () => TrainSession['split'];
  phaseAt: { crossed50: number | null; crossed90: number | null; ms90: number | null };
}
declare global {
  interface Window {
    __trainTab?: TrainDebug;
  }
}

class TrainView implements View<TrainContext> {
  readonly id = 'train';
  readonly root: HTMLElement;
  private ctx: TrainContext | null = null;
  private readonly s: TrainSession;
  private readonly controls: Controls;
  private readonly charts = new LiveCharts(() => this.schedule());
  private readonly probe: ProbePanel;
  private readonly heads: HeadsPanel;
  private readonly cards = new ExperimentCards();
  private readonly variants = new VariantsCard((t) => this.runRow(t));
  private readonly exports: ExportBar;
  /** the snapshot last drawn in the maps and in the table: redrawn only when a new one arrives */
  private drawnSnap: { probe: unknown; heads: unknown } = { probe: null, heads: null };
  /** panels on screen (or near it); while training, the others are not redrawn */
  private readonly onScreen = new Set<Element>();
  private rafPending = false;
  private frames: number[] = [];
  private drawMs: number[] = [];
  private lastFrame = 0;
  private lastDrawAt = -Infinity;
  /** a redraw held back while training (LIVE_DRAW_MS) */
  private drawTimer: ReturnType<typeof setTimeout> | null = null;

  constructor() {
    this.s = new TrainSession({
      newClient: (on) => new TrainClient(on),
      settings: () => this.ts,
      now: () => performance.now(),
      hooks: {
        changed: () => this.schedule(),
        probeChanged: () => this.buildMaps(),
        statusChanged: () => this.controls.showStatus(this.s, () => this.s.reset('Reset after the notice.')),
        runChanged: (r) => {
          this.controls.showRun(r);
          this.schedule(); // off the run, every panel is drawn again
          this.root.dataset.run = r;
          if (r === 'running') this.lastFrame = 0;
        },
        announce: (text) => this.ctx?.announce(text),
        publish: (w) => setTrainedModel({ config: w.config, weights: w.weights, step: w.step }),
      },
    });
    this.controls = new Controls({
      togglePlay: () => this.s.togglePlay(),
      runSteps: (n) => this.s.runSteps(n),
      reset: () => this.s.reset(),
      patch: (p) => this.patch(p),
      settings: () => this.ts,
    });
    this.probe = new ProbePanel(this.s, { useProbe: (t) => this.s.useProbe(t), openInHeads: () => this.openInHeads() });
    this.heads = new HeadsPanel(this.s, this.probe.readout);
    this.exports = new ExportBar(this.s, {
      settings: () => this.ts,
      hashOf: () => (this.ctx ? (p) => this.ctx!.hashOf(p) : null),
      maps: () => this.heatmaps(),
      canvasOf: (n) => this.charts.canvasOf(n),
      refresh: () => this.draw(true),
    });
    this.root = el(
      'div',
      { class: 'view-train', 'data-testid': 'train-view' },
      el('h2', { class: 'panel-title', text: 'Train: watch induction heads form' }),
      el('p', {
        class: 'lead',
        text: 'A two-layer, attention-only transformer learns to continue [noise, s, s]: the second copy of s is predictable only by finding the earlier copy. Press play: the loss sits on a shelf, then drops as a head in layer 1 learns to look one token back and a head in layer 2 learns to look just after the earlier copy of the current token.',
      }),
      el('p', {
        class: 'muted tr-numbering',
        'data-testid': 'train-numbering',
        text: 'Layers and heads are counted from 1 here (L1 H2 = layer 1, head 2), as the lessons count heads. The exports keep the module’s indices from 0 (PNG names such as layer-0-head-1, the JSON’s [layer][head] arrays).',
      }),
      this.controls.runBar,
      this.controls.reads,
      this.controls.statusLine,
      this.controls.phaseLine,
      this.controls.notice,
      this.controls.configBox,
      el(
        'div',
        { class: 'tr-panels' },
        this.charts.lossPanel,
        this.probe.root,
        this.charts.scoresPanel,
        this.heads.root,
      ),
      this.exports.root,
      this.cards.root,
      this.variants.root,
    );
    document.addEventListener('keydown', (e) => this.onKey(e));
    document.addEventListener('visibilitychange', () => this.s.pageHidden(document.hidden, this.root.isConnected));
    new IntersectionObserver((es) => {
      for (const e of es)
        this.s.inView(
          e.isIntersecting,
          document.documentElement.classList.contains('embed'),
          this.root.isConnected && !document.hidden,
        );
    }).observe(this.root);
    // While training, a panel scrolled out of sight is not redrawn (its style, layout, paint and
    // commit would run on the cores the Workers train on); it is drawn as it comes into view.
    const panels = new IntersectionObserver(
      (es) => {
        for (const e of es) {
          if (e.isIntersecting) this.onScreen.add(e.target);
          else this.onScreen.delete(e.target);
        }
        this.schedule();
      },
      { rootMargin: '200px 0px' },
    );
    for (const p of [this.charts.lossPanel, this.probe.root, this.charts.scoresPanel, this.heads.root])
      panels.observe(p);
    window.addEventListener('beforeprint', () => this.draw(true));
    const s = this.s;
    window.__trainTab = {
      get history() {
        return s.history;
      },
      run: () => s.run,
      step: () => s.step,
      stepsPerSec: () => s.stepsPerSec,
      gflops: () => s.gflops,
      frames: this.frames,
      drawMs: this.drawMs,
      compare: () => (s.cmp ? s.cmp.history.lossArray() : null),
      published: () => getTrainedModel()?.step ?? null,
      workers: () => s.workers,
      split: () => ({ ...s.split }),
      get phaseAt() {
        return s.phaseAt;
      },
    };
  }

  private get ts(): TrainState | null {
    return this.ctx ? trainOf(this.ctx.state) : null;
  }

  /** A row of the variants card: its settings, then Play (the trainer starts once it is ready). */
  private runRow(t: TrainState): void {
    if (!this.ctx) return;
    this.ctx.update(trainPatch(t));
    this.s.play();
    this.root.scrollIntoView({ block: 'start' });
  }

  private patch(p: Partial<TrainState>): void {
    const t = this.ts;
    if (!t || !this.ctx) return;
    this.ctx.update(trainPatch({ ...t, ...p }));
  }

  /**
   * "Open in Heads view": the weights drawn here (tr.attention on the probe, this step) go to the
   * Heads view through an in-page store; nothing enters the link (it cannot carry weights).
   */
  private openInHeads(): void {
    const snap = this.s.snap;
    const { L, H, T } = this.s.dims();
    if (!snap || !this.ctx || snap.attention.length !== L * H * T * T) return;
    const kv = (this.s.config as { kvHeads?: number }).kvHeads ?? H;
    // Start at the last layer: in the default run that is where the induction head is.
    setTrainedAttention({
      weights: snap.attention.slice(),
      tokens: Array.from(this.s.probe),
      layers: L,
      heads: H,
      kvHeads: kv,
      step: this.s.step,
      layer: L - 1,
      variant: variantWords(this.s.config),
      rows: snap.layers
        ? {
            layers: snap.layers.map((x) => ({ q: x.q.slice(), k: x.k.slice(), v: x.v.slice() })),
            dk: snap.layers[0].q.length / (H * T),
            options: trainedAttentionOptions(this.s.config),
          }
        : undefined,
    });
    this.ctx.update({ page: { view: 'heads', head: 0 } });
  }

  private buildMaps(): void {
    this.probe.build(this.ctx?.width ?? 600);
    this.heads.build();
    this.drawSnapshot(true);
    this.exports.fill();
  }

  private drawSnapshot(force = false, all = force): void {
    const snap = this.s.snap;
    const { L, H } = this.s.dims();
    if (!snap || this.probe.maps.length < L * H) return;
    if ((force || snap !== this.drawnSnap.probe) && (all || this.shown(this.probe.root))) {
      this.drawnSnap.probe = snap;
      this.probe.draw(snap);
    }
    if ((force || snap !== this.drawnSnap.heads) && (all || this.shown(this.heads.root))) {
      this.drawnSnap.heads = snap;
      this.heads.draw(snap.scores);
    }
  }

  /** Whether to redraw a panel now: always off the run; while training, when it is on screen. */
  private shown(panel: Element): boolean {
    return this.s.run !== 'running' || this.onScreen.has(panel);
  }

  private onKey(e: KeyboardEvent): void {
    if (e.key !== ' ' || !this.root.isConnected || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target as HTMLElement | null;
    if (
      t &&
      t.closest('input, select, textarea, button, a, summary, [role="application"], [role="button"], [role="tab"]')
    )
      return;
    e.preventDefault();
    this.s.togglePlay();
  }

  render(ctx: TrainContext): void {
    this.ctx = ctx;
    const t = trainOf(ctx.state);
    // The experiment cards' links are written with the page's link writer, which the first
    // render brings.
    this.cards.link((x) => ctx.hashOf(x));
    this.variants.link((x) => ctx.hashOf(x));
    this.showCompareNote(t, ctx);
    this.s.apply(t);
    this.controls.sync(t);
    // the maps are sized to the width: rebuild them when it changed noticeably
    if (this.probe.maps.length > 0 && Math.abs(ctx.width - this.probe.builtWidth) > 40) this.buildMaps();
    this.schedule();
  }

  /**
   * Compare "without √d_k" often learns faster here, which reads as "the scale hurts". Say why:
   * these weights start small, so the unscaled scores stay small and the softmax is not
   * saturated; the scale matters when the scores are large (the saturated-softmax card).
   */
  private showCompareNote(t: TrainState, ctx: TrainContext): void {
    const note = this.charts.compareNote;
    note.hidden = t.compare !== 'noscale';
    const dk = t.dModel / t.heads;
    if (note.hidden || note.dataset.dk === String(dk)) return;
    note.dataset.dk = String(dk);
    clear(note);
    const card = TRAIN_PRESETS.find((p) => p.id === 'train-noscale-large');
    note.append(
      `Why can the run without √d_k be the faster one here? The weights start small (std 1/√d_model), so the scores q·k stay small even unscaled and the softmax is far from saturated: dropping the 1/√d_k factor (√${dk} ≈ ${fmt(Math.sqrt(dk), 1)} here) only makes the scores, and their gradients, larger, like a higher learning rate for attention. The scale matters when the scores are large — large d_k or large weights — where an unscaled softmax saturates and its gradient vanishes: `,
      el('a', {
        href: card ? trainPresetHash(card, (x) => ctx.hashOf(x)) : '#',
        'data-testid': 'train-compare-note-link',
        text: card?.title ?? 'the saturated-softmax experiment',
      }),
      '.',
    );
  }

  heatmaps(): { name: string; heatmap: Heatmap }[] {
    return [...this.probe.maps, ...this.heads.kcompMaps];
  }

  private schedule(): void {
    // While training, redraw at most every LIVE_DRAW_MS: each redraw costs the page's main
    // thread its style, layout, paint and commit too, on the cores the Workers train on.
    const wait = this.s.run === 'running' ? this.lastDrawAt + LIVE_DRAW_MS - performance.now() : 0;
    if (this.rafPending) {
      // A redraw held back while training is due at once when the run stops (the final step).
      if (wait <= 1 && this.drawTimer !== null) {
        clearTimeout(this.drawTimer);
        this.drawTimer = null;
        this.frame();
      }
      return;
    }
    this.rafPending = true;
    if (wait > 1) {
      this.drawTimer = setTimeout(() => {
        this.drawTimer = null;
        this.frame();
      }, wait);
    } else this.frame();
  }

  private frame(): void {
    requestAnimationFrame((now) => {
      this.rafPending = false;
      if (this.s.run === 'running') {
        if (this.lastFrame > 0) {
          this.frames.push(now - this.lastFrame);
          if (this.frames.length > 5000) this.frames.splice(0, 1000);
        }
        this.lastFrame = now;
      } else this.lastFrame = 0;
      const t0 = performance.now();
      this.lastDrawAt = t0;
      this.draw();
      this.drawMs.push(performance.now() - t0);
      if (this.drawMs.length > 5000) this.drawMs.splice(0, 1000);
    });
  }

  /** all: every panel, on screen or not (an export, printing) */
  private draw(all = false): void {
    const width = Math.max(260, this.ctx?.width ?? 600);
    this.controls.showReadouts(this.s);
    this.charts.draw(this.s, width, this.ts?.until || 0, {
      loss: all || this.shown(this.charts.lossPanel),
      scores: all || this.shown(this.charts.scoresPanel),
    });
    this.drawSnapshot(false, all);
  }
}

/** The attention variant of a trainer config in words, or undefined for plain softmax. */
function variantWords(c: Record<string, unknown>): string | undefined {
  const parts: string[] = [];
  if (typeof c.normalizer === 'string' && c.normalizer !== 'softmax')
    parts.push(NORMALIZER_LABEL[c.normalizer as TrainNormalizer] ?? c.normalizer);
  if (c.positional === 'rope') parts.push('RoPE');
  if (c.positional === 'alibi') parts.push('ALiBi');
  if (c.qkNorm === true) parts.push('qkNorm');
  if (c.normalizer === 'sigmoid' || c.normalizer === 'relu')
    parts.push('rows are not normalised (they need not sum to 1)');
  if (c.normalizer === 'softmax1' || c.normalizer === 'linear') parts.push('rows sum to at most 1');
  return parts.length ? parts.join(', ') : undefined;
}

export const trainView: ViewFactory<TrainContext, 'train', false> = {
  id: 'train',
  label: 'Train',
  needsResult: false,
  create: () => new TrainView(),
};
