// Where the Decode tab's settings live in the page's State (the URL's fields), and back. The one
// place that knows the mapping.
import type { State } from '../app/state';
import type { DecodeState } from './state';

export function decodeStateOf(s: State): DecodeState {
  return { seq: s.dseq, keep: s.dkeep, step: s.dstep, cache: s.dcache, tStart: s.dts, tEnd: s.dte };
}

export function decodePatch(_s: State, p: Partial<DecodeState>): Partial<State> {
  const out: Partial<State> = {};
  if (p.seq !== undefined) out.dseq = p.seq;
  if (p.keep !== undefined) out.dkeep = p.keep;
  if (p.step !== undefined) out.dstep = p.step;
  if (p.cache !== undefined) out.dcache = p.cache;
  if (p.tStart !== undefined) out.dts = p.tStart;
  if (p.tEnd !== undefined) out.dte = p.tEnd;
  return out;
}
