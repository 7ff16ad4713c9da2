// The page's loader (web/src/wasm/load-core.ts over cpp/bindings/load_core.mjs) starts the
// relaxed-SIMD build exactly where WebAssembly.validate accepts relaxed SIMD and the SIMD128 build
// otherwise (the fallback), each with its own .wasm from Vite's ?url; ?core= overrides the choice
// through the Worker's name. validate is stubbed both ways; the two Emscripten factories are
// replaced by stand-ins that record how they were called (the real builds are tested in
// tests/js/relaxed.test.mjs and in Chromium by tests/browser/core-build.test.mjs).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadCore } from '../../web/src/wasm/load-core';
import { coreBuildLabel, coreWorkerName, preferenceFromSearch, preferenceFromWorkerName } from '../../web/src/wasm/core-build';

const made = vi.hoisted(() => [] as { build: string; wasm: string }[]);
const standIn = (build: string) => async (o: { locateFile: (f: string, prefix: string) => string }) => {
  made.push({ build, wasm: o.locateFile(`${build}.wasm`, '') });
  return { build, limits: { relaxedSimd: build === 'attn_core_relaxed' } };
};
vi.mock('../../build/wasm/attn_core.mjs', () => ({ default: standIn('attn_core') }));
vi.mock('../../build/wasm/attn_core_relaxed.mjs', () => ({ default: standIn('attn_core_relaxed') }));

const realValidate = WebAssembly.validate;
function stubValidate(accepts: boolean): void {
  WebAssembly.validate = vi.fn(() => accepts) as typeof WebAssembly.validate;
}
afterEach(() => {
  WebAssembly.validate = realValidate;
  made.length = 0;
});

describe('the page loads one core build, chosen by WebAssembly.validate', () => {
  it('relaxed SIMD validates: attn_core_relaxed with its own .wasm', async () => {
    stubValidate(true);
    const core = (await loadCore()) as unknown as { build: string };
    expect(core.build).toBe('attn_core_relaxed');
    expect(made).toHaveLength(1);
    expect(made[0].wasm).toMatch(/attn_core_relaxed\.wasm$/);
    expect(WebAssembly.validate).toHaveBeenCalled();
  });
  it('relaxed SIMD does not validate: the SIMD128 fallback, attn_core.wasm', async () => {
    stubValidate(false);
    const core = (await loadCore()) as unknown as { build: string };
    expect(core.build).toBe('attn_core');
    expect(made).toHaveLength(1);
    expect(made[0].wasm).toMatch(/\/attn_core\.wasm$/);
  });
  it('validate throwing counts as not supported', async () => {
    WebAssembly.validate = (() => { throw new Error('no'); }) as typeof WebAssembly.validate;
    expect(((await loadCore()) as unknown as { build: string }).build).toBe('attn_core');
  });
  it('?core=simd128 keeps SIMD128 where relaxed would validate; ?core=relaxed fails clearly where it does not', async () => {
    stubValidate(true);
    expect(((await loadCore(preferenceFromWorkerName(coreWorkerName('attention-core', '?core=simd128')))) as unknown as { build: string }).build)
      .toBe('attn_core');
    stubValidate(false);
    await expect(loadCore('relaxed')).rejects.toThrow(/does not validate relaxed SIMD/);
    expect(made.map((m) => m.build)).toEqual(['attn_core']);
  });
});

describe('the ?core= override and the label', () => {
  it('parses the page address and round-trips through a Worker name', () => {
    expect(preferenceFromSearch('')).toBe('auto');
    expect(preferenceFromSearch('?embed=1&core=simd128')).toBe('simd');
    expect(preferenceFromSearch('?core=simd')).toBe('simd');
    expect(preferenceFromSearch('?core=relaxed')).toBe('relaxed');
    expect(preferenceFromSearch('?core=bogus')).toBe('auto');
    expect(coreWorkerName('attention-core', '')).toBe('attention-core');
    for (const p of ['simd', 'relaxed'] as const) {
      expect(preferenceFromWorkerName(coreWorkerName('attention-part-2', `?core=${p}`))).toBe(p);
    }
    expect(preferenceFromWorkerName('attention-core')).toBe('auto');
  });
  it('names the builds', () => {
    expect(coreBuildLabel(true)).toBe('relaxed SIMD (FMA)');
    expect(coreBuildLabel(false)).toBe('SIMD128');
  });
});
