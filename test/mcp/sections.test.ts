import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSnippet } from '../../src/core/mcp/format.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { connectMcpClient } from '../helpers/mcp.js';
import { addPage, createSource } from '../search/fixtures.js';
import { resultText } from './helpers.js';

/** Sections over MCP (issue 50): get_content shows them with their breadcrumb and code, get_page_markdown opens one by its anchor. */

let db: TestDatabase;
let client: Client;

const PAGE = 'https://widgets.example/guide/cors';
const MARKDOWN = [
  '# CORS',
  '',
  'Cross-origin requests need the server to allow them.',
  '',
  '## Allow every origin { #wildcard }',
  '',
  'A wildcard allows every origin, but no credentials are sent then.',
  '',
  '```python',
  'app.add_middleware(CORSMiddleware, allow_origins=["*"])',
  '```',
  '',
  '## Preflight requests',
  '',
  'The browser first sends an OPTIONS request.',
].join('\n');

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult & { text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { ...result, text: resultText(result) };
}

beforeAll(async () => {
  db = await createTestDatabase();
  const source = await createSource(db.pool, 'widgets');
  await addPage(db.pool, source, PAGE, [{ title: 'Allow every origin | CORS', code: 'app.add_middleware(CORSMiddleware, allow_origins=["*"])', anchor: 'wildcard' }], {
    title: 'CORS',
    markdown: MARKDOWN,
    sections: true,
  });
  client = await connectMcpClient(db);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('sections over MCP', () => {
  it('get_content shows a section with its breadcrumb, its prose and its code block, and says its kind', async () => {
    const r = await call('get_content', { library_id: 'widgets', query: 'browser sends options preflight' });
    expect(r.isError).toBeFalsy();
    expect(r.text).toContain('## 1. CORS › Preflight requests');
    expect(r.text).toContain('page section');
    expect(r.text).toContain('The browser first sends an OPTIONS request.');
    const first = (r.structuredContent as { snippets: Array<{ kind: string; source_url: string }> }).snippets[0]!;
    expect(first).toMatchObject({ kind: 'section', source_url: `${PAGE}#preflight-requests` });
  });

  it("get_page_markdown with a result's #anchor opens that section, without it the whole page", async () => {
    const section = await call('get_page_markdown', { url: `${PAGE}#wildcard` });
    expect(section.isError).toBeFalsy();
    // Read from the page's own text (the section its heading's { #wildcard } names), as any #fragment is.
    expect(section.text).toContain('Section: CORS › Allow every origin');
    expect(section.text).toContain('allow_origins=["*"]');
    expect(section.text).not.toContain('OPTIONS request');
    expect(section.structuredContent).toMatchObject({ anchor: 'wildcard', fragment: 'wildcard' });
    expect((section.structuredContent as { section: string }).section).toMatch(/^CORS › Allow every origin/);
    const page = await call('get_page_markdown', { url: PAGE });
    expect(page.text).toContain('OPTIONS request');
    // An anchor no section has reads the page as before.
    const unknown = await call('get_page_markdown', { url: `${PAGE}#nowhere` });
    expect(unknown.text).toContain('OPTIONS request');
  });

  it('cuts a long section on a line outside code, closing the fence, and points at the whole section', () => {
    const code = `Intro.\n\n\`\`\`js\n${Array.from({ length: 400 }, (_, i) => `call(${i});`).join('\n')}\n\`\`\``;
    const text = formatSnippet({ id: 1, kind: 'section', title: 'Page › Part', description: '', language: 'javascript', code, source_url: `${PAGE}#part` }, 1, 200);
    const fences = text.split('\n').filter((l) => l.startsWith('```'));
    expect(fences.length % 2).toBe(0);
    expect(text).toContain(`call get_page_markdown with url="${PAGE}#part"`);
  });
});
