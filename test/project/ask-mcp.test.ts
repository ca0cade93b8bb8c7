import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { connectMcpClient } from '../helpers/mcp.js';
import { resultText } from '../mcp/helpers.js';
import { createAskFixture } from './ask-fixture.js';
import type { AskFixture } from './ask-fixture.js';

/** The project tools through the official SDK client: a stdio-like server (a default project) and an HTTP-like one (none). */

let db: TestDatabase;
let f: AskFixture;
let inProject: Client;
let noDefault: Client;
beforeAll(async () => {
  db = await createTestDatabase();
  f = await createAskFixture(db.pool);
  // The stdio server started in a subdirectory of the project finds the project above it.
  inProject = await connectMcpClient(db, { localProjectDir: path.join(f.appRoot, 'src') });
  noDefault = await connectMcpClient(db);
});
afterAll(async () => {
  await inProject?.close();
  await noDefault?.close();
  await db?.drop();
});

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult & { text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { ...result, text: resultText(result) };
}

describe('search_project', () => {
  it('returns only the locked versions, each result naming its library@version, and says what is not indexed', async () => {
    const r = await call(inProject, 'search_project', { query: 'widgetize' });
    expect(r.isError, r.text).toBeFalsy();
    expect(r.text).toMatch(/Widgetize a range\n.*· semver@7\.6\.3 ·/);
    expect(r.text).toMatch(/Widgetize a syntax tree\n.*· acorn@8\.0\.0 ·/);
    expect(r.text).not.toContain('7.5.0]');
    expect(r.text).not.toContain('oldRange');
    expect(r.text).toMatch(/not searched: leftpad@1\.3\.0 \(missing\), private-thing@0\.1\.0 \(unresolved: the registry asked for credentials\), slowlib@2\.0\.0 \(indexing\)\. Call sync_project/);
  });

  it('tells a project whose locked version is not indexed so, and answers nothing from another version', async () => {
    const r = await call(noDefault, 'search_project', { query: 'widgetize', project: 'old-app' });
    expect(r.isError, r.text).toBeFalsy();
    expect(r.text).toContain('None of project old-app');
    expect(r.text).toContain('semver@9.9.9 (missing)');
    expect(r.text).not.toContain('Widgetize');
  });

  it('needs a project over HTTP (no default), and names an unknown one with how to record it', async () => {
    const missing = await call(noDefault, 'search_project', { query: 'widgetize' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain('search_project needs a project');
    expect(missing.text).toContain(`app (${f.appRoot})`);
    const unknown = await call(noDefault, 'search_project', { query: 'widgetize', project: '/elsewhere' });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('No project is recorded for "/elsewhere"');
    // Over HTTP the server never reads a directory a client names: only `docdex sync` there records it.
    expect(unknown.text).toContain("run `docdex sync` in the project's root directory, on the machine docdex runs on");
    expect(unknown._meta?.['docdex/error']).toMatchObject({ code: 'project_not_found' });
  });
});

describe('get_project_libraries', () => {
  it("lists the project's libraries with their states, ids and other versions", async () => {
    const r = await call(inProject, 'get_project_libraries', {});
    expect(r.isError, r.text).toBeFalsy();
    expect(r.text).toContain(`Project app (${f.appRoot}): 5 libraries, 2 indexed`);
    expect(r.text).toContain(`semver@7.6.3 [npm] — indexed, 1 snippet — library_id "${f.semverLocked.id}" (other indexed versions, not used for this project: 7.5.0)`);
    expect(r.text).toContain('leftpad@1.3.0 [npm, transitive] — NOT INDEXED at this version: call sync_project');
    const structured = r.structuredContent as { project: { id: string }; libraries: Array<Record<string, unknown>> };
    expect(structured.project.id).toBe(f.app.id);
    expect(Object.fromEntries(structured.libraries.map((l) => [l.name, l.state]))).toEqual({
      acorn: 'indexed',
      leftpad: 'missing',
      'private-thing': 'unresolved',
      semver: 'indexed',
      slowlib: 'indexing',
    });
    expect(structured.libraries.find((l) => l.name === 'private-thing')).toMatchObject({ reason: 'the registry asked for credentials' });
  });

  it('takes a project argument over the default, a relative directory read from the working directory', async () => {
    const r = await call(inProject, 'get_project_libraries', { project: 'old-app' });
    expect(r.text).toContain('Project old-app: 1 library, 0 indexed');
    expect(r.text).toContain('semver@9.9.9 [npm] — NOT INDEXED');
    const relative = await call(inProject, 'get_project_libraries', { project: '../' });
    expect(relative.text).toContain(`Project app (${f.appRoot})`);
  });
});

describe('get_content with project', () => {
  it('searches the project like search_project', async () => {
    const r = await call(noDefault, 'get_content', { project: 'app', query: 'widgetize' });
    expect(r.isError, r.text).toBeFalsy();
    expect(r.text).toMatch(/Widgetize a range\n.*· semver@7\.6\.3 ·/);
    expect(r.text).not.toContain('oldRange');
  });

  it('wants exactly one of library_id and project, and a query with project', async () => {
    for (const args of [{ query: 'widgetize' }, { library_id: 'semver', project: 'app', query: 'widgetize' }]) {
      const r = await call(noDefault, 'get_content', args);
      expect(r.isError).toBe(true);
      expect(r.text).toContain('library_id: give exactly one of library_id (one library) and project');
      expect(r.text).toContain('call get_content again');
    }
    const noQuery = await call(noDefault, 'get_content', { project: 'app' });
    expect(noQuery.isError).toBe(true);
    expect(noQuery.text).toContain('query: query is required with project');
    const library = await call(noDefault, 'get_content', { library_id: 'semver@7.5.0', query: 'widgetize' });
    expect(library.text).toContain('oldRange');
  });
});

describe('serve --mcp (stdio, the real binary)', () => {
  it('defaults the project to the directory the client starts it in', async () => {
    const env = Object.fromEntries(Object.entries(db.env).filter((e): e is [string, string] => typeof e[1] === 'string'));
    const client = new Client({ name: 'docdex-ask-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', '--mcp'], env, cwd: f.appRoot, stderr: 'ignore' }));
    try {
      expect(client.getInstructions()).toContain('search_project');
      const r = (await client.callTool({ name: 'search_project', arguments: { query: 'widgetize' } })) as CallToolResult;
      expect(resultText(r)).toMatch(/Widgetize a range\n.*· semver@7\.6\.3 ·/);
      expect(resultText(r)).not.toContain('oldRange');
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe('a read-only connection', () => {
  it('tells the model to run `docdex sync`, never to call the sync_project tool it does not have', async () => {
    const readOnly = await connectMcpClient(db, { localProjectDir: f.appRoot, readOnly: true });
    try {
      const listed = (await readOnly.listTools()).tools;
      expect(listed.map((t) => t.name)).not.toContain('sync_project');
      for (const tool of listed) expect(tool.description, tool.name).not.toContain('sync_project');
      const answers = [
        await call(readOnly, 'get_project_libraries', {}),
        await call(readOnly, 'search_project', { query: 'widgetize' }),
        await call(readOnly, 'get_content', { project: 'app', query: 'widgetize' }),
        await call(readOnly, 'search_project', { query: 'widgetize', project: '/elsewhere' }),
      ];
      for (const r of answers) {
        expect(r.text).not.toContain('sync_project');
        expect(r.text).toContain('`docdex sync`');
      }
      expect(answers[0]!.text).toContain('leftpad@1.3.0 [npm, transitive] — NOT INDEXED at this version: run `docdex sync` in the project (this connection is read-only) to queue it');
      expect(answers[1]!.text).toContain('slowlib@2.0.0 (indexing). Run `docdex sync` in the project (this connection is read-only) to index them');
      expect(answers[3]!.isError).toBe(true);
    } finally {
      await readOnly.close();
    }
  });
});
