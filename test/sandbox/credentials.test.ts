import { describe, expect, it } from 'vitest';
import { FORWARDED_ENV_NAMES, MAX_CREDENTIAL_HOSTS, extraHeader, filterForwardedEnv, forwardingEnabled, resolveForwardedEnv } from '../../src/core/sandbox/credentials.js';
import type { CredentialContext, GitCredential } from '../../src/core/sandbox/credentials.js';

const gh1: GitCredential = { id: 'gh-personal', host: 'github.com', token: 'tok-personal' };
const gh2: GitCredential = { id: 'gh-work', host: 'github.com', username: 'bot', token: 'tok-work' };
const gl: GitCredential = { id: 'gl', host: 'gitlab.example.com:8443', username: 'oauth2', token: 'tok-gl' };

function ctx(patch: Partial<CredentialContext> = {}, prefs: Partial<CredentialContext['preferences']> = {}): CredentialContext {
  return {
    preferences: { sandbox: { gitCredentials: true }, gitCredentials: [gh1, gh2, gl], gitIdentity: { name: 'Ann Example', email: 'ann@example.com' }, ...prefs },
    ...patch,
  };
}

function headerFor(env: Record<string, string>, host: string): string | undefined {
  for (let i = 0; i < Number(env.GIT_CONFIG_COUNT ?? 0); i++) if (env[`GIT_CONFIG_KEY_${i}`] === `http.https://${host}/.extraheader`) return env[`GIT_CONFIG_VALUE_${i}`];
  return undefined;
}

describe('git credential forwarding', () => {
  it('is off by default', () => {
    expect(forwardingEnabled({ preferences: {} })).toBe(false);
    expect(resolveForwardedEnv({ preferences: { gitCredentials: [gh1] } })).toEqual({ enabled: false, env: {}, hosts: [], warnings: [] });
  });

  it('lets the per-repo setting override the global one in either direction', () => {
    expect(forwardingEnabled(ctx({ repoSettings: { sandboxGitCredentials: false } }))).toBe(false);
    expect(forwardingEnabled(ctx({ repoSettings: { sandboxGitCredentials: true } }, { sandbox: { gitCredentials: false } }))).toBe(true);
    expect(forwardingEnabled(ctx({ repoSettings: { sandboxGitCredentials: null } }, { sandbox: { gitCredentials: false } }))).toBe(false);
    expect(forwardingEnabled(ctx({ repoSettings: {} }))).toBe(true);
  });

  it('sends one extraheader per host as GIT_CONFIG_COUNT/KEY_n/VALUE_n', () => {
    const out = resolveForwardedEnv(ctx());
    expect(out.hosts).toEqual(['github.com', 'gitlab.example.com:8443']);
    expect(out.env.GIT_CONFIG_COUNT).toBe('2');
    expect(out.env.GIT_CONFIG_KEY_0).toBe('http.https://github.com/.extraheader');
    expect(out.env.GIT_CONFIG_KEY_1).toBe('http.https://gitlab.example.com:8443/.extraheader');
    expect(out.env.GIT_CONFIG_VALUE_1).toBe(`Authorization: Basic ${Buffer.from('oauth2:tok-gl').toString('base64')}`);
    expect(out.env.GIT_CONFIG_KEY_2).toBeUndefined();
  });

  it('picks the repo-bound credential for a shared host, then defaultGitCredentialId, then the first', () => {
    const first = resolveForwardedEnv(ctx());
    expect(headerFor(first.env, 'github.com')).toBe(extraHeader(gh1));
    const byDefault = resolveForwardedEnv(ctx({}, { defaultGitCredentialId: 'gh-work' }));
    expect(headerFor(byDefault.env, 'github.com')).toBe(extraHeader(gh2));
    const repoBound = resolveForwardedEnv(ctx({ repoCredentialId: 'gh-personal' }, { defaultGitCredentialId: 'gh-work' }));
    expect(headerFor(repoBound.env, 'github.com')).toBe(extraHeader(gh1));
    // a repo-bound credential for another host does not disturb this host's choice
    const otherHost = resolveForwardedEnv(ctx({ repoCredentialId: 'gl' }, { defaultGitCredentialId: 'gh-work' }));
    expect(headerFor(otherHost.env, 'github.com')).toBe(extraHeader(gh2));
    expect(headerFor(otherHost.env, 'gitlab.example.com:8443')).toBe(extraHeader(gl));
  });

  it('sends the commit identity and both hosting CLI token variables', () => {
    const out = resolveForwardedEnv(ctx({}, { defaultGitCredentialId: 'gh-work' }));
    expect(out.env).toMatchObject({
      GIT_AUTHOR_NAME: 'Ann Example',
      GIT_COMMITTER_NAME: 'Ann Example',
      GIT_AUTHOR_EMAIL: 'ann@example.com',
      GIT_COMMITTER_EMAIL: 'ann@example.com',
      GH_TOKEN: 'tok-work',
      GITHUB_TOKEN: 'tok-work',
    });
    expect(resolveForwardedEnv(ctx({}, { gitCredentials: [gl] })).env.GH_TOKEN).toBeUndefined();
  });

  it('caps at 16 hosts, forwarding the first 16 and warning about the rest', () => {
    const many = Array.from({ length: 20 }, (_, i) => ({ id: `c${i}`, host: `git${i}.example.com`, token: `t${i}` }));
    const out = resolveForwardedEnv(ctx({}, { gitCredentials: many }));
    expect(out.hosts).toHaveLength(MAX_CREDENTIAL_HOSTS);
    expect(out.hosts[15]).toBe('git15.example.com');
    expect(out.env.GIT_CONFIG_COUNT).toBe('16');
    expect(out.env.GIT_CONFIG_KEY_15).toBe('http.https://git15.example.com/.extraheader');
    expect(out.env.GIT_CONFIG_KEY_16).toBeUndefined();
    expect(out.warnings).toHaveLength(1);
    expect(out.warnings[0]).toContain('20 hosts');
    expect(out.warnings[0]).toContain('git19.example.com');
    const exactly16 = resolveForwardedEnv(ctx({}, { gitCredentials: many.slice(0, 16) }));
    expect(exactly16.warnings).toEqual([]);
  });

  it('skips hosts that could inject into the git config key', () => {
    const out = resolveForwardedEnv(ctx({}, { gitCredentials: [{ id: 'bad', host: 'evil.com/.x http.proxy', token: 't' }, gh1] }));
    expect(out.hosts).toEqual(['github.com']);
    expect(out.warnings[0]).toContain('invalid host');
  });

  it('only allow-listed names pass, and never the internal token', () => {
    expect(filterForwardedEnv({ GH_TOKEN: 'a', MGR_INTERNAL_TOKEN: 's', PATH: '/bin', LD_PRELOAD: 'x' })).toEqual({ GH_TOKEN: 'a' });
    expect(FORWARDED_ENV_NAMES).not.toContain('MGR_INTERNAL_TOKEN');
    for (const name of Object.keys(resolveForwardedEnv(ctx()).env)) expect(FORWARDED_ENV_NAMES).toContain(name);
  });
});
