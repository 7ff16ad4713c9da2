// The Train tab's Worker pool (web/src/train/pool.ts) as plain JavaScript, for the Node and
// Chromium tests that run it outside Vite: TypeScript's own transpiler, no bundling (the file
// has type-only imports).
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from './helpers.mjs';

/** AP_POOL_TS=<file> tests another version (e.g. one with a deliberate mistake, to see a test fail). */
export const POOL_TS = process.env.AP_POOL_TS ? path.resolve(process.env.AP_POOL_TS) : path.join(ROOT, 'web', 'src', 'train', 'pool.ts');

/** Writes pool.mjs into `dir` and returns its path. */
export function writePoolModule(dir) {
  const src = fs.readFileSync(POOL_TS, 'utf8');
  const out = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'pool.mjs');
  fs.writeFileSync(file, out.outputText);
  return file;
}

// Configs of the Worker tests (Node and Chromium). Batch 3 leaves shard 0 empty; dropout checks
// that a shard's noise does not depend on the Worker that computes it.
export const WORKER_CONFIGS = [
  { seed: 3, dModel: 32, batch: 8 },
  { seed: 4, dModel: 32, heads: 4, kvHeads: 2, layerNorm: true, dropout: 0.1, kernel: 'tiled', batch: 6, clip: 1 },
  { seed: 5, dModel: 16, batch: 3, dropout: 0.2, seqLen: 12, vocab: 16 },
];
