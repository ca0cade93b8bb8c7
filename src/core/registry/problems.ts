import { UserError } from '../errors.js';
import { isOutboundRefusal } from '../net/policy.js';
import type { Ecosystem } from './types.js';

/** The errors a resolver raises: each carries its code from ERROR_CODES and one next step. */

const REGISTRY_NAMES: Record<Ecosystem, string> = { npm: 'npm', pypi: 'PyPI', crates: 'crates.io', go: 'the Go module proxy' };

export function registryName(ecosystem: Ecosystem): string {
  return REGISTRY_NAMES[ecosystem];
}

/** How many published versions a "version not found" answer lists, newest first. */
const LISTED_VERSIONS = 8;

export function packageNotFound(ecosystem: Ecosystem, name: string, url: string): UserError {
  return new UserError(`Package ${JSON.stringify(name)} was not found on ${registryName(ecosystem)} (${url}).`, {
    code: 'package_not_found',
    details: [{ path: 'name', message: 'not published', ecosystem, name }],
  });
}

export function versionNotFound(ecosystem: Ecosystem, name: string, requested: string, newestFirst: string[]): UserError {
  const shown = newestFirst.slice(0, LISTED_VERSIONS);
  const listing = shown.length === 0 ? 'it has no published releases' : `the newest published versions are ${shown.join(', ')}`;
  return new UserError(`No version of ${name} on ${registryName(ecosystem)} matches ${JSON.stringify(requested)}: ${listing}.`, {
    code: 'version_not_found',
    hint: shown.length === 0 ? 'Pick another package.' : `Ask for one of them, e.g. ${ecosystem}:${name}@${shown[0]}, or leave the version out for the latest release.`,
    details: [{ path: 'version', message: 'no matching version', requested, versions: shown }],
  });
}

/**
 * The registry could not be reached, refused by the outbound policy, or answered with a server error.
 * `setting` names the setting that chose it (PYPI_URL), when it is a configured registry.
 */
export function registryUnavailable(url: string, reason: string, cause?: unknown, setting?: string): UserError {
  const refused = isOutboundRefusal(cause);
  const choose = setting
    ? `${setting} chooses this registry: point it at a mirror this machine can reach, or retry when the network is back.`
    : 'Retry in a moment; NPM_REGISTRY_URL, PYPI_URL, CRATES_URL and GO_PROXY_URL choose the registries.';
  return new UserError(`The package registry at ${url} is unavailable: ${reason}.`, {
    code: 'registry_unavailable',
    hint: refused ? 'List the registry host in CRAWL_ALLOW_HOSTS if it is meant to be reached at that address.' : choose,
    ...(cause === undefined ? {} : { cause }),
    details: [{ path: 'registry', message: reason, url }],
  });
}

/** The registry answered, but not with what its API documents. */
export function badRegistryAnswer(url: string, reason: string): UserError {
  return new UserError(`The package registry at ${url} gave an answer docdex cannot read: ${reason}.`, {
    code: 'bad_gateway',
    hint: 'Check that the registry URL setting points at the registry API itself.',
    details: [{ path: 'registry', message: reason, url }],
  });
}
