// The Timing lab's memory panel: what each kernel needs at the largest T, as the core estimates it
// (asked of the page's compute Worker, which has a core; this lab has none) and as measured in the
// instance that ran only that kernel.
import { el, clear } from '../ui/dom';
import {
  formatBytes,
  type MemoryParams,
  type MemoryTable,
  type SweepParams,
  type TimingKernel,
} from '../measure/model';
import type { TimingSession } from './session';

export class MemoryPanel {
  readonly root = el('div', { class: 'timing-memory', 'data-testid': 'timing-memory' });
  /** The core's estimates, keyed by the shape they were asked for. */
  private memTable: { key: string; table: MemoryTable } | null = null;
  private memAsked = '';
  private last: SweepParams | null = null;

  constructor(
    private session: TimingSession,
    private ask: () => ((params: MemoryParams) => Promise<MemoryTable>) | null,
  ) {}

  private coreEstimates(
    p: Pick<SweepParams, 'heads' | 'dk' | 'dModel' | 'mode'>,
    t: number,
  ): { naive: number; tiled: number; linear: number; tiledScratch: number } | null {
    const key = JSON.stringify([p.heads, p.dk, p.dModel, p.mode, t]);
    if (this.memTable?.key === key) {
      const r = this.memTable.table.rows[0];
      return { naive: r.naive, tiled: r.tiled, linear: r.linear, tiledScratch: this.memTable.table.tiledScratch };
    }
    const memory = this.ask();
    if (this.memAsked !== key && memory) {
      this.memAsked = key;
      memory({ heads: p.heads, dk: p.dk, dModel: p.dModel, mode: p.mode, ts: [t] }).then(
        (table) => {
          this.memTable = { key, table };
          if (this.memAsked === key && this.last) this.draw(this.last);
        },
        () => {
          /* the compute worker reports its own failures */
        },
      );
    }
    return null;
  }

  /** p: the running sweep's parameters, or the settings' when none ran. */
  draw(p: SweepParams | null): void {
    clear(this.root);
    this.last = p;
    if (!p) return;
    const s = this.session;
    const sw = s.sweep;
    const measured = sw?.points.map((x) => x.t) ?? [];
    const t = measured.length ? Math.max(...measured) : p.tEnd;
    const est = this.coreEstimates(p, t);
    const last = (k: TimingKernel) =>
      s
        .pointsOf(k)
        .filter((x) => x.t <= t)
        .at(-1) ?? null;
    const split = (p.workers ?? 1) > 1;
    const rows: { label: string; bytes: number; cls: string; note: string; id: string }[] = [];
    const kernels: TimingKernel[] = p.kernels.includes('linear') ? ['naive', 'tiled', 'linear'] : ['naive', 'tiled'];
    for (const k of kernels) {
      const e = est?.[k] ?? NaN;
      const stopped = sw?.stops.has(k) && t >= sw.stops.get(k)!.t;
      rows.push({
        label: `${k}: the core’s estimate`,
        bytes: e,
        cls: `k-${k}`,
        id: `mem-${k}-estimate`,
        note:
          (k === 'naive'
            ? `what the core counts against its cap: the ${p.heads} × ${t}² weights plus Q, K, V and the outputs — quadruples per doubling`
            : k === 'linear'
              ? 'what the core counts for linear attention’s prefix-sum form: Q, K, V, the outputs and working copies of φ(q) and φ(k), no T × T matrix — doubles per doubling'
              : `what the core counts: Q, K, V, the outputs and ${est ? formatBytes(est.tiledScratch) : '…'} of tile scratch at any T — doubles per doubling`) +
          (stopped ? ` (the ${k} kernel stopped before this T)` : ''),
      });
      const pt = last(k);
      if (pt && !split) {
        rows.push({
          label: `${k}: measured`,
          bytes: pt.heapBytes,
          cls: `k-${k} measured`,
          id: `mem-${k}-measured`,
          note: `the WebAssembly memory of the instance that ran only the ${k} kernel, after T = ${pt.t}: ${pt.heapGrowth > 0 ? `it grew by ${formatBytes(pt.heapGrowth)}` : 'it never had to grow'} from the ${formatBytes(pt.heapBytes - pt.heapGrowth)} it started with (memory grows in 64 KiB pages and never shrinks, so this is the peak so far, allocator slack and the copied inputs included)`,
        });
      }
    }
    const max = Math.max(...rows.map((r) => (Number.isFinite(r.bytes) ? r.bytes : 0)), 1);
    const bar = (r: (typeof rows)[number]) => {
      const b = el('span', { class: `mbar ${r.cls}` });
      b.style.width = `${Math.max(0.4, ((Number.isFinite(r.bytes) ? r.bytes : 0) / max) * 100).toFixed(2)}%`;
      return el(
        'div',
        { class: 'mrow', 'data-testid': r.id, 'data-bytes': String(r.bytes) },
        el('div', { class: 'mlabel' }, el('span', { text: r.label }), el('strong', { text: formatBytes(r.bytes) })),
        el('div', { class: 'mtrack' }, b),
        el('div', { class: 'mnote muted', text: r.note }),
      );
    };
    this.root.append(
      el('h4', {
        text: `Memory at T = ${t}${measured.length ? '' : ' (the core’s estimate; measured figures appear when a sweep runs)'}`,
      }),
      ...rows.map(bar),
      split
        ? el('p', {
            class: 'muted small',
            text: 'With several workers each call runs in the part Workers’ own instances, so no per-kernel memory is measured here.',
          })
        : el('p', {
            class: 'muted small',
            text: 'Each kernel runs in its own WebAssembly instance in the timing Worker, so its memory is measured apart from the other’s.',
          }),
    );
  }
}
