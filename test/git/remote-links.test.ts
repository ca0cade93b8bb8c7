import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { openableLink } from '../../src/core/document-link.js';
import { fileUrl } from '../../src/core/git/links.js';
import { assertRemoteAllowed, parseRemote } from '../../src/core/git/remote.js';
import { normaliseRepoPath, selectFiles } from '../../src/core/git/select.js';
import { versionFromRef } from '../../src/core/git/tags.js';

const SHA = '0123456789abcdef0123456789abcdef01234567';

describe('parseRemote', () => {
  it('reads every remote form, with the repository name', () => {
    expect(parseRemote('https://github.com/acme/widgets.git')).toMatchObject({ kind: 'https', host: 'github.com', port: 443, repoPath: 'acme/widgets', name: 'widgets' });
    expect(parseRemote('http://127.0.0.1:8080/git/acme')).toMatchObject({ kind: 'http', host: '127.0.0.1', port: 8080, name: 'acme' });
    expect(parseRemote('git@github.com:acme/widgets.git')).toMatchObject({ kind: 'ssh', host: 'github.com', url: 'ssh://git@github.com/acme/widgets.git', name: 'widgets' });
    expect(parseRemote('ssh://git@example.com:2222/x/y.git')).toMatchObject({ kind: 'ssh', host: 'example.com', name: 'y' });
    expect(parseRemote('file:///srv/repos/acme.git')).toMatchObject({ kind: 'file', url: 'file:///srv/repos/acme.git', name: 'acme' });
    expect(parseRemote('/srv/repos/acme')).toMatchObject({ kind: 'file', url: 'file:///srv/repos/acme', name: 'acme' });
  });

  it('refuses credentials in the URL, other schemes, and option-like input', () => {
    expect(() => parseRemote('https://user:tok@github.com/a/b')).toThrow(/no credentials/);
    expect(() => parseRemote('ext::sh -c touch% /tmp/pwned')).toThrow(UserError);
    expect(() => parseRemote('ftp://example.com/a/b')).toThrow(/not supported/);
    expect(() => parseRemote('--upload-pack=touch /tmp/x')).toThrow(/characters/);
    expect(() => parseRemote('https://github.com/')).toThrow(/names no repository/);
  });

  it('keeps local, file:// and ssh remotes for the CLI', () => {
    for (const remote of ['/srv/acme', 'file:///srv/acme', 'git@github.com:a/b.git']) {
      expect(() => assertRemoteAllowed(parseRemote(remote), false)).toThrow(expect.objectContaining({ code: 'git_remote_refused' }));
      expect(() => assertRemoteAllowed(parseRemote(remote), true)).not.toThrow();
    }
    expect(() => assertRemoteAllowed(parseRemote('https://github.com/a/b'), false)).not.toThrow();
  });

  it('a malformed %-escape in the path is bad input, not a crash (found by the property below)', () => {
    for (const text of ['https://&\\%', 'https://example.com/org/re%zzpo', 'file:///tmp/%']) {
      expect(() => parseRemote(text)).toThrow(/malformed %-escape/);
    }
  });

  it('any text is a remote or a UserError, never another throw, and never a URL with a password (property)', () => {
    const input = fc.oneof(
      fc.string(),
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc.string().map((s) => `git@${s}`),
      fc.string().map((s) => `https://${s}`),
    );
    fc.assert(
      fc.property(input, (text) => {
        try {
          const remote = parseRemote(text);
          expect(remote.url.startsWith('-')).toBe(false);
          if (remote.kind !== 'ssh') expect(new URL(remote.url).password).toBe('');
        } catch (error) {
          expect(error).toBeInstanceOf(UserError);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('repository paths', () => {
  it('refuses paths that leave the repository or are patterns', () => {
    expect(normaliseRepoPath('./docs/')).toBe('docs');
    for (const bad of ['../x', '/etc', 'a/../../b', 'docs/*', '-x', '', '.']) expect(() => normaliseRepoPath(bad)).toThrow(UserError);
    fc.assert(
      fc.property(fc.string(), (text) => {
        try {
          const p = normaliseRepoPath(text);
          expect(p.split('/')).not.toContain('..');
          expect(p.startsWith('/')).toBe(false);
        } catch (error) {
          expect(error).toBeInstanceOf(UserError);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('selects docs, the root README and examples; never dependencies, build output or hidden folders', () => {
    const tracked = ['README.md', 'docs/a.md', 'docs/b.png', 'docs/node_modules/x.md', 'docs/.vitepress/c.md', 'build/docs/d.md', 'examples/e.py', 'examples/f.bin', 'src/g.md'].map((path) => ({
      path,
      blob: SHA,
    }));
    const selected = selectFiles(tracked, {}, (p) => p.endsWith('.py'));
    expect(selected.map((f) => [f.path, f.role])).toEqual([
      ['README.md', 'doc'],
      ['docs/a.md', 'doc'],
      ['examples/e.py', 'example'],
    ]);
    expect(() => selectFiles(tracked, { paths: ['guide'] }, () => false)).toThrow(expect.objectContaining({ code: 'git_nothing_to_index' }));
  });
});

describe('links and versions', () => {
  it('points at the file at the commit on the forge, or at remote@commit/path, and relative links resolve within the commit', () => {
    expect(fileUrl(parseRemote('https://github.com/o/r.git'), SHA, 'docs/x.md')).toBe(`https://github.com/o/r/blob/${SHA}/docs/x.md`);
    expect(fileUrl(parseRemote('git@gitlab.com:g/p.git'), SHA, 'docs/x.md')).toBe(`https://gitlab.com/g/p/-/blob/${SHA}/docs/x.md`);
    expect(fileUrl(parseRemote('https://codeberg.org/o/r'), SHA, 'a b.md')).toBe(`https://codeberg.org/o/r/src/commit/${SHA}/a%20b.md`);
    expect(fileUrl(parseRemote('https://bitbucket.org/o/r'), SHA, 'x.md')).toBe(`https://bitbucket.org/o/r/src/${SHA}/x.md`);
    for (const remote of ['https://github.com/o/r', 'https://git.example.com/org/repo.git', 'file:///srv/acme.git']) {
      const parsed = parseRemote(remote);
      expect(new URL('../guide.md', fileUrl(parsed, SHA, 'docs/guide/intro.md')).href).toBe(fileUrl(parsed, SHA, 'docs/guide.md'));
    }
    expect(fileUrl(parseRemote('https://git.example.com/org/repo.git'), SHA, 'docs/x.md')).toBe(`https://git.example.com/org/repo.git@${SHA}/docs/x.md`);
  });

  it('names versions after tags, branches and commits', () => {
    expect(versionFromRef({ kind: 'tag', name: 'v1.2.3', fetch: '' })).toBe('1.2.3');
    expect(versionFromRef({ kind: 'tag', name: 'release-2', fetch: '' })).toBe('release-2');
    expect(versionFromRef({ kind: 'branch', name: 'main', fetch: '' })).toBe('main');
    expect(versionFromRef({ kind: 'commit', name: SHA, fetch: '' })).toBe('0123456');
  });
});

describe('openableLink', () => {
  // A source whose location the local user typed (sources.typed_by_user): the only kind that gets file links.
  const typed = { localFiles: true };
  it('opens a web page and a forge file view as they are; nothing for a repository with no web view', () => {
    const forge = fileUrl(parseRemote('https://github.com/acme/widgets.git'), SHA, 'docs/a.md');
    expect(openableLink(`${forge}#usage`, typed)).toBe(`${forge}#usage`);
    expect(openableLink('https://docs.example.com/guide/#install', typed)).toBe('https://docs.example.com/guide/#install');
    expect(openableLink(fileUrl(parseRemote('https://git.example.com/acme/widgets.git'), SHA, 'docs/a.md'), typed)).toBeUndefined();
    expect(openableLink('upload://notes/a.md', typed)).toBeUndefined();
    expect(openableLink('not a url', typed)).toBeUndefined();
  });

  it('opens a local repository’s file in its working tree while it is there', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'docdex-links-'));
    try {
      const repo = path.join(root, 'my lib');
      mkdirSync(path.join(repo, 'docs'), { recursive: true });
      writeFileSync(path.join(repo, 'docs', 'a b.md'), '# A');
      writeFileSync(path.join(root, 'secret.md'), 'x');
      const stored = fileUrl(parseRemote(repo), SHA, 'docs/a b.md');
      expect(openableLink(`${stored}#a`, typed)).toBe(pathToFileURL(path.join(repo, 'docs', 'a b.md')).href);
      expect(openableLink(fileUrl(parseRemote(repo), SHA, 'docs/gone.md'), typed)).toBeUndefined();
      // `..` is resolved as the URL is read: what is checked on disk is the one file the URL names.
      expect(openableLink(`${pathToFileURL(repo).href}@${SHA}/docs/../../secret.md`, typed)).toBe(pathToFileURL(path.join(root, 'secret.md')).href);
      // A folder is not a file to open.
      expect(openableLink(fileUrl(parseRemote(repo), SHA, 'docs'), typed)).toBeUndefined();
      // What a pack, a registry or an API caller stored gets no file link: results would tell which paths exist.
      expect(openableLink(`${stored}#a`, { localFiles: false })).toBeUndefined();
      expect(openableLink(pathToFileURL(path.join(root, 'secret.md')).href, { localFiles: false })).toBeUndefined();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('never throws, and gives a link only of a web or file URL', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.webUrl({ withFragments: true, withQueryParameters: true }),
          fc.string().map((s) => `file:///${s}`),
        ),
        (text) => {
          const link = openableLink(text, typed);
          if (link !== undefined) expect(link).toMatch(/^(https?|file):/);
        },
      ),
    );
  });
});
