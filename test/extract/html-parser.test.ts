import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { Parser } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { parseHtml } from '../../src/core/extract/html-parser.js';
import { FIXTURES } from './helpers.js';

/**
 * The extractor drives htmlparser2's Tokenizer with its own copy of Parser's
 * tree rules (src/core/extract/html-parser.ts). These tests hold it to
 * htmlparser2's Parser, event for event, on the fixtures and on
 * generated tag soup: entities, raw-text and RCDATA tags, foreign content,
 * implied end tags, broken attributes, and input that ends anywhere.
 */

type Event = string;

/** Events as htmlparser2's Parser reports them to a tree builder. */
function reference(html: string, xmlMode: boolean): Event[] {
  const out: Event[] = [];
  const parser = new Parser(
    {
      onopentag: (name, attrs) => out.push(`open ${name} ${JSON.stringify(Object.entries(attrs))}`),
      ontext: (text) => out.push(`text ${text}`),
      onclosetag: () => out.push('close'),
    },
    { xmlMode, decodeEntities: true, recognizeCDATA: true },
  );
  parser.end(html);
  return normalise(out);
}

function ours(html: string, xmlMode: boolean): Event[] {
  const out: Event[] = [];
  parseHtml(html, xmlMode, {
    open: (name, attrs) => out.push(`open ${name} ${JSON.stringify(Object.entries(attrs))}`),
    text: (text) => out.push(`text ${text}`),
    close: () => out.push('close'),
  });
  return normalise(out);
}

/**
 * Adjacent texts merged (where a text is split is not part of the contract),
 * and the closes that end the stream dropped: htmlparser2 closes whatever is
 * still open at the end, the extractor's builder needs no such events.
 */
function normalise(events: Event[]): Event[] {
  const out: Event[] = [];
  for (const e of events) {
    const last = out[out.length - 1];
    if (e.startsWith('text ') && last !== undefined && last.startsWith('text ')) out[out.length - 1] = last + e.slice(5);
    else out.push(e);
  }
  while (out[out.length - 1] === 'close') out.pop();
  return out;
}

function expectSame(html: string): void {
  for (const xmlMode of [false, true]) {
    const expected = reference(html, xmlMode);
    const actual = ours(html, xmlMode);
    if (JSON.stringify(actual) !== JSON.stringify(expected)) {
      expect({ html, xmlMode, events: actual }).toEqual({ html, xmlMode, events: expected });
    }
  }
}

describe('html parser (port of htmlparser2)', () => {
  it('emits what htmlparser2 emits on every extraction fixture', () => {
    const files = readdirSync(FIXTURES).filter((f) => /\.(?:html|xml)$/.test(f));
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) expectSame(readFileSync(path.join(FIXTURES, f), 'utf8'));
  });

  it('emits what htmlparser2 emits on tricky markup', () => {
    for (const html of [
      '',
      '<',
      '</',
      '<!--',
      '<![CDATA[x',
      '<![CDATA[]]>',
      '<script>if (a < b) {}</script><style>p{}</style>',
      '<title>a &amp; b<b></title>',
      '<textarea>x &lt; y</textarea>',
      '<plaintext><b>all text',
      '<p>one<p>two<div>three</p>',
      '<table><tr><td>a<td>b<tr><td>c</table>',
      '<ul><li>a<li>b</ul></br></p>',
      '<form><form><input></form>',
      '<svg><clipPath><foreignObject><p>x</p></foreignObject></clipPath><image/></svg><image>',
      '<math><mi>x</mi><image></math>',
      '<a href="/x?a=1&amp;b=2&c" title=\'q\' data-x=a&lt;b checked>t</a>',
      '<div =x a="1" a="2" CLASS="Up" constructor="c" __proto__="p">t</div>',
      '<b\n="<img linkend="z">',
      '&notit; &notin; &amp &AMP; &#x41; &#65 &#0; &#x110000; &bogus;',
      '<p>a&',
      '<a href="x&am',
      '<SCRIPT>x</script ><ScRiPt>y</SCRIPT>',
      '<scriptx>t</scriptx><titles>u</titles><styl>v',
      '<x:y a:b="1"/><?pi x?><!DOCTYPE html>',
      '<section><title>T</title><para>p</para></section>',
      '<p>\u00e9l\u00e8ve <B\u00c9>x</b\u00e9>',
    ]) {
      expectSame(html);
    }
  });

  const pieces = fc.oneof(
    fc.string({ maxLength: 10 }),
    fc
      .tuple(
        fc.constantFrom(
          'p',
          'div',
          'a',
          'li',
          'ul',
          'table',
          'tr',
          'td',
          'pre',
          'code',
          'span',
          'br',
          'img',
          'input',
          'form',
          'option',
          'select',
          'title',
          'script',
          'style',
          'textarea',
          'xmp',
          'svg',
          'math',
          'foreignObject',
          'desc',
          'mi',
          'image',
          'h1',
          'dd',
          'dt',
          'x:y',
        ),
        fc.constantFrom('', ' class="c"', ' CLASS=a class=b', ' href="/x?a=1&amp;b=2"', " title='&lt;'", ' hidden', ' a=b=c', ' =x', ' a="', ' /', '/'),
        fc.boolean(),
      )
      .map(([t, a, upper]) => `<${upper ? t.toUpperCase() : t}${a}>`),
    fc.constantFrom('p', 'div', 'a', 'li', 'td', 'tr', 'table', 'script', 'title', 'svg', 'br', 'form', 'span').map((t) => `</${t}>`),
    fc.constantFrom('&amp;', '&lt', '&notin', '&#x26;', '&#128;', '&bogus;', '&', '<!-- c -->', '<!-->', '<![CDATA[x<y]]>', '<?x?>', '<!DOCTYPE x>', '</>', '< p>', '<a', '="', '\0', '\n'),
  );

  it('emits what htmlparser2 emits on generated tag soup', () => {
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 40 }), (parts) => {
        expectSame(parts.join(''));
      }),
      { numRuns: 3_000, seed: 4242 },
    );
  });
});
