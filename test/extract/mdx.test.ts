import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/core/extract/index.js';
import { parseFenceInfo } from '../../src/core/extract/markdown-fence.js';
import { looksLikeMdx, mdxToMarkdown, readJsxBlock, separateJsxLines } from '../../src/core/extract/markdown-mdx.js';
import { BASE, extractFixture, snippetWith } from './helpers.js';

describe('MDX as authors write it (react.dev style, in a .md file)', () => {
  const r = extractFixture('sandbox.md');

  it('takes {/*id*/} heading ids as the anchor and out of the title', () => {
    const s = snippetWith(r, 'export default function Lantern');
    expect(s).toMatchObject({ title: 'Lighting the wick | Keeping a Lantern Lit', section: 'Lighting the wick' });
    expect(s.sourceUrl).toBe(`${BASE}sandbox.md#lighting-the-wick`);
    expect(snippetWith(r, 'kept.brightness').sourceUrl).toBe(`${BASE}sandbox.md#why-the-flame-survives`);
    for (const snippet of r.snippets) expect(snippet.title).not.toMatch(/\{\/|\{#/);
  });

  it('reads the filename and flags of fence meta, and leaves out files the reader does not see', () => {
    expect(snippetWith(r, 'export default function Lantern')).toMatchObject({ filename: 'src/App.js', language: 'javascript' });
    expect(snippetWith(r, 'color: orange')).toMatchObject({ filename: 'src/styles.css', language: 'css' });
    expect(snippetWith(r, 'kept.brightness')).toMatchObject({ filename: 'src/keep.js' });
    expect(snippetWith(r, 'blowOut()')).toMatchObject({ filename: null, tab: null });
    expect(r.snippets.some((s) => s.code.includes('return { brightness: n }'))).toBe(false);
    expect(r.skipped).toContainEqual(expect.objectContaining({ reason: 'hidden' }));
  });

  it("gives a component's code blocks and its text as prose, even without blank lines around the tags", () => {
    expect(snippetWith(r, 'blowOut()').description).toBe('Never blow out the lantern while it renders.');
    expect(snippetWith(r, 'kept.brightness').description).toBe('A flame is kept outside the component, like a ref.');
  });

  it('labels code groups and tabs: <CodeGroup> titles, <TabItem label>, pymdown tab blocks', () => {
    expect(snippetWith(r, 'npm install lantern-wick')).toMatchObject({ tab: 'npm', title: 'Installing the wick (npm) | Keeping a Lantern Lit' });
    expect(snippetWith(r, 'pnpm add')).toMatchObject({ tab: 'pnpm' });
    expect(snippetWith(r, 'brew install')).toMatchObject({ tab: 'macOS' });
    expect(snippetWith(r, 'light(wick')).toMatchObject({ tab: 'Python 3.10+', description: 'Wick care Trim the wick before each lighting.' });
  });

  it('keeps component markup, imports, MDX comments and block markers out of text', () => {
    for (const s of r.snippets) expect(`${s.title} ${s.description}`).not.toMatch(/<\/?[A-Z]|\{\/\*|\/\/\/|import /);
    expect(r.page.markdown).not.toMatch(/<\/?(?:Sandpack|Pitfall|DeepDive|Intro|Note|CodeGroup|Tabs|TabItem)\b|\{\/\*|^import LanternTabs/m);
    expect(r.page.markdown).toContain('## Lighting the wick {#lighting-the-wick}');
    expect(r.page.markdown).toContain('The glass must be clean before Enter is pressed.');
    expect(r.page.markdown).toContain('```js src/flame.js hidden');
  });

  it("reads a component's indented text as text, as MDX does, not as an indented code block", () => {
    expect(r.snippets.some((s) => s.code.includes('Ada trims'))).toBe(false);
    expect(r.page.markdown).toContain('\nAda trims the wicks of every lantern in the square.');
  });

  it('takes MkDocs attribute-list ids ({ #id }) out of the title', () => {
    expect(snippetWith(r, 'brew install').sourceUrl).toBe(`${BASE}sandbox.md#installing`);
  });

  it('leaves a plain markdown page as it was: no JSX reading without components', () => {
    const plain = extractDocument({ url: `${BASE}p.md`, body: '# T\n\nUse `<Foo>` in text.\n\n```js\nx()\n```\n' });
    expect(plain.page.markdown).toBe('# T\n\nUse `<Foo>` in text.\n\n```js\nx()\n```');
    expect(looksLikeMdx('# T\n\nUse `<Foo>` in text.\n')).toBe(false);
  });
});

describe('fence meta', () => {
  it.each([
    ['js', 'src/data.js hidden', { lang: 'js', filename: 'src/data.js', hidden: true, label: null }],
    ['js', '{expectedErrors: {"react-compiler": [19, 20]}} src/App.js', { lang: 'js', filename: 'src/App.js', hidden: false }],
    ['js', '[[1, 1, "\'hidden\'"]]', { lang: 'js', filename: null, hidden: false, label: null }],
    ['js{1,3}', null, { lang: 'js', filename: null }],
    ['ts:line-numbers', '[vite.config.ts]', { lang: 'ts', filename: 'vite.config.ts' }],
    ['sh', '[npm]', { lang: 'sh', filename: null, label: 'npm' }],
    ['python', 'title="Example configuration" hl_lines="2"', { lang: 'python', filename: null, caption: 'Example configuration' }],
    ['py', 'title="app.py"', { filename: 'app.py', caption: null }],
    ['js:app.js', null, { lang: 'js', filename: 'app.js' }],
  ] as const)('%s %s', (lang, meta, want) => {
    expect(parseFenceInfo(lang, meta)).toMatchObject(want);
  });

  it('reads a bare title as the tab only inside a <CodeGroup>', () => {
    expect(parseFenceInfo('bash', 'npm', true).label).toBe('npm');
    expect(parseFenceInfo('bash', 'npm', false).label).toBeNull();
  });
});

// Any text at all: the MDX readers are parsers of outside input.
const mdxText = fc.oneof(
  fc.string({ maxLength: 400 }),
  fc
    .array(fc.constantFrom('<Sandpack>', '</Sandpack>', '<A b={c > d}>', '<A b="', '{', '}', '```', '```js a.js hidden', '\n', '\n\n', 'text', '{/*', '*/}', '## h {/*id*/}', '<>', '`<B>`', '<C/>'), {
      maxLength: 60,
    })
    .map((a) => a.join('')),
);

describe('MDX readers on any input', () => {
  it('never throw and stay bounded', () => {
    fc.assert(
      fc.property(mdxText, fc.string({ maxLength: 40 }), fc.boolean(), (text, meta, group) => {
        expect(separateJsxLines(text).length).toBeLessThanOrEqual(3 * text.length + 1);
        expect(mdxToMarkdown(text).length).toBeLessThanOrEqual(text.length + 20 * (text.split('\n').length + 1));
        const parts = readJsxBlock(text, (t) => t.name === 'Sandpack') ?? [];
        let size = 0;
        for (const p of parts) size += 'tag' in p ? p.tag.source.length : p.text.length;
        expect(size).toBeLessThanOrEqual(text.length);
        const info = parseFenceInfo(meta, text, group);
        expect((info.filename ?? '').length).toBeLessThanOrEqual(200);
        expect((info.label ?? '').length).toBeLessThanOrEqual(1000);
      }),
      { numRuns: 3000 },
    );
  });

  it('keep fenced code byte for byte', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }).filter((c) => !c.includes('`') && !c.includes('~')),
        (code) => {
          const doc = `<Sandpack>\n\`\`\`js a.js\n${code}\n\`\`\`\n</Sandpack>\n`;
          expect(separateJsxLines(doc)).toContain(`\`\`\`js a.js\n${code}\n\`\`\``);
          expect(mdxToMarkdown(doc)).toContain(`\`\`\`js a.js\n${code}\n\`\`\``);
        },
      ),
    );
  });
});
