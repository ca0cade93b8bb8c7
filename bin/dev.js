#!/usr/bin/env -S node --experimental-strip-types --no-warnings
// Runs docdex over tsc's output in dist/: run `npx tsc -p tsconfig.build.json --watch` beside it, or use bin/run.js
// after a build. oclif comes from dist/cli/runtime.js, as in bin/run.js: after `npm run build` the commands there
// are bundled and extend the bundle's oclif; under tsc --watch both are tsc's output over node_modules' oclif.
const { execute } = await import('../dist/cli/runtime.js');

await execute({ development: true, dir: import.meta.url });
