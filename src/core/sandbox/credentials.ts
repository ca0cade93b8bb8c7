/**
 * Git credential forwarding into the sandbox (spec: "Git credential forwarding", off by default). Pure
 * functions over plain objects; the settings and repository records come from the database layer.
 *
 * When on, the planner resolves per command:
 *   - one `http.<url>.extraheader` per host, as GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n
 *     (git reads these without any config file). The key uses the URL form `http.https://<host>/.extraheader`
 *     because git only matches `http.<url>.*` sections against URLs;
 *   - where several credentials share a host, the repo-bound credential wins, then defaultGitCredentialId,
 *     then the first configured; exactly one per host;
 *   - GIT_AUTHOR_* and GIT_COMMITTER_* from the git identity, and the hosting CLI's two token variables
 *     (GH_TOKEN and GITHUB_TOKEN) from the credential chosen for github.com;
 *   - at most 16 hosts; the rest are dropped with a warning the caller logs.
 * Only names on FORWARDED_ENV_NAMES ever cross into the VM, and MGR_INTERNAL_TOKEN never does.
 */

export const MAX_CREDENTIAL_HOSTS = 16;
export const INTERNAL_TOKEN_VAR = 'MGR_INTERNAL_TOKEN';
const CLI_TOKEN_HOST = 'github.com';
const CLI_TOKEN_VARS = ['GH_TOKEN', 'GITHUB_TOKEN'] as const;
const IDENTITY_VARS = ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL'] as const;

/** The allow-list: the shim forwards exactly these names and nothing else. */
export const FORWARDED_ENV_NAMES: readonly string[] = [
  'GIT_CONFIG_COUNT',
  ...Array.from({ length: MAX_CREDENTIAL_HOSTS }, (_, i) => `GIT_CONFIG_KEY_${i}`),
  ...Array.from({ length: MAX_CREDENTIAL_HOSTS }, (_, i) => `GIT_CONFIG_VALUE_${i}`),
  ...IDENTITY_VARS,
  ...CLI_TOKEN_VARS,
];

export interface GitCredential {
  id: string;
  /** Host name, optionally with a port: `github.com`, `git.example.com:8443`. */
  host: string;
  /** Basic-auth user; hosting services accept a fixed name with a token as password. */
  username?: string;
  token: string;
}

export interface CredentialPreferences {
  sandbox?: { gitCredentials?: boolean };
  gitCredentials?: readonly GitCredential[];
  defaultGitCredentialId?: string;
  gitIdentity?: { name?: string; email?: string };
}

export interface CredentialContext {
  preferences: CredentialPreferences;
  /** repo_settings of the repository the command runs in; its override wins in either direction. */
  repoSettings?: { sandboxGitCredentials?: boolean | null };
  /** The credential bound to that repository, if any. */
  repoCredentialId?: string;
}

export interface ForwardedEnv {
  enabled: boolean;
  env: Record<string, string>;
  /** Hosts in the order they were sent. */
  hosts: string[];
  warnings: string[];
}

export function forwardingEnabled(ctx: CredentialContext): boolean {
  const override = ctx.repoSettings?.sandboxGitCredentials;
  if (typeof override === 'boolean') return override;
  return ctx.preferences.sandbox?.gitCredentials === true;
}

const HOST = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/;

export function normaliseHost(host: string): string | undefined {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/\/+$/, '');
  return HOST.test(h) ? h : undefined;
}

export function extraHeader(credential: GitCredential): string {
  const user = credential.username && credential.username.length > 0 ? credential.username : 'x-access-token';
  return `Authorization: Basic ${Buffer.from(`${user}:${credential.token}`).toString('base64')}`;
}

/** One credential per host, hosts in first-configured order. */
export function chooseCredentials(ctx: CredentialContext): { chosen: Map<string, GitCredential>; warnings: string[] } {
  const warnings: string[] = [];
  const byHost = new Map<string, GitCredential[]>();
  for (const credential of ctx.preferences.gitCredentials ?? []) {
    const host = normaliseHost(credential.host);
    if (!host) {
      warnings.push(`git credential ${credential.id} has an invalid host ${JSON.stringify(credential.host)}; not forwarded`);
      continue;
    }
    if (!credential.token) continue;
    const list = byHost.get(host) ?? [];
    list.push(credential);
    byHost.set(host, list);
  }
  const chosen = new Map<string, GitCredential>();
  for (const [host, list] of byHost) {
    const pick =
      list.find((c) => ctx.repoCredentialId !== undefined && c.id === ctx.repoCredentialId) ??
      list.find((c) => ctx.preferences.defaultGitCredentialId !== undefined && c.id === ctx.preferences.defaultGitCredentialId) ??
      list[0]!;
    chosen.set(host, pick);
  }
  return { chosen, warnings };
}

export function resolveForwardedEnv(ctx: CredentialContext): ForwardedEnv {
  if (!forwardingEnabled(ctx)) return { enabled: false, env: {}, hosts: [], warnings: [] };
  const { chosen, warnings } = chooseCredentials(ctx);
  let hosts = [...chosen.keys()];
  if (hosts.length > MAX_CREDENTIAL_HOSTS) {
    warnings.push(`git credentials are configured for ${hosts.length} hosts; only the first ${MAX_CREDENTIAL_HOSTS} are forwarded (dropped: ${hosts.slice(MAX_CREDENTIAL_HOSTS).join(', ')})`);
    hosts = hosts.slice(0, MAX_CREDENTIAL_HOSTS);
  }
  const env: Record<string, string> = {};
  if (hosts.length > 0) {
    env.GIT_CONFIG_COUNT = String(hosts.length);
    hosts.forEach((host, i) => {
      env[`GIT_CONFIG_KEY_${i}`] = `http.https://${host}/.extraheader`;
      env[`GIT_CONFIG_VALUE_${i}`] = extraHeader(chosen.get(host)!);
    });
  }
  const identity = ctx.preferences.gitIdentity;
  if (identity?.name) env.GIT_AUTHOR_NAME = env.GIT_COMMITTER_NAME = identity.name;
  if (identity?.email) env.GIT_AUTHOR_EMAIL = env.GIT_COMMITTER_EMAIL = identity.email;
  const cli = hosts.includes(CLI_TOKEN_HOST) ? chosen.get(CLI_TOKEN_HOST) : undefined;
  if (cli) for (const name of CLI_TOKEN_VARS) env[name] = cli.token;
  return { enabled: true, env: filterForwardedEnv(env), hosts, warnings };
}

/** Drops everything that is not allow-listed; the internal token can never pass, whatever the list says. */
export function filterForwardedEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  const allowed = new Set(FORWARDED_ENV_NAMES);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (k !== INTERNAL_TOKEN_VAR && allowed.has(k)) out[k] = v;
  return out;
}
