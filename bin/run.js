#!/usr/bin/env node
import module from 'node:module';

// V8's code cache on disk (Node's compile cache, in the OS temp directory): a cold start spends most of its
// time compiling oclif, zod and pg, and with the cache a second start skips that. Enabled before anything
// heavy is imported, hence the dynamic import below.
module.enableCompileCache?.();

// The long-running commands restart themselves, in place (same pid, so signals and supervisors are unaffected),
// with V8 heap settings sized for a crawl, which allocates many page buffers that live for one page:
// - a young generation of 8 MB semi-spaces instead of V8's default of up to 64 MB, which let the worker's
//   resident memory grow by a hundred MB or so for no measurable speed;
// - the old generation grows by half of what survives a full collection (V8 picks up to four times on its
//   own). Pages still in flight at a young collection are promoted and die soon after, so with V8's factor the
//   old space filled with dead pages: a 5,000-page crawl at 20 pages at once collected 41 MB live out of 132,
//   and peaked at 195-236 MB (335 MB in some runs); with 1.5 it peaks at 159-178 MB, its speed within noise.
// An explicit setting of either (flag or NODE_OPTIONS) is left alone. The restart also caps glibc's malloc
// arenas at two (unless MALLOC_ARENA_MAX is set): by default each thread that allocates may get its own arena,
// and a crawling worker's peak RSS was 241-244 MB against 222-234 MB with two, at the same speed.
const LONG_RUNNING = new Set(['worker', 'serve']);
const HEAP_FLAGS = [
  ['--max-semi-space-size', '8'],
  ['--heap-growing-percent', '50'],
];
const isSet = (flag) => process.execArgv.some((a) => a.startsWith(flag)) || (process.env.NODE_OPTIONS ?? '').includes(flag);
const missing = HEAP_FLAGS.filter(([flag]) => !isSet(flag));
// After the restart every flag is set, so it happens once.
if (LONG_RUNNING.has(process.argv[2] ?? '') && typeof process.execve === 'function' && missing.length > 0) {
  process.execve(process.execPath, [process.execPath, ...missing.map(([flag, value]) => `${flag}=${value}`), ...process.execArgv, ...process.argv.slice(1)], {
    MALLOC_ARENA_MAX: '2',
    ...process.env,
  });
}

// A reader that stops early (`docdex crawl list | head -3`) closes the pipe: like any Unix tool, end quietly
// and successfully. Without this, oclif waits forever for the closed stdout to drain and Node exits 13.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

// One stated minimum, package.json's engines: oclif's own check would name @oclif/core's (>=22.0.0) instead.
const require = module.createRequire(import.meta.url);
const wanted = require('../package.json').engines.node;
const { satisfies } = await import('../dist/cli/engines.js');
if (!satisfies(process.versions.node, wanted)) {
  process.stderr.write(`Warning: docdex needs Node.js ${wanted}; this is ${process.versions.node}. Install Node.js 24 LTS (or 22.12 or newer).\n`);
}
process.env.OCLIF_DISABLE_ENGINE_WARNING = '1';

// The oclif the bundled commands extend (src/cli/runtime.ts), not node_modules' copy.
const { execute } = await import('../dist/cli/runtime.js');
await execute({ dir: import.meta.url });
