// Post-link step of the relaxed-SIMD build: LLVM 14 (Emscripten 3.1.6) encodes
// __builtin_wasm_fma_f32x4 with the relaxed-SIMD proposal's prototype opcode (0xfd 0xaf 0x01,
// "f32x4.fma"), which engines that ship relaxed SIMD reject. The final opcode,
// f32x4.relaxed_madd, is 0xfd 0x85 0x02: the same length, so the code is patched in place.
// Semantics: relaxed_madd(a, b, c) = a * b + c on the operands in stack order; simd_kernels.cpp
// (ATTN_RELAXED_SIMD) calls the builtin as madd(a, b, c) for exactly that, so no operand moves.
// Every site comes from llvm-objdump's disassembly (offsets within the code section) and is
// checked byte for byte before it is rewritten; any other prototype relaxed opcode fails the
// build. Usage: node patch_relaxed.mjs file.wasm [llvm-objdump]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const [file, objdump = 'llvm-objdump-14'] = process.argv.slice(2);
const bytes = fs.readFileSync(file);

function leb(buf, at) { // unsigned LEB128 -> [value, next offset]
  let v = 0, shift = 0, b;
  do { b = buf[at++]; v += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
  return [v, at];
}
// File offset of the code section's contents (section id 10).
let at = 8, codeStart = -1;
while (at < bytes.length) {
  const id = bytes[at];
  const [size, body] = leb(bytes, at + 1);
  if (id === 10) { codeStart = body; break; }
  at = body + size;
}
if (codeStart < 0) throw new Error(`${file}: no code section`);

const dis = execFileSync(objdump, ['-d', file], { encoding: 'utf8', maxBuffer: 1 << 30 });
let patched = 0;
for (const line of dis.split('\n')) {
  const m = /^\s*([0-9a-f]+):\s+((?:[0-9a-f]{2} )+)\s*(\S+)/.exec(line);
  if (!m) continue;
  const [, addr, hex, op] = m;
  if (op === 'f32x4.fma') {
    const off = codeStart + parseInt(addr, 16);
    if (hex.trim() !== 'fd af 01' || bytes[off] !== 0xfd || bytes[off + 1] !== 0xaf || bytes[off + 2] !== 0x01) {
      throw new Error(`${file}: unexpected bytes for f32x4.fma at code offset 0x${addr}: ${hex}`);
    }
    bytes[off + 1] = 0x85, bytes[off + 2] = 0x02;
    patched++;
  } else if (/^(f32x4|f64x2)\.(fms|fma)$|relaxed|laneselect|i8x16\.swizzle_relaxed/.test(op)) {
    throw new Error(`${file}: prototype relaxed-SIMD opcode ${op} at 0x${addr} has no rewrite here`);
  }
}
if (!patched) throw new Error(`${file}: no f32x4.fma found (was it built with ATTN_RELAXED_SIMD?)`);
fs.writeFileSync(file, bytes);
console.log(`patch_relaxed: ${file}: ${patched} f32x4.fma -> f32x4.relaxed_madd`);
