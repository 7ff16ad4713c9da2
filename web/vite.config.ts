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

// lz-string (the share links' `tz=` codec, kept so every recorded link decodes the same) ships
// only a UMD file. Bundled as is, its wrapper tests `typeof define === 'function' && define.amd`
// first: on a page that loads RequireJS (the classic Jupyter notebook, Moodle) it calls the
// host's global define() instead of exporting, so the playground gets no codec and the host's
// next require() fails ("Mismatched anonymous define() module"). Its code body is plain ES5 that
// ends in `var LZString = (...)();`: swap the wrapper for an ES export. The build fails if the
// file no longer has the expected wrapper (a new lz-string release), rather than shipping a UMD.
function lzStringAsEsm(): Plugin {
  const wrapper = /\nif \(typeof define === 'function' && define\.amd\) \{[\s\S]*$/;
  return {
    name: 'attention-playground-lz-string-esm',
    enforce: 'pre',
    transform(code, id) {
      if (!/[\\/]lz-string[\\/]libs[\\/]lz-string\.js$/.test(id.split('?')[0])) return null;
      if (!wrapper.test(code)) throw new Error(`lz-string: the UMD wrapper was not found in ${id}; check the new release`);
      return { code: code.replace(wrapper, '\nexport default LZString;\n'), map: null };
    },
  };
}

export default defineConfig({
  root: webRoot,
  base: './',
  plugins: [lzStringAsEsm(), cspMeta()],
  // The dev server pre-bundles dependencies with its own transform: leave lz-string to the plugin.
  optimizeDeps: { exclude: ['lz-string'] },
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
    // Worker threads rather than forked processes (the suite 59 -> 53 CPU-seconds here), and the
    // test files share one module graph instead of importing the page's modules and the wasm
    // modules again for each of the 43 files (isolate: false; 54 -> 36 CPU-seconds on an idle
    // 2-vCPU machine). The files keep no state in the modules they share: the suite passes in
    // any order (checked with --sequence.shuffle, seeds 7 and 12345).
    pool: 'threads',
    isolate: false,
  },
});
