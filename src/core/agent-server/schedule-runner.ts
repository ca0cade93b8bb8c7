import type { ScheduleRunner } from '../agent/schedules.js';
import type { Config } from '../config.js';
import { messageError, messageText, opencodeClient } from './client.js';
import type { OpencodeClient, OpencodeMessage } from './client.js';

/**
 * Scheduled runs against the managed opencode server: the run's fresh worktree (made by executeRun under
 * schedule-worktrees/) becomes the session's directory, the prompt is sent and waited for, and every tool
 * call of the session goes into the run's log. Cancelling the run aborts the session.
 */

const TOOL_OUTPUT_CHARS = 500;

function toolLines(messages: OpencodeMessage[]): string[] {
  const lines: string[] = [];
  for (const message of messages) {
    if (message.info.role !== 'assistant') continue;
    for (const part of message.parts) {
      if (part.type !== 'tool') continue;
      const state = part.state ?? {};
      const detail = state.status === 'error' ? state.error : state.output;
      const short = detail === undefined ? '' : `: ${detail.length > TOOL_OUTPUT_CHARS ? `${detail.slice(0, TOOL_OUTPUT_CHARS)}…` : detail}`;
      lines.push(`tool ${part.tool ?? '?'} ${state.status ?? ''}${short}`.trim());
    }
  }
  return lines;
}

function parseModel(model: string | null): { providerID: string; modelID: string } | undefined {
  if (model === null) return undefined;
  const at = model.indexOf('/');
  return { providerID: model.slice(0, at), modelID: model.slice(at + 1) };
}

export function createOpencodeScheduleRunner(config: Pick<Config, 'agent'>, options: { client?: () => OpencodeClient } = {}): ScheduleRunner {
  const client = options.client ?? (() => opencodeClient(config));
  return {
    async run(request) {
      const server = client();
      try {
        await server.health();
      } catch {
        throw new Error(`The agent server is not running at ${server.baseUrl}. Start it with \`docdex agent start\` (the docdex daemon supervises it).`);
      }
      const session = await server.createSession({ directory: request.directory, title: `Scheduled run ${request.runId} (schedule ${request.scheduleId})` });
      await request.session(session.id);
      await request.log(`session ${session.id} in ${request.directory}`);
      const onAbort = () => {
        server.abort(session.id, request.directory).catch(() => undefined);
      };
      request.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const model = parseModel(request.model);
        const message = await server.prompt(
          session.id,
          { directory: request.directory, text: request.prompt, ...(request.agent ? { agent: request.agent } : {}), ...(model ? { model } : {}) },
          request.signal,
        );
        const history = await server.messages(session.id, request.directory).catch(() => [message]);
        for (const line of toolLines(history)) await request.log(line);
        const error = messageError(message);
        if (error !== undefined) throw new Error(`The agent failed: ${error}`);
        return { response: messageText(message) };
      } finally {
        request.signal.removeEventListener('abort', onAbort);
      }
    },
  };
}
