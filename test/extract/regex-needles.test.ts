import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { requiredNeedles } from '../../src/core/extract/regex-needles.js';

/**
 * The language classifier skips a rule when the code holds none of the
 * literals its regex needs; a wrong needle would silently change detected
 * languages. These check the analysis on known patterns and, for a set of
 * patterns like the classifier's, that no match ever lacks a needle.
 */

describe('requiredNeedles', () => {
  it('finds the literals every match contains', () => {
    expect(requiredNeedles(/\bprint\(/g)).toEqual(['print(']);
    expect(requiredNeedles(/^[ \t]*(?:async )?def \w+\s*\(/gm)).toEqual(['def ']);
    expect(requiredNeedles(/\b(?:None|True|False)\b/g)).toEqual(['None', 'True', 'False']);
    expect(requiredNeedles(/-\*- coding[:=]|^\(Pdb\)/gm)).toEqual(['-*- coding', '(Pdb)']);
    expect(requiredNeedles(/\b\w+ (?:not )?in [\w([]/g)).toEqual(['in ']);
    expect(requiredNeedles(/[)"'\]] {2,}# /g)).toEqual(['# ']);
    expect(requiredNeedles(/<[\w-]+\/>|<[\w-]+ [\w:-]+="[^"]*"\s*\/>/g)).toEqual(['/>', '="']);
  });

  it('gives up rather than guess', () => {
    // Case-insensitive and unicode patterns, back-references, optional-only and empty patterns.
    expect(requiredNeedles(/select|insert/i)).toBeNull();
    expect(requiredNeedles(/\p{L}x/u)).toBeNull();
    expect(requiredNeedles(/<([a-z]+)>[^<]*<\/\1>/g)).toBeNull();
    expect(requiredNeedles(/(?:abc)?/)).toBeNull();
    expect(requiredNeedles(/^[ \t]*[}\]],?[ \t]*$/gm)).toBeNull();
    expect(requiredNeedles(/a|\w+/)).toBeNull();
    expect(requiredNeedles(/(?<name>x)/)).toBeNull();
  });

  const PATTERNS = [
    /^[ \t]*(?:from [\w.]+ )?import [\w.]+(?: as \w+)?(?:, ?[\w.]+(?: as \w+)?)*[ \t]*$/gm,
    /^[ \t]*(?:if|elif|while|for|with|try|except|else|finally)\b[^{};]*:[ \t]*(?:#.*)?$/gm,
    /(?:^|[^\w"'])[rbfRBF]{0,2}(?:"""|''')/gm,
    /\{'[\w -]+': /g,
    /^[ \t]*\[(?:'[^'\n]*'|\d+|\(.*\))(?:, ?(?:'[^'\n]*'|-?\d+|\(.*\)))*\]$/gm,
    /\$\$|\$\d\b|::[a-z]\w*/g,
    /^(?:---|\+\+\+) [ab/]?\S/gm,
    /^#{2,6} \S/gm,
    /\\[ \t]*$/gm,
    /\b(?:const|let|var) [\w${}[\], ]+ = /g,
    /&mut |&'\w+|\bOption<|\bSome\(|\.unwrap\(\)|#\[derive/g,
    /^\w+=[#>] /gm,
    /^[ \t]*(?!(?:try|else)\b)[\w.-]+:[ \t]*$/gm,
    /\{%-? *(?:if|for|block) /g,
    /(?<!\b(?:e\.g|i\.e))\.(?=\s+[A-Z0-9])/g,
  ];
  const alphabet = fc.constantFrom(
    ...'abcdefimnoprstuvwxyz ABNOPST0129_.,:;=#*-+/\\\'"`$&<>()[]{}!?@%|~\t\n'.split(''),
    'import ',
    'from ',
    'def ',
    'if ',
    'else',
    ' as ',
    '"""',
    "'''",
    "{'",
    "': ",
    '$$',
    '::',
    '--- ',
    '+++ ',
    '## ',
    'const ',
    ' = ',
    '&mut ',
    'Option<',
    'Some(',
    '.unwrap()',
    '#[derive',
    '=# ',
    '{% if ',
    'e.g. ',
    'try:',
  );

  it('never rules out a string the regex matches', () => {
    const compiled = PATTERNS.map((re) => ({ re, needles: requiredNeedles(re) }));
    for (const { re, needles } of compiled) expect(needles, String(re)).not.toBeNull();
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 30 }), (parts) => {
        const s = parts.join('');
        for (const { re, needles } of compiled) {
          re.lastIndex = 0;
          if (re.test(s))
            expect(
              needles!.some((n) => s.includes(n)),
              `${re} on ${JSON.stringify(s)}`,
            ).toBe(true);
        }
      }),
      { numRuns: 20_000, seed: 99 },
    );
  });
});
