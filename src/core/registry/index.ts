import { ValidationError } from '../errors.js';
import { resolveCratePackage } from './crates.js';
import { resolveGoModule } from './go.js';
import { resolveNpmPackage } from './npm.js';
import { resolvePypiPackage } from './pypi.js';
import type { PackageRequest, RegistryConfig, RegistryRequestOptions, ResolvedPackage } from './types.js';

/**
 * Package registries: a package reference (`npm:react@18.3.1`, `pypi:requests`, `crates:serde@1`, `go:github.com/spf13/cobra@v1.8.1`) turned into
 * where its docs live at one exact version. No indexing here: `add` hands the result to the git producer and
 * the crawler.
 */

export type { PackageRequest, ResolvedPackage, RegistryRequestOptions } from './types.js';
export { pickTag } from './tags.js';
export { fetchTarballReadme } from './tarball.js';

const MAX_VERSION_LENGTH = 256;

/**
 * Resolves `request` against its registry (NPM_REGISTRY_URL or npm's own configuration, PYPI_URL, CRATES_URL, GO_PROXY_URL),
 * through the outbound policy. `version` may be exact, a range (`18`, `^18.2`, `~1.2.1`; PyPI also `~=2.28`),
 * an npm dist-tag, or absent for the latest release. Throws UserError: validation_error (a name the ecosystem
 * does not allow), package_not_found, version_not_found (with the newest published versions),
 * registry_unavailable (unreachable, refused by the outbound policy, or answering 5xx), bad_gateway (an
 * answer that is not the registry's documented shape).
 */
export async function resolvePackage(config: RegistryConfig, request: PackageRequest, options: RegistryRequestOptions = {}): Promise<ResolvedPackage> {
  if (typeof request.name !== 'string' || (request.version !== undefined && typeof request.version !== 'string')) {
    throw new ValidationError('A package request needs a name, and a version only as text.', { details: [{ path: 'name', message: 'expected a string' }] });
  }
  const version = request.version?.trim();
  if (version !== undefined && (version === '' || version.length > MAX_VERSION_LENGTH || /\p{Cc}/u.test(version))) {
    throw new ValidationError(`${JSON.stringify(request.version?.slice(0, 60))} is not a version or version range.`, {
      hint: 'Give an exact version (1.2.3), a range (1, ^1.2, ~1.2.3) or none for the latest release.',
      details: [{ path: 'version', message: 'not a version' }],
    });
  }
  const normalised: PackageRequest = { ecosystem: request.ecosystem, name: request.name.trim(), ...(version === undefined ? {} : { version }) };
  switch (normalised.ecosystem) {
    case 'npm':
      return resolveNpmPackage(config, normalised, options);
    case 'pypi':
      return resolvePypiPackage(config, normalised, options);
    case 'crates':
      return resolveCratePackage(config, normalised, options);
    case 'go':
      return resolveGoModule(config, normalised, options);
    default:
      throw new ValidationError(`Unknown package ecosystem ${JSON.stringify(String((normalised as { ecosystem: unknown }).ecosystem))}.`, {
        hint: 'Use npm:, pypi:, crates: or go:.',
        details: [{ path: 'ecosystem', message: 'expected npm, pypi, crates or go' }],
      });
  }
}
