import { repositoryName } from './repository-url.js';
import type { RepositoryLocation } from './repository-url.js';

/**
 * Other names a library answers to: the repository's name when it differs from the package's (`search_libraries`
 * finds `@acme/widgets-core` as `widgets`), and spellings of the name itself the caller gives (PyPI's
 * normalised form). Never the package name itself, never twice.
 */
export function aliasesFor(name: string, repository: RepositoryLocation | undefined, spellings: string[] = []): string[] {
  const taken = new Set([name.toLowerCase()]);
  const aliases: string[] = [];
  for (const alias of [...spellings, ...(repository ? [repositoryName(repository.url)] : [])]) {
    if (alias === '' || taken.has(alias.toLowerCase())) continue;
    taken.add(alias.toLowerCase());
    aliases.push(alias);
  }
  return aliases;
}
