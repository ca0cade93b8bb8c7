/**
 * A dependency as a project's manifests and lockfiles name it: the one shape every manifest reader in
 * `manifests/` returns and `docdex sync` plans from.
 */

/** The registries sync resolves through (`registry/`), as `docdex add` names them (`npm:`, `pypi:`, `crates:`, `go:`). */
export type PackageEcosystem = 'npm' | 'pypi' | 'crates' | 'go';

export interface ProjectDependency {
  ecosystem: PackageEcosystem;
  /** As the registry names it: npm and crates exactly, PyPI normalised (PEP 503), Go the module path. */
  name: string;
  /** The exact version a lockfile pins (Go: `v1.2.3` as go.mod writes it); null when no lockfile pins it. */
  version: string | null;
  /** The manifest's requirement (`^7.6.0`, `>=2,<3`), when there is one; sync resolves it when no version is pinned. */
  range: string | null;
  /** Named by the project's own manifest (not only reached through another dependency). */
  direct: boolean;
  /** The file it was read from, relative to the project root (`package-lock.json`, `crates/app/Cargo.toml`). */
  manifest: string;
}

/** What one ecosystem's reader found in a project directory. */
export interface ManifestReadResult {
  /** Every dependency found: direct and transitive (`direct` says which), each name and version once. */
  dependencies: ProjectDependency[];
  /** The manifests and lockfiles read, relative to the root. */
  files: string[];
  /** What a reader skipped and why (a local-path replacement, an include outside the project), one line each. */
  notes?: string[];
  /** Dependencies that are not registry packages (a workspace, a path, git, a URL): listed, never indexed. */
  skipped?: SkippedDependency[];
}

/** A dependency sync leaves out, with why (`a git dependency (github:user/repo), not a registry package`). */
export interface SkippedDependency {
  name: string;
  manifest: string;
  reason: string;
}
