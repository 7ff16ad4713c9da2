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
  show(
    check: CheckResult | null,
    state: State,
    shape: { t: number; tk?: number; heads: number; dk: number; nanRowsPerHead?: number[] },
  ): void;
  /** A result drawn without its check, which the Worker runs once the changes pause. */
  pending(): void;
  /** The pending check could not run. */
  failed(message: string): void;
}

export function createCheckPanel(client: () => Pick<ComputeClient, 'check'>): CheckPanel {
  const body = el('span', { class: 'check-body', 'data-testid': 'check-body' });
  const run = el('button', {
    type: 'button',
    class: 'btn small',
    'data-testid': 'check-run',
    text: 'Run the check',
    hidden: true,
  });
  const root = el(
    'div',
    { class: 'check-readout', 'data-testid': 'check', role: 'status' },
    el('strong', { text: 'Check: ' }),
    body,
    run,
  );
  let pending: State | null = null;
  let generation = 0;

  /** Student first (does the fast answer match a careful one?), the kernels' names on demand.
   *  allNaN: every row is NaN (every key masked with −∞): there is no number to compare, so no ✓. */
  function line(c: CheckResult, allNaN: boolean): HTMLElement[] {
    const item = (label: string, d: { maxAbs: number; tolerance: number }, id: string) => {
      const ok = d.maxAbs <= d.tolerance;
      return el(
        'span',
        {
          class: `check-item ${allNaN ? 'none' : ok ? 'pass' : 'fail'}`,
          'data-testid': id,
          'data-max-abs': String(d.maxAbs),
          'data-tolerance': String(d.tolerance),
          'data-verdict': allNaN ? 'none' : ok ? 'pass' : 'fail',
        },
        allNaN
          ? `${label}: nothing to compare (every row is NaN in both)`
          : `${label}: max |Δ| ${exp(d.maxAbs)} (held to ≤ ${exp(d.tolerance)}) ${ok ? '✓' : '✗'}`,
      );
    };
    const details = el(
      'details',
      { class: 'check-details' },
      el('summary', { text: 'details' }),
      el('span', {
        class: 'muted check-note',
        text: ` The fast kernel is the core’s float32 ${c.simd ? 'SIMD ' : ''}kernel, the careful one its float64 scalar kernel; the memory-saving one is the tiled (FlashAttention-style) kernel, compared with the naive one. Computed live by the core in ${c.ms.toFixed(1)} ms, over the weights and output of every head (about ten naive calls: it runs with every change up to H·T²·2d_k = ${CHECK_AUTO_WORK.toLocaleString('en')}, on request above). The tolerance grows with the largest score, here ${exp(c.maxAbsScore)}.`,
      }),
    );
    return [
      item('fast kernel vs a careful reference', c.f32VsF64, 'check-f32'),
      el('span', { class: 'muted', text: ' · ' }),
      item('memory-saving (tiled) kernel vs the plain one', c.tiledVsNaive, 'check-tiled'),
      el('span', { class: 'muted', text: ' · ' }),
      details,
    ];
  }
  let allNaN = false;

  run.addEventListener('click', async () => {
    if (!pending) return;
    const g = generation;
    run.disabled = true;
    body.textContent = 'checking…';
    try {
      const c = await client().check(pending);
      if (g !== generation) return;
      clear(body);
      body.append(...line(c, allNaN));
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
      allNaN =
        !!shape.nanRowsPerHead && shape.nanRowsPerHead.length > 0 && shape.nanRowsPerHead.every((n) => n === shape.t);
      if (check) {
        pending = null;
        run.hidden = true;
        body.append(...line(check, allNaN));
        return;
      }
      pending = state;
      run.hidden = false;
      body.append(
        `not run for this size: it costs about ten naive calls (H·T²·2d_k = ${checkWork(shape.heads, shape.t, shape.dk, shape.tk).toLocaleString('en')}; it runs with every change up to ${CHECK_AUTO_WORK.toLocaleString('en')}). `,
      );
    },
  };
}
