// The page's literal types and lists against the wasm modules' own: TypeScript needs the names as
// literal unions (wasm/attn-core.d.ts) and lists (shared/variant.ts, train/config.ts, the mask
// fills of attention/state.ts), the modules have them from the core's tables (core.names,
// lib.names). These tests fail when the two differ, when the hand-written .d.ts files and the
// modules' JavaScript API differ (a member declared but missing, or there but not declared), and
// when the page's correction of a variant (shared/variant.ts fixVariant, which asks the core's
// build-time answers in wasm/core-tables.ts) and the live core disagree.
import { describe, it, expect, beforeAll } from 'vitest';
import ts from 'typescript';
import type { AttnCore, CreateAttnCore, Kernel, MaskFill, MaskMode, Normalizer, PositionEncoding, Precision } from '../../web/src/wasm/attn-core';
import type { AttnTrainLib, CreateAttnTrain } from '../../web/src/wasm/attn-train';
import { variantRefusal } from '../../web/src/wasm/core-tables';
import { MASK_MODES, NORMALIZERS, POSITIONS, PRECISIONS, STANDARD, fixVariant, type VariantState } from '../../web/src/shared/variant';
import { TRAIN_KERNELS, TRAIN_NORMALIZERS, TRAIN_POSITIONAL, TRAIN_TASKS, type TrainKernel, type TrainNormalizer, type TrainPositional, type TrainTask } from '../../web/src/train/config';
import { FILLS } from '../../web/src/attention/state';
import coreDts from '../../web/src/wasm/attn-core.d.ts?raw';
import trainDts from '../../web/src/wasm/attn-train.d.ts?raw';

const wasm = (name: string) => ({ mjs: new URL(`../../build/wasm/${name}.mjs`, import.meta.url).href, wasm: new URL(`../../build/wasm/${name}.wasm`, import.meta.url) });
let core: AttnCore;
let train: AttnTrainLib;
beforeAll(async () => {
  const fs = await import(/* @vite-ignore */ 'node:' + 'fs');
  const c = wasm('attn_core'), t = wasm('attn_train');
  core = await ((await import(/* @vite-ignore */ c.mjs)) as { default: CreateAttnCore }).default({ wasmBinary: fs.readFileSync(c.wasm) });
  train = await ((await import(/* @vite-ignore */ t.mjs)) as { default: CreateAttnTrain }).default({ wasmBinary: fs.readFileSync(t.wasm) });
});

// Every member of each literal union, once (tsc -p web fails if one is missing or extra).
const UNIONS: { [K in keyof AttnCore['names']]: Record<AttnCore['names'][K][number], true> } = {
  normalizer: { softmax: true, softmax1: true, sigmoid: true, relu: true, linear: true } satisfies Record<Normalizer, true>,
  position: { none: true, rope: true, alibi: true } satisfies Record<PositionEncoding, true>,
  maskMode: { before: true, after: true } satisfies Record<MaskMode, true>,
  precision: { float32: true, float64: true, float16: true } satisfies Record<Precision, true>,
  maskFill: { neg_inf: true, finite: true, zero: true } satisfies Record<MaskFill, true>,
  kernel: { naive: true, tiled: true } satisfies Record<Kernel, true>,
};
const TRAIN_UNIONS: { [K in keyof AttnTrainLib['names']]: Record<string, true> } = {
  task: { induction: true, 'induction-fixed': true, random: true } satisfies Record<TrainTask, true>,
  positional: { learned: true, none: true, rope: true, alibi: true, shortformer: true } satisfies Record<TrainPositional, true>,
  normalizer: { softmax: true, softmax1: true, sigmoid: true, relu: true, linear: true } satisfies Record<TrainNormalizer, true>,
  kernel: { naive: true, tiled: true } satisfies Record<TrainKernel, true>,
};
const sorted = (a: readonly string[]) => [...a].sort();

describe('the names: the page’s literal types and lists are the core’s', () => {
  it('attn-core.d.ts’s unions hold exactly core.names’ lists', () => {
    expect(Object.keys(core.names).sort()).toEqual(Object.keys(UNIONS).sort());
    for (const [option, union] of Object.entries(UNIONS)) {
      expect(sorted(Object.keys(union)), option).toEqual(sorted(core.names[option as keyof AttnCore['names']]));
    }
  });
  it('the page’s lists are core.names’ lists, in the core’s order', () => {
    expect(NORMALIZERS).toEqual(core.names.normalizer);
    expect(POSITIONS).toEqual(core.names.position);
    expect(MASK_MODES).toEqual(core.names.maskMode);
    expect(PRECISIONS).toEqual(core.names.precision);
    expect(FILLS).toEqual(core.names.maskFill);
  });
  it('the Train tab’s types and lists are the training module’s (lib.names)', () => {
    expect(Object.keys(train.names).sort()).toEqual(Object.keys(TRAIN_UNIONS).sort());
    for (const [field, union] of Object.entries(TRAIN_UNIONS)) {
      expect(sorted(Object.keys(union)), field).toEqual(sorted(train.names[field as keyof AttnTrainLib['names']]));
    }
    expect(TRAIN_TASKS).toEqual(train.names.task);
    expect(TRAIN_POSITIONAL).toEqual(train.names.positional);
    expect(TRAIN_NORMALIZERS).toEqual(train.names.normalizer);
    expect(TRAIN_KERNELS).toEqual(train.names.kernel);
  });
  it('the lists are frozen: the glue checks options against these very arrays', () => {
    expect(Object.isFrozen(core.names) && Object.isFrozen(core.names.normalizer)).toBe(true);
    expect(Object.isFrozen(train.names) && Object.isFrozen(train.names.positional)).toBe(true);
    expect(() => core.attention(new Float32Array(1), new Float32Array(1), new Float32Array(1), { heads: 1, tq: 1, tk: 1, dk: 1, dv: 1, normalizer: 'softmax2' as Normalizer }))
      .toThrow(/normalizer must be one of 'softmax', 'softmax1', 'sigmoid', 'relu', 'linear'/);
  });
});

// The members an interface of a .d.ts declares, each as method or property.
function declared(dts: string, name: string): Map<string, 'method' | 'property'> {
  const sf = ts.createSourceFile('x.d.ts', dts, ts.ScriptTarget.ES2022, true);
  const out = new Map<string, 'method' | 'property'>();
  sf.forEachChild((n) => {
    if (!ts.isInterfaceDeclaration(n) || n.name.text !== name) return;
    for (const m of n.members) {
      if (!m.name || !(ts.isIdentifier(m.name) || ts.isStringLiteral(m.name))) continue;
      const kind = ts.isMethodSignature(m) || (ts.isPropertySignature(m) && m.type && (ts.isFunctionTypeNode(m.type) || ts.isConstructorTypeNode(m.type))) ? 'method' : 'property';
      out.set(m.name.text, kind);
    }
  });
  expect(out.size, `interface ${name}`).toBeGreaterThan(0);
  return out;
}
// What the Emscripten glue itself puts on a module (runtime, Embind, heap views): not the API.
const EMSCRIPTEN_OWN = /^(_.*|HEAP.*|asm|wasmBinary|ready|run|calledRun|preloadedImages|preloadedAudios|BindingError|InternalError|UnboundTypeError|getInheritedInstanceCount|getLiveInheritedInstances|flushPendingDeletes|setDelayFunction|count_emval_handles|get_first_emval)$/;

function checkSurface(mod: object, members: Map<string, 'method' | 'property'>): void {
  const api = Object.keys(mod).filter((k) => !EMSCRIPTEN_OWN.test(k)).sort();
  expect(api, 'on the module but not declared, or declared but missing').toEqual([...members.keys()].sort());
  for (const [name, kind] of members) {
    const v = (mod as Record<string, unknown>)[name];
    expect(typeof v === 'function' ? 'method' : 'property', name).toBe(kind);
  }
}

describe('the hand-written .d.ts files match the modules’ JavaScript API', () => {
  it('attn-core.d.ts’s AttnCore: every member exists on the core, and nothing else does', () => {
    checkSurface(core, declared(coreDts, 'AttnCore'));
  });
  it('attn-train.d.ts’s AttnTrainLib: likewise for the training module', () => {
    checkSurface(train, declared(trainDts, 'AttnTrainLib'));
  });
});

// Every variant a link can ask for, with d_k unknown (null: the induction example), even or odd.
function* variants(): Generator<[VariantState, number | null]> {
  for (const normalizer of NORMALIZERS) for (const position of POSITIONS) for (const maxShift of [true, false])
    for (const qkNorm of [false, true]) for (const precision of PRECISIONS) for (const maskMode of MASK_MODES)
      for (const dk of [null, 4, 5]) yield [{ ...STANDARD, normalizer, position, maxShift, qkNorm, precision, maskMode }, dk];
}
/** The field the live core refuses for v on a one-query call with this d_k, or null. */
function liveRefusal(v: VariantState, dk: number | null): string | null {
  const d = dk ?? 4;
  try {
    core.attention(new Float32Array(d), new Float32Array(d), new Float32Array(1), { heads: 1, tq: 1, tk: 1, dk: d, dv: 1, normalizer: v.normalizer, position: v.position, maxShift: v.maxShift, qkNorm: v.qkNorm, precision: v.precision, maskMode: v.maskMode });
    return null;
  } catch (e) {
    return (e as { field: string }).field;
  }
}

describe('fixVariant asks the core', () => {
  it('the build-time answers (wasm/core-tables.ts) are the live core’s, for every variant', () => {
    let refused = 0;
    for (const [v, dk] of variants()) {
      const live = liveRefusal(v, dk);
      expect(variantRefusal(v, dk), `${JSON.stringify(v)} dk ${dk}`).toBe(live);
      if (live) refused++;
    }
    expect(refused).toBeGreaterThan(100); // the table is not trivially "accept all"
  });
  it('a variant the core accepts stays as it is; any other becomes one the core accepts, with a notice each', () => {
    for (const [v, dk] of variants()) {
      const fixed = { ...v }, notices: string[] = [];
      fixVariant(fixed, notices, dk);
      const label = `${JSON.stringify(v)} dk ${dk}`;
      expect(liveRefusal(fixed, dk), label).toBeNull();
      if (liveRefusal(v, dk) === null) {
        expect(fixed, label).toEqual(v);
        expect(notices, label).toEqual([]);
      } else {
        const changed = (Object.keys(v) as (keyof VariantState)[]).filter((k) => v[k] !== fixed[k]);
        expect(notices.length, label).toBe(changed.length);
        expect(changed.length, label).toBeGreaterThan(0);
        for (const k of changed) expect(fixed[k], label).toBe(STANDARD[k]);
      }
    }
  });
});
