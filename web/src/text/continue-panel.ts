// "Continue the text": the model writes on from the student's text (tr.generate in the tab's
// Worker), greedy or sampled with temperature, top-k, top-p and a seed. The settings are link keys
// (state.ts: dlen, temp, topk, topp, sseed; tgen = generate on opening), so a link gives the same
// continuation every time. The generated characters follow the prompt, marked; each shows its 5
// most probable candidates (after top-k / top-p) on focus or hover.
import { clear, el, fmt } from '../ui/dom';
import type { TextSession } from './session';
import type { TextState } from './state';
import { showChar } from './tokenizer';

export interface ContinueActions {
  update(p: Partial<TextState>): void;
}

type NumKey = 'dlen' | 'temp' | 'topk' | 'topp' | 'sseed';

export class ContinuePanel {
  readonly root: HTMLElement;
  private readonly inputs = {} as Record<NumKey, HTMLInputElement>;
  private readonly greedy: HTMLInputElement;
  private readonly sampled: HTMLInputElement;
  private readonly sampling = el('div', { class: 'tx-gen-sampling' });
  private readonly info = el('p', { class: 'tx-gen-info muted', 'data-testid': 'text-gen-info' });
  private readonly out = el('p', { class: 'tx-gen-out', 'data-testid': 'text-gen-out', hidden: true });
  private readonly bars = el('div', { class: 'tx-gen-bars', 'aria-live': 'polite', 'data-testid': 'text-gen-bars' });
  private drawn: unknown = null;

  constructor(
    private readonly s: TextSession,
    private readonly act: ContinueActions,
  ) {
    const num = (key: NumKey, label: string, attrs: Record<string, string | number>) => {
      const input = el('input', { type: 'number', id: `text-gen-${key}`, 'data-testid': `text-gen-${key}`, ...attrs });
      input.addEventListener('change', () => {
        const v = Number(input.value);
        if (input.value.trim() !== '' && Number.isFinite(v)) this.act.update({ [key]: v });
      });
      this.inputs[key] = input;
      return el('label', { class: 'tx-gen-field' }, `${label} `, input);
    };
    const radio = (value: string, text: string) => {
      const r = el('input', { type: 'radio', name: 'text-gen-mode', value, 'data-testid': `text-gen-${value}` });
      r.addEventListener('change', () => {
        if (!r.checked) return;
        const t = Number(this.inputs.temp.value);
        this.act.update({ temp: value === 'greedy' ? 0 : t > 0 ? t : 1 });
      });
      return { r, label: el('label', {}, r, ` ${text}`) };
    };
    const g = radio('greedy', 'greedy (the most probable)');
    const sm = radio('sampled', 'sampled');
    this.greedy = g.r;
    this.sampled = sm.r;
    this.sampling.append(
      num('temp', 'temperature', { min: 0.05, max: 10, step: 0.05 }),
      num('topk', 'top-k (0 = off)', { min: 0, max: 65536, step: 1 }),
      num('topp', 'top-p (1 = off)', { min: 0.01, max: 1, step: 0.01 }),
      num('sseed', 'seed', { min: 0, max: 4294967295, step: 1 }),
    );
    const go = el('button', { type: 'button', class: 'btn small', 'data-testid': 'text-generate', text: 'Generate' });
    go.addEventListener('click', () => this.act.update({ tgen: true }));
    this.root = el(
      'section',
      { class: 'tx-panel tx-gen', 'aria-label': 'Continue the text', 'data-testid': 'text-continue' },
      el('h4', { class: 'tx-label', text: 'Continue the text' }),
      el(
        'div',
        { class: 'tx-gen-controls' },
        num('dlen', 'tokens', { min: 1, step: 1 }),
        el('fieldset', { class: 'tx-gen-mode' }, el('legend', { text: 'Pick' }), g.label, sm.label),
        this.sampling,
        go,
      ),
      this.info,
      this.out,
      this.bars,
    );
  }

  /** Controls from the link's state; the continuation from the session's result. */
  draw(st: TextState): void {
    for (const k of ['dlen', 'temp', 'topk', 'topp', 'sseed'] as NumKey[]) {
      if (document.activeElement !== this.inputs[k]) this.inputs[k].value = String(st[k]);
    }
    const sampled = st.temp > 0;
    this.greedy.checked = !sampled;
    this.sampled.checked = sampled;
    this.sampling.hidden = !sampled;
    const seqLen = this.s.info?.config.seqLen;
    const w = this.s.words;
    if (seqLen) this.inputs.dlen.max = String(seqLen - 1);
    const c = this.s.result?.continuation ?? null;
    if (!st.tgen || !c) {
      this.out.hidden = true;
      this.info.textContent = st.tgen
        ? this.s.settled
          ? 'Nothing to continue: type some text.'
          : 'Generating…'
        : `Press Generate: the model continues your text, one ${w.one} at a time.`;
      if (!st.tgen) clear(this.bars);
      this.drawn = null;
      return;
    }
    if (c === this.drawn) return;
    this.drawn = c;
    const notes: string[] = [];
    if (c.promptCut > 0)
      notes.push(
        `The model sees at most ${seqLen} ${w.many}, so it continues the last ${c.prompt.length} of your text (1 is left to write).`,
      );
    if (c.capped)
      notes.push(`Only ${c.chars.length} more fit in its ${seqLen} ${w.many}; asked for ${c.request.dlen}.`);
    const how =
      c.request.temp > 0
        ? `sampled at temperature ${c.request.temp}${c.request.topk ? `, top-k ${c.request.topk}` : ''}${c.request.topp < 1 ? `, top-p ${c.request.topp}` : ''}, seed ${c.request.sseed}`
        : 'greedy';
    this.info.textContent = `${c.chars.length} ${w.many}, ${how}. ${notes.join(' ')}`.trim();
    clear(this.out);
    this.out.hidden = false;
    this.out.append(el('span', { class: 'tx-gen-prompt', text: c.prompt.join('') }));
    const gen = el('span', { class: 'tx-gen-new', 'data-testid': 'text-generated', 'data-text': c.chars.join('') });
    c.chars.forEach((ch, i) => {
      const cell = el('span', {
        class: 'tx-gen-char',
        tabindex: 0,
        'aria-label': `generated ${w.one} ${i + 1}: ${showChar(ch)}`,
        text: ch,
      });
      const show = () => this.showBars(i);
      cell.addEventListener('focus', show);
      cell.addEventListener('mouseenter', show);
      gen.append(cell);
    });
    this.out.append(gen);
    this.showBars(c.chars.length - 1);
  }

  private showBars(i: number): void {
    const c = this.s.result?.continuation;
    const one = this.s.words.one;
    const One = one[0].toUpperCase() + one.slice(1);
    clear(this.bars);
    if (!c || i < 0 || i >= c.top.length) return;
    this.bars.append(
      el('p', {
        class: 'muted',
        text:
          c.request.temp > 0
            ? `${One} ${i + 1} (“${showChar(c.chars[i])}”) was drawn from (after top-k / top-p):`
            : `${One} ${i + 1} (“${showChar(c.chars[i])}”): the most probable of the model’s top 5:`,
      }),
      el(
        'ul',
        { class: 'tx-top' },
        ...c.top[i].map((t) => {
          const bar = el('span', { class: 'tx-bar' });
          bar.style.width = `${(t.p * 100).toFixed(1)}%`; // CSSOM: the page's CSP refuses style attributes
          return el(
            'li',
            { class: `tx-gen-bar${t.id === c.ids[i] ? ' tx-actual' : ''}` },
            el('span', { class: 'tx-top-ch', text: showChar(t.token) }),
            el('span', { class: 'tx-bar-box' }, bar),
            el('span', { class: 'tx-top-p', text: fmt(t.p, 3) }),
          );
        }),
      ),
    );
  }
}
