// The Decode tab: autoregressive decoding with a K/V cache you can watch (step by step: every
// head's new attention row over the cached keys, the K and V caches growing by a column per
// step, the copy the induction head makes) and time (one step with and without the cache as T
// doubles, on a wider random model). The model is the Train tab's when it has published one,
// else the default induction model (config A) trained in this tab's Worker first.
// The view composes the run state (session.ts, no DOM) and two panels (stepper-panel.ts,
// cost-panel.ts); it owns the export buttons.
import './decode.css';
import { el } from '../ui/dom';
import { download } from '../shared/export';
import { getTrainedModel, onTrainedModel } from '../shared/trained-model';
import type { LabContext, View, ViewFactory } from '../ui/view';
import { DecodeClient } from './client';
import { exportCsv, type DecodeExport } from './model';
import { decodeStateOf, decodePatch, type DecodePatch } from './bridge';
import type { DecodeSlice, DecodeState } from './state';
import { DecodeSession, type DecodeChange } from './session';
import { StepperPanel } from './stepper-panel';
import { CostPanel } from './cost-panel';
import { StatePanel } from './state-panel';

/** What the page gives the Decode tab: its settings, and a way to change them. */
export type DecodeContext = LabContext<DecodeSlice, DecodePatch>;

class DecodeView implements View<DecodeContext> {
  readonly id = 'decode';
  readonly root: HTMLElement;
  private ctx: DecodeContext | null = null;
  private ds: DecodeState | null = null;
  private session = new DecodeSession(
    (on) => new DecodeClient(on),
    (what) => this.onChange(what),
  );
  private stepper: StepperPanel;
  private cost: CostPanel;
  private statePanel: StatePanel;

  constructor() {
    const update = (p: Partial<DecodeState>) => this.ctx?.update(decodePatch(this.ctx.state, p));
    this.root = el('div', { class: 'view-decode', 'data-testid': 'decode-view' });
    this.stepper = new StepperPanel(
      this.session,
      {
        update,
        loadModel: (forceDefault) => this.session.loadModel(forceDefault ? null : getTrainedModel()),
        cancelTraining: () => {
          this.session.cancelTraining();
          this.ctx?.announce('Training cancelled');
        },
        width: () => this.ctx?.width ?? 600,
      },
      this.root,
    );
    this.cost = new CostPanel(this.session, {
      update,
      start: () => this.ds && this.session.startTiming(this.ds.tStart, this.ds.tEnd),
      cancel: () => this.session.cancelTiming() && this.ctx?.announce('Timing cancelled'),
    });
    this.statePanel = new StatePanel(this.session, {
      start: () => this.ds && this.session.startStateTiming(this.ds.tStart, this.ds.tEnd),
      cancel: () => this.session.cancelStateTiming() && this.ctx?.announce('State timing cancelled'),
      trainLinear: () => this.session.loadModel(null, 'linear'),
    });
    onTrainedModel(() => this.session.markStale());
    const exp = el(
      'div',
      { class: 'decode-export' },
      el('span', { class: 'export-title', text: 'Export' }),
      this.btn('JSON', 'decode-export-json', () =>
        download('decode.json', JSON.stringify(this.exportData(), null, 1), 'application/json'),
      ),
      this.btn('CSV', 'decode-export-csv', () => download('decode.csv', exportCsv(this.exportData()), 'text/csv')),
      this.btn('PNG', 'decode-export-png', () => void this.savePng()),
    );
    this.root.append(
      el(
        'div',
        { class: 'timing-head' },
        el('h3', { class: 'panel-title', text: 'Decode: a KV cache you can watch and time' }),
        el('p', {
          class: 'lead',
          text: 'A transformer writes one token at a time. Each new token needs the keys and values of every earlier one: keep them in a cache and a step is one query row against T keys; throw them away and every step recomputes the whole prefix.',
        }),
      ),
      exp,
      this.stepper.root,
      this.cost.root,
      this.statePanel.root,
    );
  }

  private btn(text: string, testid: string, on: () => void): HTMLButtonElement {
    const b = el('button', { type: 'button', class: 'btn small', 'data-testid': testid, text });
    b.addEventListener('click', on);
    return b;
  }

  heatmaps() {
    return [];
  }

  render(ctx: DecodeContext): void {
    this.ctx = ctx;
    this.ds = decodeStateOf(ctx.state);
    this.stepper.setState(this.ds);
    this.cost.setState(this.ds);
    this.statePanel.setState(this.ds);
    const s = this.session;
    if (!s.model && !s.modelPending) s.loadModel(getTrainedModel());
    else if (s.model) s.requestTrajectory(this.ds.seq, this.ds.keep);
    this.stepper.drawStep();
    if (!s.sweep) this.cost.draw();
    if (!s.stateSweep) this.statePanel.draw();
    this.statePanel.drawModel();
  }

  private onChange(what: DecodeChange): void {
    if (what === 'model') {
      this.stepper.drawModel();
      this.statePanel.drawModel();
      if (this.session.model && this.ds) this.session.requestTrajectory(this.ds.seq, this.ds.keep);
    } else if (what === 'step') {
      this.stepper.drawStep();
      this.statePanel.drawModel();
    } else if (what === 'timing-progress') this.cost.drawStatus();
    else if (what === 'state-progress') this.statePanel.drawStatus();
    else if (what === 'state') {
      this.statePanel.draw();
      const st = this.session.stateStatus;
      if (st.state === 'done') this.ctx?.announce(st.text);
    } else {
      this.cost.draw();
      const st = this.session.timingStatus;
      if (st.state === 'done') this.ctx?.announce(st.text);
    }
  }

  // ---------- export ----------
  exportData(): DecodeExport {
    return this.session.exportData(this.ds, navigator.userAgent);
  }

  private async savePng(): Promise<void> {
    const canvases = [...this.root.querySelectorAll<HTMLCanvasElement>('.decode-pics canvas')];
    if (canvases.length === 0) return;
    const step = this.stepper.current();
    const pad = 10,
      W = Math.max(...canvases.map((c) => c.width)) + 2 * pad + 140;
    const H = canvases.reduce((a, c) => a + c.height + 8, 50);
    const out = document.createElement('canvas');
    out.width = W;
    out.height = H;
    const g = out.getContext('2d')!;
    g.fillStyle = '#fff';
    g.fillRect(0, 0, W, H);
    g.fillStyle = '#111';
    g.font = '600 16px system-ui, sans-serif';
    g.fillText(`Attention Playground — decode step ${step} (${this.ds?.cache ? 'cached' : 'recompute'})`, pad, 24);
    g.font = '12px system-ui, sans-serif';
    let y = 40;
    for (const c of canvases) {
      g.fillText(c.closest('figure')?.querySelector('figcaption')?.textContent ?? '', pad, y + 10, 130);
      g.drawImage(c, pad + 140, y);
      y += c.height + 8;
    }
    const blob = await new Promise<Blob | null>((r) => out.toBlob(r, 'image/png'));
    if (blob) download(`decode-step-${step}.png`, blob);
  }
}

export const decodeView: ViewFactory<DecodeContext, 'decode', false> = {
  id: 'decode',
  label: 'Decode',
  needsResult: false,
  create: () => new DecodeView(),
};
