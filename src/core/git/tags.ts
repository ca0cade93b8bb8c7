import type pg from 'pg';
import type { Config } from '../config.js';
import { prepareAccess } from './access.js';
import { contextFor, listRemoteRefs } from './checkout.js';
import type { ResolvedRef } from './checkout.js';
import { parseRemote } from './remote.js';
import { withTempDir } from './run.js';

/** Version names from refs, and a repository's tags. */

/** `v1.2.3` → `1.2.3`; other tags as they are; a branch → its name; a commit → its short hash. */
export function versionFromRef(ref: ResolvedRef): string {
  if (ref.kind === 'commit') return ref.name.slice(0, 7);
  if (ref.kind === 'tag') return ref.name.replace(/^v(?=\d)/i, '');
  return ref.name === 'HEAD' ? '' : ref.name;
}

const LS_REMOTE_BYTES = 64 * 1024 * 1024;

/**
 * The tag names of a remote a registry named (`git ls-remote --tags --refs`), in the server's order, under the
 * same credentials as a checkout and the remote rules: a registry's repository URL is never the local user's
 * (net/provenance.ts), so it may not be a local path, file://, ssh or on loopback. `pool` is where stored
 * credentials are read; without it none are used.
 */
export async function listRemoteTags(config: Config, remote: string, pool?: pg.Pool): Promise<string[]> {
  const parsed = parseRemote(remote);
  return withTempDir(async (tmp) => {
    const access = await prepareAccess(config, parsed, tmp, { local: false, ...(pool ? { pool } : {}) });
    const context = contextFor(tmp, parsed, access, LS_REMOTE_BYTES);
    const { refs } = await listRemoteRefs(context, { remote: parsed, access, maxBytes: LS_REMOTE_BYTES }, [], ['--tags', '--refs']);
    return [...refs.keys()].filter((name) => name.startsWith('refs/tags/')).map((name) => name.slice('refs/tags/'.length));
  });
}
