-- A project docdex syncs (`docdex sync`): its root directory (or only a name), and the libraries its
-- manifests and lockfiles name at exact versions. Whether a library is indexed is not stored: it is read
-- from `sources` (name or alias, and version) whenever it is asked, so it can never go stale.
CREATE TABLE projects (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name       text NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
  -- The absolute path of the project's directory when it was synced from disk.
  root       text UNIQUE CHECK (root IS NULL OR length(root) BETWEEN 1 AND 4096),
  created_at timestamptz NOT NULL DEFAULT now(),
  synced_at  timestamptz
);

CREATE TABLE project_libraries (
  project_id   uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  -- npm, pypi, crates, go: a registry package; url, git: an extra source pinned in .docdex.yml.
  ecosystem    text NOT NULL CHECK (ecosystem IN ('npm', 'pypi', 'crates', 'go', 'url', 'git')),
  -- The library's name in the index (the package name, or the name .docdex.yml gives).
  name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  -- The exact version ('' for an unversioned extra source).
  version      text NOT NULL DEFAULT '',
  -- What `docdex add` is given to index it: npm:semver@7.6.3, a git URL@ref, a docs URL.
  spec         text NOT NULL,
  direct       boolean NOT NULL DEFAULT true,
  -- False once the project's manifests no longer name this version; `docdex prune` deletes those rows.
  in_use       boolean NOT NULL DEFAULT true,
  -- Why sync could not queue it (no repository, docs or README found; a private registry): null when it could.
  unresolved   text,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, ecosystem, name, version)
);
