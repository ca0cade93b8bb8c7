/**
 * npm's full package document (`GET <registry>/<name>`) in the shape registry.npmjs.org serves, recorded with
 * `curl https://registry.npmjs.org/is-number`: top level `_id`, `name`, `dist-tags`, `versions`, `time`; each
 * version `name`, `version`, `description`, `homepage`, `repository` (`{ type, url }` or a string), `bugs`,
 * `license`, `main`, `_id` and `dist` (`integrity`, `shasum`, `tarball`). The values are this project's own.
 */

export interface NpmRelease {
  /** Written by the package's author: any URL at all. */
  homepage?: string;
  repository?: string | { type: string; url: string };
  tarball: string;
}

export function npmPackument(name: string, releases: Record<string, NpmRelease>): string {
  const versions = Object.fromEntries(
    Object.entries(releases).map(([version, release]) => [
      version,
      {
        name,
        description: `The ${name} test package.`,
        version,
        ...(release.homepage === undefined ? {} : { homepage: release.homepage }),
        ...(release.repository === undefined ? {} : { repository: release.repository }),
        bugs: { url: `https://example.com/${name}/issues` },
        license: 'MIT',
        main: 'index.js',
        _id: `${name}@${version}`,
        dist: {
          integrity: 'sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==',
          shasum: '0000000000000000000000000000000000000000',
          tarball: release.tarball,
        },
      },
    ]),
  );
  const published = Object.keys(releases);
  const time = Object.fromEntries([['created', '2024-01-02T03:04:05.000Z'], ['modified', '2024-01-02T03:04:05.000Z'], ...published.map((v) => [v, '2024-01-02T03:04:05.000Z'])]);
  return JSON.stringify({ _id: name, name, 'dist-tags': { latest: published.at(-1) }, versions, time });
}
