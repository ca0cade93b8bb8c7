import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/core/extract/index.js';
import { expandIncludes, joinRepoPath } from '../../src/core/extract/includes.js';
import type { IncludeHost } from '../../src/core/extract/includes.js';
import { parseLineRanges, selectLines, selectPyObject } from '../../src/core/extract/include-select.js';

/** A repository in memory: files by path; folders are the files' ancestors. */
function memoryHost(files: Record<string, string>): IncludeHost & { asked: string[] } {
  const folders = new Set<string>();
  for (const p of Object.keys(files)) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join('/'));
  }
  const asked: string[] = [];
  return {
    asked,
    read(p) {
      asked.push(p);
      return files[p] ?? null;
    },
    exists(p) {
      asked.push(p);
      return p in files || folders.has(p);
    },
  };
}

function extracted(pagePath: string, text: string) {
  return extractDocument({ url: `https://repo.test/${pagePath}`, body: text });
}

describe('fastapi and mdx_include includes, from the MkDocs project folder', () => {
  const files = {
    'docs/en/mkdocs.yml':
      'site_name: Demo\nmarkdown_extensions:\n  mdx_include: null\n  pymdownx.superfences:\n    custom_fences:\n    - name: mermaid\n      format: !!python/name:pymdownx.superfences.fence_code_format\n',
    'docs_src/app/main.py': 'from kettle import Kettle\n\napp = Kettle()\n\n\n@app.get("/brew")\ndef brew():\n    return {"tea": "green"}\n',
    'docs_src/templates/page.html': '<h1>{{ title }}</h1>\n',
  };
  const page = [
    '# Brewing',
    '',
    'Create the app:',
    '',
    '{* ../../docs_src/app/main.py ln[1:3] hl[3] title["app/main.py"] *}',
    '',
    'Then a route:',
    '',
    '{* ../../docs_src/app/main.py ln[6:8] hl[6] *}',
    '',
    '```jinja hl_lines="1"',
    '{!../../docs_src/templates/page.html!}',
    '```',
    '',
    '{* ../../docs_src/missing.py *}',
  ].join('\n');
  const outcome = expandIncludes('docs/en/docs/brewing.md', page, memoryHost(files));

  it('resolves {* *} lines and {! !} inside a fence relative to the folder of mkdocs.yml, not the page', () => {
    expect(outcome).toMatchObject({ resolved: 3, unresolved: 1 });
    expect(outcome.problems).toEqual([{ path: 'docs/en/docs/brewing.md', include: '{* ../../docs_src/missing.py *}', reason: 'no such file in the repository' }]);
    expect(outcome.files).toEqual(['docs/en/mkdocs.yml', 'docs_src/app/main.py', 'docs_src/templates/page.html']);
    expect(outcome.text).toContain('{* ../../docs_src/missing.py *}');
  });

  it('gives code blocks with the language of the file, the title as filename, and only the lines asked for', () => {
    const r = extracted('docs/en/docs/brewing.md', outcome.text);
    expect(r.snippets.map((s) => [s.code, s.language, s.filename])).toEqual([
      ['from kettle import Kettle\n\napp = Kettle()', 'python', 'app/main.py'],
      ['@app.get("/brew")\ndef brew():\n    return {"tea": "green"}', 'python', null],
      ['<h1>{{ title }}</h1>', 'jinja', null],
    ]);
    expect(r.snippets[1]?.description).toBe('Then a route:');
  });
});

describe('pymdown snippets', () => {
  const files = {
    'mkdocs.yml': 'markdown_extensions:\n  - pymdownx.snippets:\n      base_path: [includes, docs]\n',
    'includes/setup.py': 'import kiln\n# --8<-- [start:fire]\nkiln.fire(temp=1200)\n# --8<-- [end:fire]\nkiln.cool()\n',
    'includes/abbreviations.md': '*[HTML]: Hyper Text\n\n--8<-- "nested.sh"\n',
    'includes/nested.sh': 'kiln --status\n',
    'includes/lines.txt': 'one\ntwo\nthree\nfour\n',
  };
  const page = [
    '# Kiln',
    '',
    '```python',
    '--8<-- "setup.py:fire"',
    '```',
    '',
    '```text',
    '--8<-- "lines.txt:2:3"',
    '```',
    '',
    '--8<--',
    'abbreviations.md',
    '; commented.md',
    '--8<--',
    '',
    '```sh',
    '--8<-- "https://example.test/remote.sh"',
    '```',
    '',
    '```text',
    '--8<--',
    'lines.txt',
    '--8<--',
    '```',
  ].join('\n');
  const outcome = expandIncludes('docs/kiln.md', page, memoryHost(files));

  it('reads base_path from mkdocs.yml, sections, line ranges, the block form and nested snippets; refuses URLs', () => {
    expect(outcome).toMatchObject({ resolved: 5, unresolved: 1 });
    expect(outcome.problems[0]?.reason).toBe('a URL, not a file of the repository');
    const r = extracted('docs/kiln.md', outcome.text);
    expect(r.snippets.map((s) => s.code)).toEqual(['kiln.fire(temp=1200)', 'two\nthree', '--8<-- "https://example.test/remote.sh"', 'one\ntwo\nthree\nfour']);
    expect(outcome.text).toContain('*[HTML]: Hyper Text\n\nkiln --status');
  });
});

describe('VitePress', () => {
  const files = {
    'docs/.vitepress/config.ts': 'export default {}\n',
    'docs/snippets/config.ts': 'const a = 1\n// #region setup\nexport default defineConfig({ base: "/kiln/" })\n// #endregion setup\n',
    'docs/guide/deploy.yaml': '# header\n#region content\nname: Deploy\non: push\n#endregion content\n',
    'docs/parts/intro.md': 'Line one.\n\nLine three is **bold**.\n\nLine five.\n',
  };
  const page = [
    '# Deploying',
    '',
    '1. Add the workflow:',
    '',
    '   <<< ./deploy.yaml#content [.github/workflows/deploy.yml]',
    '',
    '<<< @/snippets/config.ts#setup{1 ts:line-numbers} [vite.config.ts]',
    '',
    '<<< @/snippets/config.ts#nowhere',
    '',
    '<!--@include: ../parts/intro.md{3,3}-->',
    '',
    '```sh',
    'cat <<< "not an include"',
    '```',
  ].join('\n');
  const outcome = expandIncludes('docs/guide/deploy.md', page, memoryHost(files));

  it('resolves <<< with regions, @/ from the folder of .vitepress, labels as filenames, in list items; markdown includes with lines', () => {
    expect(outcome).toMatchObject({ resolved: 3, unresolved: 1 });
    expect(outcome.problems[0]).toMatchObject({ include: '<<< @/snippets/config.ts#nowhere', reason: 'no region nowhere in the file' });
    const r = extracted('docs/guide/deploy.md', outcome.text);
    expect(r.snippets.map((s) => [s.code, s.language, s.filename])).toEqual([
      ['name: Deploy\non: push', 'yaml', '.github/workflows/deploy.yml'],
      ['export default defineConfig({ base: "/kiln/" })', 'typescript', 'vite.config.ts'],
      ['cat <<< "not an include"', 'shell', null],
    ]);
    expect(outcome.text).toContain('   ```yaml [.github/workflows/deploy.yml]\n   name: Deploy');
    expect(outcome.text).toContain('Line three is **bold**.');
    expect(outcome.text).not.toContain('Line five.');
  });
});

describe('Sphinx literalinclude', () => {
  const files = {
    'docs/conf.py': 'project = "kiln"\n',
    'examples/kiln.py': [
      'import os',
      '',
      '',
      'class Kiln:',
      '    """A kiln."""',
      '',
      '    @property',
      '    def temp(self):',
      '        return self._t',
      '',
      '    def fire(self, t):',
      '        self._t = t',
      '',
      '',
      'def helper():',
      '    # start here',
      '    return Kiln()',
      '    # end here',
      '',
    ].join('\n'),
  };
  const page = [
    'Kiln',
    '====',
    '',
    '.. literalinclude:: ../examples/kiln.py',
    '   :pyobject: Kiln.temp',
    '   :caption: kiln.py',
    '',
    '.. literalinclude:: /../examples/kiln.py',
    '   :lines: 1, 15-',
    '',
    '.. literalinclude:: ../examples/kiln.py',
    '   :language: python3',
    '   :start-after: # start here',
    '   :end-before: # end here',
    '   :dedent: 4',
    '',
    '.. literalinclude:: ../examples/kiln.py',
    '   :pyobject: Oven',
  ].join('\n');
  const outcome = expandIncludes('docs/kiln.rst', page, memoryHost(files));

  it('reads :pyobject: (with decorators), :lines:, :start-after:/:end-before:, :dedent:, :caption:; keeps a missing object as written', () => {
    expect(outcome).toMatchObject({ resolved: 3, unresolved: 1 });
    expect(outcome.problems[0]?.reason).toBe('no Oven in the file');
    const r = extracted('docs/kiln.rst', outcome.text);
    expect(r.snippets.map((s) => [s.code, s.language, s.filename])).toEqual([
      ['@property\ndef temp(self):\n    return self._t', 'python', 'kiln.py'],
      ['import os\ndef helper():\n    # start here\n    return Kiln()\n    # end here', 'python', null],
      ['return Kiln()', 'python', null],
    ]);
  });
});

describe('AsciiDoc include::', () => {
  const files = {
    'docs/src/Kiln.java': 'package kiln;\n// tag::fire[]\nkiln.fire(1200);\n// end::fire[]\n// tag::cool[]\nkiln.cool();\n// end::cool[]\n',
    'docs/partials/note.adoc': 'A partial with its own include:\n\ninclude::../src/Kiln.java[lines=1]\n',
  };
  const page = [
    '= Kiln',
    ':sourcedir: src',
    '',
    '[source,java]',
    '----',
    'include::{sourcedir}/Kiln.java[tag=fire]',
    '----',
    '',
    '[source,java]',
    '----',
    'include::src/Kiln.java[tags=fire;cool,indent=2]',
    '----',
    '',
    'include::partials/note.adoc[]',
    '',
    'include::{undefined}/x.java[]',
  ].join('\n');
  const outcome = expandIncludes('docs/kiln.adoc', page, memoryHost(files));

  it('reads tags, indent and attributes, and includes the includes of an included AsciiDoc file', () => {
    expect(outcome).toMatchObject({ resolved: 4, unresolved: 1 });
    const r = extracted('docs/kiln.adoc', outcome.text);
    expect(r.snippets.map((s) => s.code)).toEqual(['kiln.fire(1200);', 'kiln.fire(1200);\nkiln.cool();']);
    expect(outcome.text).toContain('----\n  kiln.fire(1200);\n  kiln.cool();\n----');
    expect(outcome.text).toContain('A partial with its own include:\n\npackage kiln;');
  });
});

describe('MDX raw imports', () => {
  const files = { 'website/docusaurus.config.js': 'module.exports = {}\n', 'website/docs/code/kettle.js': 'export const kettle = () => "whistle";\n', 'website/static/other.ts': 'let x = 1;\n' };
  const page = [
    "import CodeBlock from '@theme/CodeBlock';",
    "import Kettle from '!!raw-loader!./code/kettle.js';",
    "import Other from '@site/static/other.ts?raw';",
    '',
    '# Kettles',
    '',
    '<CodeBlock language="jsx" title="src/kettle.js">{Kettle}</CodeBlock>',
    '',
    '<CodeBlock>',
    '  {Other}',
    '</CodeBlock>',
  ].join('\n');
  const outcome = expandIncludes('website/docs/kettles.mdx', page, memoryHost(files));

  it('replaces a <CodeBlock> of a raw import by the file, with its language and title', () => {
    expect(outcome).toMatchObject({ resolved: 2, unresolved: 0 });
    const r = extracted('website/docs/kettles.mdx', outcome.text);
    expect(r.snippets.map((s) => [s.code, s.language, s.filename])).toEqual([
      ['export const kettle = () => "whistle";', 'javascript', 'src/kettle.js'],
      ['let x = 1;', 'typescript', null],
    ]);
  });
});

describe('paths stay in the repository', () => {
  const files = { 'secret.txt': 'no', 'docs/a.md': '--8<-- "a.md"\n', 'big.txt': 'x'.repeat(1024 * 1024 + 1) };

  it('refuses traversal, absolute paths and backslashes, and keeps the directive as written', () => {
    const page = ['```', '--8<-- "../../../../etc/passwd"', '--8<-- "/etc/passwd"', '--8<-- "..\\\\secret.txt"', '```'].join('\n');
    const host = memoryHost(files);
    const outcome = expandIncludes('docs/p.md', page, host);
    expect(outcome.resolved).toBe(0);
    expect(outcome.unresolved).toBe(3);
    expect(outcome.text).toBe(page);
    for (const p of host.asked) expect(p).not.toMatch(/(^|\/)\.\.(\/|$)|^\/|\\/);
  });

  it('refuses a file including itself and a file over the size cap', () => {
    const self = expandIncludes('docs/a.md', files['docs/a.md'], memoryHost(files));
    expect(self.problems[0]?.reason).toBe('includes itself');
    const big = expandIncludes('p.md', '```\n--8<-- "big.txt"\n```', memoryHost(files));
    expect(big.problems[0]?.reason).toBe('larger than 1024 KB');
  });

  it('joins paths without leaving the root', () => {
    expect(joinRepoPath('docs/en', '../../docs_src/a.py')).toBe('docs_src/a.py');
    expect(joinRepoPath('docs', '../../a.py')).toBeNull();
    expect(joinRepoPath('', 'a/./b//c.py')).toBe('a/b/c.py');
    expect(joinRepoPath('docs', 'https://x.test/a')).toBeNull();
  });
});

describe('part selection', () => {
  it('reads each generator’s line ranges', () => {
    expect(parseLineRanges('1-3, 7, 10-', 'sphinx')).toEqual([
      { from: 1, to: 3 },
      { from: 7, to: 7 },
      { from: 10, to: null },
    ]);
    expect(parseLineRanges('-2', 'sphinx')).toEqual([{ from: 1, to: 2 }]);
    expect(parseLineRanges('2..3;5..-1', 'asciidoc')).toEqual([
      { from: 2, to: 3 },
      { from: 5, to: -1 },
    ]);
    expect(selectLines('a\nb\nc\nd\ne', parseLineRanges('2..3;5..-1', 'asciidoc')!)).toBe('b\nc\ne');
    expect(parseLineRanges('x', 'colon')).toBeNull();
  });

  it('finds a nested Python object by its dotted name', () => {
    expect(selectPyObject('class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        pass\n', 'A.g')).toBe('    def g(self):\n        pass');
  });
});

// Any document of directives, with any paths, against a repository of a few files.
const segment = fc.constantFrom('..', '.', '', 'docs', 'src', 'a.py', 'b.md', 'x', '\\', '\0', '%2e%2e', '~', 'C:', '/');
const anyPath = fc.array(segment, { maxLength: 8 }).map((s) => s.join('/'));
const option = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('1:2', '2-', '-1', '0', '1..-1', 'r', 't', 'A.b', '!t;**', '99999999999', '3,1-2', ''));
const line = fc.oneof(
  fc.string({ maxLength: 40 }),
  anyPath.map((p) => `{* ${p} ln[1:2] *}`),
  anyPath.map((p) => `{! ${p} !}`),
  anyPath.map((p) => `--8<-- "${p}"`),
  anyPath.map((p) => `<<< ${p}#r [l]`),
  anyPath.map((p) => `<<< @/${p}`),
  anyPath.map((p) => `<!--@include: ${p}{1,2}-->`),
  anyPath.map((p) => `.. literalinclude:: ${p}\n   :lines: 1-2`),
  anyPath.map((p) => `include::${p}[tag=t]`),
  anyPath.map((p) => `import A from '!!raw-loader!${p}';\n<CodeBlock>{A}</CodeBlock>`),
  fc.constantFrom('```', '--8<--', '   :pyobject: A.b', ':attr: ../..'),
  // Real files, any options: line ranges, regions, tags, objects and titles as a page might write them.
  option.map((o) => `{* ../docs/a.py ln[${o}] hl[${o}] title["${o}"] *}`),
  option.map((o) => `.. literalinclude:: a.py\n   :lines: ${o}\n   :pyobject: ${o}\n   :start-after: ${o}\n   :dedent: ${o}`),
  option.map((o) => `include::a.py[tags=${o},lines=${o},indent=${o}]`),
  option.map((o) => `<<< ./a.py#${o}{${o}} [${o}]`),
  option.map((o) => `<!--@include: ./b.md{${o}}-->`),
  option.map((o) => `--8<-- "docs/a.py:${o}"`),
);
const repoFiles = {
  'docs/a.py': 'class A:\n    def b(self):\n        pass\n# #region r\nx = 1\n# #endregion r\n# tag::t[]\ny\n# end::t[]\n',
  'docs/b.md': '--8<-- "b.md"\n{! b.md !}\n',
  'src/a.py': 'print(1)\n',
  'mkdocs.yml': 'markdown_extensions: [{pymdownx.snippets: {base_path: ["..", "docs", "/etc"]}}]\n',
};

describe('include directives on any input', () => {
  it('never throw, never ask for a path outside the repository, and stay bounded', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), fc.constantFrom('docs/p.md', 'docs/p.rst', 'docs/p.adoc', 'p.mdx'), (lines, page) => {
        const host = memoryHost(repoFiles);
        const text = lines.join('\n');
        const outcome = expandIncludes(page, text, host);
        for (const p of host.asked) {
          expect(p).not.toMatch(/(^|\/)\.{1,2}(\/|$)|^\/|\/$|\/\/|\\|\0/);
        }
        const largest = Math.max(...Object.values(repoFiles).map((f) => f.length));
        expect(outcome.text.length).toBeLessThanOrEqual(text.length + (outcome.resolved + 1) * (largest * 4 + 200));
        expect(outcome.problems.length).toBeLessThanOrEqual(100);
      }),
      { numRuns: 2000 },
    );
  });
});
