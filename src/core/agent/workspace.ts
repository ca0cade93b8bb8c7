import { chmod, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config.js';

/** The agent server's directory name for its configuration and state (`<agent_dir>` in the spec). */
export const AGENT_DIR = 'opencode';

/**
 * Every path of the agent workspace, derived once from WORKSPACE_PATH (already absolute in Config).
 * The sandbox mounts exactly `repos/` and `schedule-worktrees/` into the microVM; everything else here
 * stays on the host, which is why secrets never live under those two roots.
 */
export interface Workspace {
  root: string;
  /** Mount root: clones, local-repo symlinks and user worktrees, one directory each. */
  reposDir: string;
  /** Mount root: the throwaway worktrees of scheduled runs. */
  scheduleWorktreesDir: string;
  /** Global agent configuration (`opencode.jsonc`), skills and generated plugins; XDG_CONFIG_HOME is `.config`. */
  agentConfigDir: string;
  globalSkillsDir: string;
  pluginDir: string;
  /** SSH configuration and known hosts. */
  sshConfigDir: string;
  /** Repository SSH private keys. */
  sshKeysDir: string;
  /** Provider credentials of the agent server. */
  stateDir: string;
  /** The assistant's own workspace is the workspace root: its project skills live in `.opencode/skills`. */
  assistantDir: string;
  assistantSkillsDir: string;
}

export function workspaceLayout(config: Pick<Config, 'agent'>): Workspace {
  const root = config.agent.workspacePath;
  const agentConfigDir = path.join(root, '.config', AGENT_DIR);
  return {
    root,
    reposDir: path.join(root, 'repos'),
    scheduleWorktreesDir: path.join(root, 'schedule-worktrees'),
    agentConfigDir,
    globalSkillsDir: path.join(agentConfigDir, 'skills'),
    pluginDir: path.join(agentConfigDir, 'plugin'),
    sshConfigDir: path.join(root, 'config'),
    sshKeysDir: path.join(root, '.ssh-keys'),
    stateDir: path.join(root, `.${AGENT_DIR}`, 'state'),
    assistantDir: root,
    assistantSkillsDir: path.join(root, `.${AGENT_DIR}`, 'skills'),
  };
}

/**
 * Creates the layout. Folders holding secrets or agent configuration are 0700 on every start, not only
 * when created: a folder made earlier by hand with a looser mode would otherwise stay readable.
 */
export async function provisionWorkspace(ws: Workspace): Promise<void> {
  const open = [ws.root, ws.reposDir, ws.scheduleWorktreesDir, path.dirname(ws.stateDir), ws.assistantSkillsDir];
  const secret = [path.dirname(ws.agentConfigDir), ws.agentConfigDir, ws.globalSkillsDir, ws.pluginDir, ws.sshConfigDir, ws.sshKeysDir, ws.stateDir];
  for (const dir of open) await mkdir(dir, { recursive: true });
  for (const dir of secret) {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
  }
}
