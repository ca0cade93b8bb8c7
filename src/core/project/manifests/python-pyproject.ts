import { asTable, manifestInvalid, parseTomlManifest, tableAt } from './manifest-file.js';
import { normalisePythonName, parsePep508 } from './python-requirements.js';
import type { PythonRequirement } from './python-requirements.js';

/**
 * pyproject.toml's dependencies: PEP 621 (`[project] dependencies`, `[project.optional-dependencies]`),
 * PEP 735 (`[dependency-groups]`, which uv writes for dev dependencies) and Poetry (`[tool.poetry.dependencies]`,
 * `[tool.poetry.group.<name>.dependencies]`, the older `[tool.poetry.dev-dependencies]`).
 */

const FILE = 'pyproject.toml';

function pep508List(value: unknown, where: string): PythonRequirement[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw manifestInvalid(FILE, `${where} is not a list`);
  const out: PythonRequirement[] = [];
  value.forEach((entry, i) => {
    // PEP 735 lets a group include another group: `{ include-group = "test" }`, whose entries are read as that group.
    if (asTable(entry)?.['include-group'] !== undefined) return;
    if (typeof entry !== 'string') throw manifestInvalid(FILE, `${where}[${i}] is not a requirement string`);
    const requirement = parsePep508(entry, FILE, `${where}[${i}]`);
    if (requirement !== null) out.push(requirement);
  });
  return out;
}

/**
 * The names `[tool.uv.sources]` takes from git, a path, a URL or the workspace (what `uv add git+…` writes): not
 * PyPI's packages of that name, whatever the requirement says. A source naming another index still is a registry.
 */
function uvSourcedElsewhere(document: Record<string, unknown>): Set<string> {
  const uv = tableAt(FILE, tableAt(FILE, document, 'tool', '[tool]'), 'uv', '[tool.uv]');
  const sources = tableAt(FILE, uv, 'sources', '[tool.uv.sources]') ?? {};
  const elsewhere = new Set<string>();
  for (const [name, value] of Object.entries(sources)) {
    // One source, or several chosen by markers.
    const entries = Array.isArray(value) ? (value as unknown[]) : [value];
    if (entries.some((entry) => ['git', 'path', 'url', 'workspace'].some((key) => asTable(entry)?.[key] !== undefined))) elsewhere.add(normalisePythonName(name));
  }
  return elsewhere;
}

function pep621(document: Record<string, unknown>): PythonRequirement[] {
  const project = tableAt(FILE, document, 'project', '[project]');
  const optional = tableAt(FILE, project, 'optional-dependencies', '[project.optional-dependencies]') ?? {};
  const groups = tableAt(FILE, document, 'dependency-groups', '[dependency-groups]') ?? {};
  const elsewhere = uvSourcedElsewhere(document);
  return [
    ...pep508List(project?.['dependencies'], 'project.dependencies'),
    ...Object.entries(optional).flatMap(([extra, list]) => pep508List(list, `project.optional-dependencies.${extra}`)),
    ...Object.entries(groups).flatMap(([group, list]) => pep508List(list, `dependency-groups.${group}`)),
  ].filter((requirement) => !elsewhere.has(requirement.name));
}

/** Poetry's bare version means exactly that version (`"2.31.0"`, `"==2.31.0"`). */
function poetryExact(range: string): string | null {
  const match = /^(?:==?)?\s*(\d+(?:\.\d+)*)$/.exec(range.trim());
  return match ? match[1]! : null;
}

/** A Poetry constraint: a string, `{ version = … }`, or a list of those per marker (the first version is taken). */
function poetryConstraint(value: unknown, where: string): { range: string | null } | null {
  if (typeof value === 'string') return { range: value.trim() === '*' || value.trim() === '' ? null : value.trim() };
  if (Array.isArray(value)) {
    for (const [i, entry] of value.entries()) {
      const one = poetryConstraint(entry, `${where}[${i}]`);
      if (one !== null) return one;
    }
    return null;
  }
  const table = asTable(value);
  if (table === undefined) throw manifestInvalid(FILE, `${where} is neither a version constraint nor a table`);
  // git, path and url dependencies are not on PyPI.
  if (table['git'] !== undefined || table['path'] !== undefined || table['url'] !== undefined) return null;
  const version = table['version'];
  if (version === undefined) return { range: null };
  if (typeof version !== 'string') throw manifestInvalid(FILE, `${where}.version is not a string`);
  return poetryConstraint(version, where);
}

function poetryTable(table: Record<string, unknown> | undefined, where: string): PythonRequirement[] {
  const out: PythonRequirement[] = [];
  for (const [name, value] of Object.entries(table ?? {})) {
    // The interpreter's own constraint, not a package.
    if (name.toLowerCase() === 'python') continue;
    const constraint = poetryConstraint(value, `${where}.${name}`);
    if (constraint === null) continue;
    out.push({ name: normalisePythonName(name), range: constraint.range, version: constraint.range === null ? null : poetryExact(constraint.range), manifest: FILE });
  }
  return out;
}

function poetry(document: Record<string, unknown>): PythonRequirement[] {
  const tool = tableAt(FILE, document, 'tool', '[tool]');
  const section = tableAt(FILE, tool, 'poetry', '[tool.poetry]');
  if (section === undefined) return [];
  const groups = tableAt(FILE, section, 'group', '[tool.poetry.group]') ?? {};
  const groupTables = Object.keys(groups).map((group) => {
    const table = tableAt(FILE, groups, group, `[tool.poetry.group.${group}]`);
    return poetryTable(tableAt(FILE, table, 'dependencies', `[tool.poetry.group.${group}.dependencies]`), `tool.poetry.group.${group}.dependencies`);
  });
  return [
    ...poetryTable(tableAt(FILE, section, 'dependencies', '[tool.poetry.dependencies]'), 'tool.poetry.dependencies'),
    ...poetryTable(tableAt(FILE, section, 'dev-dependencies', '[tool.poetry.dev-dependencies]'), 'tool.poetry.dev-dependencies'),
    ...groupTables.flat(),
  ];
}

/** Every requirement pyproject.toml names (PEP 621, PEP 735 and Poetry); `manifest_invalid` for a malformed file. */
export function parsePyproject(text: string): PythonRequirement[] {
  const document = parseTomlManifest(FILE, text);
  return [...pep621(document), ...poetry(document)];
}
