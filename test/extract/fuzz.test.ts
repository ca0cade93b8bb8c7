import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractDocument, normalizeCode, normalizeLanguage } from '../../src/core/extract/index.js';
import type { ExtractResult } from '../../src/core/extract/index.js';

/**
 * Property tests: 10,000 generated documents in every format keep the result's
 * invariants, and code rendered the way real highlighters render it comes back
 * byte for byte.
 */

const md5 = (s: string | Uint8Array): string => createHash('md5').update(s).digest('hex');
const FORMATS = new Set(['html', 'markdown', 'text', 'rst', 'adoc']);
const CONFIDENCE = new Set(['declared', 'filename', 'detected', 'unknown']);
const REASONS = new Set(['empty', 'duplicate', 'outside-main', 'line-number-gutter', 'nested', 'too-large', 'not-code', 'interface', 'hidden']);

/** Violated invariants, as messages (plain checks: 10,000 runs of `expect` would dominate the test's time). */
function violations(r: ExtractResult, url: string, body: string | Uint8Array): string[] {
  const bad: string[] = [];
  const check = (ok: boolean, what: string): void => {
    if (!ok) bad.push(what);
  };
  const page = r.page;
  check(FORMATS.has(page.format), `format ${page.format}`);
  check(page.contentHash === md5(body), 'contentHash is the md5 of the body');
  check(page.url === url, 'page url');
  check(new Set(page.links).size === page.links.length, 'links are unique');
  for (const l of page.links) check(/^https?:\/\/[^#]*$/.test(l), `link ${l} is absolute http(s) without fragment`);
  check(!/[\n\0]/.test(page.title), 'title has no newline or NUL');
  check(typeof page.markdown === 'string' && !page.markdown.includes('\0'), 'markdown is a string without NUL');
  const base = url.split('#')[0]!;
  const hashes = new Set<string>();
  r.snippets.forEach((s, i) => {
    check(s.position === i, 'positions are 0..n-1');
    check(s.code.trim().length > 0, 'code is not blank');
    check(s.codeHash === md5(normalizeCode(s.code)), 'codeHash is the md5 of the normalised code');
    check(!hashes.has(s.codeHash), 'no duplicate code on a page');
    hashes.add(s.codeHash);
    check(normalizeLanguage(s.language) === s.language && /^[\x21-\x7e]+$/.test(s.language), `language ${JSON.stringify(s.language)} is canonical`);
    check(CONFIDENCE.has(s.languageConfidence), 'confidence');
    check(s.sourceUrl.startsWith(base), 'sourceUrl is on the page');
    check(!/[\n\0]/.test(s.title) && !/[\n\0]/.test(s.description), 'title and description are one line');
    check(s.description.length <= 640, 'description is bounded');
    check(!s.code.includes('\0'), 'code has no NUL');
  });
  check((r.origins ?? []).length === r.snippets.length, 'one origin per snippet');
  for (const k of r.skipped ?? []) check(REASONS.has(k.reason), `skip reason ${k.reason}`);
  return bad;
}

// Pieces of documentation markup, valid and broken, in all formats.
const word = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_.-]{0,10}$/);
const text = fc.oneof(
  word,
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('&amp;', '&lt;', '&#x26;', '&bogus;', '\t', '\n', '\n\n', '  ', '\u00a0', '\0', '\ud800', '¶', '>>> ', '$ '),
);
const codeText = fc.array(fc.oneof(word, text, fc.constantFrom('x = 1', 'print(x)', 'SELECT 1;', '  indented', '{', '}', '</pre>')), { maxLength: 6 }).map((a) => a.join('\n'));
const htmlPiece = fc.oneof(
  text,
  fc.tuple(fc.constantFrom('h1', 'h2', 'h3', 'p', 'li', 'div', 'span', 'code', 'em', 'a', 'nav', 'main', 'article', 'td', 'dt', 'dd'), text).map(([t, x]) => `<${t}>${x}</${t}>`),
  fc.tuple(fc.constantFrom('h2', 'h3', 'section', 'dt'), word, text).map(([t, id, x]) => `<${t} id="${id}">${x}`),
  fc.tuple(fc.constantFrom('', ' class="language-python"', ' class="highlight-js"', ' data-lang="go"', ' class="lang-"'), codeText).map(([c, x]) => `<pre${c}><code>${x}</code></pre>`),
  codeText.map((x) => `<pre>${x}</pre>`),
  codeText.map(
    (x) =>
      `<pre class="shiki"><code>${x
        .split('\n')
        .map((l) => `<span class="line">${l}</span>`)
        .join('\n')}</code></pre>`,
  ),
  codeText.map((x) => `<table class="highlighttable"><tr><td class="linenos"><pre>1\n2</pre></td><td class="code"><pre>${x}</pre></td></tr></table>`),
  fc.tuple(word, text).map(([h, x]) => `<a href="${h}">${x}</a>`),
  fc.constantFrom('<a href="https://other.example/x#y">o</a>', '<a href="javascript:void(0)">j</a>', '<a href="mailto:a@b">m</a>', '<a href="//cdn.example/z">c</a>', '<a href="#frag">f</a>'),
  fc.constantFrom(
    '<div role="tablist"><button role="tab" id="t1" aria-controls="p1">One</button></div><div role="tabpanel" id="p1"><pre>tab = 1\nok</pre></div>',
    '<button>Copy</button>',
    '<span class="sr-only">Copied!</span>',
    '<meta name="robots" content="nofollow">',
    '<title>T — Site</title>',
    '<base href="https://base.example/dir/">',
    '<link rel="canonical" href="/c">',
  ),
  fc.constantFrom(
    '<',
    '>',
    '</div>',
    '<div',
    '<!--',
    '-->',
    '<![CDATA[x]]>',
    '<script>var a = "<pre>";</script>',
    '<style>p{}</style>',
    '<br>',
    '<hr/>',
    '<ul><li>a<li>b</ul>',
    '<table><tr><td>c</table>',
    '<dl><dt id="f">f()<dd>x</dl>',
  ),
);
const mdPiece = fc.oneof(
  text,
  fc.tuple(fc.constantFrom('# ', '## ', '### ', '- ', '> ', '1. ', '    ', '\t', '=== "', '!!! note ', '::: '), text).map(([m, x]) => m + x),
  fc.tuple(fc.constantFrom('', 'js', 'python title="a.py"', 'ts:src/x.ts', '{.sh}'), codeText).map(([l, x]) => `\`\`\`${l}\n${x}\n\`\`\``),
  fc.constantFrom('---\ntitle: T\n---', '```', '~~~', '<pre>a\nb</pre>', '<TabItem label="L">', '</TabItem>', '[l](http://x.test/a)', '| a | b |\n|---|---|\n| 1 | 2 |'),
  // MDX as authors write it: components, heading ids, comments, fence meta, pymdown blocks.
  fc.constantFrom(
    '<Sandpack>',
    '</Sandpack>',
    '<Pitfall>',
    '</Pitfall>',
    '<CodeGroup>',
    '</CodeGroup>',
    '<Tabs>',
    '</Tabs>',
    '<Note>x</Note>',
    '<>',
    '</>',
    '<Foo a={b > c} />',
    '<Foo a="{"',
    '{/*',
    '*/}',
  ),
  fc.tuple(fc.constantFrom('## ', '### '), text, word).map(([m, x, id]) => `${m}${x} {/*${id}*/}`),
  fc
    .tuple(fc.constantFrom('js src/a.js hidden', 'js {2} [[1, 2, "x"]]', 'js {expectedErrors: {a: [1]}} src/b.js', 'bash npm', 'ts [npm]', 'js {{{', 'js [[['), codeText)
    .map(([l, x]) => `\`\`\`${l}\n${x}\n\`\`\``),
  fc.constantFrom('/// tip | T', '//// tab | Py', '///', '////', 'import X from "y";', 'export const a = 1;'),
);
const rstPiece = fc.oneof(
  text,
  fc.tuple(text, fc.constantFrom('===', '---', '~~~~~~~~')).map(([t, u]) => `${t}\n${u}`),
  fc.tuple(fc.constantFrom('.. code-block:: python', '.. code::', '.. highlight:: c', '.. function:: f(x)', '.. note::', '.. _label:', '::', 'Para::'), codeText).map(
    ([d, x]) =>
      `${d}\n\n${x
        .split('\n')
        .map((l) => `   ${l}`)
        .join('\n')}`,
  ),
  fc.constantFrom('>>> 1 + 1\n2', ':mod:`x` and ``y``', '+---+---+\n| a | b |\n+---+---+'),
);
const adocPiece = fc.oneof(
  text,
  fc.tuple(fc.constantFrom('= ', '== ', '=== ', '[[id]]\n== ', '.title.rb\n'), text).map(([m, x]) => m + x),
  fc
    .tuple(fc.constantFrom('[source,ruby]\n----', '----', '....', '[source]', '++++', '|==='), codeText)
    .map(([d, x]) => `${d}\n${x}\n${d.split('\n').pop() === '[source]' ? '' : d.split('\n').pop()}`),
  fc.constantFrom(':source-language: go', '// comment', '////\nblock\n////', ' indented literal', 'include::x.adoc[]'),
);

const doc = fc.oneof(
  fc.record({ ext: fc.constant('.html'), type: fc.constantFrom('text/html', 'text/html; charset=iso-8859-1', null), parts: fc.array(htmlPiece, { maxLength: 25 }) }),
  fc.record({ ext: fc.constantFrom('.md', '.mdx'), type: fc.constantFrom('text/markdown', null), parts: fc.array(mdPiece, { maxLength: 20 }) }),
  fc.record({ ext: fc.constantFrom('.txt', '.rst.txt', '.rst'), type: fc.constantFrom('text/plain', null), parts: fc.array(rstPiece, { maxLength: 15 }) }),
  fc.record({ ext: fc.constant('.adoc'), type: fc.constant(null), parts: fc.array(adocPiece, { maxLength: 15 }) }),
);

describe('generated documents', () => {
  it('keep every invariant (10,000 documents, all formats)', () => {
    fc.assert(
      fc.property(doc, fc.boolean(), fc.constantFrom('', '#top'), ({ ext, type, parts }, asBytes, frag) => {
        const url = `https://docs.example.test/dir/page${ext}${frag}`;
        const source = parts.join(ext === '.html' ? '' : '\n\n');
        const body = asBytes ? Uint8Array.from(Buffer.from(source, 'utf8')) : source;
        const r = extractDocument({ url, contentType: type, body });
        const bad = violations(r, url, body);
        if (bad.length > 0) throw new Error(`${bad.join('; ')} for ${JSON.stringify(source).slice(0, 300)}`);
      }),
      { numRuns: 10_000, seed: 20240501 },
    );
  });
});

// Code a reader could copy: first and last lines carry text and no trailing
// blanks (edge blank lines are dropped by design), anything goes in between.
const codeLine = fc.stringMatching(/^[ \t]{0,4}[\x21-\x7e]([\x20-\x7e\t]{0,30}[\x21-\x7e])?$/).filter((l) => !/^\s*(?:copy|copied!?)\s*$/i.test(l));
const innerLine = fc.oneof(
  codeLine,
  fc.constantFrom('', '   ', '\t'),
  fc.string({ unit: 'grapheme-ascii', maxLength: 20 }).map((s) => s.replace(/[\r\0]/g, '')),
);
const code = fc.tuple(codeLine, fc.array(innerLine, { maxLength: 6 }), codeLine).map(([a, mid, z]) => [a, ...mid, z].join('\n'));

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
// Split a line into Pygments-like token spans at arbitrary points.
const spans = (line: string): string => line.replace(/(\w+|\W)/g, (t) => `<span class="n">${esc(t)}</span>`);

const STYLES: Record<string, (c: string) => string> = {
  plain: (c) => `<pre>${esc(c)}</pre>`,
  'pre-code': (c) => `<pre><code class="language-text">${esc(c)}\n</code></pre>`,
  pygments: (c) => `<div class="highlight-default"><div class="highlight"><pre><span></span>${c.split('\n').map(spans).join('\n')}\n</pre></div></div>`,
  'pygments-linenos': (c) =>
    `<table class="highlighttable"><tr><td class="linenos"><div class="linenodiv"><pre>${c
      .split('\n')
      .map((_, i) => i + 1)
      .join('\n')}</pre></div></td><td class="code"><div class="highlight"><pre>${c.split('\n').map(spans).join('\n')}</pre></div></td></tr></table>`,
  shiki: (c) =>
    `<pre class="shiki"><code>${c
      .split('\n')
      .map((l) => `<span class="line"><span style="color:#fff">${esc(l)}</span></span>`)
      .join('\n')}</code></pre>`,
  prism: (c) =>
    `<pre class="prism-code language-js"><code>${c
      .split('\n')
      .map((l) => `<span class="token-line"><span class="token plain">${esc(l)}</span><br></span>`)
      .join('')}</code><button>Copy</button></pre>`,
  'expressive-code': (c) =>
    `<pre data-language="js"><code>${c
      .split('\n')
      .map((l) => `<div class="ec-line"><div class="code">${esc(l)}</div></div>`)
      .join('')}</code></pre>`,
  github: (c) =>
    `<table class="highlight js-file-line-container">${c
      .split('\n')
      .map((l, i) => `<tr><td class="blob-num" data-line-number="${i + 1}"></td><td class="blob-code blob-code-inner">${esc(l)}</td></tr>`)
      .join('\n')}</table>`,
};

describe('code round trip', () => {
  for (const [style, render] of Object.entries(STYLES)) {
    it(`${style}: the extracted code equals the code the page shows`, () => {
      fc.assert(
        fc.property(code, (c) => {
          const r = extractDocument({ url: 'https://docs.example.test/p.html', contentType: 'text/html', body: `<main><h2>Example</h2>${render(c)}</main>` });
          expect(r.snippets.map((s) => s.code)).toEqual([c]);
        }),
        { numRuns: 300, seed: 7 },
      );
    });
  }

  it('markdown fences give the code back unchanged', () => {
    fc.assert(
      fc.property(code, (c) => {
        const ticks = '`'.repeat(Math.max(3, ...(c.match(/`+/g) ?? []).map((m) => m.length + 1)));
        const r = extractDocument({ url: 'https://docs.example.test/p.md', body: `# T\n\n${ticks}text\n${c}\n${ticks}\n` });
        expect(r.snippets.map((s) => s.code)).toEqual([c]);
      }),
      { numRuns: 500, seed: 11 },
    );
  });
});
