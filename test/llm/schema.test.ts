import { describe, expect, it } from 'vitest';
import { contextBefore, MAX_BATCH_BLOCKS, pageIntro, planBatches, truncateCode, userPrompt } from '../../src/core/llm/prompt.js';
import type { PromptBlock } from '../../src/core/llm/prompt.js';
import { checkAnswer, isGenericTitle, parseAnswer, ungroundedNames, wordCount } from '../../src/core/llm/schema.js';
import { decideUpdate, languageIsUnsure, titleNeedsReplacing } from '../../src/core/llm/enhance.js';
import type { PageSnippetRow } from '../../src/core/llm/store.js';

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

describe('parseAnswer', () => {
  const valid = { blocks: [{ block: 1, language: 'python', title: 'Open a file', description: words(25) }], relationships: [] };

  it('accepts a valid answer, also inside a ```json fence', () => {
    expect(parseAnswer(JSON.stringify(valid))).toEqual({ ok: true, answer: valid });
    expect(parseAnswer('```json\n' + JSON.stringify(valid) + '\n```')).toEqual({ ok: true, answer: valid });
  });

  it('rejects malformed JSON, wrong shapes and empty answers with a reason', () => {
    expect(parseAnswer('{"blocks": [')).toMatchObject({ ok: false, reason: expect.stringMatching(/not valid JSON/) });
    expect(parseAnswer('{"blocks": []}')).toMatchObject({ ok: false, reason: expect.stringMatching(/relationships/) });
    expect(parseAnswer(JSON.stringify({ ...valid, relationships: [{ from: 1, to: 2, type: 'likes', reason: '' }] }))).toMatchObject({ ok: false });
    expect(parseAnswer('  ')).toMatchObject({ ok: false, reason: 'the answer was empty' });
  });
});

describe('checkAnswer', () => {
  const ground = 'import json\njson.dumps(data)\nSerialising data';
  const context = { blockCount: 2, pageTitle: 'JSON encoder', groundTexts: [ground, ground] };

  it('keeps good fields and drops bad ones one by one', () => {
    const checked = checkAnswer(
      {
        blocks: [
          { block: 1, language: 'Python3', title: 'Serialise a dict with json.dumps', description: `Calls \`json.dumps\` to ${words(22)}` },
          { block: 2, language: 'plain text', title: 'Example', description: words(70) },
          { block: 3, language: 'go', title: 'Out of range', description: words(25) },
        ],
        relationships: [
          { from: 2, to: 1, type: 'continues', reason: 'same   data' },
          { from: 2, to: 1, type: 'continues', reason: 'duplicate' },
          { from: 1, to: 1, type: 'imports', reason: 'self' },
          { from: 1, to: 5, type: 'imports', reason: 'out of range' },
        ],
      },
      context,
    );
    expect(checked.blocks.get(1)).toEqual({ language: 'python', title: 'Serialise a dict with json.dumps', description: `Calls \`json.dumps\` to ${words(22)}` });
    expect(checked.blocks.get(2)).toEqual({ language: null, title: null, description: null });
    expect(checked.blocks.has(3)).toBe(false);
    expect(checked.relationships).toEqual([{ from: 2, to: 1, type: 'continues', description: 'same data' }]);
    expect(checked.rejected.map((r) => `${r.block}.${r.field}`).sort()).toEqual(['2.description', '2.title']);
  });

  it('rejects descriptions that name APIs absent from the code and page', () => {
    const answer = { blocks: [{ block: 1, language: null, title: 'Write JSON', description: `Uses \`json.dump_all\` and loads() to ${words(20)}` }], relationships: [] };
    const checked = checkAnswer(answer, { ...context, blockCount: 1 });
    expect(checked.blocks.get(1)?.description).toBeNull();
    expect(checked.rejected[0]?.reason).toMatch(/json\.dump_all, loads/);
  });

  it('enforces 20-60 words', () => {
    expect(wordCount(words(20))).toBe(20);
    for (const [n, ok] of [
      [19, false],
      [20, true],
      [60, true],
      [61, false],
    ] as const) {
      const checked = checkAnswer({ blocks: [{ block: 1, language: null, title: 'Dump data', description: words(n) }], relationships: [] }, { ...context, blockCount: 1 });
      expect(checked.blocks.get(1)?.description !== null).toBe(ok);
    }
  });

  it('grounding accepts the last part of a dotted name and plural prose', () => {
    expect(ungroundedNames('Call `np.dumps` on value(s) with json.dumps()', ground)).toEqual([]);
    expect(ungroundedNames('Call `requests.get()`', ground)).toEqual(['requests.get']);
  });
});

describe('decisions', () => {
  const row = (over: Partial<PageSnippetRow>): PageSnippetRow => ({
    id: 1,
    title: 'Reading files',
    description: 'context',
    language: 'python',
    language_confidence: null,
    code: 'x',
    code_hash: 'h',
    position: 0,
    llm_enhanced: false,
    ...over,
  });
  const result = { language: 'ruby', title: 'Read a file line by line', description: words(30) };

  it('generic titles', () => {
    for (const t of ['', 'Example', 'example 2', 'Code', 'Usage', 'Usage example', 'Code snippet', 'Output:', 'An example']) expect(isGenericTitle(t), t).toBe(true);
    for (const t of ['Reading files', 'Example of streaming uploads', 'Usage of the CLI flags']) expect(isGenericTitle(t), t).toBe(false);
  });

  it('replaces the title only when it is missing, generic or the page title', () => {
    expect(titleNeedsReplacing('Reading files', ['File I/O'])).toBe(false);
    expect(titleNeedsReplacing('file i/o', ['File I/O'])).toBe(true);
    expect(decideUpdate(row({}), result, ['Files']).title).toBeNull();
    expect(decideUpdate(row({ title: 'Example' }), result, ['Files']).title).toBe('Read a file line by line');
  });

  it('changes the language only when detection was unsure', () => {
    expect(languageIsUnsure(row({}))).toBe(false);
    expect(languageIsUnsure(row({ language: 'text' }))).toBe(true);
    expect(languageIsUnsure(row({ language_confidence: 'detected' }))).toBe(true);
    expect(decideUpdate(row({}), result, []).language).toBeNull();
    expect(decideUpdate(row({ language_confidence: 'detected' }), result, []).language).toBe('ruby');
    expect(decideUpdate(row({}), result, []).description).toBe(result.description);
  });
});

describe('prompt', () => {
  const markdown = '# Files\n\nPython reads files with open.\n\nTo read a whole file, open it and call read:\n\n```python\nwith open("a.txt") as f:\n    data = f.read()\n```\n\nMore text.';
  const page = { title: 'Files', url: 'https://docs.example.test/files', markdown };
  const block: PromptBlock = { code: 'with open("a.txt") as f:\n    data = f.read()', title: 'Example', context: 'To read a whole file', language: 'python', languageSure: true };

  it('gives each block the page text before it', () => {
    expect(contextBefore(markdown, block.code)).toMatch(/To read a whole file, open it and call read:$/);
    expect(pageIntro(markdown)).toMatch(/^Files Python reads files with open\./);
    const prompt = userPrompt(page, [block, { ...block, languageSure: false, language: 'text' }]);
    expect(prompt).toMatch(/### Block 1\nCurrent title: Example\nDetected language: python\n/);
    expect(prompt).toMatch(/### Block 2[\s\S]*Detected language: text \(unsure\)/);
  });

  it('cuts long code on a line boundary and batches neighbours', () => {
    const long = Array.from({ length: 2000 }, (_, i) => `value_${i} = compute(${i})`).join('\n');
    const cut = truncateCode(long, 100);
    expect(cut).toMatch(/\n\.\.\. \(\d+ more lines\)$/);
    expect(
      cut
        .split('\n')
        .slice(0, -1)
        .every((l) => /^value_\d+ = compute\(\d+\)$/.test(l)),
    ).toBe(true);
    const blocks = Array.from({ length: 14 }, (_, i) => ({ ...block, code: `print(${i})` }));
    const batches = planBatches(page, blocks);
    expect(batches.map((b) => b.length)).toEqual([MAX_BATCH_BLOCKS, MAX_BATCH_BLOCKS, 14 - 2 * MAX_BATCH_BLOCKS]);
    expect(batches.flat()).toEqual(blocks);
    const big = Array.from({ length: 4 }, (_, i) => ({ ...block, code: `${long}\n# ${i}` }));
    expect(planBatches(page, big).length).toBeGreaterThan(1);
  });
});
