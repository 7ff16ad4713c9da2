// Loads the attention core, choosing the build at load time:
//   attn_core_relaxed.{mjs,wasm}: the forward kernels' multiply-adds fused (relaxed SIMD
//     f32x4.relaxed_madd), where the engine validates that instruction;
//   attn_core.{mjs,wasm}: SIMD128, everywhere else (the fallback).
// Both have the same JS API (docs/js-api.md); core.limits.relaxedSimd tells which one loaded.
// Anything that must replay bit for bit (training) uses SIMD128 builds only: relaxed_madd may
// be fused on one engine and not on another.
//
// The page's loader (web/src/wasm/load-core.ts) is this module with Vite's ?url for the two .wasm files:
//   import { loadAttnCore } from './load_core.mjs';
//   const core = await loadAttnCore({
//     simd: { factory: () => import('./attn_core.mjs'), wasmUrl: simdWasmUrl },
//     relaxed: { factory: () => import('./attn_core_relaxed.mjs'), wasmUrl: relaxedWasmUrl },
//   });
// In Node: loadAttnCore({ dir: 'build/wasm' }) reads the .wasm bytes from that folder.
// prefer: 'auto' (default) | 'simd' | 'relaxed' ('relaxed' throws where it does not validate).

// (module (func (result v128) v128.const 0 v128.const 0 v128.const 0 f32x4.relaxed_madd))
const PROBE = (() => {
  const zero = new Array(16).fill(0);
  const body = [0x00, ...[0, 1, 2].flatMap(() => [0xfd, 0x0c, ...zero]), 0xfd, 0x85, 0x02, 0x0b];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
    0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type: () -> v128
    0x03, 0x02, 0x01, 0x00, // function 0 of type 0
    0x0a, body.length + 2, 0x01, body.length, ...body, // code
  ]);
})();

/** Whether this engine's WebAssembly.validate accepts a tiny module using f32x4.relaxed_madd. */
export function relaxedSimdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(PROBE);
  } catch {
    return false;
  }
}

/**
 * @typedef {object} CoreBuildSource One build for a page: how to import its Emscripten factory
 *   and where its .wasm is (a bundler's URL).
 * @property {() => Promise<{ default: (moduleOptions: any) => Promise<any> }>} factory
 * @property {string} wasmUrl
 * @property {object} [moduleOptions] more options for the factory
 * @typedef {object} LoadCoreOptions
 * @property {'auto' | 'simd' | 'relaxed'} [prefer] default 'auto'
 * @property {CoreBuildSource} [simd]
 * @property {CoreBuildSource} [relaxed]
 * @property {string} [dir] Node: the folder holding attn_core{,_relaxed}.{mjs,wasm}
 */

/**
 * Starts one instance of the build this engine should run (see the top of this file).
 * @param {LoadCoreOptions} [opts]
 * @returns {Promise<any>} the core (docs/js-api.md); core.limits.relaxedSimd says which build
 */
export async function loadAttnCore(opts = {}) {
  const prefer = opts.prefer ?? 'auto';
  if (!['auto', 'simd', 'relaxed'].includes(prefer)) throw new Error(`prefer must be 'auto', 'simd' or 'relaxed'`);
  const relaxed = prefer === 'relaxed' || (prefer === 'auto' && relaxedSimdSupported());
  if (prefer === 'relaxed' && !relaxedSimdSupported()) {
    throw new Error('this engine does not validate relaxed SIMD (Node needs --experimental-wasm-relaxed-simd)');
  }
  const name = relaxed ? 'attn_core_relaxed' : 'attn_core';
  if (opts.dir) { // Node: files in a folder
    // Specifiers in a variable: a bundler (Vite, for the page) leaves them alone instead of
    // trying to bundle Node's built-in modules into the browser build.
    const nodeImport = (/** @type {string} */ m) => import(/* @vite-ignore */ m);
    const [{ default: fs }, { default: path }, { pathToFileURL }] =
      await Promise.all(['node:fs', 'node:path', 'node:url'].map(nodeImport));
    const create = (await nodeImport(pathToFileURL(path.resolve(opts.dir, `${name}.mjs`)).href)).default;
    return create({ wasmBinary: fs.readFileSync(path.resolve(opts.dir, `${name}.wasm`)) });
  }
  const pick = relaxed ? opts.relaxed : opts.simd;
  if (!pick) throw new Error(`loadAttnCore: no ${relaxed ? 'relaxed' : 'simd'} build given`);
  const create = (await pick.factory()).default;
  return create({ locateFile: (/** @type {string} */ f) => (f.endsWith('.wasm') ? pick.wasmUrl : f), ...(pick.moduleOptions ?? {}) });
}
