// Where the Decode tab's settings live in the page's state (state.decode, rows in decode/state.ts).
import type { DecodeSlice, DecodeState } from './state';

/** What the Decode tab emits to change its settings. */
export type DecodePatch = { decode?: Partial<DecodeState> };

export function decodeStateOf(s: DecodeSlice): DecodeState {
  return s.decode;
}

export function decodePatch(_s: DecodeSlice, p: Partial<DecodeState>): DecodePatch {
  return { decode: p };
}
