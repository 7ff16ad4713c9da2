// The machine a bench ran on, named so figures from different hosts of the same "kind" can be
// told apart: this VM kind comes as Intel Xeon or AMD EPYC, and /proc/cpuinfo often says only
// "AMD EPYC" — the family and model say which generation (and so which vector units) it is.
import fs from 'node:fs';
import os from 'node:os';

// Family/model -> core generation, for the CPUs this kind has come as (best effort; unknown -> null).
function generation(vendor, family, model) {
  if (vendor === 'AuthenticAMD') {
    if (family === 0x17) return model >= 0x30 ? 'Zen 2' : 'Zen / Zen+';
    // Family 19h: Zen 3 is models 00-0F (Milan), 20-2F, 40-5F; Zen 4 is 10-1F (Genoa), 60-7F, A0-AF.
    if (family === 0x19) {
      return model < 0x10 || (model >= 0x20 && model < 0x60) ? 'Zen 3' : model < 0x80 || model >= 0xa0 ? 'Zen 4' : null;
    }
    if (family === 0x1a) return 'Zen 5';
    return null;
  }
  if (vendor === 'GenuineIntel' && family === 6) {
    const m = { 85: 'Skylake-SP / Cascade Lake', 106: 'Ice Lake-SP', 143: 'Sapphire Rapids', 207: 'Emerald Rapids',
      173: 'Granite Rapids', 175: 'Sierra Forest' };
    return m[model] ?? null;
  }
  return null;
}

export function machineInfo() {
  let text = '';
  try { text = fs.readFileSync('/proc/cpuinfo', 'utf8'); } catch { /* not Linux */ }
  const first = text.split('\n\n')[0] ?? '';
  const field = (name) => first.match(new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm'))?.[1]?.trim();
  const vendor = field('vendor_id') ?? null;
  const family = field('cpu family') !== undefined ? +field('cpu family') : null;
  const model = field('model') !== undefined ? +field('model') : null;
  const flags = new Set((field('flags') ?? '').split(/\s+/));
  const vector = ['sse4_2', 'avx', 'avx2', 'fma', 'avx512f', 'avx512_bf16'].filter((f) => flags.has(f));
  return {
    cpu: field('model name') ?? os.cpus()[0]?.model ?? 'unknown',
    vendor, family, model, stepping: field('stepping') !== undefined ? +field('stepping') : null,
    generation: vendor && family !== null && model !== null ? generation(vendor, family, model) : null,
    mhz: field('cpu MHz') ? +(+field('cpu MHz')).toFixed(0) : null,
    cacheSize: field('cache size') ?? null,
    vector,
    cores: os.cpus().length,
    memGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
    loadavgAtStart: os.loadavg(),
  };
}

/** One line: "AMD EPYC (AuthenticAMD family 26 model 2, Zen 5), 2 vCPUs, AVX-512, Node v20.20.2". */
export function machineLine(m) {
  const id = m.family !== null ? `${m.vendor} family ${m.family} model ${m.model}${m.generation ? `, ${m.generation}` : ''}` : m.vendor ?? '';
  const simd = m.vector.includes('avx512f') ? 'AVX-512' : m.vector.includes('avx2') ? 'AVX2' : m.vector.at(-1) ?? 'no AVX';
  return `${m.cpu}${id ? ` (${id})` : ''}, ${m.cores} vCPUs, ${simd}, ${m.mhz ?? '?'} MHz, Node ${m.node}`;
}
