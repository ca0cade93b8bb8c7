import { z } from 'zod';
import { AgentServerError } from '../agent/agent-server-client.js';
import type { Config } from '../config.js';
import { agentServerUrl } from './layout.js';

/**
 * The parts of opencode's HTTP API docdex uses beyond configuration and reload: sessions, prompts, the
 * session shell and skills. Requests for a project pass its folder as `?directory=`; opencode keeps one
 * instance per folder.
 */

export const OpencodeSession = z
  .object({
    id: z.string(),
    title: z.string().optional(),
    directory: z.string().optional(),
    projectID: z.string().optional(),
    parentID: z.string().optional(),
    time: z.object({ created: z.number(), updated: z.number().optional() }).loose().optional(),
  })
  .loose();
export type OpencodeSession = z.infer<typeof OpencodeSession>;

export interface OpencodePart {
  type: string;
  text?: string;
  tool?: string;
  callID?: string;
  state?: { status?: string; input?: unknown; output?: string; error?: string; title?: string; metadata?: Record<string, unknown> };
  [key: string]: unknown;
}

export interface OpencodeMessage {
  info: { id: string; role: string; error?: { name?: string; data?: { message?: string } }; [key: string]: unknown };
  parts: OpencodePart[];
}

export interface OpencodeSkill {
  name: string;
  description?: string;
  location?: string;
  [key: string]: unknown;
}

export interface OpencodeClientOptions {
  baseUrl: string;
  password?: string;
  username?: string;
  /** For short calls; prompts take their own signal and no timeout. */
  timeoutMs?: number;
}

export class OpencodeClient {
  private readonly base: string;
  private readonly headers: Record<string, string>;

  constructor(private readonly options: OpencodeClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.headers = { accept: 'application/json' };
    if (options.password !== undefined && options.password !== '') {
      this.headers.authorization = `Basic ${Buffer.from(`${options.username ?? 'opencode'}:${options.password}`).toString('base64')}`;
    }
  }

  get baseUrl(): string {
    return this.base;
  }

  async call<T>(
    method: string,
    route: string,
    options: { body?: unknown; directory?: string; query?: Record<string, string | number | undefined>; signal?: AbortSignal; timeoutMs?: number | null } = {},
  ): Promise<T> {
    const url = new URL(`${this.base}${route}`);
    if (options.directory !== undefined) url.searchParams.set('directory', options.directory);
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    const timeout = options.timeoutMs === null ? undefined : AbortSignal.timeout(options.timeoutMs ?? this.options.timeoutMs ?? 30_000);
    const signal = options.signal && timeout ? AbortSignal.any([options.signal, timeout]) : (options.signal ?? timeout);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: options.body === undefined ? this.headers : { ...this.headers, 'content-type': 'application/json' },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason instanceof Error ? options.signal.reason : new Error('Aborted.');
      const cause = (error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new AgentServerError(`The agent server at ${this.base} is unreachable (${cause}).`);
    }
    const text = await response.text();
    if (!response.ok) throw new AgentServerError(`The agent server answered ${response.status} to ${method} ${route}: ${text.slice(0, 500)}`, response.status);
    if (text.trim() === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      return text as T;
    }
  }

  health(): Promise<{ healthy: boolean; version: string }> {
    return this.call('GET', '/global/health', { timeoutMs: 5000 });
  }

  /** Sessions of every project, newest first (opencode's global listing; per-instance listing as a fallback). */
  async listSessions(options: { limit?: number; search?: string } = {}): Promise<OpencodeSession[]> {
    let raw: unknown;
    try {
      raw = await this.call('GET', '/experimental/session', { query: { limit: options.limit, search: options.search } });
    } catch (error) {
      if (!(error instanceof AgentServerError) || error.status !== 404) throw error;
      raw = await this.call('GET', '/session', { query: { limit: options.limit, search: options.search } });
    }
    return z.array(OpencodeSession).parse(raw);
  }

  createSession(options: { directory: string; title?: string }): Promise<OpencodeSession> {
    return this.call('POST', '/session', { directory: options.directory, body: options.title === undefined ? {} : { title: options.title } });
  }

  /**
   * Sends a prompt and waits for the agent to finish (tool calls included): opencode answers with the last
   * assistant message. No timeout: a run takes as long as the agent needs; `signal` ends it.
   */
  prompt(sessionId: string, input: { directory: string; text: string; agent?: string; model?: { providerID: string; modelID: string } }, signal?: AbortSignal): Promise<OpencodeMessage> {
    return this.call('POST', `/session/${encodeURIComponent(sessionId)}/message`, {
      directory: input.directory,
      body: { parts: [{ type: 'text', text: input.text }], ...(input.agent ? { agent: input.agent } : {}), ...(input.model ? { model: input.model } : {}) },
      timeoutMs: null,
      ...(signal ? { signal } : {}),
    });
  }

  messages(sessionId: string, directory?: string): Promise<OpencodeMessage[]> {
    return this.call('GET', `/session/${encodeURIComponent(sessionId)}/message`, directory === undefined ? {} : { directory });
  }

  async abort(sessionId: string, directory?: string): Promise<void> {
    await this.call('POST', `/session/${encodeURIComponent(sessionId)}/abort`, directory === undefined ? {} : { directory });
  }

  /** `!command` mode: runs a command in the session's shell, as the agent would. */
  shell(sessionId: string, input: { directory?: string; agent: string; command: string }): Promise<OpencodeMessage> {
    return this.call('POST', `/session/${encodeURIComponent(sessionId)}/shell`, {
      ...(input.directory === undefined ? {} : { directory: input.directory }),
      body: { agent: input.agent, command: input.command },
      timeoutMs: 120_000,
    });
  }

  skills(directory?: string): Promise<OpencodeSkill[]> {
    return this.call('GET', '/skill', directory === undefined ? {} : { directory });
  }

  /** Drops one folder's instance: it rereads skills and project files on its next use (not the global config). */
  async disposeInstance(directory?: string): Promise<void> {
    await this.call('POST', '/instance/dispose', directory === undefined ? {} : { directory });
  }

  /** Drops every instance, e.g. after a global skill changed. */
  async disposeAll(): Promise<void> {
    await this.call('POST', '/global/dispose');
  }
}

export function opencodeClient(config: Pick<Config, 'agent'>, options: { timeoutMs?: number } = {}): OpencodeClient {
  return new OpencodeClient({
    baseUrl: agentServerUrl(config),
    ...(config.agent.serverPassword === undefined ? {} : { password: config.agent.serverPassword }),
    ...options,
  });
}

/** The text an assistant message says (its text parts, in order). */
export function messageText(message: OpencodeMessage): string {
  return message.parts
    .filter((p) => p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text!)
    .join('\n')
    .trim();
}

/** opencode reports a failed model call on the message, not as an HTTP error. */
export function messageError(message: OpencodeMessage): string | undefined {
  const error = message.info.error;
  if (!error) return undefined;
  return error.data?.message ?? error.name ?? 'The agent failed.';
}
