import { describe, expect, it } from 'vitest';
import { detectFormat, detectLanguage, normalizeLanguage } from '../../src/core/extract/index.js';

describe('normalizeLanguage', () => {
  it.each([
    ['py', 'python'],
    ['Python3', 'python'],
    ['pycon', 'python'],
    ['sh', 'shell'],
    ['bash', 'shell'],
    ['zsh', 'shell'],
    ['js', 'javascript'],
    ['mjs', 'javascript'],
    ['cjs', 'javascript'],
    ['jsx', 'javascript'],
    ['ts', 'typescript'],
    ['tsx', 'typescript'],
    ['yml', 'yaml'],
    ['c++', 'cpp'],
    ['cxx', 'cpp'],
    ['golang', 'go'],
    ['rs', 'rust'],
    ['text', 'text'],
    ['txt', 'text'],
    ['none', 'text'],
    ['', 'text'],
    ['shell-session', 'console'],
    ['console', 'console'],
    ['doscon', 'console'],
    ['c#', 'csharp'],
    ['rb', 'ruby'],
    ['psql', 'sql'],
    ['plpgsql', 'sql'],
    ['json5', 'json'],
    ['docker', 'dockerfile'],
    ['patch', 'diff'],
    ['cfg', 'ini'],
    ['md', 'markdown'],
    ['html+django', 'html'],
    ['svg', 'xml'],
    ['source-python', 'python'],
    ['{.python}', 'python'],
    ['python {linenos=true}', 'python'],
    ['Elixir', 'elixir'],
    ['HCL', 'hcl'],
  ])('%s -> %s', (input, expected) => {
    expect(normalizeLanguage(input)).toBe(expected);
  });

  it('is idempotent', () => {
    for (const n of ['py', 'bash', 'c++', 'Kotlin', 'shell-session', 'none']) {
      expect(normalizeLanguage(normalizeLanguage(n))).toBe(normalizeLanguage(n));
    }
  });
});

describe('detectLanguage', () => {
  const cases: Array<[string, string]> = [
    ['python', 'def greet(name):\n    return f"hi {name}"\n\nprint(greet("ada"))'],
    ['python', '>>> 1 + 1\n2'],
    ['javascript', "const fs = require('node:fs');\nfs.readFile('a.txt', (err, data) => {\n  console.log(data);\n});"],
    ['typescript', 'interface User {\n  id: number;\n  name: string;\n}\nexport function load(id: number): Promise<User> {\n  return fetch(`/u/${id}`).then((r) => r.json());\n}'],
    ['shell', 'npm install --save-dev vitest\nexport NODE_ENV=test\nnpx vitest run'],
    ['console', '$ git status\nOn branch main\nnothing to commit'],
    ['sql', 'SELECT name, count(*)\nFROM users\nWHERE active\nGROUP BY name;'],
    ['json', '{\n  "name": "docdex",\n  "private": true\n}'],
    ['yaml', 'site_name: Docs\nnav:\n  - Home: index.md\n  - Guide: guide.md\ntheme:\n  name: material'],
    ['html', '<!DOCTYPE html>\n<html>\n<body><p>Hello</p></body>\n</html>'],
    ['xml', '<?xml version="1.0"?>\n<project><modelVersion>4.0.0</modelVersion></project>'],
    ['css', '.button {\n  color: #333;\n  padding: 4px 8px;\n}\n@media (max-width: 600px) {\n  .button { display: none; }\n}'],
    ['go', 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("hi")\n}'],
    ['rust', 'fn main() {\n    let mut v = Vec::new();\n    v.push(1);\n    println!("{:?}", v);\n}'],
    ['java', 'public class Hello {\n    public static void main(String[] args) {\n        System.out.println("hi");\n    }\n}'],
    ['c', '#include <stdio.h>\n\nint main(void) {\n    printf("hi\\n");\n    return 0;\n}'],
    ['cpp', '#include <iostream>\n\nint main() {\n    std::cout << "hi" << std::endl;\n}'],
    ['csharp', 'using System;\n\nclass Program {\n    static void Main() {\n        Console.WriteLine("hi");\n    }\n}'],
    ['ruby', 'require \'json\'\n\ndef greet(name)\n  puts "hi #{name}"\nend\n\n[1, 2].each do |n|\n  greet(n)\nend'],
    ['php', '<?php\n$name = "ada";\necho "hi $name";'],
    ['toml', '[package]\nname = "docdex"\nversion = "0.1.0"\n\n[dependencies]\nserde = { version = "1" }'],
    ['ini', '[server]\nhost = localhost\nport = 8080\n; a comment'],
    ['dockerfile', 'FROM node:24-slim\nWORKDIR /app\nCOPY . .\nRUN npm ci\nCMD ["node", "index.js"]'],
    ['diff', 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new'],
    ['markdown', '# Title\n\nSome **bold** text and a [link](https://example.com).\n\n## Next\n\n- item'],
  ];
  it.each(cases)('recognises %s', (language, code) => {
    expect(detectLanguage(code).language).toBe(language);
  });

  it('is confident on clear code and not on a single word', () => {
    expect(detectLanguage(cases[0]![1]).confident).toBe(true);
    expect(detectLanguage('hello').confident).toBe(false);
    expect(detectLanguage('').language).toBe('text');
  });
});

describe('detectFormat', () => {
  it.each([
    ['https://x.test/a.html', 'text/html; charset=utf-8', 'html'],
    ['https://x.test/docs/', null, 'html'],
    ['https://x.test/docs/page', undefined, 'html'],
    ['https://x.test/a.md', null, 'markdown'],
    ['https://x.test/a.mdx', null, 'markdown'],
    ['https://x.test/a.md', 'text/plain', 'markdown'],
    ['https://x.test/README.markdown?raw=1', null, 'markdown'],
    ['https://x.test/_sources/library/os.rst.txt', 'text/plain', 'rst'],
    ['https://x.test/_sources/library/os.rst.txt', null, 'rst'],
    ['https://x.test/a.rst', null, 'rst'],
    ['https://x.test/a.adoc', null, 'adoc'],
    ['https://x.test/a.txt', 'text/plain', 'text'],
    ['https://x.test/a', 'text/markdown', 'markdown'],
    ['https://x.test/a', 'text/x-rst', 'rst'],
    ['https://x.test/book.xml', 'application/xml', 'html'],
    ['https://x.test/a.png', null, null],
    ['https://x.test/a.json', 'application/json', null],
    ['https://x.test/a.js', 'application/javascript', null],
    ['https://x.test/feed.xml', 'application/rss+xml', null],
    ['https://x.test/a.pdf', 'application/pdf', null],
  ])('%s (%s) -> %s', (url, type, expected) => {
    expect(detectFormat(url, type)).toBe(expected);
  });
});
