/**
 * A failed connection in the words docdex uses for every outbound request that is not a crawl (package
 * registries, git remotes): "the host cannot be resolved" rather than `getaddrinfo ENOTFOUND pypi.org`, so
 * the npm, PyPI, crates.io, Go and git paths read alike (issue #49). Null when the error is no network failure.
 */

const WORDS: Readonly<Record<string, string>> = {
  ENOTFOUND: 'the host cannot be resolved',
  EAI_AGAIN: 'the host cannot be resolved',
  EAI_NONAME: 'the host cannot be resolved',
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was reset',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'it did not answer in time',
  UND_ERR_BODY_TIMEOUT: 'it stopped sending its answer',
  EHOSTUNREACH: 'the network cannot reach the host',
  ENETUNREACH: 'the network cannot reach the host',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its TLS certificate is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate is not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its TLS certificate is for another host',
};

/** The error's code, or the first code along its `cause` chain (fetch and undici wrap the socket's error). */
function codeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && WORDS[code] !== undefined) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function networkFailure(error: unknown): string | null {
  const code = codeOf(error);
  return code === undefined ? null : WORDS[code]!;
}
