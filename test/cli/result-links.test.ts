import { rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { createTestRepo } from '../helpers/git-repo.js';
import type { TestRepo } from '../helpers/git-repo.js';
import { connectMcpClient } from '../helpers/mcp.js';

/**
 * Issue #49: a local repository's result URL (`file:///…/mylib@<sha>/docs/x.md`) is its identity in the index
 * and opens nothing. Results carry `link` beside it, the file on disk, in the CLI's text and --json, and in
 * MCP's structured results; when the file is gone there is no link, rather than one that opens nothing.
 */

interface SearchJson {
  items: Array<{ source_url: string; link?: string }>;
}

let db: TestDatabase;
let repo: TestRepo;
let work: string;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = await createTestRepo('mylib');
  work = path.join(path.dirname(repo.bare), 'work');
  repo.write({ 'docs/guide.md': '# Guide\n\nCall it:\n\n```js\nfrobnicateWidget({ size: 3 });\n```\n' });
  await repo.commit('docs');
  const added = await runCli(['add', work, '--name', 'mylib', '--wait'], { env: db.env, timeout: 120_000 });
  expect(added.exitCode, String(added.stderr)).toBe(0);
}, 180_000);

afterAll(async () => {
  repo?.cleanup();
  await db?.drop();
});

async function search(args: string[]): Promise<{ stdout: string; exitCode: number | undefined }> {
  const result = await runCli(['search', 'frobnicateWidget', '--source', 'mylib', ...args], { env: db.env });
  return { stdout: String(result.stdout), exitCode: result.exitCode };
}

describe('a local repository’s results', () => {
  const onDisk = () => pathToFileURL(path.join(work, 'docs', 'guide.md')).href;

  it('carry the file on disk as link, beside the stored identity URL, in --json and in text', async () => {
    const json = JSON.parse((await search(['--json'])).stdout) as SearchJson;
    expect(json.items[0]!.source_url).toMatch(/\/work@[0-9a-f]{40}\/docs\/guide\.md/);
    expect(json.items[0]!.link).toBe(onDisk());
    const text = await search([]);
    expect(text.stdout).toContain(`   open: ${onDisk()}`);
  }, 60_000);

  it('carry it in MCP get_content’s structured results and text', async () => {
    const client = await connectMcpClient(db);
    try {
      const result = await client.callTool({ name: 'get_content', arguments: { library_id: 'mylib', query: 'frobnicateWidget' } });
      const structured = result.structuredContent as { snippets: Array<{ source_url: string; link?: string }> };
      expect(structured.snippets[0]!.link).toBe(onDisk());
      expect((result.content as Array<{ text: string }>)[0]!.text).toContain(`open: ${onDisk()}`);
    } finally {
      await client.close();
    }
  });

  it('carry no link once the file is gone from the disk', async () => {
    rmSync(path.join(work, 'docs', 'guide.md'));
    const json = JSON.parse((await search(['--json'])).stdout) as SearchJson;
    expect(json.items[0]!.source_url).toMatch(/@[0-9a-f]{40}\/docs\/guide\.md/);
    expect(json.items[0]).not.toHaveProperty('link');
    expect((await search([])).stdout).not.toContain('open:');
  }, 60_000);
});
