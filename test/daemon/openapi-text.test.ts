import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { agentServerRoutes } from '../../src/daemon/routes/agent-server.js';
import { agentRoutes } from '../../src/daemon/routes/agent.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';

/**
 * The OpenAPI document of the whole daemon (every route `docdex serve` registers), as /docs and /redoc show
 * it. Its descriptions are CommonMark there: a bare `<token>` is an HTML tag and vanished ("Authorization:
 * Bearer ."), so every description must parse without raw HTML. And every field name is snake_case, as the
 * CLI's --json output (test/cli/json-keys.test.ts).
 */

let db: TestDatabase;
let workspace: string;
let spec: any;
/** The docs index half alone (search, sources, crawls, uploads, packs, projects, MCP over REST). */
let docsSpec: any;

beforeAll(async () => {
  db = await createTestDatabase();
  workspace = mkdtempSync(path.join(os.tmpdir(), 'docdex-openapi-ws-'));
  const config = loadConfig({ ...db.env, WORKSPACE_PATH: workspace });
  for (const [routes, keep] of [
    [[...docsIndexRoutes, ...mcpRoutes, ...agentRoutes, ...agentServerRoutes], (s: unknown) => (spec = s)],
    [[...docsIndexRoutes, ...mcpRoutes], (s: unknown) => (docsSpec = s)],
  ] as const) {
    const daemon = await startTestDaemon(config, { routes: [...routes] });
    try {
      keep(await (await fetch(`${daemon.base}/openapi.json`)).json());
    } finally {
      await daemon.close();
    }
  }
});
afterAll(async () => {
  await db?.drop();
  rmSync(workspace, { recursive: true, force: true });
});

/** Every string under a `description` or `summary` key, with where it is. */
function texts(value: unknown, at = '$'): Array<[string, string]> {
  if (Array.isArray(value)) return value.flatMap((v, i) => texts(v, `${at}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    (key === 'description' || key === 'summary') && typeof inner === 'string' ? [[`${at}.${key}`, inner] as [string, string]] : texts(inner, `${at}.${key}`),
  );
}

function htmlIn(markdown: string): string[] {
  const found: string[] = [];
  const walk = (node: any): void => {
    if (node.type === 'html') found.push(node.value);
    for (const child of node.children ?? []) walk(child);
  };
  walk(fromMarkdown(markdown));
  return found;
}

/**
 * Every property name of the schemas the document's paths use (following $refs: components hold every schema
 * registered in the process, whichever routes use them), with where it is.
 */
function propertyNames(doc: any): Array<[string, string]> {
  const seen = new Set<string>();
  const walk = (value: unknown, at: string): Array<[string, string]> => {
    if (Array.isArray(value)) return value.flatMap((v, i) => walk(v, `${at}[${i}]`));
    if (value === null || typeof value !== 'object') return [];
    const ref = (value as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
      const name = ref.slice('#/components/schemas/'.length);
      if (seen.has(name)) return [];
      seen.add(name);
      return walk(doc.components.schemas[name], `#${name}`);
    }
    return Object.entries(value).flatMap(([key, inner]) => [
      ...(key === 'properties' && inner && typeof inner === 'object' ? Object.keys(inner).map((name): [string, string] => [at, name]) : []),
      ...walk(inner, `${at}.${key}`),
    ]);
  };
  return walk(doc.paths, '$.paths');
}

describe('the OpenAPI document', () => {
  it('has no description that loses text to HTML when rendered as markdown', () => {
    const all = texts(spec);
    expect(all.length).toBeGreaterThan(100);
    const swallowed = all.flatMap(([where, text]) => htmlIn(text).map((html) => `${where}: ${html}`));
    expect(swallowed).toEqual([]);
    expect(spec.info.description).toContain('`Authorization: Bearer <token>`');
  });

  // The agent manager's API (/api/internal, /api/agent*) names its fields in camelCase for its web client, and is
  // left as it is; the docs index API is the one the CLI's --json mirrors.
  it('names every field of the docs index API in snake_case', () => {
    const camel = propertyNames(docsSpec).filter(([, name]) => /[a-z0-9][A-Z]/.test(name));
    expect(camel.map(([where, name]) => `${where}.${name}`)).toEqual([]);
  });

  it('documents the search text as query or q on both search routes', () => {
    const get = spec.paths['/api/search'].get.parameters.map((p: { name: string }) => p.name);
    expect(get).toEqual(expect.arrayContaining(['q', 'query']));
    const body = spec.components.schemas.SearchRequest.properties;
    expect(Object.keys(body)).toEqual(expect.arrayContaining(['q', 'query']));
  });
});
