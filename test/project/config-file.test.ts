import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isUserError } from '../../src/core/errors.js';
import { parseProjectConfig } from '../../src/core/project/config-file.js';

describe('.docdex.yml', () => {
  it('reads every setting', () => {
    const config = parseProjectConfig(
      [
        'name: shop',
        'all: true',
        'include: "@acme/*"',
        'exclude: [lodash, "@types/*"]',
        'sources:',
        '  internal-ui: https://ui.example.com/docs/',
        '  sdk: https://github.com/acme/sdk.git@v2.0.0',
      ].join('\n'),
    );
    expect(config).toMatchObject({ name: 'shop', all: true, include: ['@acme/*'], exclude: ['lodash', '@types/*'] });
    expect(config.sources.map((s) => `${s.name} ${s.spec.kind} ${s.spec.spec}`)).toEqual(['internal-ui url https://ui.example.com/docs/', 'sdk git https://github.com/acme/sdk.git@v2.0.0']);
  });

  // SECURITY.md, "What the crawler may reach": what a project's lockfiles and `.docdex.yml` name is held to the
  // remote rules, so a `.docdex.yml` source may not be a local path, file:// or ssh.
  it.each(['../tools@v1.2.0', './vendor/docs', '/home/someone/private-repo', 'file:///home/someone/private-repo@main', 'git@internal.example:acme/sdk.git', 'ssh://git@internal.example/acme/sdk.git'])(
    'a source at %s, which would read this machine or use its ssh keys, is project_config_invalid',
    (spec) => {
      let caught: unknown;
      try {
        parseProjectConfig(`sources:\n  tools: "${spec}"\n`);
      } catch (error) {
        caught = error;
      }
      expect(caught).toMatchObject({ code: 'project_config_invalid' });
      expect((caught as Error).message).toMatch(/sources\.tools: a source is a docs URL or an http\(s\) git repository; a local path, file:\/\/ or ssh remote named by a project file is never read/);
    },
  );

  it('an empty file is the defaults', () => {
    expect(parseProjectConfig('')).toEqual({ include: [], exclude: [], sources: [] });
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
      parseProjectConfig(text);
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
          parseProjectConfig(t);
        } catch (error) {
          if (!isUserError(error) || error.code !== 'project_config_invalid') throw error;
        }
      }),
      { numRuns: 500 },
    );
  });
});
