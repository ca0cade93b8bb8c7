// Literal strings a regular expression cannot match without. The language
// classifier runs ~250 rules over every undeclared code block; most rules
// cannot match most blocks, and `includes` rules that out several times faster
// than the regex engine can (PostgreSQL's docs: thousands of undeclared blocks).
//
// The analysis is conservative: it reads the pattern's structure (sequences,
// alternatives, groups, quantifiers) and only reports literals that every
// match contains; anything it does not fully understand yields no needles,
// which means "always run the regex".

type Node = { kind: 'char'; ch: string } | { kind: 'other' } | { kind: 'empty' } | { kind: 'group'; alt: Item[][] };

interface Item {
  node: Node;
  /** Fewest repetitions (0 for `*`, `?`, `{0,n}`). */
  min: number;
  /** Not quantified at all: a literal character that may join its neighbours in a run. */
  once: boolean;
}

class Unsupported extends Error {}

class PatternReader {
  private i = 0;

  constructor(private readonly src: string) {}

  parse(): Item[][] {
    const alt = this.alternation();
    if (this.i !== this.src.length) throw new Unsupported('unbalanced parenthesis');
    return alt;
  }

  private alternation(): Item[][] {
    const branches: Item[][] = [];
    let seq: Item[] = [];
    for (;;) {
      if (this.i >= this.src.length || this.src[this.i] === ')') {
        branches.push(seq);
        return branches;
      }
      if (this.src[this.i] === '|') {
        this.i++;
        branches.push(seq);
        seq = [];
        continue;
      }
      seq.push(this.item());
    }
  }

  private item(): Item {
    const node = this.atom();
    let min = 1;
    const c = this.src[this.i];
    if (c === '*' || c === '?') {
      min = 0;
      this.i++;
    } else if (c === '+') {
      this.i++;
    } else if (c === '{' && /^\{\d+(?:,\d*)?\}/.test(this.src.slice(this.i))) {
      const m = /^\{(\d+)(?:,\d*)?\}/.exec(this.src.slice(this.i)) as RegExpExecArray;
      min = Number(m[1]);
      this.i += m[0].length;
    } else {
      return { node, min: 1, once: true };
    }
    // Lazy quantifiers match the same strings.
    if (this.src[this.i] === '?') this.i++;
    return { node, min, once: false };
  }

  private atom(): Node {
    const c = this.src[this.i] as string;
    this.i++;
    switch (c) {
      case '\\':
        return this.escape();
      case '[':
        this.skipClass();
        return { kind: 'other' };
      case '(':
        return this.group();
      case '.':
        return { kind: 'other' };
      case '^':
      case '$':
        return { kind: 'empty' };
      case '*':
      case '+':
      case '?':
        throw new Unsupported('quantifier without an atom');
      case '{':
        if (/^\d+(?:,\d*)?\}/.test(this.src.slice(this.i))) throw new Unsupported('quantifier without an atom');
        // Otherwise a literal brace (patterns without the `u` flag).
        return { kind: 'char', ch: c };
      default:
        return { kind: 'char', ch: c };
    }
  }

  private escape(): Node {
    const c = this.src[this.i];
    if (c === undefined) throw new Unsupported('trailing backslash');
    this.i++;
    if (c === 'b' || c === 'B') return { kind: 'empty' };
    if (c === 'w' || c === 'W' || c === 's' || c === 'S' || c === 'd' || c === 'D') return { kind: 'other' };
    if (c === 'n') return { kind: 'char', ch: '\n' };
    if (c === 't') return { kind: 'char', ch: '\t' };
    if (c === 'r') return { kind: 'char', ch: '\r' };
    if (c === 'f') return { kind: 'char', ch: '\f' };
    if (c === 'v') return { kind: 'char', ch: '\v' };
    // Back-references, \xHH, \uHHHH, \p{..}, \cX, \0, \k<name> and the like: not modelled.
    if (/[0-9A-Za-z]/.test(c)) throw new Unsupported(`escape \\${c}`);
    return { kind: 'char', ch: c };
  }

  private skipClass(): void {
    while (this.i < this.src.length) {
      const c = this.src[this.i];
      this.i += c === '\\' ? 2 : 1;
      if (c === ']') return;
    }
    throw new Unsupported('unterminated class');
  }

  private group(): Node {
    let zeroWidth = false;
    if (this.src[this.i] === '?') {
      const next = this.src.slice(this.i, this.i + 3);
      if (next.startsWith('?:')) {
        this.i += 2;
      } else if (next.startsWith('?=') || next.startsWith('?!')) {
        this.i += 2;
        zeroWidth = true;
      } else if (next === '?<=' || next === '?<!') {
        this.i += 3;
        zeroWidth = true;
      } else {
        throw new Unsupported('named or modified group');
      }
    }
    const alt = this.alternation();
    if (this.src[this.i] !== ')') throw new Unsupported('unterminated group');
    this.i++;
    // Lookarounds consume nothing: the characters around them are adjacent in the match.
    return zeroWidth ? { kind: 'empty' } : { kind: 'group', alt };
  }
}

/** Needles for an alternation: any branch may match, so each branch must bring its own. */
function alternationNeedles(alt: Item[][]): string[] | null {
  const out: string[] = [];
  for (const seq of alt) {
    const n = sequenceNeedles(seq);
    if (n === null) return null;
    for (const s of n) if (!out.includes(s)) out.push(s);
  }
  return out;
}

/** The rarer-looking of two needle sets: longer shortest needle, then fewer needles. */
function better(a: string[] | null, b: string[]): string[] {
  if (a === null) return b;
  const minA = Math.min(...a.map((s) => s.length));
  const minB = Math.min(...b.map((s) => s.length));
  if (minB !== minA) return minB > minA ? b : a;
  return b.length < a.length ? b : a;
}

/** Needles for a sequence: the best of its runs of literal characters and its required groups. */
function sequenceNeedles(seq: Item[]): string[] | null {
  let best: string[] | null = null;
  let run = '';
  for (const { node, min, once } of seq) {
    if (node.kind === 'empty') continue;
    if (node.kind === 'char' && once) {
      run += node.ch;
      continue;
    }
    if (run.length > 0) best = better(best, [run]);
    run = '';
    if (min < 1) continue;
    if (node.kind === 'char') best = better(best, [node.ch]);
    else if (node.kind === 'group') {
      const n = alternationNeedles(node.alt);
      if (n !== null) best = better(best, n);
    }
  }
  if (run.length > 0) best = better(best, [run]);
  return best;
}

/**
 * Literals one of which every match of `re` contains, or null when the pattern
 * is not understood (or case-insensitive / unicode, where `includes` would not do).
 */
export function requiredNeedles(re: RegExp): string[] | null {
  if (/[iuv]/.test(re.flags)) return null;
  try {
    const needles = alternationNeedles(new PatternReader(re.source).parse());
    if (needles === null || needles.length === 0 || needles.some((s) => s.length === 0)) return null;
    return needles;
  } catch (err) {
    if (err instanceof Unsupported) return null;
    throw err;
  }
}
