// The control panel. Emits patches; the page normalises them (with notices) and re-renders.
import { el, clear } from '../ui/dom';
import {
  FILLS,
  FILL_LABEL,
  MODEL_LIMITS as LIMITS,
  splitTokens,
  type ModelSlice as State,
  type ModelState,
} from './state';

/** What the controls emit: a change to the model sub-state. */
export type Patch = { model: Partial<ModelState> };

export interface Controls {
  root: HTMLElement;
  update(s: State): void;
}

let uid = 0;
const id = (p: string) => `${p}-${++uid}`;

function field(label: string, input: HTMLElement, hint?: string): HTMLElement {
  const inputId = input.id || (input.id = id('f'));
  return el(
    'div',
    { class: 'field' },
    el('label', { for: inputId, text: label }),
    input,
    hint ? el('span', { class: 'hint', text: hint }) : null,
  );
}

function group(section: string, title: string, ...children: HTMLElement[]): HTMLElement {
  return el('fieldset', { class: 'group', 'data-section': section }, el('legend', { text: title }), ...children);
}

export function createControls(emit: (p: Patch) => void): Controls {
  // Every control here edits the model sub-state.
  const onChange = (m: Partial<ModelState>) => emit({ model: m });
  // Tokens
  const tokens = el('textarea', {
    rows: 2,
    spellcheck: 'false',
    autocomplete: 'off',
    'data-testid': 'tokens',
    'aria-describedby': 'tok-hint',
  });
  const chips = el('div', { class: 'chips', role: 'group', 'aria-label': 'Tokens: press one to mark it as padding' });
  let chipKey = '';
  let shownTokens = '';
  // An empty box is a valid editing state (select all, delete, type a new sentence): it computes
  // nothing and says so, and the box is not refilled under the cursor.
  const emptyHint = el('p', {
    class: 'hint empty-hint',
    'data-testid': 'tokens-empty',
    role: 'status',
    text: 'The box is empty: type a sentence and the views update (the last result stays until then).',
    hidden: true,
  });
  let editingEmpty = false;
  tokens.addEventListener('input', () => {
    const list = splitTokens(tokens.value);
    editingEmpty = list.length === 0;
    emptyHint.hidden = !editingEmpty;
    if (!editingEmpty) onChange({ tokens: list });
  });

  // Keys and values from a second sentence (cross-attention); empty = self-attention. Committed
  // like the tokens box, except that an empty box is a valid state (the sentence attends to itself).
  const kvTokens = el('textarea', {
    rows: 2,
    spellcheck: 'false',
    autocomplete: 'off',
    'data-testid': 'kv-tokens',
  });
  kvTokens.addEventListener('input', () => onChange({ kvTokens: splitTokens(kvTokens.value) }));

  // Model
  const src = el(
    'select',
    { 'data-testid': 'source' },
    el('option', { value: 'induction', text: 'Lesson 1 hand-built (2 heads)' }),
    el('option', { value: 'random', text: 'Random, seeded' }),
  );
  const init = el(
    'select',
    { 'data-testid': 'init' },
    el('option', { value: 'normal', text: 'N(0, 1), lesson 2' }),
    el('option', { value: 'scaled', text: 'N(0, 1/d_model)' }),
  );
  init.addEventListener('change', () => onChange({ init: init.value as State['model']['init'] }));
  // The random numbers: the core's SplitMix64 stream, or NumPy's default_rng(seed) (lesson 2's X and W bit for bit).
  const gen = el(
    'select',
    {
      'data-testid': 'generator',
      title: 'NumPy: numpy.random.default_rng(seed).normal, in the order X, W_q, W_k, W_v, W_o',
    },
    el('option', { value: 'splitmix', text: 'SplitMix64' }),
    el('option', { value: 'numpy', text: 'NumPy' }),
  );
  gen.addEventListener('change', () => onChange({ generator: gen.value as State['model']['generator'] }));
  src.addEventListener('change', () => onChange({ source: src.value as State['model']['source'] }));
  // The other models have tabs of their own: the one trained on real English (Text, with these
  // words as its text) and the one trained here (Train). Links, so the shell decodes them.
  const textLink = el('a', { class: 'small', 'data-testid': 'source-text-link', href: '#v=1&view=text' });
  textLink.textContent = 'the model trained on real English (Text tab)';
  const trainLink = el('a', { class: 'small', href: '#v=1&view=train', text: 'the one you train (Train tab)' });
  const otherModels = el('p', { class: 'hint' }, 'Also: ', textLink, ' or ', trainLink, '.');
  const seed = el('input', {
    type: 'number',
    min: 0,
    max: LIMITS.maxSeed,
    step: 1,
    inputmode: 'numeric',
    'data-testid': 'seed',
  });
  const sharp = el('input', { type: 'range', min: 0, max: LIMITS.maxSharp, step: 0.5 });
  const sharpOut = el('output', { class: 'val' });
  const heads = el('input', { type: 'range', min: 1, max: LIMITS.maxHeads, step: 1, 'data-testid': 'heads' });
  const headsOut = el('output', { class: 'val' });
  const kv = el('select', { 'data-testid': 'kv' });
  const dm = el('input', { type: 'number', min: 1, max: LIMITS.maxDModel, step: 1, inputmode: 'numeric' });
  const dk = el('input', { type: 'number', min: 1, max: LIMITS.maxDk, step: 1, inputmode: 'numeric' });
  const num = (inp: HTMLInputElement, key: 'seed' | 'dModel' | 'dK') =>
    inp.addEventListener('change', () => onChange({ [key]: inp.value.trim() === '' ? NaN : Number(inp.value) }));
  num(seed, 'seed');
  num(dm, 'dModel');
  num(dk, 'dK');
  sharp.addEventListener('input', () => onChange({ sharpness: Number(sharp.value) }));
  heads.addEventListener('input', () => onChange({ heads: Number(heads.value), kvHeads: Number(heads.value) }));
  kv.addEventListener('change', () => onChange({ kvHeads: Number(kv.value) }));
  const randomOnly = [seed, gen, init, heads, kv, dm, dk];

  // Mask
  const causal = el('input', { type: 'checkbox', 'data-testid': 'causal' });
  causal.addEventListener('change', () => onChange({ causal: causal.checked }));
  const win = el('input', { type: 'range', min: 0, max: 11, step: 1, 'data-testid': 'window' });
  const winOut = el('output', { class: 'val' });
  win.addEventListener('input', () => onChange({ window: Number(win.value) }));
  const fillName = id('fill');
  const fills = FILLS.map((f) => {
    const r = el('input', { type: 'radio', name: fillName, value: f, id: id('fill') });
    r.addEventListener('change', () => r.checked && onChange({ fill: f }));
    return r;
  });
  const crossNote = el('p', {
    class: 'hint',
    'data-testid': 'cross-mask-note',
    hidden: true,
    text: 'Cross-attention: the keys are another sentence, so no key comes after a query; the causal mask (and the window) belong to a sequence attending to itself.',
  });
  const clearPad = el('button', { type: 'button', class: 'link-btn', text: 'clear padding' });
  clearPad.addEventListener('click', () => onChange({ padding: [] }));

  // Scale
  const scaleName = id('scale');
  const scaleModes = (['sqrt', 'none', 'custom'] as const).map((m) => {
    const r = el('input', { type: 'radio', name: scaleName, value: m, id: id('sc') });
    return r;
  });
  const custom = el('input', {
    type: 'number',
    min: LIMITS.minScale,
    max: LIMITS.maxScale,
    step: 'any',
    inputmode: 'decimal',
    'aria-label': 'custom scale',
  });
  scaleModes.forEach((r) =>
    r.addEventListener('change', () => {
      if (!r.checked) return;
      if (r.value === 'custom') onChange({ scale: custom.value === '' ? 0.5 : Number(custom.value) });
      else onChange({ scale: r.value as 'sqrt' | 'none' });
    }),
  );
  custom.addEventListener('change', () => onChange({ scale: custom.value.trim() === '' ? NaN : Number(custom.value) }));

  const radio = (r: HTMLInputElement, label: string) =>
    el('label', { class: 'radio', for: r.id }, r, el('span', { text: label }));
  const inline = (label: string, input: HTMLElement, out?: HTMLElement) => {
    const inputId = input.id || (input.id = id('f'));
    return el('div', { class: 'field inline' }, el('label', { for: inputId, text: label }), input, out ?? null);
  };

  const sharpRow = inline('Sharpness', sharp, sharpOut);
  const root = el(
    'div',
    { class: 'controls-inner' },
    group(
      'tokens',
      'Tokens',
      field('Sequence (space-separated)', tokens),
      emptyHint,
      field(
        'Keys and values from a second sentence (cross-attention; empty: the sentence attends to itself)',
        kvTokens,
      ),
      el('p', {
        class: 'hint',
        id: 'tok-hint',
        text: `Up to ${LIMITS.maxT} tokens. Press a token below to mark it as padding.`,
      }),
      chips,
      el('div', { class: 'chip-actions' }, clearPad),
    ),
    group(
      'model',
      'Model',
      field('Weights', src),
      otherModels,
      sharpRow,
      inline('Seed', seed),
      inline('Generator', gen),
      inline('Weights init', init),
      inline('Heads', heads, headsOut),
      inline('K/V heads', kv),
      inline('d_model', dm),
      inline('d_k', dk),
    ),
    group(
      'mask',
      'Mask',
      el('label', { class: 'check' }, causal, el('span', { text: 'Causal (query i sees keys ≤ i)' })),
      crossNote,
      inline('Sliding window', win, winOut),
      el(
        'div',
        { class: 'radios', role: 'radiogroup', 'aria-label': 'Fill for forbidden scores' },
        el('span', { class: 'radios-title', text: 'Fill for forbidden scores' }),
        ...fills.map((r) => radio(r, FILL_LABEL[r.value as State['model']['fill']])),
      ),
    ),
    group(
      'scale',
      'Scale',
      el(
        'div',
        { class: 'radios', role: 'radiogroup', 'aria-label': 'Score scale' },
        radio(scaleModes[0], '1/√d_k (standard)'),
        radio(scaleModes[1], 'none (delete the √d_k)'),
        el('div', { class: 'custom-row' }, radio(scaleModes[2], 'custom'), custom),
      ),
    ),
  );

  function update(s: State): void {
    const text = s.model.tokens.join(' ');
    // While the user holds the box empty, only a change of the tokens from elsewhere (a preset, a
    // link) fills it again.
    if (editingEmpty && text === shownTokens) {
      /* keep the empty box */
    } else if (document.activeElement !== tokens && splitTokens(tokens.value).join(' ') !== text) tokens.value = text;
    else if (
      document.activeElement === tokens &&
      splitTokens(tokens.value).join(' ') !== text &&
      !tokens.value.endsWith(' ')
    )
      tokens.value = text;
    if (text !== shownTokens) {
      editingEmpty = splitTokens(tokens.value).length === 0;
      emptyHint.hidden = !editingEmpty;
    }
    shownTokens = text;
    const kvText = s.model.kvTokens.join(' ');
    if (document.activeElement !== kvTokens && splitTokens(kvTokens.value).join(' ') !== kvText)
      kvTokens.value = kvText;
    else if (
      document.activeElement === kvTokens &&
      splitTokens(kvTokens.value).join(' ') !== kvText &&
      !kvTokens.value.endsWith(' ')
    )
      kvTokens.value = kvText;
    // Padding marks keys: in cross-attention the chips are the second sentence's tokens.
    const cross = s.model.kvTokens.length > 0;
    // The hand-built weights of cross-attention are the alignment model (built like lesson 1's).
    src.options[0].text = cross ? 'Hand-built alignment (2 heads: meaning, position)' : 'Lesson 1 hand-built (2 heads)';
    const keyTokens = cross ? s.model.kvTokens : s.model.tokens;
    const key = keyTokens.join(' ') + '|' + s.model.padding.join(',');
    if (key !== chipKey) {
      chipKey = key;
      const focusedIdx = chips.contains(document.activeElement)
        ? Number((document.activeElement as HTMLElement).dataset.pos)
        : -1;
      clear(chips);
      keyTokens.forEach((t, i) => {
        const padded = s.model.padding.includes(i);
        const b = el(
          'button',
          {
            type: 'button',
            class: 'chip' + (padded ? ' padded' : ''),
            'aria-pressed': padded ? 'true' : 'false',
            'data-pos': i,
            title: padded ? 'padding — press to make it a real token' : 'press to mark as padding',
          },
          el('span', { class: 'chip-pos', text: String(i) }),
          el('span', { class: 'chip-tok', text: t }),
        );
        b.setAttribute('aria-label', `${t} (${i})${padded ? ', padding' : ''}`);
        b.addEventListener('click', () => {
          const set = new Set(s.model.padding);
          if (set.has(i)) set.delete(i);
          else set.add(i);
          onChange({ padding: [...set] });
        });
        chips.append(b);
        if (i === focusedIdx) queueMicrotask(() => b.focus());
      });
    }
    clearPad.hidden = s.model.padding.length === 0;
    src.value = s.model.source;
    textLink.href = `#v=1&view=text&text=${encodeURIComponent(s.model.tokens.join(' '))}`;
    const rnd = s.model.source === 'random';
    for (const c of randomOnly) (c as HTMLInputElement).disabled = !rnd;
    sharp.disabled = rnd;
    sharpRow.hidden = rnd;
    for (const c of randomOnly) c.closest('.field')!.toggleAttribute('hidden', !rnd);
    if (document.activeElement !== seed) seed.value = String(s.model.seed);
    init.value = s.model.init;
    gen.value = s.model.generator;
    sharp.value = String(s.model.sharpness);
    sharpOut.textContent = String(s.model.sharpness);
    heads.value = String(s.model.heads);
    headsOut.textContent = String(s.model.heads);
    clear(kv);
    for (let k = 1; k <= s.model.heads; k++) {
      if (s.model.heads % k !== 0) continue;
      const label = k === s.model.heads ? `${k} (MHA)` : k === 1 ? '1 (MQA)' : `${k} (GQA)`;
      kv.append(el('option', { value: k, text: label }));
    }
    kv.value = String(s.model.kvHeads);
    if (document.activeElement !== dm) dm.value = String(s.model.dModel);
    if (document.activeElement !== dk) dk.value = String(s.model.dK);
    causal.checked = s.model.causal;
    // The user's causal and window settings are kept; cross-attention does not apply them.
    causal.disabled = cross;
    win.disabled = cross;
    crossNote.hidden = !cross;
    win.max = String(s.model.tokens.length);
    win.value = String(s.model.window);
    winOut.textContent = s.model.window === 0 ? 'off' : String(s.model.window);
    fills.forEach((r) => (r.checked = r.value === s.model.fill));
    const mode = typeof s.model.scale === 'number' ? 'custom' : s.model.scale;
    scaleModes.forEach((r) => (r.checked = r.value === mode));
    custom.disabled = mode !== 'custom';
    if (typeof s.model.scale === 'number' && document.activeElement !== custom) custom.value = String(s.model.scale);
  }

  return { root, update };
}
