// The computation as code lines, in NumPy-like notation written for this page: which lines a
// state shows, their text, the control each carries and the picture each produces. Pure data
// from the state (no DOM); the view draws it.
import { STANDARD, type VariantState } from '../shared/variant';

export type LineId =
  'dtype' | 'proj' | 'qknorm' | 'rope' | 'scores' | 'alibi' | 'mask' | 'shift' | 'norm' | 'after' | 'out';
/** Which picture a line produces (hovering it highlights that picture). */
export type Picture = 'scores' | 'weights' | 'output' | null;
/** The control a line carries (the state field it sets). */
export type Control = 'precision' | 'qkNorm' | 'position' | 'scale' | 'maskMode' | 'maxShift' | 'normalizer' | null;

export interface CodeLine {
  id: LineId;
  code: string;
  /** What the line does, for screen readers and the line's tooltip. */
  label: string;
  control: Control;
  picture: Picture;
  /** Shown greyed: the line has no effect in this state (linear's scale). */
  inactive: boolean;
  /** Differs from the standard computation's line. */
  changed: boolean;
}

export interface LineContext {
  variant: VariantState;
  scale: 'sqrt' | 'none' | number;
  fill: 'neg_inf' | 'finite' | 'zero';
}

const FILL_CODE = { neg_inf: '-inf', finite: '-1e9', zero: '-inf  # row of zeros if all masked' } as const;

function normLine(v: VariantState): string {
  switch (v.normalizer) {
    case 'softmax':
      return 'W = exp(S) / exp(S).sum(-1, keepdims=True)';
    case 'softmax1':
      return 'W = exp(S) / (exp(-m) + exp(S).sum(-1, keepdims=True))';
    case 'sigmoid':
      return `W = 1 / (1 + exp(-(S ${v.sigmoidBias === 'auto' ? '- log(T)' : v.sigmoidBias < 0 ? `- ${-v.sigmoidBias}` : `+ ${v.sigmoidBias}`})))`;
    case 'relu':
      return 'W = maximum(S, 0) / T';
    case 'linear':
      return 'W = S / (S.sum(-1, keepdims=True) + 1e-6)';
  }
}

export function codeLines(c: LineContext, standard: LineContext): CodeLine[] {
  const v = c.variant;
  const linear = v.normalizer === 'linear';
  const scaleText = c.scale === 'sqrt' ? '/ sqrt(d_k)' : c.scale === 'none' ? '* 1' : `* ${c.scale}`;
  const softmaxLike = v.normalizer === 'softmax' || v.normalizer === 'softmax1';
  const all: CodeLine[] = [
    {
      id: 'dtype',
      code: `X = X.astype(${v.precision})`,
      label: 'precision of every step',
      control: 'precision',
      picture: null,
      inactive: false,
      changed: false,
    },
    {
      id: 'proj',
      code: 'Q, K, V = X @ W_q, X @ W_k, X @ W_v',
      label: 'projections',
      control: null,
      picture: null,
      inactive: false,
      changed: false,
    },
    {
      id: 'qknorm',
      code: v.qkNorm ? 'Q, K = Q / norm(Q, axis=-1), K / norm(K, axis=-1)' : '# no qk-norm',
      label: 'qk-norm: unit-length queries and keys',
      control: 'qkNorm',
      picture: null,
      inactive: !v.qkNorm,
      changed: false,
    },
    {
      id: 'rope',
      code: v.position === 'rope' ? 'Q, K = rope(Q, pos_q), rope(K, pos_k)' : '# no rotary positions (RoPE)',
      label: 'position encoding',
      control: 'position',
      picture: null,
      inactive: v.position !== 'rope',
      changed: false,
    },
    {
      id: 'scores',
      code: linear ? 'S = phi(Q) @ phi(K).T  # phi = elu + 1, no scale' : `S = (Q @ K.T) ${scaleText}`,
      label: 'scores and scale',
      control: 'scale',
      picture: 'scores',
      inactive: false,
      changed: false,
    },
    {
      id: 'alibi',
      code: v.position === 'alibi' ? 'S = S - m_h * abs(i - j)' : '# no ALiBi bias',
      label: 'ALiBi distance penalty',
      control: null,
      picture: 'scores',
      inactive: v.position !== 'alibi',
      changed: false,
    },
    {
      id: 'mask',
      code:
        v.maskMode === 'before'
          ? `S = where(allowed, S, ${softmaxLike ? FILL_CODE[c.fill] : '(weight 0)'})`
          : '# mask: applied after the normalizer',
      label: 'the mask',
      control: 'maskMode',
      picture: 'scores',
      inactive: false,
      changed: false,
    },
    {
      id: 'shift',
      code: !softmaxLike
        ? '# no max shift (nothing to overflow)'
        : v.maxShift
          ? v.normalizer === 'softmax1'
            ? 'm = maximum(S.max(-1, keepdims=True), 0); S = S - m'
            : 'S = S - S.max(-1, keepdims=True)'
          : '# max shift off: exp(S) as it is',
      label: 'the max shift',
      control: softmaxLike ? 'maxShift' : null,
      picture: 'weights',
      inactive: !softmaxLike || !v.maxShift,
      changed: false,
    },
    {
      id: 'norm',
      code: normLine(v),
      label: 'the normalizer',
      control: 'normalizer',
      picture: 'weights',
      inactive: false,
      changed: false,
    },
    {
      id: 'after',
      code: 'W = where(allowed, W, 0)',
      label: 'mask after the normalizer',
      control: null,
      picture: 'weights',
      inactive: false,
      changed: false,
    },
    {
      id: 'out',
      code: 'O = W @ V',
      label: 'weighted sum of the values',
      control: null,
      picture: 'output',
      inactive: false,
      changed: false,
    },
  ];
  const lines = all.filter((l) => l.id !== 'after' || v.maskMode === 'after');
  const std = standard === c ? null : new Map(codeLines(standard, standard).map((l) => [l.id, l.code]));
  for (const l of lines) l.changed = std !== null && std.get(l.id) !== l.code;
  return lines;
}

/** "Which line?" (the exercises): the standard computation's lines, and the ids of those that
 *  `variant` changes (a line the variant adds, such as the mask after the normalizer, is not one
 *  of the standard's and cannot be marked). */
export function lineQuiz(
  scale: LineContext['scale'],
  fill: LineContext['fill'],
  variant: VariantState,
): { lines: { id: LineId; code: string }[]; changed: LineId[] } {
  const standard: LineContext = { variant: STANDARD, scale, fill };
  const lines = codeLines(standard, standard);
  const ids = new Set(lines.map((l) => l.id));
  const changed = codeLines({ variant, scale, fill }, standard)
    .filter((l) => l.changed && ids.has(l.id))
    .map((l) => l.id);
  return { lines: lines.map(({ id, code }) => ({ id, code })), changed };
}
