import { describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/core/extract/index.js';
import { BASE, extractFixture, snippetWith } from './helpers.js';

describe('markdown', () => {
  const r = extractFixture('guide.md');

  it('uses the frontmatter title when the page has no h1, and its description', () => {
    expect(r.page).toMatchObject({ title: 'Harbor CLI guide', description: 'Everything the harbor command can do.', format: 'markdown', links: [] });
    expect(r.page.markdown.startsWith('Harbor moves containers')).toBe(true);
  });

  it('prefers an h1 over the frontmatter title', () => {
    const h1 = extractDocument({ url: `${BASE}a.md`, body: '---\ntitle: From frontmatter\n---\n# From heading\n\n```sh\nls\n```\n' });
    expect(h1.page.title).toBe('From heading');
  });

  it('reads fenced blocks with language and a title="..." filename', () => {
    expect(snippetWith(r, 'curl -fsSL')).toMatchObject({ language: 'shell', filename: 'install.sh', title: 'Install | Harbor CLI guide' });
    expect(snippetWith(r, 'curl -fsSL').description).toBe('Install the binary with the script: This puts harbor in ~/.local/bin.');
  });

  it('honours {#custom-id} heading anchors and a path line as the filename', () => {
    const s = snippetWith(r, 'slots = 12');
    expect(s.sourceUrl).toBe(`${BASE}guide.md#configure-harbor`);
    expect(s).toMatchObject({ filename: 'src/harbor.toml', title: 'Configure | Harbor CLI guide' });
  });

  it('reads indented blocks (spaces and a tab)', () => {
    expect(snippetWith(r, 'harbor dock').code).toBe('harbor dock --slots 12\nharbor undock --all');
  });

  it('keeps a 3-backtick fence inside a 4-backtick fence', () => {
    expect(snippetWith(r, '# README').code).toBe('# README\n\n```js\nconsole.log("inside");\n```');
  });

  it('extracts <pre><code> HTML blocks through the HTML extractor', () => {
    expect(snippetWith(r, 'from html')).toMatchObject({ code: 'print("from html")', language: 'python' });
  });

  it('reads Material content tabs and does not take admonition bodies for code', () => {
    expect(snippetWith(r, 'harbor sail')).toMatchObject({ code: 'harbor sail --night', tab: 'Linux', language: 'shell' });
    expect(r.snippets.some((s) => s.code.includes('Admonition text'))).toBe(false);
  });

  it('gives GitHub-style heading slugs', () => {
    expect(snippetWith(r, '# README').sourceUrl).toBe(`${BASE}guide.md#nested-fences`);
  });
});

describe('MDX', () => {
  const r = extractFixture('tabs.mdx');

  it('labels blocks inside <TabItem label> and keeps import lines out of the context', () => {
    expect(snippetWith(r, "from 'brokerkit'")).toMatchObject({ tab: 'Node.js', title: 'Node.js | Connecting to a broker', language: 'javascript' });
    expect(snippetWith(r, 'from brokerkit import')).toMatchObject({ tab: 'Python', language: 'python' });
    expect(snippetWith(r, 'from brokerkit import').description).toBe('Pick your client library.');
  });
});

describe('plain text', () => {
  it('extracts indented and fenced blocks the same way, under setext headings', () => {
    const r = extractFixture('notes.txt');
    expect(r.page).toMatchObject({ format: 'text', title: 'Release checklist' });
    expect(r.snippets.map((s) => s.code)).toEqual(['make test', 'git tag -a v1.4.0 -m "v1.4.0"\ngit push --tags']);
  });
});

describe('reStructuredText', () => {
  const r = extractFixture('pathway.rst.txt');

  it('detects .rst.txt and reads section titles with their labels', () => {
    expect(r.page.format).toBe('rst');
    expect(r.page.title).toBe('pathway --- Walking directory trees');
    expect(snippetWith(r, 'sorted(walk')).toMatchObject({ title: 'Basic use | pathway --- Walking directory trees', sourceUrl: `${BASE}pathway.rst.txt#pathway-basics` });
  });

  it('reads :: literal blocks and bare doctest blocks', () => {
    expect(snippetWith(r, 'sorted(walk').code).toBe(">>> from pathway import walk\n>>> sorted(walk('docs'))\n['docs/index.rst', 'docs/usage.rst']");
    expect(snippetWith(r, 'walk.depth')).toMatchObject({ code: '>>> walk.depth\n0', language: 'python', languageConfidence: 'declared' });
    expect(snippetWith(r, 'sorted(walk').description).toBe('Import the walker:');
  });

  it('applies .. highlight:: to later literal blocks and reads code-block captions', () => {
    expect(snippetWith(r, 'follow_links = no')).toMatchObject({ language: 'ini', languageConfidence: 'declared' });
    expect(snippetWith(r, 'print(path)')).toMatchObject({ language: 'python', filename: 'walker.py' });
    expect(snippetWith(r, 'print(path)').code).toBe('from pathway import walk\n\nfor path in walk("src", follow_links=True):\n    print(path)');
  });

  it('titles a block inside an API directive with its signature', () => {
    expect(snippetWith(r, 'python -m pathway')).toMatchObject({ title: 'walk(top, follow_links=False) | pathway --- Walking directory trees', language: 'shell' });
  });

  it('renders headings and fences in the markdown', () => {
    expect(r.page.markdown).toContain('## Basic use');
    expect(r.page.markdown).toContain('```ini\n[pathway]\nfollow_links = no\n```');
  });
});

describe('AsciiDoc', () => {
  const r = extractFixture('guide.adoc');

  it('reads [source,lang] listing blocks and strips callouts', () => {
    expect(r.page).toMatchObject({ format: 'adoc', title: 'Lighthouse Operator Manual', description: 'Keeping the light on.' });
    expect(snippetWith(r, 'Lighthouse.start')).toMatchObject({
      code: "require 'lighthouse'\n\nLighthouse.start(interval: 5)",
      language: 'ruby',
      sourceUrl: `${BASE}guide.adoc#starting`,
    });
  });

  it('reads block titles as filenames and auto ids as anchors', () => {
    expect(snippetWith(r, 'colour: white')).toMatchObject({ filename: 'config/lamp.yml', language: 'yaml', sourceUrl: `${BASE}guide.adoc#_configuration_files` });
  });

  it('reads .... literal blocks, [source] paragraphs with :source-language:, and indented literals', () => {
    expect(snippetWith(r, 'lamp: on')).toMatchObject({ code: 'lamp: on\nlamp: off', language: 'text' });
    expect(snippetWith(r, 'Lighthouse.stop')).toMatchObject({ language: 'ruby' });
    expect(snippetWith(r, 'lighthousectl status')).toMatchObject({ code: '$ lighthousectl status\nrunning', language: 'console' });
  });
});
