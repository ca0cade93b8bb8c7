// bin/run.js checks package.json's engines with this before anything heavy loads: one function, not semver's
// whole index; a bundle entry of its own (scripts/bundle.ts), so it reads one small chunk, not oclif's.
export { default as satisfies } from 'semver/functions/satisfies.js';
