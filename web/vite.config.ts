/// <reference types="vitest/config" />
import { defineConfig, type Plugin } from 'vite';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

const webRoot = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = resolve(webRoot, '..');

// The Content-Security-Policy goes into the built page only: the dev server injects inline
// scripts for hot reload that a strict policy would block. Workers get no policy from the page's
// meta tag; the wasm module is built with -sDYNAMIC_EXECUTION=0 so no eval is needed anywhere.
const CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "worker-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'none'",
].join('; ');

function cspMeta(): Plugin {
  return {
    name: 'attention-playground-csp',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler: () => [
        {
          tag: 'meta',
          attrs: { 'http-equiv': 'Content-Security-Policy', content: CSP },
          injectTo: 'head-prepend',
        },
      ],
    },
  };
}

export default defineConfig({
  root: webRoot,
  base: './',
  plugins: [cspMeta()],
  server: { fs: { allow: [repoRoot] } },
  worker: { format: 'es' },
  build: {
    outDir: resolve(repoRoot, 'dist'),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    rolldownOptions: {
      input: {
        index: resolve(webRoot, 'index.html'),
        'attention-playground': resolve(webRoot, 'src/app/element.ts'),
      },
      output: {
        // The custom element keeps a stable name so course pages can link it.
        entryFileNames: (chunk) =>
          chunk.name === 'attention-playground' ? 'attention-playground.js' : 'assets/[name]-[hash].js',
      },
    },
  },
  test: {
    root: repoRoot,
    include: ['tests/web/**/*.test.ts'],
    environment: 'node',
  },
});
