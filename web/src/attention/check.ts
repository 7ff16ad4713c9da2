// The Check readout: for the state on screen, how far the float32 SIMD kernel is from the core's
// float64 scalar kernel, and the tiled kernel from the naive one, with the tolerance each is held
// to (core.check, docs/js-api.md). Computed live in the compute Worker: with every computation while
// it is cheap (CHECK_AUTO_WORK), on request above that (it costs about ten naive calls).
import { el, clear } from '../ui/dom';
import type { CheckResult } from './protocol';
import type { ComputeClient } from './worker-client';
import type { ModelSlice as State } from './state';
import { CHECK_AUTO_WORK, checkWork } from './compute';

const exp = (x: number) => (Number.isFinite(x) ? x.toExponential(1) : String(x));

export interface CheckPanel {
  root: HTMLElement;
  /** A new result: its check (or null when the state is too large to check with every change). */
  show(check: CheckResult | null, state: State, shape: { t: number; heads: number; dk: number }): void;
  /** A result drawn without its check, which the Worker runs once the changes pause. */
  pending(): void;
  /** The pending check could not run. */
  failed(message: string): void;
}

export function createCheckPanel(client: () => Pick<ComputeClient, 'check'>): CheckPanel {
  const body = el('span', { class: 'check-body', 'data-testid': 'check-body' });
  const run = el('button', { type: 'button', class: 'btn small', 'data-testid': 'check-run', text: 'Run the check', hidden: true });
  const root = el('div', { class: 'check-readout', 'data-testid': 'check', role: 'status' }, el('strong', { text: 'Check: ' }), body, run);
  let pending: State | null = null;
  let generation = 0;

  function line(c: CheckResult): HTMLElement[] {
    const item = (label: string, d: { maxAbs: number; tolerance: number }, id: string) =>
      el('span', { class: `check-item ${d.maxAbs <= d.tolerance ? 'pass' : 'fail'}`, 'data-testid': id, 'data-max-abs': String(d.maxAbs), 'data-tolerance': String(d.tolerance) },
        `${label}: max |Δ| ${exp(d.maxAbs)} (held to ≤ ${exp(d.tolerance)}) ${d.maxAbs <= d.tolerance ? '✓' : '✗'}`);
    return [
      item(`float32 ${c.simd ? 'SIMD ' : ''}kernel vs float64 scalar`, c.f32VsF64, 'check-f32'),
      el('span', { class: 'muted', text: ' · ' }),
      item('tiled vs naive', c.tiledVsNaive, 'check-tiled'),
      el('span', { class: 'muted check-note', text: ` · computed live by the core in ${c.ms.toFixed(1)} ms, over the weights and output of every head (about ten naive calls: it runs with every change up to H·T²·2d_k = ${CHECK_AUTO_WORK.toLocaleString('en')}, on request above). The tolerance grows with the largest score, here ${exp(c.maxAbsScore)}.` }),
    ];
  }

  run.addEventListener('click', async () => {
    if (!pending) return;
    const g = generation;
    run.disabled = true;
    body.textContent = 'checking…';
    try {
      const c = await client().check(pending);
      if (g !== generation) return;
      clear(body);
      body.append(...line(c));
      run.hidden = true;
    } catch (e) {
      if (g === generation) body.textContent = `the core refused the check: ${(e as Error).message}`;
    } finally {
      run.disabled = false;
    }
  });

  return {
    root,
    pending() {
      generation++;
      pending = null;
      run.hidden = true;
      clear(body);
      body.append(el('span', { class: 'muted', text: 'checking…' }));
    },
    failed(message) {
      generation++;
      clear(body);
      body.textContent = `the core refused the check: ${message}`;
    },
    show(check, state, shape) {
      generation++;
      clear(body);
      if (check) {
        pending = null;
        run.hidden = true;
        body.append(...line(check));
        return;
      }
      pending = state;
      run.hidden = false;
      body.append(`not run for this size: it costs about ten naive calls (H·T²·2d_k = ${checkWork(shape.heads, shape.t, shape.dk).toLocaleString('en')}; it runs with every change up to ${CHECK_AUTO_WORK.toLocaleString('en')}). `);
    },
  };
}
