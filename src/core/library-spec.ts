import semver from 'semver';
import { z } from 'zod';
import { CRAWL_FIELDS } from './crawl-request.js';
import { UserError, ValidationError } from './errors.js';

/**
 * What `docdex add` (REST `POST /api/libraries`, MCP `add_library`) is asked to index, declared once: a spec
 * names a docs site, a git repository or a registry package; the request adds the options those producers take.
 * The CLI flags, the REST body (and so the OpenAPI document) and the MCP arguments all derive from ADD_FIELDS.
 * Parsing is pure: whether a repository or package exists is the producers' question.
 */

export type Ecosystem = 'npm' | 'pypi' | 'crates' | 'go';

/** How a git remote is reached; only `https` and `http` may come from REST or MCP. */
export type GitTransport = 'https' | 'http' | 'ssh' | 'file' | 'local';

export type LibrarySpec =
  | { kind: 'url'; spec: string; url: string }
  | { kind: 'git'; spec: string; remote: string; ref?: string; transport: GitTransport }
  | { kind: 'package'; spec: string; ecosystem: Ecosystem; name: string; version?: string };

/** Hosts whose `https://host/owner/repo` is a repository, not a docs site, even without `.git`. */
const FORGES = new Set(['github.com', 'gitlab.com', 'codeberg.org', 'bitbucket.org']);

const SPEC_FORMS =
  'A spec is a docs URL (https://docs.example.com/), a git repository (https://host/org/repo.git, git@host:org/repo.git, file:///path/repo or ./repo, each with an optional @ref), or a package (npm:react@18.3.1, npm:@scope/pkg, pypi:requests@2.32.3, crates:serde@1, go:github.com/spf13/cobra@v1.8.1).';

const NPM_NAME = /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;
const PYPI_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const CRATE_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;
/** A Go module path: a host-like first element with a dot, then path elements (golang.org/x/mod/module's rule, loosely). */
const GO_MODULE = /^[a-z0-9-]+(\.[a-z0-9-]+)+(\/[A-Za-z0-9_~+-]+(\.[A-Za-z0-9_~+-]+)*)*$/;
const NAME_PATTERNS: Record<Ecosystem, RegExp> = { npm: NPM_NAME, pypi: PYPI_NAME, crates: CRATE_NAME, go: GO_MODULE };
/** Characters of exact versions and ranges in the three ecosystems (PEP 440's `!` and `+` included). */
const VERSION_TEXT = /^[0-9A-Za-z.^~<>=*|, +!_-]+$/;

function specError(spec: string, why: string): UserError {
  return new UserError(`Cannot add ${JSON.stringify(spec.slice(0, 200))}: ${why}.`, { hint: SPEC_FORMS, code: 'invalid_library_spec' });
}

/**
 * A git ref as `git check-ref-format` allows it, and never an option (`-…`) or a path escape: a tag, a branch
 * or a commit hash.
 */
export function refProblem(ref: string): string | null {
  if (ref.length === 0) return 'the ref after @ is empty';
  if (ref.length > 200) return 'the ref is longer than 200 characters';
  if (ref.startsWith('-') || ref.startsWith('/') || ref.endsWith('/') || ref.endsWith('.') || ref.endsWith('.lock')) return `${JSON.stringify(ref)} is not a valid git ref`;
  if (ref.includes('..') || ref.includes('//') || ref.includes('@{') || ref.includes('/.')) return `${JSON.stringify(ref)} is not a valid git ref`;
  if (!/^[A-Za-z0-9._/+-]+$/.test(ref)) return `${JSON.stringify(ref)} is not a valid git ref (letters, digits and . _ / + - only)`;
  return null;
}

/** Splits `remote@ref` at the last `@` after `from`; no ref when there is none. */
function splitRef(text: string, from: number): { remote: string; ref?: string } {
  const at = text.lastIndexOf('@');
  if (at <= from) return { remote: text };
  return { remote: text.slice(0, at), ref: text.slice(at + 1) };
}

function gitSpec(spec: string, remote: string, transport: GitTransport, ref: string | undefined): LibrarySpec {
  if (remote.length === 0) throw specError(spec, 'the repository is empty');
  if (ref !== undefined) {
    const problem = refProblem(ref);
    if (problem) throw specError(spec, problem);
  }
  return { kind: 'git', spec, remote, transport, ...(ref === undefined ? {} : { ref }) };
}

function parseHttpSpec(spec: string): LibrarySpec {
  const schemeEnd = spec.indexOf('://') + 3;
  const pathStart = spec.indexOf('/', schemeEnd);
  const split = pathStart < 0 ? { remote: spec } : splitRef(spec, pathStart);
  let url: URL;
  try {
    url = new URL(split.remote);
  } catch {
    throw specError(spec, 'not a valid URL');
  }
  if (url.username || url.password) throw specError(spec, 'credentials in the URL would reach logs and process listings; store them with `docdex manager git-credentials add` instead');
  const segments = url.pathname.split('/').filter(Boolean);
  const isGit = url.pathname.endsWith('.git') || (FORGES.has(url.hostname.toLowerCase()) && segments.length === 2 && !url.search && !url.hash);
  // A docs URL keeps any "@" in its path (npm's /package/@scope/pkg): only a repository takes an @ref.
  if (!isGit) return { kind: 'url', spec, url: new URL(spec).href };
  return gitSpec(spec, url.href, url.protocol === 'http:' ? 'http' : 'https', split.ref);
}

function parsePackageSpec(spec: string, ecosystem: Ecosystem, rest: string): LibrarySpec {
  // A scoped npm name starts with @: its version separator is the next @ after the scope.
  const at = rest.indexOf('@', rest.startsWith('@') ? 1 : 0);
  const name = (at < 0 ? rest : rest.slice(0, at)).trim();
  const version = at < 0 ? undefined : rest.slice(at + 1).trim();
  const pattern = NAME_PATTERNS[ecosystem];
  if (name.length === 0 || name.length > (ecosystem === 'go' ? 500 : 214) || !pattern.test(name)) throw specError(spec, `${JSON.stringify(name)} is not a valid ${ecosystem} package name`);
  if (version !== undefined) {
    if (version.length === 0) throw specError(spec, 'the version after @ is empty');
    if (version.length > 100 || !VERSION_TEXT.test(version)) throw specError(spec, `${JSON.stringify(version)} is not a version or a version range`);
    if (ecosystem !== 'pypi' && version !== 'latest' && semver.validRange(version) === null) throw specError(spec, `${JSON.stringify(version)} is not a version or a semver range`);
  }
  return { kind: 'package', spec, ecosystem, name, ...(version === undefined || version === 'latest' ? {} : { version }) };
}

/** Reads one spec; a ValidationError (code invalid_library_spec) says what is wrong with it. */
export function parseLibrarySpec(input: string): LibrarySpec {
  const spec = input.trim();
  if (spec.length === 0) throw specError(input, 'the spec is empty');
  if (spec.length > 2000) throw specError(spec, 'the spec is longer than 2000 characters');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\s]/.test(spec)) throw specError(spec, 'it contains spaces or control characters');
  if (spec.startsWith('-')) throw specError(spec, 'it starts with "-"');
  const prefix = /^(npm|pypi|crates|go):(.*)$/i.exec(spec);
  if (prefix) return parsePackageSpec(spec, prefix[1]!.toLowerCase() as Ecosystem, prefix[2]!);
  if (/^https?:\/\//i.test(spec)) return parseHttpSpec(spec);
  if (/^ssh:\/\//i.test(spec)) {
    const split = splitRef(spec, spec.indexOf('/', 6));
    return gitSpec(spec, split.remote, 'ssh', split.ref);
  }
  const scp = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:/.exec(spec);
  if (scp) {
    const split = splitRef(spec, scp[0].length);
    return gitSpec(spec, split.remote, 'ssh', split.ref);
  }
  if (/^file:\/\//i.test(spec)) {
    const split = splitRef(spec, 7);
    return gitSpec(spec, split.remote, 'file', split.ref);
  }
  if (/^(\/|\.\/|\.\.\/|~\/|\.$|\.\.$)/.test(spec)) {
    const split = splitRef(spec, 0);
    return gitSpec(spec, split.remote, 'local', split.ref);
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(spec)) throw specError(spec, `the scheme ${JSON.stringify(spec.split(':')[0])} is not one docdex indexes`);
  throw specError(spec, 'it is neither a URL, a git repository nor a package (a local path starts with ./ or /)');
}

const docsPath = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .superRefine((value, ctx) => {
    const parts = value.split('/');
    if (value.startsWith('/') || value.startsWith('-') || parts.includes('..') || /[\p{Cc}\\]/u.test(value)) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)} must be a path inside the repository (relative, no "..")` });
    }
  });

/**
 * One field of the add request: its rule and one line of description, which the CLI flag, the OpenAPI
 * document and the MCP argument show.
 */
export interface AddField {
  schema: z.ZodType;
  description: string;
  /** The CLI flag; false: taken as arguments. */
  flag: string | false;
}

export const MAX_SPECS = 20;
export const DEFAULT_MAX_REPO_MB = 500;

export const ADD_FIELDS = {
  specs: {
    schema: z.array(z.string().max(2000)).min(1, 'at least one spec is required').max(MAX_SPECS, `at most ${MAX_SPECS} specs at once`),
    description: 'What to index: docs URLs, git repositories (with an optional @ref) or packages (npm:name@version, pypi:name, crates:name@range, go:module@version); one job each.',
    flag: false,
  },
  name: {
    schema: z.string().trim().min(1).max(200).optional(),
    description: 'Library name (one spec only); default: the package, the repository or the site.',
    flag: 'name',
  },
  version: {
    schema: z.string().trim().min(1).max(100).optional(),
    description: "Version label (one spec only); default: the package's resolved version, the tag, branch or short commit.",
    flag: 'version',
  },
  path: {
    schema: z.array(docsPath).max(20).optional(),
    description: 'Git: index these folders (or files) of the repository instead of docs/, doc/, documentation/ and website/docs/.',
    flag: 'path',
  },
  examples: {
    schema: z.array(docsPath).max(20).optional(),
    description: 'Git: folders whose source files are indexed as examples, one snippet a file (default: examples/).',
    flag: 'examples',
  },
  max_repo_mb: {
    schema: z.number().int().min(1).max(10_000).optional(),
    description: `Git: refuse a repository whose fetch is larger than this many MB (default ${DEFAULT_MAX_REPO_MB}).`,
    flag: 'max-repo-mb',
  },
  depth: {
    schema: z.number().int().min(0).max(3).optional(),
    description: "Link depth of a docs site's crawl (URLs: as crawl start; a package's docs homepage: default 1).",
    flag: 'depth',
  },
  refresh: {
    schema: z.boolean().optional(),
    description: 'Fetch a version again although it is already indexed (by default an indexed version is left as it is and nothing is fetched).',
    flag: 'refresh',
  },
  // A docs site's crawl (a URL spec, a package's docs homepage) takes these crawl request fields as they are.
  render: { schema: CRAWL_FIELDS.render.schema.optional(), description: CRAWL_FIELDS.render.description, flag: 'render' },
  prefer_markdown: { schema: CRAWL_FIELDS.prefer_markdown.schema.optional(), description: CRAWL_FIELDS.prefer_markdown.description, flag: 'prefer-markdown' },
} satisfies Record<string, AddField>;

export type AddFieldName = keyof typeof ADD_FIELDS;

export const addRequestSchema = z
  .object(Object.fromEntries(Object.entries(ADD_FIELDS).map(([name, field]) => [name, field.schema])) as { [K in AddFieldName]: (typeof ADD_FIELDS)[K]['schema'] })
  .strict();

export type AddRequestInput = z.input<typeof addRequestSchema>;

export interface AddRequest {
  specs: LibrarySpec[];
  name?: string;
  version?: string;
  path?: string[];
  examples?: string[];
  maxRepoMb: number;
  depth?: number;
  /** Fetch again a version that is already indexed. */
  refresh: boolean;
  /** What a docs site's crawl takes beside its start URL, name, version and depth. */
  crawl: { render?: 'auto' | 'always' | 'never'; prefer_markdown?: 'auto' | 'never' };
}

/** Validates an add request and parses every spec; nothing is fetched or written. */
export function parseAddRequest(input: unknown): AddRequest {
  const result = addRequestSchema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = issue.path.map(String).join('.') || 'request';
    throw new ValidationError(`Invalid add request: ${field}: ${issue.message}.`, {
      hint: SPEC_FORMS,
      details: result.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
    });
  }
  const r = result.data as z.output<typeof addRequestSchema>;
  const specs = r.specs.map(parseLibrarySpec);
  if (specs.length > 1 && (r.name !== undefined || r.version !== undefined)) {
    throw new ValidationError('--name and --version name one library: give them with one spec at a time.', { hint: 'Run `docdex add` once per library that needs its own name or version.' });
  }
  return {
    specs,
    maxRepoMb: r.max_repo_mb ?? DEFAULT_MAX_REPO_MB,
    refresh: r.refresh === true,
    crawl: { ...(r.render === undefined ? {} : { render: r.render }), ...(r.prefer_markdown === undefined ? {} : { prefer_markdown: r.prefer_markdown }) },
    ...(r.name === undefined ? {} : { name: r.name }),
    ...(r.version === undefined ? {} : { version: r.version }),
    ...(r.path === undefined ? {} : { path: r.path }),
    ...(r.examples === undefined ? {} : { examples: r.examples }),
    ...(r.depth === undefined ? {} : { depth: r.depth }),
  };
}
