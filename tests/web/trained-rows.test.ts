// "Why this weight?" and the map on the Train tab's model: the trainer's q, k, v of a layer
// (tr.attention(tokens, { qkv: true })) under the core's options for its config
// (trainedAttentionOptions) give the trainer's own weights, for every positional choice and
// normalizer the Train tab offers; and a score the core takes apart is q·k × scale of those rows.
import { describe, it, expect, beforeAll } from 'vitest';
import type { AttnCore, CreateAttnCore } from '../../web/src/wasm/attn-core';
import type { AttnTrainLib, CreateAttnTrain } from '../../web/src/wasm/attn-train';
import { trainedAttentionOptions } from '../../web/src/shared/trained-model';

const wasm = (name: string) => ({
  mjs: new URL(`../../build/wasm/${name}.mjs`, import.meta.url).href,
  wasm: new URL(`../../build/wasm/${name}.wasm`, import.meta.url),
});
let core: AttnCore;
let train: AttnTrainLib;
beforeAll(async () => {
  const fs = await import(/* @vite-ignore */ 'node:' + 'fs');
  const c = wasm('attn_core'),
    t = wasm('attn_train');
  core = await ((await import(/* @vite-ignore */ c.mjs)) as { default: CreateAttnCore }).default({ wasmBinary: fs.readFileSync(c.wasm) });
  train = await ((await import(/* @vite-ignore */ t.mjs)) as { default: CreateAttnTrain }).default({ wasmBinary: fs.readFileSync(t.wasm) });
});

const CONFIGS: Record<string, Record<string, unknown>> = {
  'softmax, learned positions': {},
  'RoPE, GQA': { positional: 'rope', kvHeads: 1 },
  ALiBi: { positional: 'alibi' },
  'qkNorm, scale 2': { qkNorm: true, scale: 2 },
  'sigmoid, bias −1': { normalizer: 'sigmoid', sigmoidBias: -1 },
  linear: { normalizer: 'linear', positional: 'none' },
};

describe('a trained layer’s q, k, v under trainedAttentionOptions give the trainer’s weights', () => {
  for (const [name, extra] of Object.entries(CONFIGS)) {
    it(name, () => {
      const config = { vocab: 12, seqLen: 10, layers: 2, heads: 2, dModel: 8, seed: 3, batch: 4, ...extra };
      const tr = train.createTrainer(config);
      try {
        tr.train(5);
        const tokens = Int32Array.from([1, 4, 2, 7, 1, 4, 2, 9]);
        const a = tr.attention(tokens, { qkv: true });
        const T = tokens.length,
          H = 2,
          kv = (extra.kvHeads as number) ?? 2,
          dk = 4;
        expect(a.layers).toHaveLength(2);
        for (let l = 0; l < 2; l++) {
          const x = a.layers![l];
          expect(x.q.length).toBe(H * T * dk);
          expect(x.k.length).toBe(kv * T * dk);
          const r = core.attention(x.q, x.k, x.v, {
            heads: H,
            kvHeads: kv,
            tq: T,
            tk: T,
            dk,
            dv: dk,
            kernel: 'naive',
            ...trainedAttentionOptions(tr.config as Record<string, unknown>),
          } as Parameters<AttnCore['attention']>[3]);
          const want = a.weights.subarray(l * H * T * T, (l + 1) * H * T * T);
          let worst = 0;
          for (let n = 0; n < want.length; n++) worst = Math.max(worst, Math.abs(r.weights![n] - want[n]));
          expect(worst, `layer ${l + 1}`).toBeLessThan(2e-6);
        }
        // A score taken apart on those rows: plain q·k × scale (no transform under softmax/learned).
        if (Object.keys(extra).length === 0) {
          const x = a.layers![1];
          const b = core.scoreBreakdown(x.q, x.k, {
            heads: H,
            kvHeads: H,
            tq: T,
            tk: T,
            dk,
            dv: dk,
            ...trainedAttentionOptions(tr.config as Record<string, unknown>),
            head: 1,
            query: 6,
            key: 2,
          } as Parameters<AttnCore['scoreBreakdown']>[2]);
          let dot = 0;
          for (let c = 0; c < dk; c++) dot += x.q[(1 * T + 6) * dk + c] * x.k[(1 * T + 2) * dk + c];
          expect(b.score).toBeCloseTo(dot / 2, 5);
        }
      } finally {
        tr.delete?.();
      }
    });
  }
});
