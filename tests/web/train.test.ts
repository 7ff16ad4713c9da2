// The Train tab's pure parts: its rows of the state table (link keys, round trips, hostile
// values, the cross-field rules), its presets' links, the run history (crossings, shelf and drop,
// thinning for drawing), the CSV export and the FLOP count behind GFLOP/s.
import { describe, it, expect } from 'vitest';
import { decodeHash, encodeState, defaultState, normalizeState, hashOf, type State } from '../../web/src/app/state';
import { compareSettings, defaultTrainState, flopsPerStep, minVocab, trainerConfig, archChanged, type TrainState } from '../../web/src/train/config';
import { TRAIN_PRESETS, presetTrain } from '../../web/src/train/presets';
import { trainHash, trainPresetHash } from '../../web/src/train/links';
import { History, crossing, shelfAndDrop, thin, phaseOf } from '../../web/src/train/history';
import { exportCsv } from '../../web/src/train/export';

const withTrain = (t: Partial<TrainState>): State => {
  const d = defaultState();
  return { ...d, page: { ...d.page, view: 'train' }, train: { ...d.train, ...t } };
};

describe('train state rows', () => {
  it('the defaults are the module’s config A and write nothing but the view', () => {
    const d = defaultState();
    expect(d.train).toEqual(defaultTrainState());
    expect(encodeState(withTrain({}))).toBe('#v=1&view=train');
  });

  it('every field round-trips through its own link key', () => {
    const t: TrainState = {
      task: 'induction-fixed', vocab: 40, seqLen: 24, layers: 3, heads: 4, kvHeads: 1, dModel: 48, positional: 'rope',
      normalizer: 'sigmoid', qkNorm: true, sigmoidBias: -2.5, layerNorm: true, scale: 0.25, initStd: 0.05, dropout: 0.2, batch: 16, weightDecay: 0, kernel: 'tiled', seed: 4294967295, dataSeed: 7,
      lr: 0.003, until: 250, untilAcc: 0.9, speed: 30, play: true, compare: 'noscale', workers: 2,
    };
    const s = withTrain(t);
    const h = encodeState(s);
    for (const k of ['task=induction-fixed', 'vocab=40', 'seqlen=24', 'layers=3', 'nh=4', 'nkv=1', 'dmodel=48', 'pos=rope', 'tnorm=sigmoid', 'tqkn=1', 'tsbias=-2.5', 'ln=1', 'qks=0.25', 'istd=0.05', 'drop=0.2', 'batch=16', 'wd=0', 'kernel=tiled', 'tseed=4294967295', 'dseed=7', 'lr=0.003', 'until=250', 'uacc=0.9', 'speed=30', 'play=1', 'cmp=noscale', 'trw=2']) {
      expect(h).toContain(k);
    }
    expect(decodeHash(h)).toEqual({ state: s, notices: [] });
    for (const scale of ['sqrt', 'none'] as const) expect(decodeHash(encodeState(withTrain({ scale }))).state.train.scale).toBe(scale);
    for (const positional of ['learned', 'none', 'rope', 'alibi'] as const) {
      expect(decodeHash(encodeState(withTrain({ positional }))).state.train.positional).toBe(positional);
    }
  });

  it('links written before the variants decode to plain softmax, and plain settings write no variant key', () => {
    for (const q of ['', '&pos=none', '&pos=learned&nh=4&until=400']) {
      const d = decodeHash(`#v=1&view=train${q}`);
      expect(d.notices, q).toEqual([]);
      expect(d.state.train, q).toMatchObject({ normalizer: 'softmax', qkNorm: false, sigmoidBias: 'auto' });
      expect(encodeState(d.state), q).toBe(`#v=1&view=train${q.replace('&pos=learned', '')}`);
    }
    expect(encodeState(withTrain({ normalizer: 'relu' }))).toBe('#v=1&view=train&tnorm=relu');
  });

  it('hostile or out-of-range values are corrected with a notice naming the field', () => {
    const cases: [string, Partial<TrainState>, RegExp][] = [
      ['lr=-1', { lr: 1e-6 }, /learning rate/],
      ['lr=NaN', { lr: 0.01 }, /lr/],
      ['lr=Infinity', { lr: 0.01 }, /lr/],
      ['until=1e12', { until: 1_000_000 }, /stop at step/],
      ['uacc=2', { untilAcc: 1 }, /stop at accuracy/],
      ['layers=9', { layers: 4 }, /layers/],
      ['trw=9', { workers: 4 }, /Workers/],
      ['trw=-1', { workers: 0 }, /Workers/],
      ['trw=two', { workers: 0 }, /Workers|trw/],
      ['layers=0', { layers: 1 }, /layers/],
      ['nh=4&nkv=3', { heads: 4, kvHeads: 2 }, /K\/V heads 3 does not divide 4/],
      ['nh=2&nkv=5', { heads: 2, kvHeads: 2 }, /K\/V heads/],
      ['nh=4&dmodel=30', { heads: 4, dModel: 32 }, /d_model 30 is not divisible/],
      ['seqlen=31', { seqLen: 32 }, /even sequence length/],
      ['vocab=2', { vocab: minVocab('induction', 32) }, /vocabulary of at least 24/],
      ['qks=0', { scale: 0.001 }, /scale/],
      ['qks=%3Cscript%3E', { scale: 'sqrt' }, /scale/],
      ['task=%3Cimg%20src%3Dx%3E', { task: 'induction' }, /task/],
      ['kernel=flash', { kernel: 'naive' }, /kernel/],
      ['drop=0.95', { dropout: 0.9 }, /dropout/],
      ['play=yes', { play: false }, /play/],
      ['tseed=-3', { seed: 0 }, /seed/],
      ['tseed=1.5', { seed: 2 }, /seed/],
      ['dseed=-5', { dataSeed: -1 }, /data seed/],
      ['dseed=abc', { dataSeed: -1 }, /data seed|dseed/],
      ['speed=1e9', { speed: 10_000 }, /speed/],
      ['cmp=everything', { compare: 'none' }, /compare/],
      ['tnorm=tanh', { normalizer: 'softmax' }, /normalizer/],
      ['tqkn=maybe', { qkNorm: false }, /tqkn/],
      ['tsbias=%3Cb%3E', { sigmoidBias: 'auto' }, /sigmoid bias/],
      ['tsbias=1e9', { sigmoidBias: 100 }, /sigmoid bias/],
      ['pos=sinusoidal', { positional: 'learned' }, /positions/],
      ['pos=rope&nh=4&dmodel=36', { heads: 4, dModel: 36, positional: 'learned' }, /RoPE rotates pairs/],
      ['pos=alibi&tnorm=linear', { normalizer: 'linear', positional: 'rope' }, /ALiBi adds to the scores/],
    ];
    for (const [q, want, notice] of cases) {
      const d = decodeHash(`#v=1&view=train&${q}`);
      expect(d.state.train, q).toEqual({ ...defaultTrainState(), ...want });
      expect(d.notices.join(' | '), q).toMatch(notice);
      expect(normalizeState(d.state).notices, q).toEqual([]); // the corrected state is valid
    }
  });

  it('every preset is a valid share link into the Train tab that decodes to the preset', () => {
    for (const p of TRAIN_PRESETS) {
      const d = decodeHash(trainPresetHash(p, hashOf));
      expect(d.notices, p.id).toEqual([]);
      expect(d.state.page.view).toBe('train');
      expect(d.state.train).toEqual(presetTrain(p));
    }
    expect(new Set(TRAIN_PRESETS.map((p) => trainPresetHash(p, hashOf))).size).toBe(TRAIN_PRESETS.length);
    expect(trainHash({ ...defaultTrainState(), until: 137, play: true }, hashOf)).toBe('#v=1&view=train&until=137&play=1');
  });

  it('the learning rate and the run controls are not architecture; everything else resets', () => {
    const a = defaultTrainState();
    expect(archChanged(a, { ...a, lr: 0.5, until: 9, untilAcc: 0.5, speed: 10, play: true, compare: 'onelayer' })).toEqual([]);
    expect(archChanged(a, { ...a, seed: 1, scale: 'none' })).toEqual(['scale', 'seed']);
    expect(archChanged(a, { ...a, dataSeed: 3 })).toEqual(['dataSeed']);
  });

  it('trainerConfig passes the settings through (initStd 0 = the module default)', () => {
    const c = trainerConfig(defaultTrainState());
    expect(c).toMatchObject({ task: 'induction', vocab: 32, seqLen: 32, layers: 2, heads: 2, kvHeads: 2, dModel: 64, initStd: null, lr: 0.01, batch: 32, seed: 0, kernel: 'naive' });
    expect(trainerConfig({ ...defaultTrainState(), initStd: 1 }).initStd).toBe(1);
    // dataSeed -1 = derived from seed: the module gets null (old links keep their bits).
    expect(c.dataSeed).toBeNull();
    expect(trainerConfig({ ...defaultTrainState(), dataSeed: 0 }).dataSeed).toBe(0);
    // The variant fields reach the module only when set.
    expect('normalizer' in c || 'qkNorm' in c || 'sigmoidBias' in c).toBe(false);
    expect(trainerConfig({ ...defaultTrainState(), normalizer: 'sigmoid', sigmoidBias: -1, qkNorm: true, positional: 'alibi' }))
      .toMatchObject({ normalizer: 'sigmoid', sigmoidBias: -1, qkNorm: true, positional: 'alibi' });
  });
});

describe('compare', () => {
  it('changes exactly one setting, on the same data seed (pinned)', () => {
    const a = defaultTrainState();
    const pinned = { ...a, dataSeed: a.seed };
    expect(compareSettings({ ...a, compare: 'none' })).toBeNull();
    expect(compareSettings({ ...a, compare: 'noscale' })).toEqual({ ...pinned, compare: 'noscale', scale: 'none' });
    expect(compareSettings({ ...a, compare: 'onelayer' })).toEqual({ ...pinned, compare: 'onelayer', layers: 1 });
    expect(compareSettings({ ...a, compare: 'gqa' })).toEqual({ ...pinned, compare: 'gqa', kvHeads: 1 });
    // Another init seed, the same data: the data seed stays the first run's.
    expect(compareSettings({ ...a, seed: 5, compare: 'initseed' })).toEqual({ ...a, compare: 'initseed', seed: 6, dataSeed: 5 });
    expect(compareSettings({ ...a, seed: 5, dataSeed: 9, compare: 'initseed' })).toEqual({ ...a, compare: 'initseed', seed: 6, dataSeed: 9 });
    expect(compareSettings({ ...a, compare: 'dropout' })!.dropout).toBe(0.2);
    expect(compareSettings({ ...a, compare: 'nopos' })!.positional).toBe('none');
    // A variant against plain softmax with a learned table, same data seed.
    const v = { ...a, normalizer: 'sigmoid' as const, sigmoidBias: 1, qkNorm: true, positional: 'alibi' as const, seed: 3, compare: 'softmax' as const };
    expect(compareSettings(v)).toEqual({ ...v, normalizer: 'softmax', sigmoidBias: 'auto', qkNorm: false, positional: 'learned', dataSeed: 3 });
    expect(compareSettings({ ...a, positional: 'none', normalizer: 'relu', compare: 'softmax' })!.positional).toBe('none');
  });
});

describe('train history', () => {
  it('keeps every step, grows, and ignores a chunk that does not continue the run', () => {
    const h = new History();
    const n = 3000;
    for (let s = 0; s < n; s += 7) {
      const k = Math.min(7, n - s);
      h.pushLosses(s + 1, Float32Array.from({ length: k }, (_, i) => s + i), new Float32Array(k));
    }
    expect(h.steps).toBe(n);
    expect(h.loss[2999]).toBe(2999);
    h.pushLosses(5, new Float32Array([99]), new Float32Array(1)); // stale
    expect(h.steps).toBe(n);
    expect(h.lossArray().length).toBe(n);
  });

  it('accuracy crossings, phases', () => {
    const h = { evalStep: [0, 5, 10, 15, 20], evalAccuracy: [0.1, 0.4, 0.6, 0.89, 0.95] };
    expect(crossing(h, 0.5)).toBe(10);
    expect(crossing(h, 0.9)).toBe(20);
    expect(crossing(h, 0.99)).toBeNull();
    expect([0.2, 0.5, 0.9].map(phaseOf)).toEqual(['shelf', 'rising', 'formed']);
  });

  it('finds the shelf and the drop of a curve that has them, and nothing on a flat one', () => {
    const step = Array.from({ length: 40 }, (_, i) => i * 5);
    // shelf at 3.3 until step 100, then a fall to 0.1 by step 130
    const loss = step.map((s) => (s <= 100 ? 3.3 - s * 0.002 : Math.max(0.1, 3.1 - (s - 100) * 0.1)));
    const sd = shelfAndDrop(step, loss)!;
    expect(sd).not.toBeNull();
    expect(sd.drop).toBeGreaterThanOrEqual(100);
    expect(sd.drop).toBeLessThanOrEqual(130);
    expect(sd.shelfFrom).toBe(0);
    expect(sd.shelfLoss).toBeGreaterThan(3.1);
    expect(sd.shelfLoss).toBeLessThan(3.35);
    expect(sd.shelfTo).toBeLessThanOrEqual(100);
    expect(sd.shelfTo).toBeGreaterThanOrEqual(60);
    expect(shelfAndDrop(step, step.map(() => 3.3))).toBeNull();
    expect(shelfAndDrop([0, 5], [3, 1])).toBeNull();
  });

  it('thinning draws at most max points, each the mean of its bucket, spanning the run', () => {
    const v = Float32Array.from({ length: 10_000 }, (_, i) => i % 2);
    const t = thin(v, v.length, 500);
    expect(t.x.length).toBe(500);
    for (const y of t.y) expect(y).toBeCloseTo(0.5, 6);
    expect(t.x[0]).toBeLessThan(20);
    expect(t.x[t.x.length - 1]).toBeGreaterThan(9980);
    const short = thin(v, 10, 500);
    expect(short.x).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('CSV: one row per step plus step 0, eval columns where evaluated', () => {
    const h = new History();
    h.pushEval(0, 3.4, 0.03);
    h.pushLosses(1, new Float32Array([3.5, 3.25, NaN]), new Float32Array([1, 2, 3]));
    h.pushEval(2, 3.0, 0.5);
    const lines = exportCsv(h).trim().split('\n');
    expect(lines).toEqual(['step,loss,grad_norm,eval_loss,eval_accuracy', '0,,,3.4,0.03', '1,3.5,1,,', '2,3.25,2,3,0.5', '3,,3,,']);
  });
});

describe('FLOP count', () => {
  it('counts the GEMMs of config A by hand', () => {
    // B·T = 1024 rows, D = 64, H = 2, d_h = 32, V = 32, 2 layers
    const proj = 2 * 1024 * 64 * (64 + 64 + 64 + 64);
    const attn = 2 * 2 * 32 * 2 * 32 * 32 * 32;
    const unembed = 2 * 1024 * 64 * 32;
    expect(flopsPerStep(defaultTrainState())).toBe(3 * (2 * (proj + attn) + unembed));
    // GQA halves the K and V projections
    const g = flopsPerStep({ ...defaultTrainState(), heads: 4, kvHeads: 2 });
    expect(g).toBe(3 * (2 * (2 * 1024 * 64 * (64 + 32 + 32 + 64) + 2 * 2 * 32 * 4 * 32 * 32 * 16) + unembed));
  });
});
