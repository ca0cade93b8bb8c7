import { defineConfig } from 'vitest/config';
import CorpusFirstSequencer from './test/setup/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx', 'src/**/*.test.ts', 'src/**/*.test.tsx'],
    globalSetup: ['test/setup/global.ts'],
    sequence: { sequencer: CorpusFirstSequencer },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores: more workers only thrash the embedded PostgreSQL.
    maxWorkers: 2,
  },
});
