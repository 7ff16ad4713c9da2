// Tiny DOM helpers. Text only ever goes in through textContent (never innerHTML).
type Attrs = Record<string, string | number | boolean | undefined | null>;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = String(v);
    else if (k === 'text') e.textContent = String(v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return e;
}

/** Sets a node's text only when it differs (an unchanged write still costs a relayout). */
export function setText(node: Element, text: string): void {
  if (node.textContent !== text) node.textContent = text;
}

export function clear(node: Element): void {
  while (node.firstChild) node.removeChild(node.firstChild);
}

/** Format a weight for people: 3 decimals, NaN spelled out. */
export function fmt(v: number, digits = 3): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '∞' : '−∞';
  const s = v.toFixed(digits);
  return s.startsWith('-') ? '−' + s.slice(1) : s;
}

/** Quote a token for a sentence: query 'cat' (8). */
export function tokenRef(tokens: readonly string[], i: number): string {
  return `'${tokens[i] ?? '?'}' (${i})`;
}

/**
 * Shows a state value in a text/number input without clobbering what the user is typing: while
 * the input has focus and holds an edit not yet committed (no 'change' since the last sync), a
 * render that arrives (e.g. a Worker result) leaves it alone. Call `commitInput` in the input's
 * 'change' handler so a corrected value (clamped by the state table) is shown at once.
 */
export function syncInput(input: HTMLInputElement, value: string): void {
  const editing = document.activeElement === input && input.value !== input.dataset.synced;
  if (editing && input.dataset.synced !== undefined) return;
  input.value = value;
  input.dataset.synced = value;
}

export function commitInput(input: HTMLInputElement): void {
  input.dataset.synced = input.value;
}
