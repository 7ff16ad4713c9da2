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
