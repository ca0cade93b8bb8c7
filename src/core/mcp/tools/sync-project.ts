import path from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { UserError } from '../../errors.js';
import { syncProjectDirectory, syncRecordedProject } from '../../project/sync.js';
import type { SyncResult } from '../../project/sync.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';

export const SYNC_PROJECT = 'sync_project';

const inputSchema = z.object({
  project: z
    .string()
    .trim()
    .min(1)
    .max(4096)
    .optional()
    .describe(
      'A project recorded by `docdex sync` (its name, id or root path). Over stdio also any project directory (an absolute path), which this records; default: the project in the server’s working directory.',
    ),
});

const outputSchema = z.object({
  project: z.string(),
  libraries: z.array(z.object({ library: z.string(), state: z.string(), reason: z.string().optional() })),
  job_ids: z.array(z.string()),
});

function libraryLine(l: SyncResult['libraries'][number]): string {
  const id = l.version ? `${l.name}@${l.version}` : l.name;
  return `${id}: ${l.state === 'other_versions' ? `other versions: ${l.other_versions.join(', ')}` : l.state}${l.reason ? ` (${l.reason})` : ''}`;
}

/**
 * Over stdio a missing `project` means the working directory, and a path (absolute, or relative to it) is a
 * project directory to read and record; over HTTP only a recorded project is synced: the server never reads a
 * directory a remote client names.
 */
function runSync(deps: McpDeps, project: string | undefined): Promise<SyncResult> {
  const local = deps.localProjectDir;
  if (project !== undefined && local !== undefined && (path.isAbsolute(project) || /^\.\.?(\/|$)/.test(project))) {
    return syncProjectDirectory(deps, deps.config, { dir: path.resolve(local, project) });
  }
  if (project !== undefined) return syncRecordedProject(deps, deps.config, project, {});
  if (deps.localProjectDir === undefined) {
    throw new UserError('Name the project to sync: over HTTP, sync_project syncs only a project recorded by `docdex sync`.', { code: 'validation_error', hint: 'Pass project with its name or id.' });
  }
  return syncProjectDirectory(deps, deps.config, { dir: deps.localProjectDir });
}

export async function syncProjectTool(deps: McpDeps, args: z.output<typeof inputSchema>): Promise<ToolOutput> {
  const result = await runSync(deps, args.project);
  const queued = result.jobs.length;
  const text = [
    `Project ${result.name}: ${result.libraries.length} libraries, ${queued} ${queued === 1 ? 'job' : 'jobs'} queued.`,
    ...result.libraries.map(libraryLine),
    ...(queued > 0 ? ['', 'Indexing runs in the background; follow each job with get_crawl_status.'] : []),
  ].join('\n');
  return {
    text,
    structured: {
      project: result.name,
      libraries: result.libraries.map((l) => ({ library: l.version ? `${l.name}@${l.version}` : l.name, state: l.state, ...(l.reason ? { reason: l.reason } : {}) })),
      job_ids: result.jobs.map((j) => j.id),
    },
  };
}

export function registerSyncProjectTool(server: McpServer, deps: McpDeps): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: SYNC_PROJECT,
    title: "Index a project's dependencies at their locked versions",
    description:
      "Reads the project's manifests and lockfiles and queues the docs of every direct dependency at the exact version it uses; versions already indexed are not fetched again. Use it when a project's library version is missing from the index. Returns each library's state and the job ids at once.",
    inputSchema,
    outputSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    run: (args) => syncProjectTool(deps, args),
  });
}
