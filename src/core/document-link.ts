import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Beside core/search, which gives results their link, and below core/git, whose fileUrl makes the identity
// URLs read here: search importing git closed a cycle of core folders (git → upload → pipeline → search).

// `<remote>@<commit>/<path>`: fileUrl's form for a host with no known web view (a local repository's `file://`).
const IDENTITY = /^(.*)@([0-9a-f]{40}|[0-9a-f]{64})\/(.+)$/;

function existingFileUrl(filePath: string): string | undefined {
  try {
    return statSync(filePath).isFile() ? pathToFileURL(filePath).href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A link that opens a stored document, for results to carry beside their `source_url` (which is an identity:
 * a local repository's document is `file:///…/mylib@<commit>/docs/x.md`, which nothing opens; issue #49).
 * - a web page, a forge's file view: the URL itself;
 * - a file of a local repository: the file in that repository on disk, when it is still there (its working
 *   tree; it may have moved on since that commit), as a `file://` URL without the anchor, which a terminal opens;
 * - an uploaded file: that file, when it is still there;
 * - anything else (a repository on a host with no known web view, an upload of text): none.
 * Read on the machine that answers, so a `file://` link names its disk. Only for a source whose location the
 * local user typed (`localFiles`, sources.typed_by_user): a `file://` URL that a pack, a registry or an API
 * caller stored would otherwise make results tell whether any path on this machine exists.
 */
export function openableLink(sourceUrl: string, options: { localFiles: boolean }): string | undefined {
  let url: URL;
  try {
    url = new URL(sourceUrl);
  } catch {
    return undefined;
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') return IDENTITY.test(url.pathname) ? undefined : sourceUrl;
  if (url.protocol !== 'file:' || url.host !== '' || !options.localFiles) return undefined;
  url.hash = '';
  url.search = '';
  let filePath: string;
  try {
    filePath = fileURLToPath(url);
  } catch {
    return undefined;
  }
  const identity = IDENTITY.exec(filePath);
  if (!identity) return existingFileUrl(filePath);
  // The URL parser has resolved any `..`: the path is the one file the stored URL names.
  const [, repository, , inRepository] = identity;
  return existingFileUrl(path.join(repository!, inRepository!));
}
