#!/usr/bin/env -S node --experimental-strip-types --no-warnings
// Runs docdex from source: run `npx tsc -p tsconfig.build.json --watch` beside it, or use bin/run.js after a build.
import { execute } from '@oclif/core';

await execute({ development: true, dir: import.meta.url });
