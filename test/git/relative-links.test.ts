import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { absoluteMarkdownLinks } from '../../src/core/git/relative-links.js';

const DOC = 'https://github.com/acme/widgets/blob/0123abc/docs/guide/intro.md';

describe('relative links in a repository document', () => {
  it('resolves inline links, images and definitions against the file at its commit', () => {
    const text = ['See [the guide](../guide.md) and ![diagram](img/flow.png "Flow").', 'Also [a section](other.md#setup) and [with spaces](<my file.md>).', '[ref]: ./reference.md'].join('\n');
    expect(absoluteMarkdownLinks(text, DOC)).toBe(
      [
        'See [the guide](https://github.com/acme/widgets/blob/0123abc/docs/guide.md) and ![diagram](https://github.com/acme/widgets/blob/0123abc/docs/guide/img/flow.png "Flow").',
        'Also [a section](https://github.com/acme/widgets/blob/0123abc/docs/guide/other.md#setup) and [with spaces](<https://github.com/acme/widgets/blob/0123abc/docs/guide/my%20file.md>).',
        '[ref]: https://github.com/acme/widgets/blob/0123abc/docs/guide/reference.md',
      ].join('\n'),
    );
  });

  it('leaves code, anchors, absolute URLs and root-relative paths as written', () => {
    const text = [
      '[top](#intro) [site](https://example.com/x) [mail](mailto:a@b.c) [root](/docs/x.md)',
      'Inline `[not](a-link.md)` code.',
      '```md',
      '[inside](fence.md)',
      '```',
      '',
      '    [indented](code.md)',
      '    [still code](code2.md)',
    ].join('\n');
    expect(absoluteMarkdownLinks(text, DOC)).toBe(text);
  });

  it('a remote@commit URL keeps relative links at the same commit', () => {
    expect(absoluteMarkdownLinks('[g](../guide.md)', 'file:///srv/acme.git@0123abc/docs/a/b.md')).toBe('[g](file:///srv/acme.git@0123abc/docs/guide.md)');
  });

  it('any text: never throws, keeps its line count, and a second pass changes nothing', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('```', '~~~', '    x', '[a](b.md)', '[r]: c.md', '`[x](y)`', '](', '<>')), { maxLength: 20 }).map((l) => l.join('\n')),
        (text) => {
          const once = absoluteMarkdownLinks(text, DOC);
          expect(once.split('\n').length).toBe(text.split('\n').length);
          expect(absoluteMarkdownLinks(once, DOC)).toBe(once);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
