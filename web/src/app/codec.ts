// The URL codec: State <-> location hash. Pure (no DOM, no globals), fully unit-tested.
//
// Format (version 1): `#v=1&key=value&...` with readable values, keys in a fixed order and
// only the fields that differ from the defaults. Tokens are written as `tokens=the+cat+sat`
// (each token percent-encoded, joined by '+'); a list whose plain form is longer than
// LIMITS.compressAbove characters is written as `tz=<lz-string, URI-safe>` instead.
// Decoding never throws: anything invalid, unknown or corrupt is corrected or dropped and
// reported in `notices`.
import LZString from 'lz-string';
import { defaultState, normalizeState, LIMITS, type State, type Scale, type Fill, type Source } from './state';

export const CODEC_VERSION = 1;

const KEYS = ['v', 'src', 'tokens', 'tz', 'sharp', 'seed', 'init', 'heads', 'kv', 'dm', 'dk', 'causal', 'win', 'pad', 'fill', 'scale', 'view', 'head', 'tstart', 'tend', 'tdm', 'tdk', 'th', 'tker', 'tcausal', 'tmode', 'tw', 'dseq', 'dkeep', 'dstep', 'dcache', 'dts', 'dte'] as const;
type Key = (typeof KEYS)[number];

export interface Decoded {
  state: State;
  /** Human-readable list of what was corrected or dropped. Empty for a clean link. */
  notices: string[];
}

function encodeTokenList(tokens: string[]): string {
  return tokens.map((t) => encodeURIComponent(t)).join('+');
}

function encodeScale(s: Scale): string {
  return typeof s === 'number' ? String(s) : s;
}

/** Encode a (valid) state as a hash string starting with '#'. */
export function encodeState(state: State): string {
  const d = defaultState();
  const parts: string[] = [`v=${CODEC_VERSION}`];
  const put = (k: Key, v: string) => parts.push(`${k}=${v}`);
  if (state.src !== d.src) put('src', state.src);
  if (state.tokens.join(' ') !== d.tokens.join(' ')) {
    const plain = encodeTokenList(state.tokens);
    if (plain.length > LIMITS.compressAbove) put('tz', LZString.compressToEncodedURIComponent(state.tokens.join(' ')));
    else put('tokens', plain);
  }
  if (state.sharp !== d.sharp) put('sharp', String(state.sharp));
  if (state.seed !== d.seed) put('seed', String(state.seed));
  if (state.init !== d.init) put('init', state.init);
  if (state.heads !== d.heads) put('heads', String(state.heads));
  if (state.kv !== d.kv) put('kv', String(state.kv));
  if (state.dm !== d.dm) put('dm', String(state.dm));
  if (state.dk !== d.dk) put('dk', String(state.dk));
  if (state.causal !== d.causal) put('causal', state.causal ? '1' : '0');
  if (state.win !== d.win) put('win', String(state.win));
  if (state.pad.length > 0) put('pad', state.pad.join(','));
  if (state.fill !== d.fill) put('fill', state.fill);
  if (state.scale !== d.scale) put('scale', encodeScale(state.scale));
  if (state.view !== d.view) put('view', encodeURIComponent(state.view));
  if (state.head !== d.head) put('head', String(state.head));
  if (state.tstart !== d.tstart) put('tstart', String(state.tstart));
  if (state.tend !== d.tend) put('tend', String(state.tend));
  if (state.tdm !== d.tdm) put('tdm', String(state.tdm));
  if (state.tdk !== d.tdk) put('tdk', String(state.tdk));
  if (state.th !== d.th) put('th', String(state.th));
  if (state.tker !== d.tker) put('tker', state.tker);
  if (state.tcausal !== d.tcausal) put('tcausal', state.tcausal ? '1' : '0');
  if (state.tmode !== d.tmode) put('tmode', state.tmode);
  if (state.tw !== d.tw) put('tw', String(state.tw));
  for (const k of ['dseq', 'dkeep', 'dstep', 'dts', 'dte'] as const) if (state[k] !== d[k]) put(k, String(state[k]));
  if (state.dcache !== d.dcache) put('dcache', state.dcache ? '1' : '0');
  return '#' + parts.join('&');
}

/** Shorten a value for a notice so a hostile link cannot flood the page. */
function show(v: string): string {
  const t = Array.from(v);
  return t.length > 40 ? t.slice(0, 40).join('') + '…' : v;
}

function decodeComponent(raw: string, plusIsSpace: boolean): string | null {
  try {
    return decodeURIComponent(plusIsSpace ? raw.replace(/\+/g, ' ') : raw);
  } catch {
    return null;
  }
}

/** Strict decimal number (no hex, no empty, no "Infinity"). */
function parseNumber(v: string): number {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v.trim())) return NaN;
  return Number(v);
}

/** Decode a hash (with or without the leading '#'). Never throws. */
export function decodeHash(hashIn: unknown): Decoded {
  const state = defaultState();
  const notices: string[] = [];
  let hash = typeof hashIn === 'string' ? hashIn : '';
  if (hash.startsWith('#')) hash = hash.slice(1);
  if (hash.trim() === '') return { state, notices };
  if (hash.length > LIMITS.maxHashLength) {
    notices.push(`the link's settings are ${hash.length.toLocaleString('en')} characters long (limit ${LIMITS.maxHashLength.toLocaleString('en')}); they were ignored`);
    return { state, notices };
  }

  const fields = new Map<string, string>();
  for (const part of hash.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    const rawVal = eq < 0 ? '' : part.slice(eq + 1);
    const key = decodeComponent(rawKey, true) ?? rawKey;
    if (!(KEYS as readonly string[]).includes(key)) {
      notices.push(`unknown setting “${show(key)}” was ignored`);
      continue;
    }
    if (fields.has(key)) {
      notices.push(`setting “${key}” appeared more than once; the first value was used`);
      continue;
    }
    fields.set(key, rawVal);
  }

  const version = fields.get('v');
  if (version === undefined) {
    if (fields.size > 0) notices.push(`the link has no version; read it as v=${CODEC_VERSION}`);
  } else if (version !== String(CODEC_VERSION)) {
    notices.push(`the link is version “${show(decodeComponent(version, true) ?? version)}”, which this page does not know; showing the defaults`);
    return { state, notices };
  }

  // Start from the defaults; each present field overrides with a parsed value (possibly
  // invalid, e.g. NaN), and normalizeState corrects and reports.
  const raw: State & Record<string, unknown> = { ...state };
  const text = (k: Key): string | null => {
    const r = fields.get(k);
    if (r === undefined) return null;
    const v = decodeComponent(r, true);
    if (v === null) {
      notices.push(`setting “${k}” is not valid percent-encoding; it was ignored`);
      return null;
    }
    return v;
  };
  const num = (k: Key, target: keyof State) => {
    const v = text(k);
    if (v === null) return;
    const x = parseNumber(v);
    if (Number.isNaN(x)) {
      notices.push(`${k}: “${show(v)}” is not a number; it was ignored`);
      return;
    }
    (raw as Record<string, unknown>)[target] = x;
  };

  const src = text('src');
  if (src !== null) {
    if (src === 'induction' || src === 'random') raw.src = src as Source;
    else notices.push(`src: “${show(src)}” is not a weights source; using ${state.src}`);
  }

  const tz = fields.get('tz');
  const tk = text('tokens');
  if (tz !== undefined) {
    let list: string | null = null;
    try {
      list = LZString.decompressFromEncodedURIComponent(tz);
    } catch {
      list = null;
    }
    if (typeof list !== 'string' || list.trim() === '') notices.push('tokens: the compressed token list is corrupt; using the lesson sentence');
    else raw.tokens = list.split(/\s+/u).filter((t) => t !== '');
    if (tk !== null) notices.push('tokens: both “tokens” and “tz” were given; “tokens” was ignored');
  } else if (tk !== null) {
    // '+' separates tokens; each token was percent-encoded.
    raw.tokens = fields
      .get('tokens')!
      .split('+')
      .map((t) => decodeComponent(t, false) ?? '')
      .filter((t) => t !== '');
  }

  num('sharp', 'sharp');
  num('seed', 'seed');
  num('heads', 'heads');
  num('kv', 'kv');
  num('dm', 'dm');
  num('dk', 'dk');
  num('win', 'win');
  num('head', 'head');
  num('tstart', 'tstart');
  num('tend', 'tend');
  num('tdm', 'tdm');
  num('tdk', 'tdk');
  num('th', 'th');
  num('tw', 'tw');
  for (const k of ['dseq', 'dkeep', 'dstep', 'dts', 'dte'] as const) num(k, k);
  const dcache = text('dcache');
  if (dcache !== null) {
    if (dcache === '1' || dcache === 'true') raw.dcache = true;
    else if (dcache === '0' || dcache === 'false') raw.dcache = false;
    else notices.push(`dcache: “${show(dcache)}” is not 0 or 1; it was ignored`);
  }

  const causal = text('causal');
  if (causal !== null) {
    if (causal === '1' || causal === 'true') raw.causal = true;
    else if (causal === '0' || causal === 'false') raw.causal = false;
    else notices.push(`causal: “${show(causal)}” is not 0 or 1; it was ignored`);
  }
  const pad = text('pad');
  if (pad !== null && pad.trim() !== '') {
    const items = pad.split(',');
    const parsed = items.map((p) => parseNumber(p));
    const bad = items.filter((_, i) => !Number.isInteger(parsed[i]));
    if (bad.length > 0) notices.push(`pad: ignored entries that are not positions: ${bad.slice(0, 5).map(show).join(', ')}${bad.length > 5 ? ', …' : ''}`);
    raw.pad = parsed.filter((p) => Number.isInteger(p));
  }
  const fill = text('fill');
  if (fill !== null) {
    if (fill === 'neg_inf' || fill === 'finite' || fill === 'zero') raw.fill = fill as Fill;
    else notices.push(`fill: “${show(fill)}” is not neg_inf, finite or zero; using neg_inf`);
  }
  const scale = text('scale');
  if (scale !== null) {
    if (scale === 'sqrt' || scale === 'none') raw.scale = scale;
    else {
      const x = parseNumber(scale);
      if (Number.isNaN(x)) notices.push(`scale: “${show(scale)}” is not sqrt, none or a number; using sqrt`);
      else raw.scale = x;
    }
  }
  const init = text('init');
  if (init !== null) (raw as Record<string, unknown>).init = init; // checked by normalizeState
  const view = text('view');
  if (view !== null) raw.view = view;
  // Timing lab: unknown words are kept here and corrected (with a notice) by normalizeState.
  const tker = text('tker');
  if (tker !== null) (raw as Record<string, unknown>).tker = tker;
  const tmode = text('tmode');
  if (tmode !== null) (raw as Record<string, unknown>).tmode = tmode;
  const tcausal = text('tcausal');
  if (tcausal !== null) {
    if (tcausal === '1' || tcausal === 'true') raw.tcausal = true;
    else if (tcausal === '0' || tcausal === 'false') raw.tcausal = false;
    else notices.push(`tcausal: “${show(tcausal)}” is not 0 or 1; it was ignored`);
  }

  const norm = normalizeState(raw);
  return { state: norm.state, notices: [...notices, ...norm.notices] };
}
