import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type pg from 'pg';
import { loadGitCredentials, pickCredential } from '../agent-server/git-credentials.js';
import type { Config } from '../config.js';
import { UserError } from '../errors.js';
import { admittedAddresses, OutboundRefusedError } from '../net/policy.js';
import type { Resolve } from '../net/policy.js';
import { assertRemoteAllowed } from './remote.js';
import type { Remote } from './remote.js';

/**
 * What git may reach and with what: the outbound policy checked on the remote's addresses before any network
 * git, the admitted address pinned for git's HTTP (a DNS answer that changes between the check and the
 * connection cannot redirect it), no redirects, and the stored credential for the host handed over by an
 * askpass script that reads it from the environment: never in argv, the URL, or anything git prints.
 */

export interface GitAccess {
  settings: string[];
  env: Record<string, string>;
  /** The token in use, so any text shown can be scrubbed of it. */
  secret?: string;
}

export interface AccessOptions {
  /** The CLI's own request: file://, local paths, ssh and loopback allowed. */
  local: boolean;
  /** Where stored credentials are read; none are used without it. */
  pool?: pg.Pool;
  /** Test seam for DNS. */
  resolve?: Resolve;
}

const ASKPASS_SCRIPT = `#!/bin/sh
case "$1" in
  Username*) printf '%s\\n' "$DOCDEX_GIT_USERNAME" ;;
  *) printf '%s\\n' "$DOCDEX_GIT_TOKEN" ;;
esac
`;

function curlAddress(address: string): string {
  return net.isIPv6(address) ? `[${address}]` : address;
}

async function admitted(config: Config, remote: Remote, options: AccessOptions): Promise<string> {
  try {
    const addresses = await admittedAddresses(remote.host, { allow: config.outbound.allowHosts, allowLoopback: options.local }, options.resolve);
    return addresses[0]!;
  } catch (error) {
    if (error instanceof OutboundRefusedError) throw new UserError(`${remote.host}: ${error.message}.`, { code: 'git_remote_refused' });
    // A name that does not resolve is a network matter: the code's default hint (a stored credential) does not fit it.
    throw new UserError(`${remote.host}: the host cannot be resolved.`, {
      code: 'git_repo_not_found',
      hint: `Check the host name in the repository URL, and that this machine's DNS resolves ${remote.host} (a host only a VPN or proxy reaches needs it running).`,
      cause: error,
    });
  }
}

async function credentialEnv(remote: Remote, address: string, tmp: string, pool: pg.Pool): Promise<{ env: Record<string, string>; secret: string } | undefined> {
  // Tokens go over TLS only; plain http only to this machine (a local test server or a tunnel).
  const loopback = net.isIP(address) !== 0 && /^(127\.|::1$|::ffff:127\.)/.test(address);
  if (remote.kind !== 'https' && !(remote.kind === 'http' && loopback)) return undefined;
  const set = await loadGitCredentials(pool);
  const credential = pickCredential(set, `${remote.host.toLowerCase()}:${remote.port}`) ?? pickCredential(set, remote.host.toLowerCase());
  if (!credential) return undefined;
  const script = path.join(tmp, 'askpass.sh');
  await fs.writeFile(script, ASKPASS_SCRIPT, { mode: 0o700 });
  return {
    env: { GIT_ASKPASS: script, DOCDEX_GIT_USERNAME: credential.username ?? 'x-access-token', DOCDEX_GIT_TOKEN: credential.token },
    secret: credential.token,
  };
}

/** Checks the remote for the caller and prepares git's settings and environment; writes only into `tmp`. */
export async function prepareAccess(config: Config, remote: Remote, tmp: string, options: AccessOptions): Promise<GitAccess> {
  assertRemoteAllowed(remote, options.local);
  // ssh (CLI only) is the local user's own access: their agent's keys, found through its socket.
  if (remote.kind === 'ssh' && process.env.SSH_AUTH_SOCK) return { settings: [], env: { SSH_AUTH_SOCK: process.env.SSH_AUTH_SOCK } };
  if (remote.kind !== 'http' && remote.kind !== 'https') return { settings: [], env: {} };
  const address = await admitted(config, remote, options);
  const settings = ['http.followRedirects=false'];
  if (net.isIP(remote.host) === 0) settings.push(`http.curloptResolve=${remote.host}:${remote.port}:${curlAddress(address)}`);
  const credential = options.pool ? await credentialEnv(remote, address, tmp, options.pool) : undefined;
  return credential ? { settings, env: credential.env, secret: credential.secret } : { settings, env: {} };
}

/** Text for a message or a log, with the token (should git ever print it) replaced. */
export function scrubSecret(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join('***') : text;
}
