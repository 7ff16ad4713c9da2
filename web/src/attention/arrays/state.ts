// The student's own arrays as a sub-state (state.arrays): each array is held as its array link
// value (link.ts: `1.f4.6x6.b.…`, '' = none), so the state table writes and reads
// them like any other field, under the link keys docs/arrays.md defines (uw, uq, uk, uv, um, ux,
// uwq, uwk, uwv), plus `up`, the rounding step of a printed paste (so "matches to 0.005" still
// holds after the link is opened elsewhere). Pure: no DOM, no globals.
//
// Which arrays are given decides the mode: W alone (weights to show and check), Q, K, V (+ mask)
// or X, W_q, W_k, W_v (the core computes attention with the page's mask, fill and scale options).
import {
  ARRAY_LINK_KEYS,
  ARRAY_LINK_MAX_CHARS,
  ARRAY_MESSAGE_MAX_CHARS,
  decodeArrayLink,
  type ArrayRole,
} from './index';
import { brief, real, type Kind } from '../../state/fields';
import type { SubState } from '../../state/table';

export type ArraysState = { [R in ArrayRole]: string } & {
  /** The rounding step the values were printed with (0 for files and links: exact). */
  step: number;
};
export interface ArraysSlice {
  arrays: ArraysState;
}

export type ArraysMode = 'none' | 'weights' | 'qkv' | 'projections';
export const ROLES = Object.keys(ARRAY_LINK_KEYS) as ArrayRole[];
/** The arrays each mode needs (the mask is optional). */
export const MODE_ROLES: Record<Exclude<ArraysMode, 'none'>, ArrayRole[]> = {
  weights: ['weights'],
  qkv: ['q', 'k', 'v'],
  projections: ['x', 'wq', 'wk', 'wv'],
};
/** The names the page and the notebook use for each role. */
export const ROLE_NAME: Record<ArrayRole, string> = {
  weights: 'W',
  q: 'Q',
  k: 'K',
  v: 'V',
  mask: 'mask',
  x: 'X',
  wq: 'W_q',
  wk: 'W_k',
  wv: 'W_v',
};

/** One array's link value. A link's value is checked when the link is read (a bad one is dropped
 *  with a notice naming its key); values set by the page (a paste, a file, a postMessage) were
 *  encoded by the page and may be longer than a link allows (they are then left out of it). */
function arrayKind(role: ArrayRole): Kind<string, ArraysSlice> {
  return {
    same: (a, b) => a === b,
    format: (v, key) => [key, v], // base64url and dots: URL-safe as they are
    parse(raw, key, notices) {
      try {
        decodeArrayLink(raw, key, ARRAY_LINK_MAX_CHARS);
        return raw;
      } catch (e) {
        notices.push(
          `your arrays: ${ROLE_NAME[role]} could not be read (${brief((e as Error).message)}…); it was left out`,
        );
        return undefined;
      }
    },
    normalize(v, c) {
      if (v === '' || v === undefined) return '';
      if (typeof v !== 'string' || v.length > ARRAY_MESSAGE_MAX_CHARS) {
        c.notices.push(`your arrays: ${ROLE_NAME[role]} is not an array value; it was left out`);
        return '';
      }
      return v;
    },
  };
}

const fields = Object.fromEntries(
  ROLES.map((r) => [
    r,
    { key: ARRAY_LINK_KEYS[r], label: `your ${ROLE_NAME[r]}`, kind: arrayKind(r), default: '', compute: true },
  ]),
) as unknown as SubState<ArraysState, ArraysSlice>['fields'];

export const ARRAYS: SubState<ArraysState, ArraysSlice> = {
  fields: {
    ...fields,
    step: { key: 'up', label: 'your arrays’ printed rounding', kind: real(0, 1), default: 0, compute: true },
  },
  fix(s, notices) {
    const a = s.arrays;
    const mode = arraysMode(a);
    // Arrays that belong to no complete group are dropped (a link with Q and K but no V).
    const keep = new Set<ArrayRole>(
      mode === 'none' ? [] : mode === 'qkv' ? [...MODE_ROLES.qkv, 'mask'] : MODE_ROLES[mode],
    );
    const dropped = ROLES.filter((r) => a[r] !== '' && !keep.has(r));
    if (dropped.length > 0) {
      const need =
        mode === 'none'
          ? ': W alone, or Q, K and V, or X, W_q, W_k and W_v'
          : ` (the ${mode === 'weights' ? 'weights W' : mode === 'qkv' ? 'Q, K, V' : 'X, W_q, W_k, W_v'} are shown)`;
      notices.push(`your arrays: ${dropped.map((r) => ROLE_NAME[r]).join(', ')} left out${need}`);
      for (const r of dropped) a[r] = '';
    }
    if (mode === 'none') a.step = 0;
  },
};

/** Which arrays are given: W wins, then Q/K/V, then X/W_q/W_k/W_v (each group complete). */
export function arraysMode(a: ArraysState | undefined): ArraysMode {
  if (!a) return 'none';
  for (const mode of ['weights', 'qkv', 'projections'] as const)
    if (MODE_ROLES[mode].every((r) => a[r] !== '')) return mode;
  return 'none';
}

/** Characters the arrays take in a link (their values and keys). */
export function arraysLinkChars(a: ArraysState): number {
  return ROLES.reduce((n, r) => n + (a[r] === '' ? 0 : a[r].length + ARRAY_LINK_KEYS[r].length + 2), 0);
}

/** Whether the arrays fit in a share link (docs/arrays.md: ARRAY_LINK_MAX_CHARS). */
export function arraysFitLink(a: ArraysState): boolean {
  return arraysLinkChars(a) <= ARRAY_LINK_MAX_CHARS;
}

export const NO_ARRAYS: ArraysState = {
  ...(Object.fromEntries(ROLES.map((r) => [r, ''])) as { [R in ArrayRole]: string }),
  step: 0,
};

/** The arrays as a share link carries them: all of them when they fit, else none (docs/arrays.md;
 *  the notebook sends larger ones by postMessage). */
export function linkArrays(a: ArraysState): ArraysState {
  return arraysFitLink(a) ? a : { ...NO_ARRAYS };
}
