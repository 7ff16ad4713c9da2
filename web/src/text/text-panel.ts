// The Text model tab's text: the input, the characters as the model sees them (one cell per
// token; the unknown token marked), each cell's surprise (−log p of that character given the ones
// before it) as a colour under it, and for the character focused or hovered the model's 5 most
// probable next characters. The cells take the keyboard as one stop (arrow keys move).
import { clear, el, fmt, syncInput, commitInput } from '../ui/dom';
import { VIRIDIS_LUT, lutIndex } from '../ui/colormap';
import type { TextSession } from './session';
import { showChar } from './tokenizer';
import { meanSurprise } from './next';

export interface TextActions {
  setText(text: string): void;
}

const rgb = (i: number) => `rgb(${VIRIDIS_LUT[i * 3]}, ${VIRIDIS_LUT[i * 3 + 1]}, ${VIRIDIS_LUT[i * 3 + 2]})`;

export class TextPanel {
  readonly root: HTMLElement;
  readonly input: HTMLTextAreaElement;
  private readonly strip = el('div', {
    class: 'tx-strip',
    role: 'group',
    'aria-label': 'The characters as the model reads them; arrow keys move, each shows what the model predicts next',
    'data-testid': 'text-tokens',
  });
  private readonly cut = el('p', { class: 'tx-cut', 'data-testid': 'text-cut', hidden: true });
  private readonly scale = el('p', { class: 'tx-scale muted' });
  private readonly next = el('div', { class: 'tx-next', 'aria-live': 'polite', 'data-testid': 'text-next' });
  private readonly ablation = el('p', { class: 'tx-ablation', 'data-testid': 'text-ablation', hidden: true });
  private cells: HTMLButtonElement[] = [];
  /** The character whose next-character prediction is shown (default: the last). */
  private pos = -1;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly s: TextSession,
    private readonly act: TextActions,
  ) {
    this.input = el('textarea', {
      class: 'tx-input',
      rows: 3,
      spellcheck: 'false',
      'data-testid': 'text-input',
      'aria-describedby': 'text-input-help',
    });
    // The link and the forward follow the typing after a short pause (every key would rewrite
    // the link and rerun the model).
    this.input.addEventListener('input', () => {
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => this.commit(), 250);
    });
    this.input.addEventListener('change', () => this.commit());
    this.strip.addEventListener('keydown', (e) => this.onKey(e));
    this.root = el(
      'section',
      { class: 'tx-panel tx-text', 'aria-label': 'Your text' },
      el('label', { class: 'tx-label', for: 'text-input', text: 'Your text' }),
      this.input,
      el('p', {
        id: 'text-input-help',
        class: 'muted tx-help',
        text: 'The model reads your text as tokens (one cell each). Characters the model never saw in training become the unknown token (marked).',
      }),
      this.cut,
      this.strip,
      this.scale,
      this.ablation,
      this.next,
    );
    this.input.id = 'text-input';
  }

  private commit(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    commitInput(this.input as unknown as HTMLInputElement);
    this.act.setText(this.input.value);
  }

  /** The state's text in the input (not while the student is typing). */
  setText(text: string): void {
    syncInput(this.input as unknown as HTMLInputElement, text);
  }

  draw(): void {
    const r = this.s.result;
    const info = this.s.info;
    const w = this.s.words;
    const hadFocus = this.strip.contains(document.activeElement);
    clear(this.strip);
    this.cells = [];
    if (!r || !info) {
      this.next.textContent = info ? `Type some text: the model reads it one ${w.one} at a time.` : '';
      this.cut.hidden = true;
      this.ablation.hidden = true;
      return;
    }
    const t = r.tokens.ids.length;
    const lnV = Math.log(info.config.vocab);
    this.cut.hidden = r.dropped === 0;
    this.cut.textContent = `The model reads at most ${info.config.seqLen} ${w.many}: the first ${r.dropped.toLocaleString('en')} of your text's ${w.many} are not shown or read.`;
    if (this.pos >= t || this.pos < 0) this.pos = t - 1;
    for (let i = 0; i < t; i++) {
      const ch = r.tokens.chars[i];
      const unk = r.tokens.unknown[i];
      const sur = i > 0 ? -r.logprobs[i - 1] : NaN;
      const b = el(
        'button',
        {
          type: 'button',
          class: 'tx-tok' + (unk ? ' tx-unknown' : ''),
          tabindex: i === this.pos ? 0 : -1,
          'data-i': i,
        },
        el('span', { class: 'tx-ch', text: unk ? '⁇' : showChar(ch) }),
        el('span', { class: 'tx-sur' }),
      );
      const bar = b.lastElementChild as HTMLElement;
      if (i > 0) bar.style.background = rgb(lutIndex(Math.min(sur, lnV), 0, lnV));
      else bar.classList.add('tx-sur-none');
      const what = unk ? `‘${ch}’ (not in the table: the unknown token)` : `‘${showChar(ch)}’`;
      b.setAttribute(
        'aria-label',
        `${what} at ${i}${i > 0 ? `, surprise ${fmt(sur, 2)} nats` : ', the first: nothing predicts it'}`,
      );
      b.title = i > 0 ? `surprise −log p = ${fmt(sur, 2)} nats` : `the first ${w.one}: nothing predicts it`;
      b.addEventListener('focus', () => this.show(i));
      b.addEventListener('mouseenter', () => this.show(i));
      this.cells.push(b);
      this.strip.append(b);
    }
    const mean = meanSurprise(r.logprobs);
    this.scale.textContent =
      t > 1
        ? `Colour under each ${w.one}: its surprise −log p (nats) given the ${w.many} before it, from 0 (dark: certain) to ln ${info.config.vocab} = ${fmt(lnV, 2)} (yellow: no better than a uniform guess, or worse). Mean over the ${t - 1} predicted ${w.many}: ${fmt(mean, 3)} nats.`
        : `One ${w.one}: nothing to predict yet.`;
    this.drawAblation();
    this.show(this.pos, false);
    if (hadFocus) this.cells[this.pos]?.focus();
  }

  private drawAblation(): void {
    const r = this.s.result!;
    const il = r.intactLogprobs;
    this.ablation.hidden = !il;
    if (!il) return;
    const names = r.ablated.map(([l, h]) => `L${l + 1} H${h + 1}`).join(', ');
    const a = meanSurprise(r.logprobs);
    const b = meanSurprise(il);
    const d = a - b;
    const them = r.ablated.length === 1 ? 'it' : 'them';
    const signed = (x: number) => `${x >= 0 ? '+' : '−'}${fmt(Math.abs(x), 3)}`;
    const m = r.measures;
    const measured = m
      ? ` On the trainer's ${m.windows} held-out windows (addresses it never trained on): held-out loss ${fmt(m.intact.heldOutLoss, 3)} ${this.s.words.nats} intact, ${fmt(m.ablated.heldOutLoss, 3)} with ${them} knocked out (${signed(m.ablated.heldOutLoss - m.intact.heldOutLoss)}). On the probe (${m.probeRows} random sequences, each repeated): in-context score ${fmt(m.intact.inContext, 3)} intact, ${fmt(m.ablated.inContext, 3)} knocked out (${signed(m.ablated.inContext - m.intact.inContext)}; negative = the repeat is predicted from context).`
      : ' (This model file has no held-out windows or probe to measure the knock-out on.)';
    this.ablation.textContent =
      `Knocked out: ${names}. On your text: mean surprise ${fmt(b, 3)} nats intact, ${fmt(a, 3)} with ${them} knocked out (${signed(d)}); the colours above are the knocked-out model's.` +
      measured;
    this.ablation.dataset.heldOut = m ? String(m.ablated.heldOutLoss - m.intact.heldOutLoss) : '';
  }

  /** The 5 most probable next tokens after position i. */
  private show(i: number, move = true): void {
    const r = this.s.result;
    const info = this.s.info;
    if (!r || !info || i < 0 || i >= r.tokens.ids.length) return;
    this.pos = i;
    if (move) for (const c of this.cells) c.tabIndex = Number(c.dataset.i) === i ? 0 : -1;
    for (const c of this.cells) c.classList.toggle('tx-at', Number(c.dataset.i) === i);
    clear(this.next);
    const top = this.s.next(i, 5);
    const after = r.tokens.chars
      .slice(Math.max(0, i - 11), i + 1)
      .map(showChar)
      .join('');
    const actual = i + 1 < r.tokens.ids.length ? r.tokens.ids[i + 1] : null;
    this.next.append(
      el('p', {
        class: 'tx-next-head',
        text: `After “${i > 11 ? '…' : ''}${after}” (${this.s.words.one} ${i}), checkpoint step ${r.checkpoint.step.toLocaleString('en')}${r.ablated.length ? ' with heads knocked out' : ''} predicts:`,
      }),
    );
    const list = el('ol', { class: 'tx-top', 'data-testid': 'text-top5', 'data-pos': i });
    for (const n of top) {
      const bar = el('span', { class: 'tx-bar' });
      bar.style.width = `${Math.max(1, Math.round(n.p * 100))}%`;
      list.append(
        el(
          'li',
          { class: n.id === actual ? 'tx-actual' : '' },
          el('span', { class: 'tx-top-ch', text: showChar(n.token) }),
          el('span', { class: 'tx-bar-box' }, bar),
          el('span', { class: 'tx-top-p', text: `${(n.p * 100).toFixed(1)} %` }),
        ),
      );
    }
    this.next.append(list);
    if (actual !== null) {
      const lp = r.logprobs[i];
      const ch = r.tokens.chars[i + 1];
      this.next.append(
        el('p', {
          class: 'muted',
          text: `The text goes on with ‘${showChar(ch)}’${r.tokens.unknown[i + 1] ? ' (the unknown token)' : ''}: p = ${(Math.exp(lp) * 100).toFixed(1)} %, surprise ${fmt(-lp, 2)} nats${top.some((n) => n.id === actual) ? ' (in the list, marked)' : ' (not in the top 5)'}.`,
        }),
      );
    } else
      this.next.append(
        el('p', {
          class: 'muted',
          text: `This is the last ${this.s.words.one}: the list is what the model would write next.`,
        }),
      );
  }

  private onKey(e: KeyboardEvent): void {
    const d =
      e.key === 'ArrowRight' || e.key === 'ArrowDown'
        ? 1
        : e.key === 'ArrowLeft' || e.key === 'ArrowUp'
          ? -1
          : e.key === 'Home'
            ? -Infinity
            : e.key === 'End'
              ? Infinity
              : 0;
    if (!d || this.cells.length === 0) return;
    e.preventDefault();
    const i = Math.max(
      0,
      Math.min(this.cells.length - 1, d === Infinity ? this.cells.length - 1 : d === -Infinity ? 0 : this.pos + d),
    );
    this.cells[i].focus();
  }
}
