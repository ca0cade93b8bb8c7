import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, readdir, readFile, realpath, rename, rm, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { ConflictError, NotFoundError, UserError, ValidationError } from '../errors.js';
import { NOT_READY_HINT, getRepoById, listRepos } from './repos.js';
import type { RepoContext } from './repos.js';
import { AGENT_DIR } from './workspace.js';

/**
 * Skills are files: `<skills dir>/<name>/SKILL.md`, YAML frontmatter (name, description) and a markdown
 * body. Global skills live in the workspace's agent config, project skills in `<repo>/.opencode/skills`.
 * Every name is checked against SKILL_NAME before any path is built from it, which is what makes
 * traversal (`../x`, `a/b`, encoded dots) impossible rather than merely filtered.
 */

export const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const MAX_SKILL_NAME = 64;
export const MAX_DESCRIPTION = 1024;
/** A skill is injected into the model context; a megabyte is already far more than any model wants. */
export const MAX_BODY = 1024 * 1024;
const SKILL_FILE = 'SKILL.md';

export const SkillName = z.string().max(MAX_SKILL_NAME, `at most ${MAX_SKILL_NAME} characters`).regex(SKILL_NAME, 'lowercase letters and digits, single hyphens between words');
export const SkillScope = z.enum(['global', 'project']);
export type SkillScope = z.infer<typeof SkillScope>;

export const Skill = z
  .object({
    name: z.string(),
    description: z.string(),
    body: z.string(),
    scope: SkillScope,
    location: z.string().describe('Absolute path of the SKILL.md file'),
    repoId: z.number().nullable(),
    repoName: z.string().nullable(),
  })
  .meta({ id: 'Skill' });
export type Skill = z.infer<typeof Skill>;

export const SkillCreate = z
  .object({
    name: SkillName,
    description: z.string().min(1).max(MAX_DESCRIPTION),
    body: z.string().min(1).max(MAX_BODY),
    scope: SkillScope,
    repoId: z.number().int().positive().optional(),
  })
  .strict()
  .meta({ id: 'SkillCreate' });
export type SkillCreate = z.infer<typeof SkillCreate>;

export const SkillUpdate = z
  .object({ description: z.string().min(1).max(MAX_DESCRIPTION), body: z.string().min(1).max(MAX_BODY) })
  .partial()
  .strict()
  .meta({ id: 'SkillUpdate' });
export type SkillUpdate = z.infer<typeof SkillUpdate>;

/** Where one scope's skills live: the global folder, or one repo's project folder. */
export type SkillPlace = { scope: 'global'; dir: string } | { scope: 'project'; repoId: number; repoName: string; repoPath: string };

/** Throws (code invalid_skill_name, HTTP 400) unless `name` is a valid skill name. */
export function assertSkillName(name: string): void {
  if (name.length > MAX_SKILL_NAME || !SKILL_NAME.test(name)) {
    throw new UserError(`Invalid skill name "${name.slice(0, 80)}": use lowercase letters and digits with single hyphens between words, at most ${MAX_SKILL_NAME} characters.`, {
      code: 'invalid_skill_name',
      hint: 'Name it like code-review or release-notes-2.',
    });
  }
}

export function projectSkillsDir(repoPath: string): string {
  return path.join(repoPath, `.${AGENT_DIR}`, 'skills');
}

/**
 * The skills folder of a place. For a project, the folder must resolve inside the repo: a repo can hold
 * a symlinked `.opencode`, and following it would let a write land anywhere on the host.
 */
async function skillsDir(place: SkillPlace): Promise<string> {
  if (place.scope === 'global') return place.dir;
  const dir = projectSkillsDir(place.repoPath);
  const repoReal = await realpath(place.repoPath).catch(() => {
    throw new NotFoundError(`The directory of repo ${place.repoId} is missing.`, { hint: `Remove the repo (\`docdex repos remove ${place.repoId}\`) and add it again.` });
  });
  const real = await realpath(dir).catch(() => undefined);
  if (real !== undefined && real !== path.join(repoReal, `.${AGENT_DIR}`, 'skills')) {
    throw new UserError(`The project skills folder of repo ${place.repoId} is a symlink; refusing to follow it.`, {
      code: 'bad_request',
      hint: 'Replace the link with a real folder inside the repository.',
    });
  }
  return dir;
}

async function skillPaths(place: SkillPlace, name: string): Promise<{ dir: string; file: string }> {
  assertSkillName(name);
  const dir = path.join(await skillsDir(place), name);
  const info = await lstat(dir).catch(() => undefined);
  if (info?.isSymbolicLink()) throw new UserError(`Skill folder "${name}" is a symlink; refusing to follow it.`, { code: 'bad_request', hint: 'Replace the link with a real folder.' });
  return { dir, file: path.join(dir, SKILL_FILE) };
}

export interface SkillFile {
  name: string;
  description: string;
  body: string;
}

/** Parses a SKILL.md. Without frontmatter the whole text is the body. */
export function parseSkillFile(text: string): SkillFile {
  const normalised = text.replace(/^\uFEFF/, '');
  const match = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(normalised);
  if (!match) return { name: '', description: '', body: normalised };
  const meta: unknown = parseYaml(match[1]!) ?? {};
  const record = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : {};
  // One newline after the closing fence belongs to the file format (renderSkillFile writes it).
  const body = normalised.slice(match[0].length).replace(/^\r?\n/, '');
  return {
    name: typeof record.name === 'string' ? record.name : '',
    description: typeof record.description === 'string' ? record.description : record.description == null ? '' : String(record.description),
    body,
  };
}

/** Writes frontmatter with a real YAML emitter, so quotes, colons, `#`, leading `-` and newlines round-trip. */
export function renderSkillFile(skill: SkillFile): string {
  const frontmatter = stringifyYaml({ name: skill.name, description: skill.description }, { lineWidth: 0 });
  return `---\n${frontmatter}---\n\n${skill.body}`;
}

function toSkill(place: SkillPlace, file: string, parsed: SkillFile, name: string): Skill {
  return {
    name,
    description: parsed.description,
    body: parsed.body,
    scope: place.scope,
    location: file,
    repoId: place.scope === 'project' ? place.repoId : null,
    repoName: place.scope === 'project' ? place.repoName : null,
  };
}

export async function readSkill(place: SkillPlace, name: string): Promise<Skill> {
  const { file } = await skillPaths(place, name);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') {
      throw new NotFoundError(`No ${place.scope} skill named "${name}"${place.scope === 'project' ? ` in repo ${place.repoName}` : ''}.`, {
        hint:
          place.scope === 'global'
            ? '`docdex skills list` shows every skill with its scope; a project skill needs --scope project --repo REPO.'
            : `\`docdex skills list --repo ${place.repoName}\` shows that repository's skills and the global ones (--scope global).`,
      });
    }
    throw error;
  }
  return toSkill(place, file, parseSkillFile(text), name);
}

/** Every readable skill of a place, by name. Folders with invalid names or unreadable files are skipped. */
export async function listSkillsIn(place: SkillPlace): Promise<Skill[]> {
  let dir: string;
  try {
    dir = await skillsDir(place);
  } catch {
    return [];
  }
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const skills: Skill[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory() || entry.name.length > MAX_SKILL_NAME || !SKILL_NAME.test(entry.name)) continue;
    try {
      skills.push(await readSkill(place, entry.name));
    } catch {
      // A folder without SKILL.md (or with broken YAML) is not a skill.
    }
  }
  return skills;
}

function tempName(file: string): string {
  return `${file}.${randomBytes(6).toString('hex')}.tmp`;
}

/** Writes through a temporary file and a rename, so a reader never sees half a SKILL.md. */
async function writeAtomic(file: string, text: string): Promise<void> {
  const tmp = tempName(file);
  try {
    await writeFile(tmp, text, { flag: 'wx', mode: 0o644 });
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

function validate<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ValidationError(`Invalid skill: ${issue.path.join('.') || 'body'}: ${issue.message}.`, {
      hint: `A skill has a description of 1 to ${MAX_DESCRIPTION} characters and a non-empty body.`,
      details: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return parsed.data;
}

/**
 * Creates a skill; 409 when it exists. The file appears atomically and exclusively: the temporary file is
 * hard-linked to SKILL.md, which fails if another writer got there first.
 */
export async function createSkill(place: SkillPlace, input: SkillFile): Promise<Skill> {
  assertSkillName(input.name);
  const data = validate(SkillCreate.pick({ name: true, description: true, body: true }), input);
  const { dir, file } = await skillPaths(place, data.name);
  await mkdir(dir, { recursive: true });
  const tmp = tempName(file);
  await writeFile(tmp, renderSkillFile(data), { flag: 'wx', mode: 0o644 });
  try {
    await link(tmp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new ConflictError(`A ${place.scope} skill named "${data.name}" already exists.`, { hint: 'Change it with `docdex skills edit`, or pick another name.' });
    throw error;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  return toSkill(place, file, data, data.name);
}

/** Updates description and/or body; omitted fields keep their value. */
export async function updateSkill(place: SkillPlace, name: string, patch: SkillUpdate): Promise<Skill> {
  const data = validate(SkillUpdate, patch);
  const current = await readSkill(place, name);
  const next: SkillFile = { name, description: data.description ?? current.description, body: data.body ?? current.body };
  await writeAtomic(current.location, renderSkillFile(next));
  return toSkill(place, current.location, next, name);
}

/** Deletes the skill's whole folder (a skill may carry scripts or references beside SKILL.md). */
export async function deleteSkill(place: SkillPlace, name: string): Promise<Skill> {
  const current = await readSkill(place, name);
  await rm(path.dirname(current.location), { recursive: true, force: true });
  return current;
}

/** Writes a skill file unconditionally (atomically): for provisioning shipped skills. */
export async function writeSkillFile(dir: string, skill: SkillFile): Promise<string> {
  assertSkillName(skill.name);
  const folder = path.join(dir, skill.name);
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, SKILL_FILE);
  await writeAtomic(file, renderSkillFile(skill));
  return file;
}

/**
 * Resolves scope + repoId to a place. `repoId` is required for project scope and meaningless for global
 * scope (400 either way, so a caller never silently writes to the wrong scope).
 */
export async function skillPlace(ctx: RepoContext, scope: SkillScope, repoId?: number): Promise<SkillPlace> {
  if (scope === 'global') {
    if (repoId !== undefined) {
      throw new UserError('repoId is only for project skills (scope=project).', { code: 'bad_request', exitCode: 2, hint: 'Leave out --repo for a global skill, or give --scope project.' });
    }
    return { scope: 'global', dir: ctx.workspace.globalSkillsDir };
  }
  if (repoId === undefined) {
    throw new UserError('Project skills need a repoId (--repo on the command line).', { code: 'bad_request', exitCode: 2, hint: '`docdex repos list` shows the repositories.' });
  }
  const repo = await getRepoById(ctx, repoId);
  if (repo.cloneStatus !== 'ready') throw new ConflictError(`Repo "${repo.localPath}" is ${repo.cloneStatus}, not ready.`, { hint: NOT_READY_HINT });
  return { scope: 'project', repoId: repo.id, repoName: repo.localPath, repoPath: repo.fullPath };
}

/** Global skills, then project skills: of one repo when `repoId` is given, else of every ready repo. */
export async function listSkills(ctx: RepoContext, options: { repoId?: number } = {}): Promise<Skill[]> {
  const skills = await listSkillsIn({ scope: 'global', dir: ctx.workspace.globalSkillsDir });
  const repos = options.repoId === undefined ? await listRepos(ctx) : [await getRepoById(ctx, options.repoId)];
  for (const repo of repos) {
    if (repo.cloneStatus !== 'ready') continue;
    skills.push(...(await listSkillsIn({ scope: 'project', repoId: repo.id, repoName: repo.localPath, repoPath: repo.fullPath })));
  }
  return skills;
}
