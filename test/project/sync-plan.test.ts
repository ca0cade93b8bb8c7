import { describe, expect, it } from 'vitest';
import type { ProjectDependency } from '../../src/core/project/dependency.js';
import { selectDependencies } from '../../src/core/project/sync-plan.js';

function dep(name: string, version: string | null, direct: boolean, ecosystem: ProjectDependency['ecosystem'] = 'npm'): ProjectDependency {
  return { ecosystem, name, version, range: version === null ? '^1' : null, direct, manifest: 'package-lock.json' };
}

const DEPS = [
  dep('react', '18.3.1', true),
  dep('@types/react', '18.3.3', true),
  dep('@acme/ui', '2.0.0', true),
  dep('scheduler', '0.23.2', false),
  dep('loose-envify', '1.4.0', false),
  dep('react', '18.3.1', false),
  dep('golang.org/x/text', 'v0.14.0', true, 'go'),
];

const names = (deps: ProjectDependency[]) => deps.map((d) => `${d.name}@${d.version}`);

describe('selectDependencies', () => {
  it('takes direct dependencies by default, each name and version once', () => {
    expect(names(selectDependencies(DEPS, {}))).toEqual(['react@18.3.1', '@types/react@18.3.3', '@acme/ui@2.0.0', 'golang.org/x/text@v0.14.0']);
  });

  it('all: transitive ones too; a version named both ways stays direct', () => {
    const all = selectDependencies(DEPS, { all: true });
    expect(names(all)).toEqual(['react@18.3.1', '@types/react@18.3.3', '@acme/ui@2.0.0', 'scheduler@0.23.2', 'loose-envify@1.4.0', 'golang.org/x/text@v0.14.0']);
    expect(all.find((d) => d.name === 'react')?.direct).toBe(true);
  });

  it('include and exclude are name globs (scopes and Go paths included)', () => {
    expect(names(selectDependencies(DEPS, { exclude: ['@types/*'] }))).toEqual(['react@18.3.1', '@acme/ui@2.0.0', 'golang.org/x/text@v0.14.0']);
    expect(names(selectDependencies(DEPS, { include: ['@acme/*', 'golang.org/**'] }))).toEqual(['@acme/ui@2.0.0', 'golang.org/x/text@v0.14.0']);
    expect(names(selectDependencies(DEPS, { all: true, include: ['s*', 'l*'], exclude: ['loose-*'] }))).toEqual(['scheduler@0.23.2']);
  });
});
