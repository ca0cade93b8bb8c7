import { describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/core/extract/index.js';
import type { ExtractResult } from '../../src/core/extract/index.js';

/**
 * Hostile and broken input never throws and always finishes. These tests assert
 * results, not timings: they only have to finish inside vitest's timeout.
 */

const URL_HTML = 'https://docs.example.test/page.html';

function html(body: string | Uint8Array, contentType: string | null = 'text/html'): ExtractResult {
  return extractDocument({ url: URL_HTML, contentType, body });
}

function latin1(s: string): Uint8Array {
  return Uint8Array.from(Buffer.from(s, 'latin1'));
}

describe('malformed HTML', () => {
  it('survives unclosed tags and stray end tags', () => {
    const r = html('<html><body><main><h2 id="x">Start</h2><p>text <b>bold <i>both</b> after</i></div></span><li>stray<pre><code>let a = 1;\nlet b = 2;</main>');
    expect(r.snippets.map((s) => s.code)).toEqual(['let a = 1;\nlet b = 2;']);
    expect(r.snippets[0]!.sourceUrl).toBe(`${URL_HTML}#x`);
  });

  it('handles a 5 MB line', () => {
    const line = 'x'.repeat(5 * 1024 * 1024);
    const r = html(`<main><p>${line}</p><pre>short = 1\nok = 2</pre><pre>${line}</pre></main>`);
    expect(r.snippets.map((s) => s.code)).toEqual(['short = 1\nok = 2']);
    expect(r.skipped).toContainEqual(expect.objectContaining({ reason: 'too-large' }));
    expect(r.page.markdown.length).toBeGreaterThan(5 * 1024 * 1024);
  });

  it('handles 10,000 levels of nesting, keeping the text', () => {
    const deep = '<div>'.repeat(10_000) + '<pre>deep = True\nok = 1</pre>' + '</div>'.repeat(10_000);
    const r = html(`<html><body>${deep}<a href="/after">after</a></body></html>`);
    expect(r.snippets.map((s) => s.code)).toEqual(['deep = True\nok = 1']);
    expect(r.page.links).toEqual(['https://docs.example.test/after']);
    const spans = '<span>'.repeat(10_000) + 'inline' + '</span>'.repeat(10_000);
    expect(html(`<p>${spans}</p>`).page.markdown).toContain('inline');
  });

  it('drops NUL bytes everywhere', () => {
    const r = html(latin1('<title>a\0b</title><main><h1>T\0itle</h1><pre>x\0 = 1\ny = 2</pre></main>'));
    expect(r.page.title).toBe('Title');
    expect(r.snippets[0]!.code).toBe('x = 1\ny = 2');
    expect(JSON.stringify(r)).not.toContain('\\u0000');
  });

  it('keeps a block that sits inside a broken heading after that heading', () => {
    const r = html('<main><h2 id="h">Title<p>intro</p><pre>x = 1\ny = 2</pre></main>');
    expect(r.snippets[0]!.sourceUrl).toBe(`${URL_HTML}#h`);
  });

  it('repairs lone surrogates in string input', () => {
    const r = html('<main><pre>a = "\ud800"\nb = 2</pre></main>');
    expect(r.snippets[0]!.code).toBe('a = "\ufffd"\nb = 2');
  });

  it('accepts garbage and binary bodies', () => {
    for (const body of ['', '<', '<<<>>>', '<pre', '</pre>', '<!--', '<![CDATA[', '<script>', new Uint8Array([0xff, 0xfe, 0x00, 0x01, 0x80])]) {
      expect(() => html(body)).not.toThrow();
    }
  });

  it('never throws on bad input objects', () => {
    expect(() => extractDocument({ url: 'not a url', body: '<pre>a\nb</pre>' })).not.toThrow();
    expect(() => extractDocument({ url: '', contentType: 'text/html; charset=nonsense-42', body: new Uint8Array([0x41]) })).not.toThrow();
    expect(() => extractDocument(null as unknown as { url: string; body: string })).not.toThrow();
  });
});

describe('encodings', () => {
  it('uses the charset from the Content-Type header', () => {
    const r = html(latin1('<main><h1>Caf\xe9</h1><pre>caf\xe9 = "cr\xe8me"\nok = 1</pre></main>'), 'text/html; charset=ISO-8859-1');
    expect(r.page.title).toBe('Café');
    expect(r.snippets[0]!.code).toBe('café = "crème"\nok = 1');
  });

  it('uses <meta charset> when the header has none', () => {
    const r = html(latin1('<html><head><meta charset="windows-1252"></head><body><main><h1>\x93Quotes\x94</h1></main></body></html>'), 'text/html');
    expect(r.page.title).toBe('\u201cQuotes\u201d');
  });

  it('uses <meta http-equiv content-type>', () => {
    const bytes = Buffer.concat([
      Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=shift_jis"></head><body><main><h1>'),
      Buffer.from([0x93, 0xfa, 0x96, 0x7b]),
      Buffer.from('</h1></main></body></html>'),
    ]);
    expect(html(Uint8Array.from(bytes)).page.title).toBe('日本');
  });

  it('reads UTF-16 with a byte-order mark', () => {
    const text = '<main><h1>Grüße</h1><pre>x = 1\ny = 2</pre></main>';
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const r = html(Uint8Array.from(bytes), 'text/html');
    expect(r.page.title).toBe('Grüße');
    expect(r.snippets[0]!.code).toBe('x = 1\ny = 2');
  });

  it('falls back to UTF-8 for unknown labels and replaces invalid bytes', () => {
    const r = html(Uint8Array.from([...Buffer.from('<main><h1>ok '), 0xc3, 0x28, ...Buffer.from('</h1></main>')]), 'text/html; charset=x-no-such-thing');
    expect(r.page.title).toBe('ok \ufffd(');
  });

  it('hashes the raw bytes, not the decoded text', () => {
    const bytes = latin1('<main><h1>Caf\xe9</h1></main>');
    const a = html(bytes, 'text/html; charset=iso-8859-1');
    const b = html('<main><h1>Café</h1></main>');
    expect(a.page.title).toBe(b.page.title);
    expect(a.page.contentHash).not.toBe(b.page.contentHash);
  });
});

describe('markdown and text edge cases', () => {
  it('survives deep blockquotes and lists, unclosed fences and a long line', () => {
    const bodies = [
      '>'.repeat(10_000) + ' deep',
      '- '.repeat(5_000) + 'item',
      '```js\nconst unclosed = true;\n',
      `# T\n\n${'y'.repeat(5 * 1024 * 1024)}\n\n\`\`\`\nok\n\`\`\``,
      '---\ntitle: [unbalanced\n---\n# x',
    ];
    for (const body of bodies) {
      const r = extractDocument({ url: 'https://docs.example.test/a.md', body });
      expect(r.page.format).toBe('markdown');
    }
    const unclosed = extractDocument({ url: 'https://docs.example.test/a.md', body: bodies[2]! });
    expect(unclosed.snippets[0]!.code).toBe('const unclosed = true;');
  });

  it('survives broken rst and adoc', () => {
    expect(() => extractDocument({ url: 'https://x.test/a.rst', body: '::\n\n' + '   x\n'.repeat(1000) + '.. code-block::\n' })).not.toThrow();
    expect(() => extractDocument({ url: 'https://x.test/a.adoc', body: '----\nno end\n[source,\n....' })).not.toThrow();
  });
});
