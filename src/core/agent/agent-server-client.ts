import type { Config } from '../config.js';

/**
 * What the manager needs from the running agent server. The next layer (the opencode supervisor) provides
 * the real one; `createHttpAgentServerClient` speaks opencode's HTTP API and is what tests point at a
 * small fake server.
 */
export interface AgentServerClient {
  /** `PATCH /global/config`: applies part of the configuration live; answers the configuration it now has. */
  patchGlobalConfig(patch: Record<string, unknown>): Promise<unknown>;
  /** `POST /instance/dispose`: drops the current instance; the next message starts from the files again. */
  disposeInstance(): Promise<void>;
}

export class AgentServerError extends Error {
  override readonly name = 'AgentServerError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface HttpAgentServerOptions {
  baseUrl: string;
  /** OPENCODE_SERVER_PASSWORD: opencode then wants HTTP basic auth. */
  password?: string;
  username?: string;
  /** A reload or config patch that takes longer than this is treated as a failed upstream. */
  timeoutMs?: number;
}

export function agentServerBaseUrl(config: Pick<Config, 'agent'>): string {
  const host = config.agent.host.includes(':') && !config.agent.host.startsWith('[') ? `[${config.agent.host}]` : config.agent.host;
  return `http://${host}:${config.agent.port}`;
}

export function createHttpAgentServerClient(options: HttpAgentServerOptions): AgentServerClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.password !== undefined) {
    headers.authorization = `Basic ${Buffer.from(`${options.username ?? 'opencode'}:${options.password}`).toString('base64')}`;
  }
  async function call(method: string, route: string, body?: unknown): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`${base}${route}`, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
      });
    } catch (error) {
      const cause = (error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new AgentServerError(`The agent server at ${base} is unreachable (${cause}).`);
    }
    const text = await response.text();
    if (!response.ok) throw new AgentServerError(`The agent server answered ${response.status} to ${method} ${route}: ${text.slice(0, 300)}`, response.status);
    if (text.trim() === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return {
    patchGlobalConfig: (patch) => call('PATCH', '/global/config', patch),
    disposeInstance: async () => {
      await call('POST', '/instance/dispose');
    },
  };
}

export function defaultAgentServerClient(config: Pick<Config, 'agent'>): AgentServerClient {
  return createHttpAgentServerClient({
    baseUrl: agentServerBaseUrl(config),
    ...(config.agent.serverPassword === undefined ? {} : { password: config.agent.serverPassword }),
  });
}
