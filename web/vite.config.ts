// Builds the family web app (web/) into dist/app, served by the server at /app/
// (src/http/web-app.ts). `npm run build:web`; `npm ci` runs it (scripts/prepare.js).
import { gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

/** Prints the JavaScript the first page load fetches, gzipped: the budget is 60 KB (README). */
function firstLoadSize(): Plugin {
  return {
    name: 'cardshelf-first-load-size',
    generateBundle(_options, bundle) {
      let bytes = 0;
      for (const chunk of Object.values(bundle)) {
        if (chunk.type === 'chunk' && (chunk.isEntry || chunk.imports.length > 0 && !chunk.isDynamicEntry)) bytes += gzipSync(chunk.code).length;
      }
      this.info(`first-load JavaScript: ${(bytes / 1024).toFixed(1)} KB gzipped`);
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: '/app/',
  // Preact's automatic JSX runtime through esbuild: no Babel preset needed.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  plugins: [firstLoadSize()],
  build: {
    outDir: '../dist/app',
    emptyOutDir: true,
    target: 'es2022',
    // The policy allows no inline script; the polyfill is for browsers older than the target.
    modulePreload: { polyfill: false },
    // Small files stay files: a data: URL inlined into a script or style is what CSP would question.
    assetsInlineLimit: 0,
    reportCompressedSize: true,
  },
});
