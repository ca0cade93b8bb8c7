#!/usr/bin/env node
import module from 'node:module';

// V8's code cache on disk (Node's compile cache, in the OS temp directory): a cold start spends most of its
// time compiling oclif, zod and pg, and with the cache a second start skips that. Enabled before anything
// heavy is imported, hence the dynamic import below.
module.enableCompileCache?.();

// The long-running commands restart themselves, in place (same pid, so signals and supervisors are unaffected),
// with a young generation of 8 MB semi-spaces instead of V8's default of up to 64 MB: a crawl allocates many
// short-lived page buffers, and the default lets the worker's resident memory grow by a hundred MB or so for
// no measurable speed. An explicit setting (flag or NODE_OPTIONS) is left alone. The restart also caps glibc's
// malloc arenas at two (unless MALLOC_ARENA_MAX is set): by default each thread that allocates may get its own
// arena, and a crawling worker's peak RSS was 241-244 MB against 222-234 MB with two, at the same speed.
const LONG_RUNNING = new Set(['worker', 'serve']);
const SEMI_SPACE = '--max-semi-space-size';
if (
  LONG_RUNNING.has(process.argv[2] ?? '') &&
  typeof process.execve === 'function' &&
  !process.execArgv.some((a) => a.startsWith(SEMI_SPACE)) &&
  !(process.env.NODE_OPTIONS ?? '').includes(SEMI_SPACE)
) {
  process.execve(process.execPath, [process.execPath, `${SEMI_SPACE}=8`, ...process.execArgv, ...process.argv.slice(1)], {
    MALLOC_ARENA_MAX: '2',
    ...process.env,
  });
}

const { execute } = await import('@oclif/core');
await execute({ dir: import.meta.url });
