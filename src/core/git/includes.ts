import fs from 'node:fs';
import { expandIncludes, includeFormat } from '../extract/includes.js';
import type { IncludeHost, IncludeOutcome } from '../extract/includes.js';
import { confinedFile, readIncludedText } from '../upload/includes.js';
import type { IncludeTally } from '../upload/includes.js';
import { checkoutMore } from './checkout.js';
import type { CheckoutRequest } from './checkout.js';
import type { SelectedText } from './files.js';
import type { TrackedFile } from './select.js';

/**
 * A checkout's pages with their includes resolved from the same commit. The checkout holds the docs paths
 * only; what the includes name (fastapi's `docs_src/`, a VitePress snippet, mkdocs.yml for the base paths) is
 * checked out in a few rounds: expand every page against what is there, check out the tracked files that
 * were asked for and missing, expand again. Only tracked regular files are read (symlinks and submodules are
 * not tracked files here), at most MAX_FETCHED_FILES of them, within the size watch of `--max-repo-mb`.
 */

const MAX_FETCHED_FILES = 5000;
const MAX_ROUNDS = 4;

export interface PageIncludes {
  tally: IncludeTally;
  /** The blob of every tracked file the page asked for: a page is indexed again when one of them changes. */
  reads: Record<string, string>;
}

function foldersOf(tracked: readonly TrackedFile[]): Set<string> {
  const folders = new Set<string>();
  for (const f of tracked) {
    for (let slash = f.path.lastIndexOf('/'); slash > 0; slash = f.path.lastIndexOf('/', slash - 1)) {
      const folder = f.path.slice(0, slash);
      if (folders.has(folder)) break;
      folders.add(folder);
    }
  }
  return folders;
}

interface Round {
  outcomes: Map<string, IncludeOutcome>;
  /** Per page, every tracked file it asked for, read or not (missing, refused): its dependencies. */
  asked: Map<string, Set<string>>;
  /** Tracked files asked for and not in the checkout yet. */
  missing: Set<string>;
}

/** Each page's outcome against the files the checkout holds now. */
function expandAll(pages: readonly SelectedText[], dir: string, realRoot: string, blobs: Map<string, string>, folders: Set<string>): Round {
  const round: Round = { outcomes: new Map(), asked: new Map(), missing: new Set() };
  for (const page of pages) {
    const asked = new Set<string>();
    const host: IncludeHost = {
      read(repoPath) {
        if (!blobs.has(repoPath)) return null;
        asked.add(repoPath);
        const file = confinedFile(dir, realRoot, repoPath);
        if (file === null) round.missing.add(repoPath);
        return typeof file === 'string' ? readIncludedText(file) : file;
      },
      exists: (repoPath) => blobs.has(repoPath) || folders.has(repoPath),
    };
    round.outcomes.set(page.file.path, expandIncludes(page.file.path, page.text, host));
    round.asked.set(page.file.path, asked);
  }
  return round;
}

/** The pages' texts with their includes resolved, and per page with includes what it resolved and read. */
export async function resolveGitIncludes(
  tmp: string,
  request: Pick<CheckoutRequest, 'remote' | 'access' | 'maxBytes'>,
  dir: string,
  tracked: readonly TrackedFile[],
  texts: readonly SelectedText[],
): Promise<{ texts: SelectedText[]; pages: Map<string, PageIncludes> }> {
  const pages = texts.filter((t) => t.file.role === 'doc' && includeFormat(t.file.path) !== null);
  const blobs = new Map(tracked.map((f) => [f.path, f.blob]));
  const folders = foldersOf(tracked);
  const realRoot = fs.realpathSync(dir);
  const fetched = new Set<string>();
  let round = expandAll(pages, dir, realRoot, blobs, folders);
  for (let n = 1; n < MAX_ROUNDS; n++) {
    const batch = [...round.missing].filter((p) => !fetched.has(p)).slice(0, MAX_FETCHED_FILES - fetched.size);
    if (batch.length === 0) break;
    for (const p of batch) fetched.add(p);
    const complete = await checkoutMore(tmp, request, dir, batch);
    round = expandAll(pages, dir, realRoot, blobs, folders);
    if (!complete) break;
  }
  const result = new Map<string, PageIncludes>();
  for (const [filePath, outcome] of round.outcomes) {
    if (outcome.resolved + outcome.unresolved === 0) continue;
    const reads = Object.fromEntries([...(round.asked.get(filePath) ?? [])].sort().map((f) => [f, blobs.get(f) ?? '']));
    result.set(filePath, { tally: { resolved: outcome.resolved, unresolved: outcome.unresolved, problems: outcome.problems }, reads });
  }
  return { texts: texts.map((t) => ({ file: t.file, text: round.outcomes.get(t.file.path)?.text ?? t.text })), pages: result };
}
