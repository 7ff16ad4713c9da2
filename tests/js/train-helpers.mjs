// Loading the training module (build/wasm/attn_train.{mjs,wasm}) for the node --test suites.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './helpers.mjs';

export const TRAIN_MJS = path.join(ROOT, 'build', 'wasm', 'attn_train.mjs');
export const TRAIN_WASM = path.join(ROOT, 'build', 'wasm', 'attn_train.wasm');

let libPromise = null;
export function loadTrain() {
  if (!libPromise) {
    libPromise = (async () => {
      if (!fs.existsSync(TRAIN_MJS) || !fs.existsSync(TRAIN_WASM)) {
        throw new Error(`training module not built: ${TRAIN_MJS} missing (run bash scripts/build-wasm.sh)`);
      }
      const { default: createAttnTrain } = await import(TRAIN_MJS);
      return createAttnTrain({ wasmBinary: fs.readFileSync(TRAIN_WASM) });
    })();
  }
  return libPromise;
}

// fn() must throw an AttnError whose .field is `field` and whose message names it.
export function throwsField(lib, fn, field, label) {
  let err = null;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err, `${label}: expected an AttnError naming ${field}`);
  assert.ok(err instanceof lib.AttnError, `${label}: ${err} is not an AttnError`);
  assert.equal(err.field, field, `${label}: field ${err.field} (${err.message})`);
  const named = field.replace(/^weights\..*/, 'weights');
  assert.ok(err.message.includes(named) || field === 'memory', `${label}: message "${err.message}" does not name ${field}`);
  return err;
}

export function bitsEqual(a, b) {
  if (a.length !== b.length || a.byteLength !== b.byteLength) return false;
  // bytes, so Float64Array compares every bit too
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

export function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
