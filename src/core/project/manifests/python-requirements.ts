import path from 'node:path';
import { parsePipRequirementsLine } from 'pip-requirements-js';
import type { Requirement } from 'pip-requirements-js';
import { manifestInvalid, readManifestFile } from './manifest-file.js';

/**
 * PEP 508 requirements, as `[project] dependencies` and requirements files write them, through
 * pip-requirements-js's grammar. What pip reads beyond PEP 508 (options, `-e`, URLs and paths, per-line
 * `--hash`) is recognised here first, because that grammar does not know it.
 */

/** One requirement a manifest names. */
export interface PythonRequirement {
  /** PEP 503 normalised. */
  name: string;
  /** The version specifiers as written (`>=2,<3`), or null for none. */
  range: string | null;
  /** An exact `==` pin (no wildcard), or null. */
  version: string | null;
  manifest: string;
}

/** PEP 503: lower case, runs of `-`, `_` and `.` as one `-`. */
export function normalisePythonName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** A PEP 440 exact pin (`==2.32.3`, `===1.0`), not a prefix match (`==2.*`). */
export function exactPin(range: string | null): string | null {
  const match = range === null ? null : /^===?\s*([0-9A-Za-z!+._-]+)$/.exec(range.trim());
  return match ? match[1]! : null;
}

/** A parsed requirement as a dependency; null for a URL requirement (`name @ https://…`), which PyPI does not serve. */
export function requirementOf(parsed: Requirement, manifest: string): PythonRequirement | null {
  if (parsed.type !== 'ProjectName') return null;
  const specs = parsed.versionSpec ?? [];
  const range = specs.length === 0 ? null : specs.map((s) => `${s.operator}${s.version}`).join(',');
  return { name: normalisePythonName(parsed.name), range, version: exactPin(range), manifest };
}

/** One PEP 508 string (a pyproject entry); `manifest_invalid` naming `where` when it is not one. */
export function parsePep508(text: string, manifest: string, where: string): PythonRequirement | null {
  let parsed: Requirement | null;
  try {
    parsed = parsePipRequirementsLine(text);
  } catch {
    throw manifestInvalid(manifest, `${where} ${JSON.stringify(text.slice(0, 120))} is not a PEP 508 requirement`);
  }
  if (parsed === null || (parsed.type !== 'ProjectName' && parsed.type !== 'ProjectURL')) {
    throw manifestInvalid(manifest, `${where} ${JSON.stringify(text.slice(0, 120))} is not a PEP 508 requirement`);
  }
  return requirementOf(parsed, manifest);
}

/** Files included with `-r` are followed this deep, no deeper (a loop of includes is cut by the visited set). */
const MAX_INCLUDE_DEPTH = 5;

interface RequirementsRead {
  requirements: PythonRequirement[];
  files: string[];
  notes: string[];
}

/** pip's logical lines: a trailing backslash continues a line; `#` after whitespace (or at the start) comments. */
function logicalLines(text: string): Array<{ line: string; number: number }> {
  const out: Array<{ line: string; number: number }> = [];
  const physical = text.split(/\r?\n/);
  for (let i = 0; i < physical.length; i++) {
    const number = i + 1;
    let line = physical[i]!;
    while (line.endsWith('\\') && i + 1 < physical.length) line = line.slice(0, -1) + ' ' + physical[++i]!;
    const stripped = line.replace(/(^|\s)#.*$/, '').trim();
    if (stripped !== '') out.push({ line: stripped, number });
  }
  return out;
}

type LineMeaning = { kind: 'include'; target: string } | { kind: 'skip' } | { kind: 'requirement'; text: string };

/** What one logical line is to pip; only `-r` includes and named requirements matter to docdex. */
function lineMeaning(line: string): LineMeaning {
  const include = /^(?:-r|--requirement)(?:\s*=\s*|\s+|(?=[^\s-]))(.+)$/.exec(line);
  if (include) return { kind: 'include', target: include[1]!.trim() };
  // Other options (-c constraints, -e editables, --index-url…) and URLs or paths install nothing from PyPI by name.
  if (line.startsWith('-') || /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(line) || /^(\.|\/|~)/.test(line)) return { kind: 'skip' };
  // Per-requirement options (`--hash=…`, `--config-settings …`) follow the requirement after whitespace.
  return { kind: 'requirement', text: line.replace(/\s+--?[A-Za-z].*$/, '') };
}

function requirementLine(text: string, file: string, number: number): PythonRequirement | null {
  let parsed: Requirement | null;
  try {
    parsed = parsePipRequirementsLine(text);
  } catch {
    throw manifestInvalid(file, `line ${number} ${JSON.stringify(text.slice(0, 120))} is not a requirement`);
  }
  return parsed === null ? null : requirementOf(parsed, file);
}

/** The include's path relative to the root, or undefined when it leaves the project directory. */
function includePath(from: string, target: string): string | undefined {
  if (path.isAbsolute(target) || /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(target)) return undefined;
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), target.replace(/\\/g, '/')));
  return joined.startsWith('../') || joined === '..' ? undefined : joined;
}

async function readRequirementsFile(root: string, file: string, depth: number, into: RequirementsRead, visited: Set<string>): Promise<void> {
  if (visited.has(file)) return;
  visited.add(file);
  const text = await readManifestFile(root, file);
  if (text === null) {
    into.notes.push(`${file}: not found, not read`);
    return;
  }
  into.files.push(file);
  for (const { line, number } of logicalLines(text)) {
    const meaning = lineMeaning(line);
    if (meaning.kind === 'skip') continue;
    if (meaning.kind === 'requirement') {
      const requirement = requirementLine(meaning.text, file, number);
      if (requirement !== null) into.requirements.push(requirement);
      continue;
    }
    const target = includePath(file, meaning.target);
    if (target === undefined) into.notes.push(`${file} line ${number}: -r ${meaning.target} leaves the project directory; not followed`);
    else if (depth >= MAX_INCLUDE_DEPTH) into.notes.push(`${file} line ${number}: -r ${meaning.target} is nested more than ${MAX_INCLUDE_DEPTH} deep; not followed`);
    else await readRequirementsFile(root, target, depth + 1, into, visited);
  }
}

/** The requirements files named (relative to the root), with the files they include, each read once. */
export async function readRequirementsFiles(root: string, files: string[]): Promise<RequirementsRead> {
  const into: RequirementsRead = { requirements: [], files: [], notes: [] };
  const visited = new Set<string>();
  for (const file of files) await readRequirementsFile(root, file, 0, into, visited);
  return into;
}

/** Parses requirements text without following includes: for the property tests and callers with text in hand. */
export function parseRequirementsText(text: string, file: string): PythonRequirement[] {
  const out: PythonRequirement[] = [];
  for (const { line, number } of logicalLines(text)) {
    const meaning = lineMeaning(line);
    if (meaning.kind !== 'requirement') continue;
    const requirement = requirementLine(meaning.text, file, number);
    if (requirement !== null) out.push(requirement);
  }
  return out;
}
