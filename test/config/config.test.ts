import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, assertAuthConfigured, configForBind, isLoopbackHost, loadConfig } from '../../src/core/config.js';

function errorFor(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('has documented defaults', () => {
    const config = loadConfig({ HOME: '/home/u' });
    expect(config.database).toEqual({ mode: 'embedded' });
    expect(config.home).toBe('/home/u/.local/share/docdex');
    expect(config.api).toMatchObject({ host: '127.0.0.1', port: 7654, corsOrigins: [], auth: false });
    expect(config.crawl).toEqual({ delaySeconds: 1, maxConcurrent: 20 });
    expect(config.api.searchConcurrency).toBe(2 * availableParallelism());
    expect(loadConfig({ SEARCH_CONCURRENCY: '3' }).api.searchConcurrency).toBe(3);
    // Extraction threads leave the worker's own thread a core, one at least, two at most.
    expect(config.extract.threads).toBe(Math.min(2, Math.max(1, availableParallelism() - 1)));
    expect(loadConfig({ EXTRACT_THREADS: '4' }).extract.threads).toBe(4);
    expect(config.mcpAuth).toEqual({ enabled: false, tokens: [] });
    expect(config.mcp).toEqual({ readOnly: false });
    expect(config.llm.enabled).toBe(false);
  });

  it('honours XDG_DATA_HOME and DOCDEX_HOME', () => {
    expect(loadConfig({ XDG_DATA_HOME: '/x' }).home).toBe('/x/docdex');
    expect(loadConfig({ XDG_DATA_HOME: '/x', DOCDEX_HOME: '/d' }).home).toBe('/d');
  });

  it('uses an external database when DATABASE_URL or DB_HOST is set', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@h:1/db' }).database).toMatchObject({ mode: 'external', connectionString: 'postgres://u:p@h:1/db' });
    expect(loadConfig({ DB_HOST: 'db', DB_PORT: '6543', DB_NAME: 'n', DB_USER: 'u', DB_PASSWORD: 'p' }).database).toEqual({
      mode: 'external',
      host: 'db',
      port: 6543,
      database: 'n',
      user: 'u',
      password: 'p',
    });
  });

  it.each([
    [{ CRAWL_DELAY: 'abc' }, 'CRAWL_DELAY', 'number of seconds'],
    [{ CRAWL_DELAY: '-1' }, 'CRAWL_DELAY', 'from 0 to 3600'],
    [{ MAX_CONCURRENT_CRAWLS: '21' }, 'MAX_CONCURRENT_CRAWLS', 'from 1 to 20'],
    [{ MAX_CONCURRENT_CRAWLS: '2.5' }, 'MAX_CONCURRENT_CRAWLS', 'whole number'],
    [{ SEARCH_CONCURRENCY: '0' }, 'SEARCH_CONCURRENCY', 'from 1 to 1000'],
    [{ API_PORT: '70000' }, 'API_PORT', 'port number'],
    [{ DB_PORT: 'x' }, 'DB_PORT', 'port number'],
    [{ MCP_AUTH_ENABLED: 'maybe' }, 'MCP_AUTH_ENABLED', 'true or false'],
    [{ CODE_ENABLE_LLM_EXTRACTION: 'sure' }, 'CODE_ENABLE_LLM_EXTRACTION', 'true or false'],
    [{ CODE_LLM_BASE_URL: 'localhost:11434' }, 'CODE_LLM_BASE_URL', 'http://'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL', 'postgres://'],
    [{ SANDBOX_ACCEL: 'fast' }, 'SANDBOX_ACCEL', 'auto, kvm or tcg'],
    // Below 128 MiB the guest never boots (issue #51): refused here instead of waiting for the start timeout.
    [{ SANDBOX_MEMORY_MB: '64' }, 'SANDBOX_MEMORY_MB', 'from 128 to 65536'],
  ])('rejects %j with a clear message naming the variable', (env, name, allowed) => {
    const error = errorFor(env);
    expect(error.message).toContain(`Invalid environment variable ${name}`);
    expect(error.message).toContain(allowed);
    expect(error.exitCode).toBe(2);
    expect(error.message.split('\n')).toHaveLength(1);
  });

  it('never echoes secret values', () => {
    const secret = 'postgres-secret-value-123';
    const error = errorFor({ DATABASE_URL: `mysql://user:${secret}@h/db` });
    expect(error.message).not.toContain(secret);
    expect(error.message).toContain('value hidden');
    const shown = errorFor({ CRAWL_DELAY: 'slow' });
    expect(shown.message).toContain('"slow"');
  });

  it('merges MCP_AUTH_TOKEN and MCP_AUTH_TOKENS and fails closed without any', () => {
    const config = loadConfig({
      MCP_AUTH_ENABLED: 'true',
      MCP_AUTH_TOKEN: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      MCP_AUTH_TOKENS: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, cccccccccccccccccccccccccccccccc,,aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    });
    expect(config.mcpAuth.tokens.map((t) => t.token)).toEqual(['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'cccccccccccccccccccccccccccccccc']);
    expect(config.mcpAuth.tokens.every((t) => t.scope === 'full')).toBe(true);
    expect(() => assertAuthConfigured(loadConfig({ MCP_AUTH_ENABLED: 'true' }))).toThrow(/no token is configured/);
  });

  it('turns REST auth on by default only when enabled and not on loopback', () => {
    expect(loadConfig({ MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKEN: 'tttttttttttttttttttttttttttttttt' }).api.auth).toBe(false);
    expect(loadConfig({ MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKEN: 'tttttttttttttttttttttttttttttttt', API_HOST: '0.0.0.0' }).api.auth).toBe(true);
    expect(loadConfig({ MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKEN: 'tttttttttttttttttttttttttttttttt', API_HOST: '0.0.0.0', API_AUTH: 'false' }).api.auth).toBe(false);
  });

  it('refuses tokens under 32 characters without echoing them', () => {
    const envs: Array<Record<string, string>> = [{ MCP_AUTH_TOKEN: 'x'.repeat(31) }, { MCP_AUTH_TOKENS: `${'y'.repeat(32)},short-secret` }];
    for (const env of envs) {
      const error = errorFor(env);
      expect(error.exitCode).toBe(2);
      expect(error.message).toMatch(/at least 32 characters/);
      expect(error.message).not.toMatch(/xxxx|short-secret/);
    }
  });

  it('takes API_ALLOWED_HOSTS as host names or host:port and refuses anything else', () => {
    expect(loadConfig({ API_ALLOWED_HOSTS: 'docs.example, proxy.example:8443,[::1]:9' }).api.allowedHosts).toEqual(['docs.example', 'proxy.example:8443', '[::1]:9']);
    for (const bad of ['user@docs.example', 'http://docs.example', 'docs.example/x', 'a b']) expect(errorFor({ API_ALLOWED_HOSTS: bad }).message).toMatch(/API_ALLOWED_HOSTS/);
  });

  it('refuses a non-loopback bind without REST auth, from API_HOST or the serve --host override', () => {
    const open = loadConfig({});
    expect(() => assertAuthConfigured(configForBind(open, '0.0.0.0'))).toThrow(/Refusing to listen on 0\.0\.0\.0 without authentication/);
    expect(() => assertAuthConfigured(loadConfig({ API_HOST: '192.168.1.5' }))).toThrow(ConfigError);
    expect(() => assertAuthConfigured(configForBind(open, '127.0.0.2'))).not.toThrow();
    expect(() => assertAuthConfigured(configForBind(open, '127.evil.example'))).toThrow(ConfigError);
    const secured = configForBind(loadConfig({ MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKEN: 't'.repeat(32) }), '0.0.0.0');
    expect(secured.api.auth).toBe(true);
    expect(() => assertAuthConfigured(secured)).not.toThrow();
    for (const host of ['127.0.0.1', '127.200.1.1', 'localhost', '::1']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['127.evil.example', '127.1', '0.0.0.0', '::']) expect(isLoopbackHost(host)).toBe(false);
  });
});
