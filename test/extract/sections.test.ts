import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/core/extract/index.js';
import { extractSections, MAX_SECTION_CHARS } from '../../src/core/extract/sections.js';

/** A page's sections (sections.ts): heading-bounded, with breadcrumb, anchor, language and their code blocks. */

const PAGE = 'https://docs.example/guide/state.md';

function markdownSections(markdown: string) {
  return extractDocument({ url: PAGE, contentType: 'text/markdown', body: markdown }).sections ?? [];
}

describe('extractSections', () => {
  it('cuts a markdown page at every heading, with its breadcrumb, anchor, text and the code blocks it holds', () => {
    const sections = markdownSections(
      [
        '# Managing state',
        '',
        'State is what a component remembers.',
        '',
        '## Adding state {#adding}',
        '',
        'Call `useState` at the top level.',
        '',
        '```js',
        'const [n, setN] = useState(0);',
        '# not a heading inside code',
        '```',
        '',
        '### Resetting state { #reset .note }',
        '',
        'Give the component a different key.',
        '',
        '### Pitfalls {/*pitfalls*/}',
        '',
        'Never mutate it.',
        '',
        '## Only code',
        '',
        '```js',
        'setN(1);',
        '```',
        '',
        '## Sharing it',
        '',
        'Lift it up to the closest parent.',
      ].join('\n'),
    );
    expect(sections.map((s) => [s.breadcrumb, s.anchor, s.language, s.codeBlocks])).toEqual([
      [['Managing state'], 'managing-state', 'markdown', 0],
      [['Managing state', 'Adding state'], 'adding', 'javascript', 1],
      [['Managing state', 'Adding state', 'Resetting state'], 'reset', 'markdown', 0],
      [['Managing state', 'Adding state', 'Pitfalls'], 'pitfalls', 'markdown', 0],
      // "Only code" says nothing outside its code: its snippet stands for it.
      [['Managing state', 'Sharing it'], 'sharing-it', 'markdown', 0],
    ]);
    const adding = sections[1]!;
    expect(adding.title).toBe('Managing state › Adding state');
    expect(adding.sourceUrl).toBe(`${PAGE}#adding`);
    expect(adding.text).toContain('const [n, setN] = useState(0);\n# not a heading inside code\n```');
    expect(adding.text.startsWith('Call `useState`')).toBe(true);
    expect(adding.description).toBe('Call useState at the top level.');
    expect(sections.map((s) => s.position)).toEqual([0, 1, 2, 3, 4]);
  });

  it('puts a page without headings in one section named by the page title', () => {
    const sections = extractSections({ url: PAGE, title: 'Notes', markdown: 'Some prose about things.' }, []);
    expect(sections).toHaveLength(1);
    expect(sections[0]).toMatchObject({ breadcrumb: ['Notes'], anchor: null, sourceUrl: PAGE, text: 'Some prose about things.' });
  });

  it("takes an HTML page's API entries as sections with their ids, and not a bold line that is no entry", () => {
    const html = `<html><head><title>json</title></head><body><main>
      <h1 id="top">json — JSON encoder</h1><p>Intro text here.</p>
      <h2 id="usage">Basic Usage</h2>
      <dl><dt id="json.dumps">json.dumps(obj)</dt><dd><p>Serialize obj to a JSON formatted str.</p></dd>
          <dt id="json.loads">json.loads(s)</dt><dd><p>Deserialize s to a Python object.</p></dd></dl>
      <p><strong>Table 1. Conversions</strong></p>
      <p>More about the table.</p>
      </main></body></html>`;
    const r = extractDocument({ url: 'https://docs.example/json.html', contentType: 'text/html', body: html });
    const sections = r.sections ?? [];
    expect(sections.map((s) => [s.breadcrumb.at(-1), s.anchor])).toEqual([
      ['json — JSON encoder', 'top'],
      ['json.dumps(obj)', 'json.dumps'],
      ['json.loads(s)', 'json.loads'],
    ]);
    // The caption and the paragraph after it stay in the last entry's section.
    expect(sections[2]!.text).toContain('Table 1. Conversions');
    expect(sections[2]!.breadcrumb).toEqual(['json — JSON encoder', 'Basic Usage', 'json.loads(s)']);
  });

  it('gives the same section on two pages one hash, whatever its links point to', () => {
    const a = extractSections({ url: 'https://d.example/all.html', title: 'All', markdown: '## fs.read\n\nSee [open](fs.html#open).' }, []);
    const b = extractSections({ url: 'https://d.example/fs.html', title: 'fs', markdown: '## fs.read\n\nSee [open](#open).' }, []);
    expect(a.at(-1)!.hash).toBe(b.at(-1)!.hash);
  });

  it('bounds a section, closing a code fence it cuts', () => {
    const code = Array.from({ length: 4000 }, (_, i) => `line(${i});`).join('\n');
    const [section] = extractSections({ url: PAGE, title: 'Big', markdown: `Prose first.\n\n\`\`\`js\n${code}\n\`\`\`` }, []);
    expect(section!.text.length).toBeLessThanOrEqual(MAX_SECTION_CHARS + 4);
    expect(section!.text.endsWith('\n```')).toBe(true);
  });

  // Hostile input: any text, headings, fences and bold lines in any order.
  const line = fc.oneof(fc.string({ maxLength: 30 }), fc.stringMatching(/^#{1,7} ?[a-z{}#/* -]{0,15}$/), fc.constantFrom('```', '~~~', '```js', '````', '**term(x)**', '', '{#x}', '<Tag>'));
  it('never throws, and keeps every section inside the page, in order (property)', () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 60 }),
        fc.array(fc.record({ level: fc.integer({ min: 1, max: 9 }), text: fc.string({ maxLength: 15 }), anchor: fc.option(fc.string({ maxLength: 8 })) }), { maxLength: 10 }),
        (lines, headings) => {
          const markdown = lines.join('\n');
          const sections = extractSections({ url: PAGE, title: 'T', markdown, headings }, []);
          const pageLines = new Set(
            markdown
              .replace(/\r\n?/g, '\n')
              .split('\n')
              .map((l) => l.trim()),
          );
          for (const s of sections) {
            expect(s.breadcrumb.length).toBeGreaterThan(0);
            expect(s.title).toBe(s.breadcrumb.join(' › '));
            for (const l of s.text.split('\n')) if (l.trim() !== '') expect(pageLines.has(l.trim())).toBe(true);
          }
          expect(sections.map((s) => s.position)).toEqual(sections.map((_, i) => i));
        },
      ),
      { numRuns: 300 },
    );
  });
});
