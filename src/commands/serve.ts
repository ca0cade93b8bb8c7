import { Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { runDaemonUntilSignal } from '../daemon/run.js';
import { runStdioServer } from '../daemon/mcp/stdio.js';
import { agentManagerServices, agentManagerServicesWhenWanted, agentServerOptionsFromEnv } from '../core/agent-server/service.js';
import { createSandboxExtension } from '../core/sandbox/enforcement.js';
import { docsIndexServices } from '../daemon/services.js';
import { packsAtStart } from '../daemon/packs-at-start.js';

export default class Serve extends BaseCommand<typeof Serve> {
  static override summary = 'Run the docdex daemon: REST, WebSocket and MCP over HTTP, plus crawl/upload workers.';
  static override description =
    'Binds to API_HOST:API_PORT (default 127.0.0.1:7654). With --mcp, speaks MCP over standard input/output instead (for an MCP client that starts docdex); logs go to stderr. The agent manager (workspace, skills, the opencode supervisor) starts once the port is bound, and only when asked: --agent, WORKSPACE_PATH set, or agent settings already stored. --agent also starts opencode, as `docdex agent start` does; otherwise it waits for `docdex agent start`.';
  static override examples = ['<%= config.bin %> serve', '<%= config.bin %> serve --port 8080', '<%= config.bin %> serve --agent', '<%= config.bin %> serve --mcp'];
  static override enableJsonFlag = false;
  static override flags = {
    mcp: Flags.boolean({ description: 'Serve MCP over stdio instead of HTTP.', default: false }),
    host: Flags.string({ description: 'Bind address (overrides API_HOST).' }),
    port: Flags.integer({ description: 'Port (overrides API_PORT).', min: 0, max: 65535 }),
    workers: Flags.boolean({ description: 'Run crawl, upload and LLM workers in this process.', default: true, allowNo: true }),
    agent: Flags.boolean({ description: 'Also run the agent manager: provision the workspace (WORKSPACE_PATH, default ./workspace), and start and supervise opencode.', default: false }),
  };

  async run(): Promise<void> {
    const services = this.flags.workers ? docsIndexServices : [];
    if (this.flags.mcp) {
      await runStdioServer(this.settings, { services });
      return;
    }
    await runDaemonUntilSignal(this.settings, {
      services: [
        packsAtStart,
        ...services,
        ...agentManagerServicesWhenWanted(
          agentManagerServices(
            this.settings,
            { host: this.flags.host, port: this.flags.port },
            // --agent asks for the agent server too (as `docdex agent start` does); WORKSPACE_PATH alone only provisions.
            { ...agentServerOptionsFromEnv(), ...(this.flags.agent ? { autostart: true } : {}), extensions: [createSandboxExtension()] },
          ),
          this.flags.agent || Boolean(this.settings.agent.workspacePathSet),
        ),
      ],
      ...(this.flags.host === undefined ? {} : { host: this.flags.host }),
      ...(this.flags.port === undefined ? {} : { port: this.flags.port }),
    });
  }
}
