import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isUserError } from '../../src/core/errors.js';
import { parseProjectConfig } from '../../src/core/project/config-file.js';

describe('.docdex.yml', () => {
  it('reads every setting; a relative repository path resolves against the project root', () => {
    const config = parseProjectConfig(
      [
        'name: shop',
        'all: true',
        'include: "@acme/*"',
        'exclude: [lodash, "@types/*"]',
        'sources:',
        '  internal-ui: https://ui.example.com/docs/',
        '  tools: ../tools@v1.2.0',
        '  sdk: https://github.com/acme/sdk.git@v2.0.0',
      ].join('\n'),
      '/work/shop',
    );
    expect(config).toMatchObject({ name: 'shop', all: true, include: ['@acme/*'], exclude: ['lodash', '@types/*'] });
    expect(config.sources.map((s) => `${s.name} ${s.spec.kind} ${s.spec.spec}`)).toEqual([
      'internal-ui url https://ui.example.com/docs/',
      'tools git /work/tools@v1.2.0',
      'sdk git https://github.com/acme/sdk.git@v2.0.0',
    ]);
  });

  it('an empty file is the defaults', () => {
    expect(parseProjectConfig('', '/p')).toEqual({ include: [], exclude: [], sources: [] });
  });

  it.each([
    ['all: yes please', 'all: Invalid input'],
    ['colour: blue', 'Unrecognized key'],
    ['sources:\n  x: npm:react', 'sources.x: a source is a docs URL or a git repository'],
    ['sources:\n  x: "-rf"', 'sources.x: Cannot add'],
    ['[1, 2', 'not YAML'],
  ])('%j is project_config_invalid saying what is wrong', (text, what) => {
    let caught: unknown;
    try {
      parseProjectConfig(text, '/p');
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'project_config_invalid' });
    expect((caught as Error).message).toContain(what);
  });

  it('never throws anything but project_config_invalid on hostile text', () => {
    const text = fc.oneof(
      fc.string(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.dictionary(fc.constantFrom('name', 'all', 'include', 'exclude', 'sources'), fc.jsonValue()).map((v) => JSON.stringify(v)),
      fc.dictionary(fc.string(), fc.string()).map((v) => JSON.stringify({ sources: v })),
    );
    fc.assert(
      fc.property(text, (t) => {
        try {
          parseProjectConfig(t, '/p');
        } catch (error) {
          if (!isUserError(error) || error.code !== 'project_config_invalid') throw error;
        }
      }),
      { numRuns: 500 },
    );
  });
});
