import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { isUserError, UserError } from '../errors.js';
import { parseLibrarySpec } from '../library-spec.js';
import type { LibrarySpec } from '../library-spec.js';
import { readManifestFile } from './manifests/npm.js';

/**
 * `.docdex.yml` in a project's root: the settings `docdex sync` would otherwise take as flags (`all`,
 * `include`, `exclude`), the project's name, and extra sources (a docs URL or an http(s) git spec per library,
 * as `docdex add` takes them). Flags given on the command line add to these.
 */

export const PROJECT_CONFIG_FILE = '.docdex.yml';

export interface ExtraSource {
  /** The library's name in the index. */
  name: string;
  spec: LibrarySpec;
}

export interface ProjectConfigFile {
  name?: string;
  all?: boolean;
  include: string[];
  exclude: string[];
  sources: ExtraSource[];
}

const globs = z.union([z.string().min(1).max(500), z.array(z.string().min(1).max(500)).max(200)]).transform((v) => (typeof v === 'string' ? [v] : v));

const FileSchema = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    all: z.boolean().optional(),
    include: globs.optional(),
    exclude: globs.optional(),
    sources: z
      .record(z.string().trim().min(1).max(200), z.string().min(1).max(2000))
      .refine((r) => Object.keys(r).length <= 200, 'at most 200 sources')
      .optional(),
  })
  .strict();

function invalid(what: string): UserError {
  return new UserError(`${PROJECT_CONFIG_FILE} is not valid: ${what.slice(0, 300)}.`, { code: 'project_config_invalid' });
}

/**
 * A spec as written: a docs URL or an http(s) git repository. The file is third-party text (a cloned project's),
 * so its sources are held to the remote rules (net/provenance.ts): a local path, file:// or ssh remote would
 * have docdex read this machine's repositories, or use the user's ssh keys, on the word of a project file.
 */
function sourceSpec(name: string, text: string): ExtraSource {
  let spec: LibrarySpec;
  try {
    spec = parseLibrarySpec(text);
  } catch (error) {
    if (!isUserError(error)) throw error;
    throw invalid(`sources.${name}: ${error.message.replace(/\.$/, '')}`);
  }
  if (spec.kind === 'package') throw invalid(`sources.${name}: a source is a docs URL or a git repository; packages come from the manifests`);
  if (spec.kind === 'git' && spec.transport !== 'https' && spec.transport !== 'http') {
    throw invalid(
      `sources.${name}: a source is a docs URL or an http(s) git repository; a local path, file:// or ssh remote named by a project file is never read (index it yourself: docdex add ${spec.spec.slice(0, 200)})`,
    );
  }
  return { name, spec };
}

/** Parses a `.docdex.yml` text. Bad text: `project_config_invalid`. */
export function parseProjectConfig(text: string): ProjectConfigFile {
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100, logLevel: 'error' });
  } catch (error) {
    throw invalid(`not YAML (${(error as Error).message.split('\n')[0]})`);
  }
  const parsed = FileSchema.safeParse(doc ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid(`${issue.path.join('.') || 'the file'}: ${issue.message}`);
  }
  const { sources = {}, include = [], exclude = [], ...rest } = parsed.data;
  return { ...rest, include, exclude, sources: Object.entries(sources).map(([name, spec]) => sourceSpec(name, spec)) };
}

/** The project's `.docdex.yml`, or the empty settings when it has none. */
export async function readProjectConfig(root: string): Promise<ProjectConfigFile> {
  let text: string | null;
  try {
    text = await readManifestFile(root, PROJECT_CONFIG_FILE);
  } catch (error) {
    if (isUserError(error)) throw invalid(error.message.replace(/^.*?: /, '').replace(/\.$/, ''));
    throw error;
  }
  return text === null ? { include: [], exclude: [], sources: [] } : parseProjectConfig(text);
}
