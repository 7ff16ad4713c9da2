// Arrays too large for a link arrive by postMessage from the page that embeds the playground (the
// notebook helper's script). The protocol, for an iframe opened with `?embed=1&id=<id>&arrays=post`:
//
//   page → parent   { type: 'attention-playground:arrays-ready', version: 1, id }
//                   posted with targetOrigin '*' (it carries no data) when the page is ready, and
//                   again every READY_INTERVAL_MS until the arrays arrive (READY_TRIES times at most)
//   parent → page   { type: 'attention-playground:arrays', version: 1, id,
//                     arrays: { uw?: '<array link value>', uq?, uk?, uv?, um?, ux?, uwq?, uwk?, uwv? } }
//                   posted to the page's origin; the values are array link strings (link.ts), up to
//                   ARRAY_MESSAGE_MAX_CHARS each
//   page → parent   { type: 'attention-playground:arrays-received', version: 1, id, ok, errors }
//
// The page accepts a message only from `window.parent` (check event.source, not the origin: a
// file:// notebook export posts with origin "null") and only with its own id. Tokens and options
// stay in the link's hash either way. This file holds the pure half: the message shapes and the
// validation; the page wires the listener.
import { decodeArrayFields, ARRAY_MESSAGE_MAX_CHARS, type ArrayRole } from './link';
import type { NdArray } from './types';

export const ARRAY_MESSAGE_VERSION = 1;
export const ARRAY_MESSAGE_TYPES = {
  ready: 'attention-playground:arrays-ready',
  arrays: 'attention-playground:arrays',
  received: 'attention-playground:arrays-received',
} as const;
export const READY_INTERVAL_MS = 250;
export const READY_TRIES = 40;

/** The query parameter that tells the page to wait for its arrays by postMessage. */
export const ARRAYS_BY_MESSAGE_PARAM = ['arrays', 'post'] as const;

export function readyMessage(id: string | null): { type: string; version: number; id: string | null } {
  return { type: ARRAY_MESSAGE_TYPES.ready, version: ARRAY_MESSAGE_VERSION, id };
}

export function receivedMessage(
  id: string | null,
  errors: string[],
): { type: string; version: number; id: string | null; ok: boolean; errors: string[] } {
  return { type: ARRAY_MESSAGE_TYPES.received, version: ARRAY_MESSAGE_VERSION, id, ok: errors.length === 0, errors };
}

/**
 * Read a message's data (anything). Returns null when it is not an arrays message for this frame
 * (another message on the window: ignore it), else the decoded arrays and the errors of the values
 * that could not be read. Never throws.
 */
export function readArraysMessage(
  data: unknown,
  id: string | null,
): { arrays: Partial<Record<ArrayRole, NdArray>>; errors: string[] } | null {
  if (data === null || typeof data !== 'object') return null;
  const d = data as Record<string, unknown>;
  if (d.type !== ARRAY_MESSAGE_TYPES.arrays || d.version !== ARRAY_MESSAGE_VERSION || (d.id ?? null) !== id)
    return null;
  const arrays = d.arrays;
  if (arrays === null || typeof arrays !== 'object' || Array.isArray(arrays))
    return { arrays: {}, errors: ['the message holds no “arrays” object'] };
  const out = decodeArrayFields(arrays as Record<string, unknown>, ARRAY_MESSAGE_MAX_CHARS);
  if (Object.keys(out.arrays).length === 0 && out.errors.length === 0)
    out.errors.push('the message’s “arrays” object holds no known key (uw, uq, uk, uv, um, ux, uwq, uwk, uwv)');
  return out;
}
