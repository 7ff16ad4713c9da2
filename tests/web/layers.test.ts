// The front end's layer rule, read from the source: every import specifier under web/src
// (static imports and re-exports, `import type`, dynamic `import()`, `import('…')` types in .d.ts
// files and JSDoc, `new URL('…', import.meta.url)` Workers, `?url` / `?worker` suffixes, css
// imports) is resolved to a file and checked:
//   - foundations (state/, wasm/, ui/, shared/, measure/) import only foundations;
//   - features (attention/, timing/, train/, decode/, embed/, lesson/, text/) import foundations and
//     their own folder, never another feature nor app/;
//   - app/ (the feature list and the shell) may import anything;
//   - only wasm/ reaches outside web/src (the generated build/wasm/* modules, cpp/bindings);
//   - no import cycle between files, and none between foundation folders.
// A new folder must be named here (as a foundation or a feature) before it can hold code.
// The TypeScript parser (already a dev dependency for type-checking) reads the files, so
// comments and strings that merely look like imports are not counted.
import { describe, expect, it } from 'vitest';
import ts from 'typescript';

// Node's fs and path, typed here (the web tsconfig has no Node types; other tests load node:fs the
// same way).
interface NodeFs {
  existsSync(p: string): boolean;
  readdirSync(p: string): string[];
  readFileSync(p: string, encoding: 'utf8'): string;
  statSync(p: string): { isDirectory(): boolean; isFile(): boolean };
}
interface NodePath {
  dirname(p: string): string;
  join(...p: string[]): string;
  relative(from: string, to: string): string;
  resolve(...p: string[]): string;
  sep: string;
}
const { existsSync, readdirSync, readFileSync, statSync } = (await import(/* @vite-ignore */ 'node:' + 'fs')) as NodeFs;
const { dirname, join, relative, resolve, sep } = (await import(/* @vite-ignore */ 'node:' + 'path')) as NodePath;

const SRC = resolve(decodeURIComponent(new URL('../../web/src', import.meta.url).pathname));
export const FOUNDATIONS = ['state', 'wasm', 'ui', 'shared', 'measure'] as const;
export const FEATURES = ['attention', 'timing', 'train', 'decode', 'embed', 'lesson', 'text'] as const;
const APP = 'app';
/** The only folder that may import from outside web/src (the generated wasm modules). */
const OUTSIDE_ALLOWED = 'wasm';

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (/\.(ts|mts|js|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

/** Every module specifier a file names, in source order. */
export function specifiers(file: string, text: string): string[] {
  const kind = /\.m?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, kind);
  const out: string[] = [];
  const lit = (n: ts.Node | undefined) => (n && (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) ? n.text : null);
  const isImportMetaUrl = (n: ts.Node | undefined) =>
    !!n && ts.isPropertyAccessExpression(n) && n.name.text === 'url' && ts.isMetaProperty(n.expression) && n.expression.keywordToken === ts.SyntaxKind.ImportKeyword;
  const visit = (n: ts.Node): void => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier) {
      const s = lit(n.moduleSpecifier);
      if (s !== null) out.push(s);
    } else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) {
      const s = lit(n.moduleReference.expression);
      if (s !== null) out.push(s);
    } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const s = lit(n.arguments[0]);
      if (s !== null) out.push(s);
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) {
      const s = lit(n.argument.literal);
      if (s !== null) out.push(s);
    } else if (ts.isNewExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'URL' && isImportMetaUrl(n.arguments?.[1])) {
      const s = lit(n.arguments?.[0]);
      if (s !== null) out.push(s);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  // JSDoc type imports in .js files (`@typedef {import('../wasm/attn-core').X}`): the parser keeps
  // JSDoc as comments for this purpose, so read them from the doc comments themselves.
  if (kind === ts.ScriptKind.JS) for (const m of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) for (const i of m[0].matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(i[1]);
  return out;
}

const EXTS = ['', '.ts', '.d.ts', '.js', '.mjs', '/index.ts'];
/** The file a relative specifier names (query such as ?url dropped), or null for a package. */
function resolveSpec(from: string, spec: string): { path: string; exists: boolean } | null {
  if (!spec.startsWith('.') && !spec.startsWith('/')) return null; // a package (lz-string, node:…)
  const base = resolve(dirname(from), spec.replace(/\?.*$/, ''));
  for (const e of EXTS) if (existsSync(base + e) && statSync(base + e).isFile()) return { path: base + e, exists: true };
  return { path: base, exists: false };
}

/** First folder under web/src ('' for a file at the top), or null outside web/src. */
function folderOf(p: string): string | null {
  const r = relative(SRC, p);
  if (r.startsWith('..')) return null;
  const parts = r.split(sep);
  return parts.length > 1 ? parts[0] : '';
}

export interface Edge {
  from: string;
  to: string;
  spec: string;
}

export function graph(root = SRC): { files: string[]; edges: Edge[]; unresolved: Edge[] } {
  const files = walk(root);
  const edges: Edge[] = [];
  const unresolved: Edge[] = [];
  for (const f of files) {
    for (const spec of specifiers(f, readFileSync(f, 'utf8'))) {
      const r = resolveSpec(f, spec);
      if (!r) continue;
      (r.exists || folderOf(r.path) === null ? edges : unresolved).push({ from: f, to: r.path, spec });
    }
  }
  return { files, edges, unresolved };
}

/** Every violation of the layer rule, one line each. */
export function layerViolations(edges: Edge[], files: string[]): string[] {
  const bad: string[] = [];
  const rel = (p: string) => relative(SRC, p);
  const isFoundation = (f: string) => (FOUNDATIONS as readonly string[]).includes(f);
  const isFeature = (f: string) => (FEATURES as readonly string[]).includes(f);
  for (const f of new Set(files.map(folderOf)))
    if (f !== null && !isFoundation(f) && !isFeature(f) && f !== APP) bad.push(`folder “${f || '(top)'}” is neither a foundation, a feature nor app/`);
  for (const e of edges) {
    const a = folderOf(e.from)!;
    const b = folderOf(e.to);
    const what = `${rel(e.from)} imports '${e.spec}'`;
    if (b === null) {
      if (a !== OUTSIDE_ALLOWED) bad.push(`${what}: only ${OUTSIDE_ALLOWED}/ may import from outside web/src`);
      continue;
    }
    if (a === b || a === APP) continue;
    if (b === APP) bad.push(`${what}: ${a}/ imports app/ (upward)`);
    else if (isFoundation(a) && !isFoundation(b)) bad.push(`${what}: foundation ${a}/ imports ${isFeature(b) ? 'feature' : 'folder'} ${b}/`);
    else if (isFeature(a) && isFeature(b)) bad.push(`${what}: feature ${a}/ imports feature ${b}/`);
  }
  return bad;
}

/** Every import cycle between files (one per strongly connected component), as a path. */
export function cycles(nodes: string[], edges: { from: string; to: string }[]): string[][] {
  const next = new Map<string, string[]>(nodes.map((n) => [n, []]));
  for (const e of edges) if (next.has(e.from) && next.has(e.to)) next.get(e.from)!.push(e.to);
  // Tarjan's strongly connected components.
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const strong = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of next.get(v)!) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || next.get(v)!.includes(v)) out.push(comp.reverse());
    }
  };
  for (const n of nodes) if (!idx.has(n)) strong(n);
  return out;
}

describe('front-end layers', () => {
  const { files, edges, unresolved } = graph();
  const rel = (p: string) => relative(SRC, p);

  it('reads the import specifiers of every kind', () => {
    // The reader itself: each form below must be found (else the rule checks nothing).
    const sample = [
      "import a from './a';",
      "import type { B } from './b';",
      "export { c } from './c';",
      "import './d.css';",
      "import u from '../e.wasm?url';",
      "const f = () => import('./f.mjs');",
      "new Worker(new URL('./g.ts', import.meta.url), { type: 'module' });",
      "type H = import('./h').H;",
      "// import x from './not-an-import';",
      "const s = \"import y from './not-either'\";",
    ].join('\n');
    expect(specifiers('x.ts', sample)).toEqual(['./a', './b', './c', './d.css', '../e.wasm?url', './f.mjs', './g.ts', './h']);
    expect(specifiers('x.js', "/** @typedef {import('./i').I} I */\nexport const z = 1;")).toEqual(['./i']);
    expect(files.length).toBeGreaterThan(40);
    expect(edges.length).toBeGreaterThan(100);
  });

  it('every relative import names a file that exists', () => {
    // new URL('./index.html', import.meta.url) in the embed element names the built page, not a source file.
    expect(unresolved.filter((e) => !e.spec.endsWith('.html')).map((e) => `${rel(e.from)} → ${e.spec}`)).toEqual([]);
  });

  it('depends downward only: foundations import no feature and no app/, features no other feature and no app/', () => {
    expect(layerViolations(edges, files)).toEqual([]);
  });

  it('has no import cycle between files', () => {
    expect(cycles(files, edges).map((c) => c.map(rel).join(' → '))).toEqual([]);
  });

  it('has no cycle between foundation folders', () => {
    const folderEdges = edges
      .map((e) => ({ from: folderOf(e.from)!, to: folderOf(e.to) ?? '' }))
      .filter((e) => e.from !== e.to && (FOUNDATIONS as readonly string[]).includes(e.from) && (FOUNDATIONS as readonly string[]).includes(e.to));
    expect(cycles([...FOUNDATIONS], folderEdges)).toEqual([]);
  });

  it('only wasm/ imports the generated modules under build/wasm', () => {
    const wasm = edges.filter((e) => relative(SRC, e.to).split(sep).join('/').includes('build/wasm/'));
    expect(wasm.length).toBeGreaterThan(0);
    expect(wasm.filter((e) => folderOf(e.from) !== 'wasm').map((e) => `${rel(e.from)} → ${e.spec}`)).toEqual([]);
  });
});
