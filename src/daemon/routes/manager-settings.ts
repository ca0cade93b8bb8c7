import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DEFAULT_USER_ID, GitIdentity, Preferences, SpeechKind, SpeechService, configureSpeech, readSettings, setGitIdentity } from '../../core/agent/settings.js';
import { sandboxSettings } from '../../core/sandbox/settings.js';
import { SandboxHostCheck, SandboxSwitchChange, SandboxSwitchState, changeSandboxSwitches, readSandboxSwitches } from '../../core/sandbox/switch.js';
import type { DaemonDeps } from '../deps.js';
import { ErrorBody } from '../errors.js';
import type { ZodApp } from '../zod-app.js';
import { answerBadInputWith400 } from './agent-errors.js';

/**
 * The manager settings an agent must not change, under /api/settings: the sandbox switches, the git identity and
 * the speech services. Behind the daemon's REST auth like the other settings, and out of the agent's reach (the
 * `mgr` tool calls /api/internal only, where PATCH /settings refuses `sandbox`, `gitIdentity` and the speech
 * secrets). Turning enforcement on checks the host first (409 `sandbox_host_unsupported`, nothing changed); only
 * an agent server (re)start applies it, which `takesEffect` says.
 */

const tags = ['agent-settings'];
const IdentityBody = z.object({ name: z.string().nullable(), email: z.string().nullable() }).meta({ id: 'GitIdentityRecord' });

function identityOf(identity: { name?: unknown; email?: unknown }): z.infer<typeof IdentityBody> {
  return { name: typeof identity.name === 'string' ? identity.name : null, email: typeof identity.email === 'string' ? identity.email : null };
}

function registerSwitchRoutes(r: ZodApp, deps: DaemonDeps): void {
  r.get(
    '/api/settings/sandbox',
    { schema: { summary: 'Sandbox enforcement and git credential forwarding, and what the running agent server enforces', tags, response: { 200: SandboxSwitchState } } },
    async () => readSandboxSwitches(deps.db.pool),
  );

  r.put(
    '/api/settings/sandbox',
    {
      schema: {
        summary: 'Turn sandbox enforcement or git credential forwarding on or off; omitted fields are unchanged',
        description:
          'enabled: true checks that this host can run the microVM first (409 sandbox_host_unsupported, nothing changed) and returns the check as host. ' +
          'enabled applies at the next agent server start or restart (takesEffect says which); gitCredentials applies to the next sandboxed command.',
        tags,
        body: SandboxSwitchChange,
        response: { 200: SandboxSwitchState.extend({ host: SandboxHostCheck.optional() }), 400: ErrorBody, 409: ErrorBody },
      },
    },
    async (request) => {
      const { state, host } = await changeSandboxSwitches(deps.db.pool, sandboxSettings(deps.config), request.body);
      return { ...state, ...(host ? { host } : {}) };
    },
  );
}

function registerIdentityRoutes(r: ZodApp, deps: DaemonDeps): void {
  r.get('/api/settings/git-identity', { schema: { summary: 'The commit identity forwarded into the sandbox (GIT_AUTHOR_*, GIT_COMMITTER_*)', tags, response: { 200: IdentityBody } } }, async () =>
    identityOf((await readSettings(deps.db.pool)).preferences.gitIdentity),
  );

  r.put(
    '/api/settings/git-identity',
    {
      schema: {
        summary: 'Set the commit identity; sent with sandboxed commands while git credential forwarding is on, from the next command',
        tags,
        body: GitIdentity,
        response: { 200: IdentityBody, 400: ErrorBody },
      },
    },
    async (request) => identityOf((await setGitIdentity(deps.db.pool, DEFAULT_USER_ID, request.body)).preferences.gitIdentity),
  );

  r.delete('/api/settings/git-identity', { schema: { summary: 'Remove the commit identity', tags, response: { 200: IdentityBody } } }, async () =>
    identityOf((await setGitIdentity(deps.db.pool, DEFAULT_USER_ID, null)).preferences.gitIdentity),
  );
}

const SpeechParams = z.object({ kind: SpeechKind });
const SpeechRecord = Preferences.shape.tts;

function registerSpeechRoutes(r: ZodApp, deps: DaemonDeps): void {
  r.put(
    '/api/settings/speech/:kind',
    {
      schema: {
        summary: 'Configure text-to-speech (tts) or speech-to-text (stt): provider, model, and an API key or endpoint',
        description: 'The API key and endpoint are stored and never returned. Once configured, the non-secret fields (enabled, voice, ...) can also be changed through PATCH /api/internal/settings.',
        tags,
        params: SpeechParams,
        body: SpeechService,
        response: { 200: SpeechRecord, 400: ErrorBody },
      },
    },
    async (request) => (await configureSpeech(deps.db.pool, DEFAULT_USER_ID, request.params.kind, request.body)).preferences[request.params.kind],
  );

  r.delete(
    '/api/settings/speech/:kind',
    { schema: { summary: 'Remove a speech service and its secrets', tags, params: SpeechParams, response: { 200: SpeechRecord, 400: ErrorBody } } },
    async (request) => (await configureSpeech(deps.db.pool, DEFAULT_USER_ID, request.params.kind, null)).preferences[request.params.kind],
  );
}

export async function registerManagerSettingsRoutes(app: FastifyInstance, deps: DaemonDeps): Promise<void> {
  await app.register(async (scope) => {
    answerBadInputWith400(scope);
    const r = scope.withTypeProvider<ZodTypeProvider>();
    registerSwitchRoutes(r, deps);
    registerIdentityRoutes(r, deps);
    registerSpeechRoutes(r, deps);
  });
}
