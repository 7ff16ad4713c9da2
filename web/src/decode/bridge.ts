// Where the Decode tab's settings live in the page's State (state.decode, rows in decode/state.ts).
import type { Patch, State } from '../app/state';
import type { DecodeState } from './state';

export function decodeStateOf(s: State): DecodeState {
  return s.decode;
}

export function decodePatch(_s: State, p: Partial<DecodeState>): Patch {
  return { decode: p };
}
