// core.traffic: the JS surface of the IO model (the counts themselves are checked against
// simulated loops in tests/cpp/test_traffic.cpp). Expected numbers here are the documented
// closed forms (docs/js-api.md) for unmasked shapes, computed independently in JS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadCore } from './helpers.mjs';

function throwsField(core, fn, field, label) {
  let err = null;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof core.AttnError, `${label}: expected an AttnError, got ${err}`);
  assert.equal(err.field, field, `${label}: field ${err.field} (${err.message})`);
  assert.ok(err.message.includes(field), `${label}: message "${err.message}" does not name ${field}`);
}

test('traffic: standard and tiled counts of unmasked shapes, in bytes', async () => {
  const core = await loadCore();
  for (const [tq, tk, dk, dv, heads, kvHeads] of [[64, 64, 16, 16, 1, 1], [100, 37, 8, 5, 4, 2], [1, 1, 1, 1, 2, 1]]) {
    const io = heads * tq * dk + kvHeads * tk * (dk + dv) + heads * tq * dv;
    const std = core.traffic({ tq, tk, dk, dv, heads, kvHeads });
    assert.equal(std.footprintBytes, 4 * (io + 2 * heads * tq * tk));
    assert.equal(std.slowMemoryBytes, 4 * heads * (tq * dk + tk * dk + tk * dv + tq * dv + 4 * tq * tk));
    assert.equal(std.loadedBytes + std.storedBytes, std.slowMemoryBytes);
    assert.equal(std.blockRows, 0);
    const sramBytes = 4096;
    const d = Math.max(dk, dv), M = sramBytes / 4;
    const bc = Math.ceil(M / (4 * d)), br = Math.min(bc, d);
    const t = core.traffic({ tq, tk, dk, dv, heads, kvHeads, kernel: 'tiled', sramBytes });
    assert.equal(t.blockCols, bc);
    assert.equal(t.blockRows, br);
    assert.equal(t.footprintBytes, 4 * (io + 2 * heads * tq));
    assert.equal(t.slowMemoryBytes, 4 * heads * (tq * (dk + dv + 2) + Math.ceil(tq / br) * tk * (dk + dv)));
  }
});

test('traffic: causal skips key blocks in the tiled algorithm only; footprint linear, traffic quadratic', async () => {
  const core = await loadCore();
  const base = { dk: 64, dv: 64, kernel: 'tiled', sramBytes: 100 * 1024 };
  const full = core.traffic({ ...base, tq: 4096, tk: 4096 });
  const causal = core.traffic({ ...base, tq: 4096, tk: 4096, causal: true });
  assert.ok(causal.slowMemoryBytes < 0.6 * full.slowMemoryBytes, `${causal.slowMemoryBytes} vs ${full.slowMemoryBytes}`);
  assert.equal(causal.footprintBytes, full.footprintBytes);
  const s1 = core.traffic({ tq: 4096, tk: 4096, dk: 64, dv: 64 });
  const s2 = core.traffic({ tq: 4096, tk: 4096, dk: 64, dv: 64, causal: true });
  assert.equal(s1.slowMemoryBytes, s2.slowMemoryBytes); // S and P are dense
  const twice = core.traffic({ ...base, tq: 8192, tk: 8192 });
  assert.equal(twice.footprintBytes, 2 * full.footprintBytes);
  assert.ok(twice.slowMemoryBytes > 3.9 * full.slowMemoryBytes);
});

test('traffic: both loop orders of the tiled algorithm against the NumPy oracle’s walk of the loops', async () => {
  const core = await loadCore();
  const { cases } = JSON.parse(readFileSync(new URL('../fixtures/lesson.json', import.meta.url), 'utf8')).flash;
  let n = 0;
  for (const c of cases) {
    const kernel = c.kernel === 'naive' ? 'naive' : 'tiled';
    const opts = { tq: c.tq, tk: c.tk, dk: c.dk, dv: c.dv, heads: c.heads, kvHeads: c.kvHeads, causal: c.causal, kernel };
    if (kernel === 'tiled') Object.assign(opts, { sramBytes: c.sramBytes, loopOrder: c.kernel });
    const r = core.traffic(opts);
    assert.deepEqual([r.loadedBytes, r.storedBytes, r.footprintBytes, r.blockRows, r.blockCols], [c.loaded, c.stored, c.footprint, c.br, c.bc], JSON.stringify(c));
    n++;
  }
  assert.ok(n > 200);
  // The default is query blocks outside.
  const o = { tq: 100, tk: 100, dk: 8, dv: 8, kernel: 'tiled', sramBytes: 4096 };
  assert.deepEqual(core.traffic(o), core.traffic({ ...o, loopOrder: 'q-outer' }));
});

test('traffic: bad input names its field and the module keeps working', async () => {
  const core = await loadCore();
  const ok = { tq: 16, tk: 16, dk: 8, dv: 8, heads: 4, kvHeads: 2, kernel: 'tiled', sramBytes: 1024 };
  const bad = [
    [{ tq: 0 }, 'tq'], [{ tk: 1.5 }, 'tk'], [{ dk: '8' }, 'dk'], [{ dv: -1 }, 'dv'], [{ heads: 0 }, 'heads'],
    [{ kvHeads: 3 }, 'kvHeads'], [{ causal: 1 }, 'causal'], [{ kernel: 'flash' }, 'kernel'], [{ loopOrder: 'kv' }, 'loopOrder'],
    [{ sramBytes: 127 }, 'sramBytes'], [{ sramBytes: 0 }, 'sramBytes'], [{ sramBytes: undefined }, 'sramBytes'],
    [{ kernel: 'naive', sramBytes: 2 ** 31 }, 'sramBytes'], [{ tq: undefined }, 'tq'],
    [{ kernel: 'naive', tq: 2 ** 31 - 1, tk: 2 ** 31 - 1, heads: 2 ** 20, kvHeads: 1 }, 'tq'], // past 2^53 bytes
  ];
  for (const [patch, field] of bad) {
    throwsField(core, () => core.traffic({ ...ok, ...patch }), field, JSON.stringify(patch));
  }
  throwsField(core, () => core.traffic(null), 'opts', 'null');
  assert.equal(core.traffic({ ...ok, sramBytes: 128 }).blockCols, 1); // the smallest legal SRAM
  assert.equal(core.traffic(ok).blockRows, 8);
});
