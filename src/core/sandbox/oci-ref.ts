/**
 * OCI image references as SANDBOX_IMAGE names them for a registry pull: `host[:port]/path[:tag][@sha256:<hex>]`,
 * the grammar of the distribution project's reference package (what docker, podman and skopeo accept), narrowed
 * on purpose:
 * - the registry host is required (its first component holds a dot or a port, or is `localhost`), so a bare
 *   name keeps meaning a locally built image and nothing is pulled from a registry the user did not name;
 * - the only digest algorithm is sha256;
 * - no IPv6 literals, user info, scheme or whitespace.
 * A reference that passes can go on a command line unquoted and can never read as an option: it starts with an
 * alphanumeric character and holds only `[A-Za-z0-9._:/@-]`.
 */

export interface OciRef {
  /** `host[:port]`, as written. */
  registry: string;
  host: string;
  port?: number;
  /** The path components after the registry, joined by `/`. */
  repository: string;
  tag?: string;
  /** `sha256:<64 lowercase hex>`. */
  digest?: string;
  /** The reference exactly as given: the string attestation compares. */
  ref: string;
}

/** Docker's limit on the name (registry and repository). */
const MAX_NAME_LENGTH = 255;
const DOMAIN_COMPONENT = /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$/;
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

function parseRegistry(text: string): { host: string; port?: number } | undefined {
  const colon = text.indexOf(':');
  const host = colon < 0 ? text : text.slice(0, colon);
  const portText = colon < 0 ? undefined : text.slice(colon + 1);
  if (host.length === 0 || host.length > 253 || !host.split('.').every((c) => DOMAIN_COMPONENT.test(c))) return undefined;
  if (portText === undefined) return { host };
  if (!/^[0-9]{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  return port >= 1 && port <= 65535 ? { host, port } : undefined;
}

/** Whether the first component names a registry rather than a repository (docker's own rule). */
function looksLikeRegistry(component: string): boolean {
  return component.includes('.') || component.includes(':') || component === 'localhost';
}

/** Parses a registry reference; undefined for anything else (a local image name included). Never throws. */
export function parseOciRef(ref: string): OciRef | undefined {
  if (typeof ref !== 'string' || ref.length === 0 || ref.length > MAX_NAME_LENGTH + 1 + 128 + 1 + 71) return undefined;
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    if (!DIGEST.test(digest)) return undefined;
    rest = rest.slice(0, at);
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const tagColon = rest.lastIndexOf(':');
  if (tagColon > lastSlash) {
    tag = rest.slice(tagColon + 1);
    if (!TAG.test(tag)) return undefined;
    rest = rest.slice(0, tagColon);
  }
  if (rest.length > MAX_NAME_LENGTH) return undefined;
  const components = rest.split('/');
  const first = components[0]!;
  if (components.length < 2 || !looksLikeRegistry(first)) return undefined;
  const registry = parseRegistry(first);
  const path = components.slice(1);
  if (!registry || !path.every((c) => PATH_COMPONENT.test(c))) return undefined;
  return {
    registry: first,
    host: registry.host,
    ...(registry.port === undefined ? {} : { port: registry.port }),
    repository: path.join('/'),
    ...(tag === undefined ? {} : { tag }),
    ...(digest === undefined ? {} : { digest }),
    ref,
  };
}

/** Renders a parsed reference back; parseOciRef(formatOciRef(r)) gives r again. */
export function formatOciRef(r: Omit<OciRef, 'ref'>): string {
  return `${r.registry}/${r.repository}${r.tag === undefined ? '' : `:${r.tag}`}${r.digest === undefined ? '' : `@${r.digest}`}`;
}
