// Pure helpers of the "Your arrays" panel (panel.ts): the mode labels, which array plays which role
// (by name, else in order), the arrays as link values, and the one-line summary of a result.
import { ArrayParseError, encodeArrayLink, type ArrayRole, type NdArray } from './index';
import { arraysFitLink, MODE_ROLES, NO_ARRAYS, ROLE_NAME, type ArraysMode, type ArraysState } from './state';
import type { AttentionResult } from '../protocol';

export type Mode = Exclude<ArraysMode, 'none'>;
export const MODE_LABEL: Record<Mode, string> = {
  weights: 'Weights W',
  qkv: 'Q, K, V (+ mask)',
  projections: 'X, W_q, W_k, W_v (lesson 2)',
};
/** Names a pasted or saved array may carry, per role (compared lower-case, without "_"). */
const ALIASES: Record<ArrayRole, string[]> = {
  weights: ['w', 'weights', 'attn', 'attention', 'p'],
  q: ['q'],
  k: ['k'],
  v: ['v'],
  mask: ['mask', 'm'],
  x: ['x'],
  wq: ['wq'],
  wk: ['wk'],
  wv: ['wv'],
};

/** Pick each role's array from what was read: by name, else in the order given. */
export function assignRoles(mode: Mode, list: NdArray[]): Partial<Record<ArrayRole, NdArray>> {
  // Named for another mode (Q.npy, K.npy, V.npy while "Weights W" is chosen): say which one.
  const other = (Object.keys(MODE_LABEL) as Mode[]).find((m) => m !== mode && namedFor(m, list));
  if (other && !namedFor(mode, list))
    throw new ArrayParseError(
      `these are ${MODE_ROLES[other].map((r) => ROLE_NAME[r]).join(', ')} (by their names), but “${MODE_LABEL[mode]}” is chosen: choose “${MODE_LABEL[other]}” under “They are”, then drop or paste them again`,
    );
  const roles: ArrayRole[] = mode === 'qkv' ? [...MODE_ROLES.qkv, 'mask'] : MODE_ROLES[mode];
  const out: Partial<Record<ArrayRole, NdArray>> = {};
  const rest: NdArray[] = [];
  for (const a of list) {
    const n = (a.name ?? '').toLowerCase().replace(/_/g, '');
    const role = roles.find((r) => ALIASES[r].includes(n));
    if (role && !out[role]) out[role] = a;
    else if (a.name === undefined || !role) rest.push(a);
  }
  for (const r of roles) if (!out[r] && rest.length > 0) out[r] = rest.shift()!;
  const missing = MODE_ROLES[mode].filter((r) => !out[r]);
  if (missing.length > 0) {
    const names = MODE_ROLES[mode].map((r) => ROLE_NAME[r]).join(', ');
    throw new ArrayParseError(
      `${missing.map((r) => ROLE_NAME[r]).join(' and ')} ${missing.length > 1 ? 'are' : 'is'} missing: give ${names}${mode === 'qkv' ? ' (and a mask if you like)' : ''}, named (“${ROLE_NAME[MODE_ROLES[mode][0]]} = …”) or in that order`,
    );
  }
  if (rest.length > 0)
    throw new ArrayParseError(
      `${list.length} arrays were read but ${mode === 'weights' ? 'one W is' : `${roles.length} at most are`} used: name them (“${ROLE_NAME[roles[0]]} = …”) so the page knows which is which`,
    );
  return out;
}

/** Whether the arrays' names give every role a mode needs. */
function namedFor(mode: Mode, list: NdArray[]): boolean {
  const names = list.map((a) => (a.name ?? '').toLowerCase().replace(/_/g, ''));
  return MODE_ROLES[mode].every((r) => names.some((n) => ALIASES[r].includes(n)));
}

/** The arrays as link values: float64 where the student had float64 and it fits in a link, else
 *  float32 (what the core computes in; exact for float32 data). */
export function encodeRoles(arrays: Partial<Record<ArrayRole, NdArray>>): ArraysState {
  const enc = (dtype: 'f4' | 'f8' | 'auto'): ArraysState => {
    const s: ArraysState = { ...NO_ARRAYS };
    for (const [r, a] of Object.entries(arrays) as [ArrayRole, NdArray][])
      s[r] = encodeArrayLink(a, { dtype: dtype === 'auto' ? (a.data instanceof Float64Array ? 'f8' : 'f4') : dtype });
    s.step = Math.max(0, ...Object.values(arrays).map((a) => a!.printStep));
    return s;
  };
  const wide = enc('auto');
  return arraysFitLink(wide) ? wide : enc('f4');
}

/** One line for the panel's summary (seen while it is closed, e.g. in a notebook's frame). */
export function summaryOf(info: NonNullable<AttentionResult['arrays']>, r: AttentionResult): string {
  const shape = `${r.heads > 1 ? `${r.heads} × ` : ''}${r.t} × ${r.t}`;
  const nan = r.nanRowsPerHead.reduce((a, b) => a + b, 0);
  const nanText = nan > 0 ? `; ${nan} NaN row${nan > 1 ? 's' : ''}` : '';
  if (info.mode !== 'weights')
    return `${info.mode === 'qkv' ? 'Q, K, V' : 'X, W_q, W_k, W_v'} → W ${shape}, computed by the core${nanText}${info.headline ? `; ${info.headline}` : ''}`;
  const sum = info.findings[0]?.startsWith('Every row');
  const rows =
    nan > 0
      ? `${nan} row${nan > 1 ? 's hold' : ' holds'} NaN (yours), the others ${sum ? 'sum to 1' : 'do not all sum to 1'}`
      : sum
        ? 'rows sum to 1'
        : 'rows do not all sum to 1';
  const causal = info.findings.some((f) => f.startsWith('Causal shape')) ? ', causal' : '';
  const c = info.compare;
  const cmp = c
    ? c.matches
      ? `; matches the playground to ${c.tolerance.toPrecision(2)}`
      : c.maxAbs <= c.tolerance
        ? '; differs from the playground only in NaN'
        : `; differs from the playground by ${c.maxAbs.toPrecision(2)}`
    : '';
  return `W ${shape}: ${rows}${causal}${cmp}`;
}
