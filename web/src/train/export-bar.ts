// The Train tab's export bar: the run as JSON (with the weights) or CSV, one chart or map as a
// PNG, and a link that replays the run to this step.
import { el, clear } from '../ui/dom';
import type { Heatmap } from '../ui/heatmap';
import { download, heatmapPng } from '../shared/export';
import { exportCsv, exportDoc } from './export';
import { smallButton } from './controls';
import type { TrainState } from './config';
import { trainHash, type HashOf } from './links';
import type { TrainSession } from './session';

export interface ExportSources {
  settings(): TrainState | null;
  hashOf(): HashOf | null;
  /** the maps a PNG can be made of, by name */
  maps(): { name: string; heatmap: Heatmap }[];
  canvasOf(name: string): HTMLCanvasElement | null;
  /** draws every panel now (while training, those off screen are not kept current) */
  refresh(): void;
}

export class ExportBar {
  readonly root: HTMLElement;
  private pngSelect = el('select', { 'aria-label': 'Panel to save as PNG', 'data-testid': 'train-png-select' });

  constructor(
    private readonly s: TrainSession,
    private readonly src: ExportSources,
  ) {
    this.root = el(
      'div',
      { class: 'export tr-export' },
      el('span', { class: 'export-title', text: 'Export' }),
      smallButton('JSON', 'train-export-json', () => void this.exportJson()),
      smallButton('CSV', 'train-export-csv', () =>
        download('training-history.csv', exportCsv(this.s.history), 'text/csv'),
      ),
      el(
        'span',
        { class: 'png-group' },
        this.pngSelect,
        smallButton('PNG', 'train-export-png', () => void this.savePng()),
      ),
      smallButton('Copy link to this step', 'train-copy-step', () => void this.copyStepLink()),
    );
  }

  /** The PNG choices: the charts, then every map (kept when still there). */
  fill(): void {
    const keep = this.pngSelect.value;
    clear(this.pngSelect);
    for (const n of [
      'loss-curve',
      'scores-previous-token',
      'scores-induction',
      'scores-duplicate-token',
      ...this.src.maps().map((h) => h.name),
    ])
      this.pngSelect.append(el('option', { value: n, text: n }));
    if ([...this.pngSelect.options].some((o) => o.value === keep)) this.pngSelect.value = keep;
  }

  private async exportJson(): Promise<void> {
    const w = await this.s.client.weights();
    const doc = exportDoc(
      this.s.config,
      this.s.history,
      this.s.snap?.scores ?? null,
      this.s.dims(),
      w ? w.weights : null,
      this.src.settings(),
    );
    download(`training-run-step-${this.s.step}.json`, JSON.stringify(doc), 'application/json');
  }

  private async savePng(): Promise<void> {
    const name = this.pngSelect.value;
    this.src.refresh();
    const canvas = this.src.canvasOf(name);
    if (canvas) {
      const blob = await new Promise<Blob | null>((r) => canvas.toBlob(r, 'image/png'));
      if (blob) download(`${name}-step-${this.s.step}.png`, blob);
      return;
    }
    const item = this.src.maps().find((x) => x.name === name);
    const d = item?.heatmap.current;
    if (!item || !d) return;
    // A map shows the snapshot (while running, the latest multiple of 10 steps), which can be
    // behind the run's step: name and title say the step the picture is of.
    const step = this.s.snap?.scores.step ?? this.s.step;
    const blob = await heatmapPng(item.heatmap.dataCanvas, d, `Attention Playground — ${name} at step ${step}`);
    if (blob) download(`${name}-step-${step}.png`, blob);
  }

  private async copyStepLink(): Promise<void> {
    const t = this.src.settings();
    const hashOf = this.src.hashOf();
    if (!t || !hashOf) return;
    const u = new URL(location.href);
    u.hash = trainHash({ ...t, until: this.s.step, play: true }, hashOf);
    u.search = '';
    try {
      await navigator.clipboard.writeText(u.toString());
      this.s.setStatus(`Link copied: it replays this run to step ${this.s.step}.`);
    } catch {
      window.prompt('Copy the link:', u.toString());
    }
  }
}
