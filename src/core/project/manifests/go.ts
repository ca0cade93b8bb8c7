import type { ManifestReadResult, ProjectDependency } from '../dependency.js';
import { manifestInvalid, readManifestFile } from './manifest-file.js';

/**
 * go.mod, read by a small line parser written here: there is no well-kept JavaScript parser of the format,
 * and its grammar is small (golang.org/x/mod/modfile): one directive a line or a parenthesised block of them,
 * `//` comments, tokens bare or quoted. `require` names the dependencies at the exact versions minimal version
 * selection starts from; `// indirect` marks the ones only other modules need; `replace` swaps a module for
 * another (or for a local folder, which no proxy serves); `exclude`, `retract`, `go`, `toolchain`, `godebug`,
 * `tool` and `ignore` name no dependency.
 */

const FILE = 'go.mod';
const VERBS = new Set(['module', 'go', 'toolchain', 'godebug', 'require', 'replace', 'exclude', 'retract', 'tool', 'ignore']);
// A module path's characters (golang.org/x/mod/module.CheckPath), loosely: the proxy checks the rest.
const MODULE_PATH = /^[A-Za-z0-9][A-Za-z0-9._~/+-]*$/;
// Semantic versions as Go writes them: `v1.2.3`, prereleases and pseudo-versions, `+incompatible`.
const GO_VERSION = /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+incompatible)?$/;

/** One directive: its verb, its arguments, its line and its trailing comment. */
interface Directive {
  verb: string;
  args: string[];
  line: number;
  comment: string;
}

const QUOTED = /"(?:[^"\\\n]|\\.)*"/y;
const RAW = /`[^`]*`/y;
const BARE = /[^\s"`]+/y;

/** The token at `from` by `pattern` (a sticky regex), or undefined. */
function tokenAt(pattern: RegExp, text: string, from: number): string | undefined {
  pattern.lastIndex = from;
  return pattern.exec(text)?.[0];
}

/** A line's tokens (bare, "quoted" or `raw`) and its `//` comment. */
function tokenize(text: string, line: number): { tokens: string[]; comment: string } {
  const tokens: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) i++;
    else if (text.startsWith('//', i)) return { tokens, comment: text.slice(i + 2).trim() };
    else if (c === '"' || c === '`') {
      const quoted = tokenAt(c === '"' ? QUOTED : RAW, text, i);
      if (quoted === undefined) throw manifestInvalid(FILE, `line ${line}: an unterminated quoted string`);
      tokens.push(c === '"' ? unquote(quoted, line) : quoted.slice(1, -1));
      i += quoted.length;
    } else {
      const word = tokenAt(BARE, text, i)!;
      const cut = word.indexOf('//');
      tokens.push(cut < 0 ? word : word.slice(0, cut));
      i += cut < 0 ? word.length : cut;
    }
  }
  return { tokens, comment: '' };
}

function unquote(quoted: string, line: number): string {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    throw manifestInvalid(FILE, `line ${line}: ${quoted.slice(0, 80)} is not a valid quoted string`);
  }
}

/** The directives of a go.mod, blocks (`require ( … )`) flattened into one directive per line. */
function directives(text: string): Directive[] {
  const out: Directive[] = [];
  let block: { verb: string; line: number } | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    const { tokens, comment } = tokenize(raw, line);
    if (tokens.length === 0) return;
    if (block !== undefined) {
      if (tokens.length === 1 && tokens[0] === ')') block = undefined;
      else out.push({ verb: block.verb, args: tokens, line, comment });
      return;
    }
    const verb = tokens[0]!;
    if (!VERBS.has(verb)) throw manifestInvalid(FILE, `line ${line}: unknown directive ${JSON.stringify(verb.slice(0, 40))}`);
    if (tokens.length === 2 && tokens[1] === '(') block = { verb, line };
    else out.push({ verb, args: tokens.slice(1), line, comment });
  });
  if (block !== undefined) throw manifestInvalid(FILE, `line ${block.line}: the ${block.verb} block is never closed`);
  return out;
}

function checkModule(path: string, line: number): string {
  if (!MODULE_PATH.test(path) || path.length > 500 || path.includes('..') || path.includes('//'))
    throw manifestInvalid(FILE, `line ${line}: ${JSON.stringify(path.slice(0, 80))} is not a module path`);
  return path;
}

function checkVersion(version: string | undefined, line: number): string {
  if (version === undefined || !GO_VERSION.test(version)) throw manifestInvalid(FILE, `line ${line}: ${JSON.stringify((version ?? '').slice(0, 80))} is not a module version (v1.2.3)`);
  return version;
}

interface Replacement {
  /** Only this version of the module, or every version. */
  fromVersion?: string;
  /** The module and version used instead; a local folder (`./fork`) when `localPath` is set. */
  to?: { module: string; version: string };
  localPath?: string;
}

/** A replacement target that is a file-system path rather than a module: Go's own rule (`./`, `../`, absolute). */
function isLocalPath(target: string): boolean {
  return target.startsWith('./') || target.startsWith('../') || target.startsWith('/') || /^[A-Za-z]:[\\/]/.test(target) || target === '.' || target === '..';
}

function readReplace(directive: Directive): [string, Replacement] {
  const { args, line } = directive;
  const arrow = args.indexOf('=>');
  if (arrow < 1 || arrow > 2 || args.length - arrow - 1 < 1 || args.length - arrow - 1 > 2)
    throw manifestInvalid(FILE, `line ${line}: a replace directive reads "module [version] => module version" or "module [version] => ./path"`);
  const from = checkModule(args[0]!, line);
  const fromVersion = arrow === 2 ? checkVersion(args[1], line) : undefined;
  const target = args[arrow + 1]!;
  const base = fromVersion === undefined ? {} : { fromVersion };
  if (isLocalPath(target)) {
    if (args.length - arrow - 1 !== 1) throw manifestInvalid(FILE, `line ${line}: a replacement by a local folder takes no version`);
    return [from, { ...base, localPath: target }];
  }
  return [from, { ...base, to: { module: checkModule(target, line), version: checkVersion(args[arrow + 2], line) } }];
}

/** `// indirect`, alone or first among `;`-separated comments, as the go command writes it. */
function isIndirect(comment: string): boolean {
  return comment === 'indirect' || comment.startsWith('indirect;');
}

function applyReplace(module: string, version: string, replacements: Map<string, Replacement[]>): Replacement | undefined {
  const list = replacements.get(module) ?? [];
  // A replacement of this version wins over one of every version, as in the go command.
  return list.find((r) => r.fromVersion === version) ?? list.find((r) => r.fromVersion === undefined);
}

/** The dependencies a go.mod names, replacements applied, and notes for those replaced by local folders. */
export function parseGoMod(text: string): { dependencies: ProjectDependency[]; notes: string[] } {
  const all = directives(text);
  const replacements = new Map<string, Replacement[]>();
  for (const directive of all.filter((d) => d.verb === 'replace')) {
    const [from, replacement] = readReplace(directive);
    replacements.set(from, [...(replacements.get(from) ?? []), replacement]);
  }
  const dependencies = new Map<string, ProjectDependency>();
  const notes: string[] = [];
  for (const directive of all.filter((d) => d.verb === 'require')) {
    if (directive.args.length !== 2) throw manifestInvalid(FILE, `line ${directive.line}: a require directive reads "module version"`);
    const module = checkModule(directive.args[0]!, directive.line);
    const version = checkVersion(directive.args[1], directive.line);
    const replacement = applyReplace(module, version, replacements);
    if (replacement?.localPath !== undefined) {
      notes.push(`go.mod: ${module} ${version} is replaced by the local folder ${replacement.localPath}; skipped`);
      continue;
    }
    const name = replacement?.to?.module ?? module;
    const exact = replacement?.to?.version ?? version;
    const direct = !isIndirect(directive.comment);
    const known = dependencies.get(`${name}@${exact}`);
    if (known !== undefined) known.direct ||= direct;
    else dependencies.set(`${name}@${exact}`, { ecosystem: 'go', name, version: exact, range: null, direct, manifest: FILE });
  }
  return { dependencies: [...dependencies.values()], notes };
}

/**
 * go.mod (its require lines and blocks; `// indirect` marks transitive ones; replace directives applied).
 * Null when the directory has no go.mod. A malformed go.mod is a `manifest_invalid` UserError naming the
 * line. Versions stay as go.mod writes them (`v1.2.3`).
 */
export async function readGoModule(root: string): Promise<ManifestReadResult | null> {
  const text = await readManifestFile(root, FILE);
  if (text === null) return null;
  const { dependencies, notes } = parseGoMod(text);
  return { dependencies, files: [FILE], ...(notes.length === 0 ? {} : { notes }) };
}
