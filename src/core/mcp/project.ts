import path from 'node:path';
import { UserError, ValidationError } from '../errors.js';
import { describeProject, fewKnownProjects, MAX_PROJECT_REF_CHARS, ProjectNotFoundError } from '../project/libraries.js';
import type { McpDeps } from './tool.js';

/**
 * Which project an MCP call is about: its `project` argument, else the default the transport gives (the stdio
 * server's working directory). Over HTTP there is no default: the server's directory says nothing about the
 * caller's project. What the model is told when no project matches names the tools that fix it.
 */

/** The `project` argument as the tools describe it. */
export const PROJECT_ARG_DESCRIPTION =
  'The project: its name, id or root directory (an absolute path; a directory inside a project finds it). Omit over stdio to use the directory the docdex MCP server was started in; required over HTTP.';

/** As long as a project reference may be (project/libraries.ts). */
export const MAX_PROJECT_ARG_CHARS = MAX_PROJECT_REF_CHARS;

/** The project reference to use, or a validation error a model can act on (listing the known projects when few). */
export async function projectRefFor(deps: Pick<McpDeps, 'pool' | 'localProjectDir'>, project: string | undefined, tool: string): Promise<string> {
  const given = project?.trim();
  // Over stdio a relative directory is read from the server's working directory, as the client's shell would.
  if (given && deps.localProjectDir !== undefined && /^\.\.?(\/|$)/.test(given)) return path.resolve(deps.localProjectDir, given);
  if (given) return given;
  if (deps.localProjectDir !== undefined) return deps.localProjectDir;
  const known = await fewKnownProjects(deps.pool);
  const list = known.length > 0 ? ` Known projects: ${known.map(describeProject).join(', ')}.` : ' No project has been synced yet.';
  throw new ValidationError(`${tool} needs a project: this server has no working directory of its own to default to.${list}`, {
    hint: `Call ${tool} again with project set to the project's name or its root directory (absolute path).`,
    details: known.map((p) => ({ id: p.id, name: p.name, root: p.root })),
  });
}

/**
 * How the model gets a project's libraries recorded and indexed: the sync_project tool, or on a read-only
 * server, which does not have it, `docdex sync` run in the project (by the user or the assistant's shell).
 */
export function syncAction(deps: Pick<McpDeps, 'readOnly'>, project?: string): string {
  if (deps.readOnly === true) return 'run `docdex sync` in the project (this connection is read-only)';
  return project === undefined ? 'call sync_project' : `call sync_project with project=${JSON.stringify(project)}`;
}

/**
 * How an unknown project gets recorded. Only a local client may have one read from a directory: over stdio,
 * sync_project with the directory; over HTTP the server never reads a path a client names, so only
 * `docdex sync` in the project, on the machine docdex runs on, records it (issue #49: every hint leads
 * somewhere; "call sync_project with the root directory" over HTTP ended in "No project is recorded").
 */
function recordAction(deps: Pick<McpDeps, 'readOnly' | 'localProjectDir'>): string {
  if (deps.readOnly === true) return "To record it, run `docdex sync` in the project's root directory (this connection is read-only)";
  if (deps.localProjectDir !== undefined) return "To record it, call sync_project with project set to the project's root directory (an absolute path), or run `docdex sync` there";
  return "To record it, run `docdex sync` in the project's root directory, on the machine docdex runs on (over HTTP, sync_project syncs only recorded projects)";
}

/** Runs `read`, turning an unknown project into an answer that tells the model how to record it. */
export async function withProjectForModel<T>(deps: Pick<McpDeps, 'readOnly' | 'localProjectDir'>, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof ProjectNotFoundError)) throw error;
    const record = recordAction(deps);
    throw new UserError(error.message, {
      code: 'project_not_found',
      hint: `${record}; then call this tool again.`,
      details: error.details ?? [],
    });
  }
}
