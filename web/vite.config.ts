// Builds the family web app (web/) into dist/app, served by the server at /app/
// (src/http/web-app.ts). `npm run build:web`; `npm ci` runs it (scripts/prepare.js).
import { gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';
import { compression } from 'vite-plugin-compression2';
import { VitePWA } from 'vite-plugin-pwa';

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

/** The app's colour, as in styles.css (--accent): the installed app's title bar and splash. */
const THEME = '#1f4fbf';

export default defineConfig({
  root: import.meta.dirname,
  base: '/app/',
  // Preact's automatic JSX runtime through esbuild: no Babel preset needed.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  plugins: [
    firstLoadSize(),
    // Installable (a web app manifest, its icons) and the shell kept by a service worker, so a reload
    // without network opens the app, which then says it is offline (web/src/offline.tsx).
    VitePWA({
      // public/registerSW.js, a file: the policy allows no inline script.
      injectRegister: 'script',
      registerType: 'autoUpdate',
      // Icons (favicon.ico, 64/192/512 PNG, maskable, apple-touch) made from public/favicon.svg at
      // build, by @vite-pwa/assets-generator; linked from index.html and listed in the manifest.
      pwaAssets: { image: 'public/favicon.svg', preset: 'minimal-2023', overrideManifestIcons: true },
      manifest: {
        name: 'Cardshelf player',
        short_name: 'Cardshelf',
        description: "The family's audio cards, played on this device.",
        // Installed to a home screen, the app opens as the player (/app/be-player, player mode).
        start_url: '/app/be-player',
        scope: '/app/',
        display: 'fullscreen',
        orientation: 'any',
        theme_color: THEME,
        background_color: '#ffffff',
      },
      workbox: {
        // The shell (index.html, scripts, styles, icons); the precompressed copies are not needed:
        // the service worker fetches with the browser's own Accept-Encoding.
        globPatterns: ['**/*.{js,css,html,svg,png,ico}'],
        // Every page is the same index.html (the server answers it for any /app/ path), fetched
        // from the network while there is one, so a new release shows at once; the cached shell
        // only when the network fails.
        navigateFallback: null,
        runtimeCaching: [
          {
            urlPattern: ({ request, url }) => request.mode === 'navigate' && url.pathname.startsWith('/app/'),
            handler: 'NetworkOnly',
            options: { precacheFallback: { fallbackURL: '/app/index.html' } },
          },
        ],
        cleanupOutdatedCaches: true,
      },
    }),
    // Every text file beside a .br and a .gz copy; the server picks one by Accept-Encoding
    // (@fastify/static's preCompressed).
    compression({ algorithms: ['brotliCompress', 'gzip'], include: /\.(html|css|js|json|svg|webmanifest|ico)$/ }),
  ],
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
