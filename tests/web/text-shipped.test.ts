// The shipped text model (web/public/models/sotu-bpe/) as the Text tab runs it — the page's file
// reader and BPE encoder, the Worker's runner over the training module (build/wasm/attn_train) —
// against python3-sentencepiece and a float64 NumPy forward of the same checkpoint
// (tests/oracle/gen_shipped_fixtures.py → tests/fixtures/text-shipped.json) on fixed sentences:
// the ids, log p of every next token, the top 5 at every position, and every head's scores and
// role on the sentence.
import { describe, it, expect, beforeAll } from 'vitest';
import type { AttnTrainLib, CreateAttnTrain } from '../../web/src/wasm/attn-train';
import { parseModelJson, readCheckpoint } from '../../web/src/text/model-files';
import { TextRunner } from '../../web/src/text/runner';
import { makeTokenizer } from '../../web/src/text/tokenizer';
import { nextLogprobs, topK } from '../../web/src/text/next';
import { fs } from './text-helpers';

interface Sentence {
  text: string;
  ids: number[];
  logprobs: number[];
  top: { id: number; p: number }[][];
  scores: { previous: number[]; induction: number[]; duplicate: number[]; first: number[] };
  roles: string[];
}
const REF = JSON.parse(
  new TextDecoder().decode(fs.readFileSync(new URL('../fixtures/text-shipped.json', import.meta.url))),
) as { checkpoint: number; sentences: Sentence[] };
const DIR = new URL('../../web/public/models/sotu-bpe/', import.meta.url);
const INFO = parseModelJson(new TextDecoder().decode(fs.readFileSync(new URL('model.json', DIR))));

let runner: TextRunner;
beforeAll(async () => {
  const mjs = new URL('../../build/wasm/attn_train.mjs', import.meta.url).href;
  const lib: AttnTrainLib = await ((await import(/* @vite-ignore */ mjs)) as { default: CreateAttnTrain }).default({
    wasmBinary: new Uint8Array(fs.readFileSync(new URL("../../build/wasm/attn_train.wasm", import.meta.url))).buffer,
  });
  const last = INFO.checkpoints[INFO.checkpoints.length - 1];
  expect(last.step).toBe(REF.checkpoint);
  runner = new TextRunner(lib);
  runner.load(INFO.trainerConfig, readCheckpoint(new Uint8Array(fs.readFileSync(new URL(last.file, DIR))), last.file, INFO.config));
});

describe('the shipped text model against SentencePiece and NumPy', () => {
  const tok = makeTokenizer(INFO.tokenizer);
  const V = INFO.config.vocab;
  for (const s of REF.sentences)
    it(`${JSON.stringify(s.text.slice(0, 40))}…: ids, next-token log p, top 5, head scores and roles`, () => {
      const ids = tok.encode(s.text).ids;
      expect(Array.from(ids)).toEqual(s.ids);
      const run = runner.run(ids, []);
      // float32 in the page against float64 in NumPy: log p within 2e-4 nats.
      const lp = nextLogprobs(run.logits, ids, V);
      s.logprobs.forEach((want, i) => expect(Math.abs(lp[i] - want)).toBeLessThanOrEqual(2e-4));
      s.top.forEach((want, i) => {
        const got = topK(run.logits, i, V, 5);
        // The same ids where NumPy's probabilities differ by more than float32 can blur.
        want.forEach((w, r) => {
          const near = (a: number, b: number) => b >= 0 && b < want.length && Math.abs(want[a].p - want[b].p) < 1e-5;
          if (near(r, r - 1) || near(r, r + 1)) return;
          expect(got[r].id).toBe(w.id);
          expect(Math.abs(got[r].p - w.p)).toBeLessThanOrEqual(1e-4);
        });
      });
      const sc = run.scores!;
      for (const k of ['previous', 'induction', 'duplicate', 'first'] as const)
        s.scores[k].forEach((want, h) => expect(Math.abs(sc[k][h] - want)).toBeLessThanOrEqual(1e-5));
      expect(Array.from(sc.roles)).toEqual(s.roles);
    });
});
