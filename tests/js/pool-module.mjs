// The Train tab's Worker pool (web/src/train/pool.ts) as plain JavaScript, for the Node and
// Chromium tests that run it outside Vite: TypeScript's own transpiler, no bundling (besides
// type-only imports the file imports only its siblings keep-awake.ts and shard-server.ts, each
// transpiled beside it as .mjs).
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from './helpers.mjs';

/** AP_POOL_TS=<file> tests another version (e.g. one with a deliberate mistake, to see a test fail). */
export const POOL_TS = process.env.AP_POOL_TS ? path.resolve(process.env.AP_POOL_TS) : path.join(ROOT, 'web', 'src', 'train', 'pool.ts');

const TRAIN_DIR = path.join(ROOT, 'web', 'src', 'train');

/** Transpiles `tsFile` into `dir` as `name`.mjs, its sibling imports ('./x', read next to it or else in
 *  web/src/train, so an AP_POOL_TS copy may stand alone) too, rewritten to './x.mjs'. */
function writeModule(tsFile, dir, name, done) {
  const src = fs.readFileSync(tsFile, 'utf8');
  const out = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  const text = out.outputText.replace(/(\bfrom\s*)(['"])\.\/([\w-]+)\2/g, (_, from, q, sib) => {
    if (!done.has(sib)) {
      done.add(sib);
      const near = path.join(path.dirname(tsFile), `${sib}.ts`);
      writeModule(fs.existsSync(near) ? near : path.join(TRAIN_DIR, `${sib}.ts`), dir, sib, done);
    }
    return `${from}${q}./${sib}.mjs${q}`;
  });
  const file = path.join(dir, `${name}.mjs`);
  fs.writeFileSync(file, text);
  return file;
}

/** Writes pool.mjs (and the sibling modules it imports) into `dir` and returns its path. */
export function writePoolModule(dir) {
  fs.mkdirSync(dir, { recursive: true });
  return writeModule(POOL_TS, dir, 'pool', new Set(['pool']));
}

// Configs of the Worker tests (Node and Chromium). Batch 3 leaves shard 0 empty; dropout checks
// that a shard's noise does not depend on the Worker that computes it.
export const WORKER_CONFIGS = [
  { seed: 3, dModel: 32, batch: 8 },
  { seed: 4, dModel: 32, heads: 4, kvHeads: 2, layerNorm: true, dropout: 0.1, kernel: 'tiled', batch: 6, clip: 1 },
  { seed: 5, dModel: 16, batch: 3, dropout: 0.2, seqLen: 12, vocab: 16 },
];
