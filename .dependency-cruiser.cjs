/**
 * The layers of src/, as import rules (README.md, "Layout", says the same in words). CI runs
 * `npm run lint:deps`; a rule broken fails it. No exceptions are configured: where code needs
 * what a rule forbids, the code moves, not the rule.
 *
 *   app.ts, server.ts, cli.ts, main.ts   the edge: builds and wires everything
 *   http/                                everything that knows Fastify (but the routes)
 *   modules/<x>/routes.ts                HTTP for one resource: schemas, status codes (and the
 *     files of modules/<x>/routes/ it composes, where one resource has many routes)
 *   modules/<x>/ (service, rules, ...)   the rules of the interface; no Fastify, no HTTP
 *   modules/<x>/repository.ts            that module's SQL, read by that module only (and any
 *     *-repository.ts beside it; so too in accounts/, oauth/, auth/ and every other folder)
 *   auth/, media-store/, db/             token verification; media bytes; the database
 *   shared/                              what any layer may use: errors, ids, clock, text
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'A cycle ties modules so that neither can be read, tested or replaced alone.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'db-is-a-floor',
      severity: 'error',
      comment:
        'The database layer knows nothing above it: it owns its configuration type (db/config.ts) and raises its own errors, which the edge maps to HTTP.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: ['^src/db/', '^src/shared/'] },
    },
    {
      name: 'shared-is-a-floor',
      severity: 'error',
      comment: 'shared/ is what any layer may use, so it may use no layer.',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'shared-knows-no-fastify',
      severity: 'error',
      comment: 'Fastify-bound code lives in http/ (or in a module\'s routes), not in shared/.',
      from: { path: '^src/shared/' },
      to: { dependencyTypes: ['npm'], path: '^node_modules/(fastify|@fastify)/' },
    },
    {
      name: 'lower-layers-stay-low',
      severity: 'error',
      comment: 'auth/ and media-store/ serve the modules and the edge; they import neither, nor the app configuration.',
      from: { path: '^src/(auth|media-store)/' },
      to: { path: '^src/(modules|http|seed|app|server|cli|config)(/|\\.ts$)' },
    },
    {
      name: 'services-know-no-http',
      severity: 'error',
      comment:
        'Services, rules and repositories are called by routes, never the reverse, and know nothing of Fastify or http/: Fastify stays out of services.',
      from: { path: '^src/modules/[^/]+/', pathNot: '^src/modules/[^/]+/routes(\\.ts$|/)' },
      to: {
        path: ['^src/http/', '^src/modules/[^/]+/routes(\\.ts$|/)', '^node_modules/(fastify|@fastify)/'],
      },
    },
    {
      name: 'a-module-reads-its-own-tables',
      severity: 'error',
      comment:
        "A module's tables are read through that module: its service, or a query it exports for the purpose (queries.ts, holdings.ts), never its repositories (repository.ts, *-repository.ts).",
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/(repository|[^/]+-repository)\\.ts$', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'a-folder-reads-its-own-tables',
      severity: 'error',
      comment:
        'The same outside modules/ (accounts/, oauth/, auth/, ...): a folder\'s repositories are read by that folder; others call its services (the token revocation list through auth/revocations.ts, oauth_records through oauth/).',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/([^/]+)/(repository|[^/]+-repository)\\.ts$', pathNot: ['^src/$1/', '^src/modules/'] },
    },
    {
      name: 'repositories-are-private',
      severity: 'error',
      comment: 'Outside the modules (seeding, the command line, the app) data goes through services too.',
      from: { path: '^src/', pathNot: '^src/modules/' },
      to: { path: '^src/modules/[^/]+/(repository|[^/]+-repository)\\.ts$' },
    },
    {
      name: 'routes-are-wired-by-the-app',
      severity: 'error',
      comment: "Only the app registers routes (a module's routes.ts composes the files of its routes/).",
      from: { path: '^src/', pathNot: ['^src/app\\.ts$', '^src/modules/[^/]+/routes\\.ts$'] },
      to: { path: '^src/modules/[^/]+/routes(\\.ts$|/)' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing is a typo or a missing dependency.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.d.ts'],
    },
  },
};
