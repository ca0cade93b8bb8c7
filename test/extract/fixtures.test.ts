import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BASE, extractFixture, FIXTURES, snippetWith } from './helpers.js';

/**
 * One fixture per documentation theme, each written for this test in the markup
 * style of that theme. Each `it` names the rule it proves.
 */

describe('Sphinx', () => {
  const r = extractFixture('sphinx.html');

  it('reads a Pygments linenos table as one block without the gutter, exactly as shown', () => {
    const s = snippetWith(r, 'import tallyho');
    expect(s.code).toBe('import tallyho\n\nwith tallyho.open("visits.ledger") as ledger:\n\tledger.bump("home & garden")');
    expect(r.skipped).toContainEqual(expect.objectContaining({ reason: 'line-number-gutter', tag: 'pre' }));
  });

  it('takes the language from the highlight-* wrapper, even around a table', () => {
    expect(snippetWith(r, 'import tallyho')).toMatchObject({ language: 'python', languageConfidence: 'declared' });
    expect(snippetWith(r, 'flush_every')).toMatchObject({ language: 'toml', languageConfidence: 'declared' });
  });

  it('titles blocks "Section | Page h1" without permalink symbols, anchored at the section id', () => {
    expect(r.page.title).toBe('tallyho — Counting things reliably');
    const s = snippetWith(r, 'import tallyho');
    expect(s.title).toBe('Opening a ledger | tallyho — Counting things reliably');
    expect(s.sourceUrl).toBe(`${BASE}sphinx.html#opening-a-ledger`);
    expect(s.title).not.toContain('¶');
  });

  it('keeps >>> prompts and reads a code-block caption as the filename', () => {
    expect(snippetWith(r, 'ledger["home').code).toBe('>>> ledger["home & garden"]\n1');
    expect(snippetWith(r, 'flush_every').filename).toBe('settings.toml');
  });

  it('uses the prose before a block and the sentence after that explains it', () => {
    const s = snippetWith(r, 'import tallyho');
    expect(s.description).toContain('Open one with open() and count:');
    expect(s.description).toContain('This opens the ledger');
  });

  it('reads page metadata and skips the sidebar', () => {
    expect(r.page).toMatchObject({
      description: 'Reference for the tallyho counting module.',
      siteName: 'Tallyho 2.1 documentation',
      canonicalUrl: 'https://docs.tallyho.example/en/latest/library/tallyho.html',
      noFollow: false,
      format: 'html',
    });
    expect(r.skipped).toContainEqual(expect.objectContaining({ reason: 'outside-main', preview: 'not code, a sidebar' }));
    expect(r.page.markdown).not.toContain('This page');
    expect(r.page.links).toEqual([`${BASE}genindex.html`, `${BASE}py-modindex.html`, `${BASE}sphinx.html`]);
  });

  it('hashes the raw bytes for the page and the normalised code for snippets', () => {
    const raw = readFileSync(path.join(FIXTURES, 'sphinx.html'));
    expect(r.page.contentHash).toBe(createHash('md5').update(raw).digest('hex'));
    const s = snippetWith(r, 'flush_every');
    expect(s.codeHash).toBe(createHash('md5').update('[ledger]\nflush_every = 10').digest('hex'));
  });
});

describe('MkDocs Material', () => {
  const r = extractFixture('mkdocs-material.html');

  it('labels blocks inside content tabs with the tab', () => {
    const pip = snippetWith(r, 'pip install');
    const conda = snippetWith(r, 'conda install');
    expect(pip).toMatchObject({ tab: 'pip', title: 'Install the package (pip) | Installation', language: 'shell' });
    expect(conda).toMatchObject({ tab: 'conda', title: 'Install the package (conda) | Installation' });
  });

  it('reads the .filename title, drops line-number spans and the copy button', () => {
    const s = snippetWith(r, 'workers');
    expect(s.code).toBe('workers: 4\nretry: true');
    expect(s.filename).toBe('sprocket.yml');
    expect(r.page.markdown).not.toMatch(/Copy to clipboard|>Copy</);
  });

  it('keeps the edit button and the footer out of the markdown', () => {
    expect(r.page.siteName).toBe('Sprocket Docs');
    expect(r.page.markdown.startsWith('# Installation')).toBe(true);
    expect(r.page.markdown).not.toContain('Made with Material');
    expect(r.page.markdown).toContain('```yaml\nworkers: 4\nretry: true\n```');
  });
});

describe('Docusaurus', () => {
  const r = extractFixture('docusaurus.html');

  it('turns Prism token lines into exactly one line each, blank lines included', () => {
    expect(snippetWith(r, 'glow').code).toBe("import { glow } from 'lanternfish';\n\nconst light: number = glow(3);");
  });

  it('reads the codeBlockTitle as the filename and language-* as the language', () => {
    expect(snippetWith(r, 'glow')).toMatchObject({ filename: 'src/lantern.ts', language: 'typescript', languageConfidence: 'declared' });
  });

  it('labels tab panels (hidden ones too) from the tab list', () => {
    expect(snippetWith(r, 'npm install').tab).toBe('npm');
    expect(snippetWith(r, 'yarn add')).toMatchObject({ tab: 'Yarn', title: 'Install (Yarn) | Quick start' });
  });

  it('skips breadcrumbs, "Edit this page", pagination and the table of contents; honours robots nofollow', () => {
    const md = r.page.markdown;
    for (const junk of ['Edit this page', 'Next steps', 'Docs', 'Copyright']) expect(md).not.toContain(junk);
    expect(md).not.toContain('\u200b');
    expect(r.page.noFollow).toBe(true);
    expect(r.page.title).toBe('Quick start');
  });
});

describe('rustdoc', () => {
  const r = extractFixture('rustdoc.html');

  it('takes the language from a bare class on the pre', () => {
    expect(snippetWith(r, 'ring.push(3)')).toMatchObject({ language: 'rust', languageConfidence: 'declared' });
  });

  it('decodes entities in highlighted code and keeps the heading anchor', () => {
    const s = snippetWith(r, 'ring.push(3)');
    expect(s.code).toContain('assert_eq!(ring.iter().collect::<Vec<_>>(), [&2, &3]);');
    expect(s.sourceUrl).toBe(`${BASE}rustdoc.html#examples`);
    expect(s.title).toBe('Examples | Struct ringlet::Ring');
  });

  it('keeps the copy-path button and the source link out of titles and markdown', () => {
    expect(r.page.title).toBe('Struct ringlet::Ring');
    expect(r.page.markdown).not.toContain('Copy item path');
    expect(r.page.markdown).not.toContain('source');
    expect(r.page.markdown).not.toContain('§');
  });
});

describe('Javadoc', () => {
  const r = extractFixture('javadoc.html');

  it('detects Java in undeclared <pre><code> blocks', () => {
    expect(snippetWith(r, 'Meter.of(() ->')).toMatchObject({ language: 'java', languageConfidence: 'detected' });
    expect(snippetWith(r, 'try (Meter m')).toMatchObject({ language: 'java' });
  });

  it('keeps leading indentation of a <pre> without <code>', () => {
    expect(snippetWith(r, 'try (Meter m').code).toBe('  try (Meter m = Meter.of(source)) {\n      m.start(Duration.ofSeconds(1));\n  }');
  });

  it('titles method examples by the method heading and anchors them at its section', () => {
    const s = snippetWith(r, 'try (Meter m');
    expect(s.title).toBe('stop | Class Meter');
    expect(s.sourceUrl).toBe(`${BASE}javadoc.html#stop()`);
  });

  it('skips the navigation bar and the legal footer', () => {
    expect(r.page.markdown).not.toContain('Skip navigation');
    expect(r.page.markdown).not.toContain('All rights reserved');
    expect(r.page.markdown).not.toContain('Package</a>');
  });
});

describe('Starlight', () => {
  const r = extractFixture('starlight.html');

  it('reads Expressive Code line divs as lines and the frame title as the filename', () => {
    const s = snippetWith(r, 'serve({');
    expect(s.code).toBe("import { serve } from 'kestrel/serve';\n\nserve({ dir: 'dist', port: 4321 });");
    expect(s).toMatchObject({ filename: 'src/serve.mjs', language: 'javascript', languageConfidence: 'declared' });
  });

  it('labels <starlight-tabs> panels through aria-labelledby', () => {
    expect(snippetWith(r, 'npm run build')).toMatchObject({ tab: 'npm', title: 'Build the site (npm) | Deploying' });
    expect(snippetWith(r, 'pnpm run build').tab).toBe('pnpm');
  });

  it('drops "Terminal window" screen-reader text and Copied! labels', () => {
    for (const s of r.snippets) {
      expect(s.code).not.toContain('Terminal window');
      expect(s.code).not.toContain('Copied');
    }
  });

  it('uses the h1 of the main landmark and skips sidebar, table of contents and footer', () => {
    expect(r.page.title).toBe('Deploying');
    expect(r.page.markdown).not.toContain('On this page');
    expect(r.page.markdown).not.toContain('Edit page');
    expect(snippetWith(r, 'serve({').description).toBe('Preview the output with the bundled server. This serves dist on port 4321.');
  });
});

describe('GitBook', () => {
  const r = extractFixture('gitbook.html');

  it('reads a paragraph that is just a path as the next block’s filename', () => {
    expect(snippetWith(r, 'import hmac')).toMatchObject({ filename: 'handlers/webhook.py', language: 'python', languageConfidence: 'filename' });
    expect(snippetWith(r, 'import hmac').description).not.toContain('handlers/webhook.py');
  });

  it('reads figcaptions as filenames and role=tab buttons as tab labels', () => {
    expect(snippetWith(r, '"delivered"')).toMatchObject({ filename: 'payload.json', tab: 'JSON', language: 'json' });
    expect(snippetWith(r, 'curl -X POST')).toMatchObject({ tab: 'cURL', language: 'shell' });
  });

  it('skips the search box, breadcrumbs and page footer', () => {
    expect(r.page.markdown).not.toContain('Last modified');
    expect(r.page.markdown).not.toContain('Next: Auth');
    expect(r.page.title).toBe('Webhooks');
    expect(r.page.siteName).toBe('Parcelpost API');
  });
});

describe('DocBook', () => {
  it('reads DocBook XML: programlisting and screen, section titles, CDATA, example titles', () => {
    const r = extractFixture('docbook.xml');
    expect(r.page.title).toBe('Quarry Administrator Guide');
    const sql = snippetWith(r, 'quarry_snapshot(');
    expect(sql).toMatchObject({ language: 'sql', languageConfidence: 'declared', title: 'Online backups | Quarry Administrator Guide' });
    expect(sql.code).toContain("WHERE name <> 'scratch';");
    expect(sql.sourceUrl).toBe(`${BASE}docbook.xml#backups-online`);
    expect(snippetWith(r, '0 3 * * *').filename).toBe('/etc/cron.d/quarry-backup');
    expect(snippetWith(r, 'quarryctl snapshots')).toMatchObject({ code: '$ quarryctl snapshots\nnightly   2024-05-01 03:00', language: 'console' });
    expect(r.origins).toEqual(['programlisting', 'programlisting', 'screen']);
  });

  it('reads DocBook HTML (PostgreSQL style): titlepage headings, sect ids, navheader/navfooter skipped', () => {
    const r = extractFixture('docbook.html');
    expect(r.page.title).toBe('4.2. Restoring Snapshots');
    expect(snippetWith(r, 'quarryctl restore').sourceUrl).toBe(`${BASE}docbook.html#BACKUPS-RESTORE`);
    const one = snippetWith(r, 'quarry_restore_table');
    expect(one).toMatchObject({ title: '4.2.1. Restoring One Table | 4.2. Restoring Snapshots', language: 'sql' });
    expect(one.sourceUrl).toBe(`${BASE}docbook.html#BACKUPS-RESTORE-PARTIAL`);
    expect(snippetWith(r, 'ledger_lines').code).toBe('restored  accounts      1024 rows\nrestored  ledger_lines  88213 rows');
    expect(r.page.markdown).not.toMatch(/\bPrev\b|\bNext\b|\bHome\b/);
  });

  it('does not take an introduction of the next block as the explanation of this one', () => {
    const r = extractFixture('docbook.html');
    expect(snippetWith(r, 'quarryctl restore').description).not.toContain('prints one line per table');
  });
});

describe('highlighters and markup edge cases', () => {
  const r = extractFixture('highlighters.html');

  it('Shiki: one span.line per line, tabs kept', () => {
    expect(snippetWith(r, 'def area').code).toBe('def area(w, h):\n\treturn w * h\n\nprint(area(2, 3))');
  });

  it('Chroma: line-number table cell dropped, language from data-lang', () => {
    expect(snippetWith(r, 'package main')).toMatchObject({ code: 'package main\nfunc main() {}', language: 'go' });
  });

  it('GitHub: one table row per line, gutter cells dropped, empty line kept', () => {
    const s = snippetWith(r, 'export const answer');
    expect(s.code).toBe('export const answer = 42;\n\nconsole.log(`answer <${answer}>`);');
    expect(r.origins?.[r.snippets.indexOf(s)]).toBe('table');
  });

  it('multi-line standalone <code> is a block; single-line inline <code> is not', () => {
    expect(snippetWith(r, 'make install').code).toBe('cd build\nmake install');
    expect(r.snippets.some((s) => s.code === 'ls -la')).toBe(false);
  });

  it('entities, tabs and inner whitespace are preserved byte for byte', () => {
    expect(snippetWith(r, 'if (a').code).toBe('if (a < b && c > d) {\n\treturn "<tag>";\t// tab before this comment\n}');
  });

  it('shell prompts and >>> stay; copy buttons and screen-reader labels go', () => {
    expect(snippetWith(r, 'echo hi').code).toBe('$ echo hi\nhi\n$ python3\n>>> 1 + 1\n2');
    expect(snippetWith(r, 'not a button').code).toBe('const copy = "not a button";');
  });
});
