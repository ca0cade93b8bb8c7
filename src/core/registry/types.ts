import type { Config } from '../config.js';

import type { Ecosystem } from '../library-spec.js';

/** The package registries docdex resolves (`docdex add npm:…`, `pypi:…`, `crates:…`, `go:…`): one definition, the spec's. */
export type { Ecosystem };

export interface PackageRequest {
  ecosystem: Ecosystem;
  name: string;
  /** exact version, a semver range, or undefined = latest release */
  version?: string;
}

/** Where a package's documentation lives at one exact version; `add` indexes it (git producer, crawler). */
export interface ResolvedPackage {
  ecosystem: Ecosystem;
  name: string;
  /** the resolved exact version */
  version: string;
  /** other names the library answers to, e.g. the repository name when it differs */
  aliases: string[];
  /** normalised https git URL (git+https://, github: shorthand, .git suffix…), and the package's folder in a monorepo */
  repository?: { url: string; directory?: string };
  /** docs site when it is one (NOT the repository's own page) */
  homepage?: string;
  /** PyPI "Documentation", crates "documentation" */
  documentation?: string;
  /** npm: the version's tarball URL (README fallback) */
  tarball?: string;
  /** git tags that may name this version, most likely first: ['v1.2.3', '1.2.3', '<name>@1.2.3'] */
  tagCandidates: string[];
}

/** What the resolvers read from the configuration: registry base URLs and the outbound allow-list. */
export type RegistryConfig = Pick<Config, 'registry' | 'outbound'>;

export interface RegistryRequestOptions {
  signal?: AbortSignal;
}
