import { describe, expect, it } from 'vitest';
import { abbreviationsOf, buildTsQueries, compoundPattern, exactIdentifiers, identifierParts, parseQuery, termQuery } from '../../src/core/search/query.js';
import { firstRelevantRank, ndcgAt, pageKey, rankedPages, typoAt, typoVariant } from '../../bench/harness/relevance.js';
import { editDistance } from '../../src/core/edit-distance.js';
import { chooseCorrections, editsOne, isSwap } from '../../src/core/search/typo.js';

describe('query parsing', () => {
  it('cuts words the way code abbreviates them, never shorter than four letters or half the word', () => {
    expect(abbreviationsOf('truncate')).toEqual(['trun', 'trunc', 'trunca', 'truncat']);
    expect(abbreviationsOf('directory')).toEqual(['direc', 'direct', 'directo', 'director']);
    expect(abbreviationsOf('load')).toEqual([]);
    expect(abbreviationsOf('json.load')).toEqual([]);
    expect(buildTsQueries(parseQuery('truncate json.load')).perTermCode).toEqual(["('truncate' | 'trun' | 'trunc' | 'trunca' | 'truncat')", "('json.load' | 'json' & 'load')"]);
  });

  it('makes a compound-name pattern of the plain words, in both orders, ending where the pair ends', () => {
    const pattern = compoundPattern(parseQuery('load json from a file'), (w) => !['from', 'a'].includes(w));
    expect(pattern).toBe('(load[._]?json|load[._]?file|json[._]?load|json[._]?file|file[._]?load|file[._]?json)(?![a-z0-9])');
    const re = new RegExp(pattern.replace('(?![a-z0-9])', '(?![a-z0-9])'), 'i');
    expect(re.test('data = json.load(f)')).toBe(true);
    expect(re.test('data = json.loads(s)')).toBe(false);
    expect(compoundPattern(parseQuery('json'), () => true)).toBe('');
  });

  it('splits identifiers the way code_search_text does', () => {
    expect(identifierParts('readFileSync')).toEqual(['read', 'file', 'sync']);
    expect(identifierParts('json.dumps')).toEqual(['json', 'dumps']);
    expect(identifierParts('tokio::spawn')).toEqual(['tokio', 'spawn']);
    expect(identifierParts('HTTPServer')).toEqual(['http', 'server']);
    expect(identifierParts('my_func')).toEqual(['my', 'func']);
  });

  it('keeps identifiers whole and split, words as words, quoted text as a phrase', () => {
    const q = parseQuery('json.dumps(obj) "read the file" asyncio gather gather');
    expect(q.terms.map((t) => [t.text, t.identifier, t.phrase])).toEqual([
      ['read the file', false, true],
      ['json.dumps', true, false],
      ['obj', false, false],
      ['asyncio', false, false],
      ['gather', false, false],
    ]);
    expect(termQuery(q.terms[1]!)).toBe("('json.dumps' | 'json' & 'dumps')");
    expect(termQuery(q.terms[0]!)).toBe("('read' <-> 'the' <-> 'file')");
    expect(termQuery(q.terms[1]!, undefined, 'A')).toBe("('json.dumps':A | 'json':A & 'dumps':A)");
    expect(exactIdentifiers(q)).toEqual(['json.dumps']);
  });

  it('adds corrections as alternatives, never replacing the word', () => {
    const q = parseQuery("asyncio gahter it's");
    const t = buildTsQueries(q, new Map([['gahter', ['gather']]]));
    expect(t.all).toBe("'asyncio' & ('gahter' | 'gather') & 'it' & 's'");
    expect(t.any).toBe("'asyncio' | ('gahter' | 'gather') | 'it' | 's'");
    expect(t.phrase).toBe("'asyncio' <-> ('gahter' | 'gather') <-> 'it' <-> 's'");
    expect(parseQuery("a'; DROP TABLE x; --").terms.map((x) => termQuery(x))).toEqual(["'a'", "'drop'", "'table'", "'x'"]);
  });
});

describe('typo helpers', () => {
  it('generates every one-edit variant', () => {
    const v = new Set(editsOne('gahter'));
    expect(v.has('gather')).toBe(true); // swap
    expect(v.has('gahtr')).toBe(true); // deletion
    expect(v.has('gahters')).toBe(true); // insertion
    expect(v.has('gaxter')).toBe(true); // substitution
    expect(v.has('gahter')).toBe(false);
  });

  it('measures edit distance with swaps as one edit', () => {
    expect(editDistance('gahter', 'gather')).toBe(1);
    expect(editDistance('msesages', 'messages')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('abc', 'abcdefgh', 2)).toBe(3);
    expect(isSwap('chani', 'chain')).toBe(true);
    expect(isSwap('chani', 'chang')).toBe(false);
  });

  it('weighs how common a correction is against its edits', () => {
    const c = (word: string, count: number, distance: number) => ({ word, stem: word, count, distance });
    // "idex": a swap onto a code token seen once loses to the word thousands of snippets use.
    expect(chooseCorrections([c('idxe', 1, 0.5), c('index', 5000, 1)])).toEqual(['index']);
    // "chani": a swap still beats a merely more common single edit.
    expect(chooseCorrections([c('chang', 200, 1), c('chain', 40, 0.5)])).toEqual(['chain']);
    // Equal edits: the more common first, the runner-up kept while at least half as common.
    expect(chooseCorrections([c('read', 60, 1), c('real', 100, 1)])).toEqual(['real', 'read']);
    expect(chooseCorrections([c('read', 40, 1), c('real', 100, 1)])).toEqual(['real']);
    // Fewer edits win among spellings of one stem.
    expect(
      chooseCorrections([
        { word: 'gathers', stem: 'gather', count: 9, distance: 1 },
        { word: 'gather', stem: 'gather', count: 9, distance: 0.5 },
      ]),
    ).toEqual(['gather']);
    expect(chooseCorrections([])).toEqual([]);
  });
});

describe('relevance metrics', () => {
  it('scores ranked pages', () => {
    const pages = rankedPages(['http://h/a.html#x', 'http://h/a.html#y', 'http://h/b.html', 'http://h/c/'], 'http://h/');
    expect(pages).toEqual(['a.html', 'b.html', 'c/index.html']);
    expect(pageKey('http://127.0.0.1:4000/library/json.html#basic', 'http://other/')).toBe('library/json.html');
    expect(firstRelevantRank(pages, { 'b.html': 2 })).toBe(2);
    expect(firstRelevantRank(pages, { 'z.html': 2 })).toBeNull();
    expect(ndcgAt(['b.html', 'a.html'], { 'b.html': 2, 'a.html': 1 })).toBeCloseTo(1);
    expect(ndcgAt(['a.html', 'b.html'], { 'b.html': 2, 'a.html': 1 })).toBeLessThan(1);
  });

  it('makes deterministic typos', () => {
    const q = 'chain multiple iterables together';
    expect(typoVariant(q)).toBe(typoVariant(q));
    expect(typoVariant(q)).not.toBe(q);
    const changed = q.split(' ').filter((w, i) => typoVariant(q).split(' ')[i] !== w);
    expect(changed.length).toBeGreaterThanOrEqual(1);
    expect(changed.length).toBeLessThanOrEqual(2);
    expect(typoVariant('load json from a file')).not.toBe('load json from a file');
  });

  it('makes each kind of typo at a position', () => {
    expect(typoAt('gather', 'swap', 2)).toBe('gahter');
    expect(typoAt('gather', 'drop', 2)).toBe('gaher');
    expect(typoAt('gather', 'double', 2)).toBe('gatther');
    expect(typoAt('gather', 'wrong', 2)).toBe('gayher');
  });
});
