import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlWorkers } from '../../src/core/crawl/index.js';
import { MIN_MAX_TOKENS } from '../../src/core/mcp/tools/snippet-args.js';
import { createUploadFromContent } from '../../src/core/upload/jobs.js';
import { waitForUpload } from '../../src/core/upload/job-rows.js';
import { startUploadWorkers } from '../../src/core/upload/worker.js';
import type { UploadWorkers } from '../../src/core/upload/worker.js';
import { mcpRoutes } from '../../src/daemon/mcp/routes.js';
import { docsIndexRoutes } from '../../src/daemon/routes/index.js';
import { ROOT, runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { addPage, createSource } from '../search/fixtures.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { startGitHttpServer } from '../helpers/git-http.js';
import type { GitHttpServer } from '../helpers/git-http.js';
import { createTestRepo } from '../helpers/git-repo.js';
import type { TestRepo } from '../helpers/git-repo.js';
import { connectMcpClient } from '../helpers/mcp.js';
import { refreshSearchTermsNow } from '../../src/core/search/lexicon.js';
import { ALL_TOOLS, FAST_WORKERS, resultText, serveSite } from './helpers.js';

/**
 * Every hint docdex gives an assistant, followed (issue #49: get_content's "call get_page_markdown with
 * url=…#section" answered with the top of the page, the README's badges). The inventory below names each
 * hint's text in src/core/mcp and src/daemon/mcp; the first test reads those sources with the TypeScript
 * parser and fails on any literal that tells a model to call a tool (or names arguments to call again with)
 * and no entry covers, so a new hint cannot be added without a test. Each entry's test triggers the hint with
 * the official SDK client, makes the call the hint names with the arguments it gives, and checks that the
 * answer is what the hint promised.
 */

interface Hint {
  id: string;
  /** The hint's literal(s) in the sources, `${}` standing for each interpolation. */
  texts: RegExp[];
}

const HINTS: Hint[] = [
  // A cut section result names the same call as a cut snippet: get_page_markdown with the result's #anchor URL.
  {
    id: 'full code of a cut snippet',
    texts: [/^Full code: call get_page_markdown with url="\$\{\}"\.\]$/, /^\[… section truncated: showing \$\{\} of \$\{\} tokens\. The whole section: call get_page_markdown with url="\$\{\}"\.\]$/],
  },
  { id: 'read on through the chunks of a page', texts: [/^More follows: call get_page_markdown with url=/, /cut at max_tokens=\$\{\}; \$\{\} more tokens in this chunk/] },
  // A stored section read by its anchor names the same whole-page call as a section read from the page's text.
  {
    id: 'read on through the chunks of a section',
    texts: [
      /^More of this section follows: call get_page_markdown/,
      /^The whole page: call get_page_markdown with url=/,
      /^The section #\$\{\} of the page \(\$\{\} tokens\$\{\}\)\. The whole page: call get_page_markdown with url="\$\{\}"\.$/,
    ],
  },
  { id: 'a chunk index past the end', texts: [/^Call get_page_markdown again with a chunk_index from 0 to/] },
  { id: 'max_tokens too small for a page query', texts: [/^Call get_page_markdown again with max_tokens of \$\{\} or more/] },
  { id: 'an unknown page URL', texts: [/^Indexed pages with similar URLs: /, /^Use a source URL exactly as get_content shows it/] },
  { id: 'a page section cut at max_tokens', texts: [/call again with max_tokens=\$\{\} to read it whole/] },
  { id: 'page sections left out', texts: [/^Left out to stay within max_tokens=\$\{\}: /, /^Call again with a higher max_tokens or a narrower query/] },
  { id: 'no section matches the query', texts: [/^Call again with other words, or without query/] },
  {
    id: 'a version that is not indexed',
    texts: [/Or call get_content with library_id "\$\{\}@\$\{\}" for an indexed version/, /^To index it, call add_library with \$\{\}, then call get_content again/],
  },
  { id: 'a library deleted meanwhile', texts: [/^Call search_libraries to list the indexed libraries\.$/] },
  { id: 'no library indexed yet', texts: [/^Crawl a documentation site with init_crawl first/, /^No libraries are indexed yet\. Crawl a documentation site with init_crawl first\.$/] },
  { id: 'a library name that matches none clearly', texts: [/^Call get_content again with one of these names or ids as library_id/] },
  { id: 'an unknown library id', texts: [/^Call search_libraries to list the indexed libraries and their ids, then call get_content again/] },
  { id: 'a project tool without a project over HTTP', texts: [/^Call \$\{\} again with project set to the project's name/] },
  {
    id: 'a project that is not recorded',
    texts: [/^To record it, call sync_project with project set to/, /^To record it, run `docdex sync` in the project's root directory, on the machine/, /^\$\{\}; then call this tool again\.$/],
  },
  {
    id: 'a project library that is not indexed',
    texts: [
      /^call sync_project$/,
      /^call sync_project with project=\$\{\}$/,
      /^Libraries not indexed at their version are left out of search_project/,
      /^Search all indexed ones together with search_project\.$/,
    ],
  },
  { id: 'a library already indexed', texts: [/is already indexed \(\$\{\}\); nothing was fetched\. Search it with get_content library_id="\$\{\}", or call add_library with refresh: true/] },
  { id: 'a project library without snippets', texts: [/^indexed, no code snippets: search its page sections, call get_content with library_id="\$\{\}"$/] },
  { id: 'invalid arguments', texts: [/Fix these arguments and call \$\{\} again\.$/] },
  { id: 'after add_library', texts: [/Follow each job: get_crawl_status with its job_id\.$/, /^Snippets become searchable as they are stored: get_content with library_id=/] },
  { id: 'after init_crawl', texts: [/^Follow it: call get_crawl_status with job_id=/, /^Stop it: call cancel_crawl with job_id=/] },
  {
    id: 'get_crawl_status of a running, finished, cancelled or empty job',
    texts: [
      /^Next: call get_crawl_status with job_id="\$\{\}" again in a minute/,
      /^Next: get_content with library_id="\$\{\}" and a query returns its snippets/,
      /^Pages stored before it stopped stay searchable \(get_content with library_id=/,
      /^It stored no page, so no library was created\. Check the URL \(or the site\), then call init_crawl again\.$/,
      /^job_id must be the id returned by init_crawl/,
    ],
  },
  {
    id: 'more results of get_content, and results left out',
    texts: [
      /^call get_content with library_id="\$\{\}"\$\{\}, page=\$\{\}$/,
      /^call get_content again with the same arguments$/,
      /^Left out \$\{\} of this page's results/,
      /and max_tokens=\$\{\} to see them/,
      /^, or page=\$\{\} for the next results\.$/,
      /fresh=true shows them again\.$/,
    ],
  },
  { id: 'get_content with a project but no query', texts: [/^query is required with project; to browse one library, call get_content with its library_id from get_project_libraries\.$/] },
  { id: 'no snippet matches the query', texts: [/Try other or fewer words, or call get_content without query to browse/] },
  { id: 'a library without snippets yet', texts: [/^ \(its crawl may still be running: call get_crawl_status with job_id="\$\{\}"\)$/] },
  {
    id: 'search_libraries answers',
    texts: [
      /^No library matches "\$\{\}"\. Call search_libraries without a query/,
      /^More results: call search_libraries with page=/,
      /is the clear best match\. Pass this id as library_id to get_content\.$/,
      /^No single library is a clear match: pick one and pass its id as library_id to get_content\.$/,
    ],
  },
  { id: 'more results of search_project', texts: [/^call \$\{\} with project=\$\{\}, query=\$\{\}$/, /^\$\{\}, page=\$\{\}$/] },
  {
    id: 'sync_project over HTTP without a project',
    texts: [/^Name the project to sync: over HTTP, sync_project syncs only a project recorded/, /^Indexing runs in the background; follow each job with get_crawl_status\.$/],
  },
];

// ---------------------------------------------------------------------------------------------------------
// The inventory: literals in the sources that tell a model what to call.

const HINT_SOURCES = ['src/core/mcp', 'src/daemon/mcp'];
const DOC_PROPERTIES = new Set(['description', 'instructions', 'title']);

function sourceFiles(): string[] {
  return HINT_SOURCES.flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => path.join(ROOT, dir, f)),
  );
}

/** A literal is documentation (a tool or argument description, the server's instructions), not a hint. */
function isDocumentation(node: ts.Node): boolean {
  let p = node.parent;
  while (p && (ts.isBinaryExpression(p) || ts.isParenthesizedExpression(p) || ts.isConditionalExpression(p) || ts.isTemplateSpan(p) || ts.isTemplateExpression(p))) p = p.parent;
  if (p && ts.isPropertyAssignment(p) && DOC_PROPERTIES.has(p.name.getText())) return true;
  if (p && ts.isVariableDeclaration(p) && /INSTRUCTIONS|DESCRIPTION/.test(p.name.getText())) return true;
  return Boolean(p && ts.isCallExpression(p) && /\.describe$/.test(p.expression.getText()));
}

function looksLikeHint(text: string): boolean {
  if ((ALL_TOOLS as string[]).includes(text)) return false;
  return /\b[Cc]all (again|this tool|\$\{\})/.test(text) || ALL_TOOLS.some((t) => new RegExp(`\\b${t}\\b`).test(text)) || /\b(fresh=true|max_tokens=|chunk_index=|page=)/.test(text);
}

function hintLiterals(): Array<{ where: string; text: string }> {
  const found: Array<{ where: string; text: string }> = [];
  for (const file of sourceFiles()) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      let text: string | undefined;
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text = node.text;
      else if (ts.isTemplateExpression(node)) text = node.head.text + node.templateSpans.map((s) => `\${}${s.literal.text}`).join('');
      if (text !== undefined && looksLikeHint(text) && !isDocumentation(node)) {
        found.push({ where: `${path.relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`, text });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

// ---------------------------------------------------------------------------------------------------------
// Following a hint: the call it names, with the arguments it gives.

type Answer = CallToolResult & { text: string };

async function callOn(client: Client, name: string, args: Record<string, unknown>): Promise<Answer> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { ...result, text: resultText(result) };
}

const ARG = /^\s*(?:and\s+)?([a-z_]+)(?:=| )("(?:[^"\\]|\\.)*"|-?\d+|true|false)\s*[,.]?/;

/** The arguments of the first "<tool> (again) with k=v, k2=v2" in `text`. */
function suggestedArgs(text: string, tool: string): Record<string, unknown> {
  const m = new RegExp(`\\b${tool} (?:again )?with `).exec(text);
  expect(m, `no "${tool} with" in:\n${text}`).not.toBeNull();
  let rest = text.slice(m!.index + m![0].length);
  const args: Record<string, unknown> = {};
  for (let a = ARG.exec(rest); a; a = ARG.exec(rest)) {
    args[a[1]!] = JSON.parse(a[2]!) as unknown;
    rest = rest.slice(a[0].length);
  }
  expect(Object.keys(args).length, `arguments after "${tool} with" in:\n${text}`).toBeGreaterThan(0);
  return args;
}

/** The documentation block of an answer: what follows the header. */
function body(answer: Answer): string {
  return answer.text.split('\n\n---\n\n').slice(1).join('\n\n---\n\n');
}

const followed = new Set<string>();

// ---------------------------------------------------------------------------------------------------------

const USAGE_LINES = Array.from({ length: 70 }, (_, i) => `const part${i} = widget.makePart(${i}, { spin: true, label: "usage part number ${i}" });`);
const README = [
  '# widget',
  '',
  '[![npm](https://img.shields.io/npm/v/widget.svg)](https://www.npmjs.com/package/widget) [![build](https://img.shields.io/badge/build-passing-green.svg)](https://ci.example/widget)',
  '',
  'A toolkit of widgets that spin.',
  '',
  '## Install',
  '',
  '```bash\nnpm install widget\n```',
  '',
  '## Usage',
  '',
  'Make the parts of a widget, then spin them:',
  '',
  `\`\`\`js\n${USAGE_LINES.join('\n')}\n\`\`\``,
  '',
  '## API',
  '',
  ...Array.from({ length: 12 }, (_, i) => [
    `### widget.turn${i}(times)`,
    '',
    `Turns the widget ${i} ways, the given number of times, and returns the widget so calls chain: a turn of kind ${i} always spins first.`,
    '',
    `\`\`\`js\nwidget.turn${i}(3).turn${i}(4)\n\`\`\``,
    '',
  ]).flat(),
].join('\n');
const README_URL = 'https://github.com/acme/widget/blob/v1.0.0/README.md';

let db: TestDatabase;
let empty: TestDatabase;
let site: Awaited<ReturnType<typeof serveSite>>;
let crawlers: CrawlWorkers;
let uploaders: UploadWorkers;
let http: Client;
let repo: TestRepo;
let gitServer: GitHttpServer;
let scratch: string;

async function call(name: string, args: Record<string, unknown>): Promise<Answer> {
  return callOn(http, name, args);
}

async function jobDone(client: Client, jobId: string): Promise<Answer> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const status = await callOn(client, 'get_crawl_status', { job_id: jobId });
    const state = (status.structuredContent as { status?: string } | undefined)?.status ?? '';
    if (!['queued', 'running', 'processing', 'enhancing'].includes(state)) return status;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  empty = await createTestDatabase();
  scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'docdex-hints-')));
  site = await serveSite();
  crawlers = await startCrawlWorkers(db, db.config, FAST_WORKERS);
  uploaders = await startUploadWorkers(db, db.config, { pollingIntervalSeconds: 0.5 });
  http = await connectMcpClient(db);
  const crawled = await callOn(http, 'init_crawl', { name: 'quillstack', start_urls: [`${site.url}/`], max_depth: 2 });
  await jobDone(http, (crawled.structuredContent as { job_id: string }).job_id);
  const upload = await createUploadFromContent(db, db.config, { content: README, filename: 'README.md', sourceUrl: README_URL, name: 'widget', version: '1.0.0' });
  expect((await waitForUpload(db, upload.id, undefined, { pollMs: 200 })).status).toBe('completed');
  repo = await createTestRepo('gizmo');
  repo.write({ 'README.md': '# gizmo\n\n## Spin\n\n```js\ngizmo.spinOne()\n```\n\n## Spin faster\n\n```js\ngizmo.spinOneFaster(2)\n```\n' });
  await repo.commit('one', { tag: 'v1.0.0' });
  repo.write({ 'README.md': '# gizmo\n\n```js\ngizmo.spinTwo()\n```\n' });
  await repo.commit('two', { tag: 'v2.0.0' });
  const gitRoot = path.join(scratch, 'git');
  mkdirSync(gitRoot);
  symlinkSync(repo.bare, path.join(gitRoot, 'gizmo.git'));
  gitServer = await startGitHttpServer(gitRoot);
}, 240_000);

afterAll(async () => {
  await http?.close();
  await crawlers?.stop();
  await uploaders?.stop();
  await site?.close();
  await gitServer?.close();
  repo?.cleanup();
  await db?.drop();
  await empty?.drop();
  rmSync(scratch, { recursive: true, force: true });
});

describe('the hints docdex gives an assistant', () => {
  it('are each covered by an entry of this file', () => {
    const literals = hintLiterals();
    expect(literals.length).toBeGreaterThan(30);
    const uncovered = literals.filter((l) => !HINTS.some((h) => h.texts.some((t) => t.test(l.text))));
    expect(uncovered.map((l) => `${l.where}: ${l.text}`)).toEqual([]);
    const unused = HINTS.flatMap((h) => h.texts.filter((t) => !literals.some((l) => t.test(l.text))).map((t) => `${h.id}: ${t}`));
    expect(unused, 'entries whose text is no longer in the sources').toEqual([]);
  });

  it('follows: full code of a cut snippet', async () => {
    // Every queued word folded in first: a half-folded lexicon ranks (and falls back) differently from run to run.
    await refreshSearchTermsNow(db.pool);
    const cut = await call('get_content', { library_id: 'widget', query: 'makePart spin usage part number', max_tokens: 400 });
    // The best unit is cut either way: a snippet's code or, since sections are results (issue 50), the section's text.
    expect(cut.text).toMatch(/code truncated|section truncated/);
    const args = suggestedArgs(cut.text, 'get_page_markdown');
    expect(args.url).toBe(`${README_URL}#usage`);
    const page = await call('get_page_markdown', args);
    expect(page.isError, page.text).toBeFalsy();
    // The section the fragment names, whole: every line of the code, and not the badges at the top.
    for (const line of USAGE_LINES) expect(body(page)).toContain(line);
    expect(body(page)).not.toContain('img.shields.io');
    expect(page.structuredContent).toMatchObject({ fragment: 'usage', section: 'widget › Usage' });
    followed.add('full code of a cut snippet');
  });

  it('follows: read on through the chunks of a page', async () => {
    let answer = await call('get_page_markdown', { url: README_URL, chunk_size: 300 });
    const parts = [body(answer)];
    while (/More follows/.test(answer.text)) {
      answer = await call('get_page_markdown', suggestedArgs(answer.text, 'get_page_markdown'));
      expect(answer.isError, answer.text).toBeFalsy();
      parts.push(body(answer));
    }
    expect(answer.text).toMatch(/This is the last chunk/);
    expect(parts.length).toBeGreaterThan(3);
    const all = parts.join('\n');
    for (const line of [...USAGE_LINES, 'widget.turn11(3).turn11(4)', 'img.shields.io']) expect(all).toContain(line);
    // A chunk capped by max_tokens says how much it left out: the same chunk without the cap has it.
    const capped = await call('get_page_markdown', { url: README_URL, chunk_size: 600, chunk_index: 1, max_tokens: 60 });
    expect(capped.text).toMatch(/cut at max_tokens=60; \d+ more tokens in this chunk/);
    const whole = await call('get_page_markdown', { url: README_URL, chunk_size: 600, chunk_index: 1 });
    expect((whole.structuredContent as { tokens: number }).tokens).toBeGreaterThan((capped.structuredContent as { tokens: number }).tokens);
    followed.add('read on through the chunks of a page');
  });

  it('follows: read on through the chunks of a section', async () => {
    let answer = await call('get_page_markdown', { url: `${README_URL}#api`, chunk_size: 250 });
    expect(answer.text).toMatch(/^Section: widget › API /m);
    const parts = [body(answer)];
    while (/More of this section follows/.test(answer.text)) {
      answer = await call('get_page_markdown', suggestedArgs(answer.text.slice(answer.text.indexOf('More of this section')), 'get_page_markdown'));
      parts.push(body(answer));
    }
    const all = parts.join('\n');
    expect(parts.length).toBeGreaterThan(1);
    for (let i = 0; i < 12; i++) expect(all).toContain(`widget.turn${i}(3)`);
    expect(all).not.toContain('npm install widget');
    const whole = await call('get_page_markdown', suggestedArgs(answer.text.slice(answer.text.indexOf('The whole page')), 'get_page_markdown'));
    expect(whole.isError, whole.text).toBeFalsy();
    expect(body(whole)).toContain('img.shields.io');
    followed.add('read on through the chunks of a section');
  });

  it('follows: a chunk index past the end', async () => {
    const past = await call('get_page_markdown', { url: README_URL, chunk_size: 500, chunk_index: 99 });
    expect(past.isError).toBe(true);
    const last = Number(/chunk_index from 0 to (\d+)/.exec(past.text)![1]);
    const answer = await call('get_page_markdown', { url: README_URL, chunk_size: 500, chunk_index: last });
    expect(answer.isError, answer.text).toBeFalsy();
    expect(answer.text).toMatch(/This is the last chunk/);
    followed.add('a chunk index past the end');
  });

  it('follows: max_tokens too small for a page query', async () => {
    const small = await call('get_page_markdown', { url: README_URL, query: 'spin', max_tokens: 60 });
    expect(small.isError).toBe(true);
    const min = Number(/max_tokens of (\d+) or more/.exec(small.text)![1]);
    expect(min).toBe(MIN_MAX_TOKENS);
    expect((await call('get_page_markdown', { url: README_URL, query: 'spin', max_tokens: min })).isError).toBeFalsy();
    expect((await call('get_page_markdown', { url: README_URL, max_tokens: 60 })).isError).toBeFalsy();
    followed.add('max_tokens too small for a page query');
  });

  it('follows: an unknown page URL', async () => {
    const near = await call('get_page_markdown', { url: `${site.url}/guide/routin.html` });
    expect(near.isError).toBe(true);
    const similar = /similar URLs: (\S+?)[,.](?:\s|$)/.exec(near.text)![1]!;
    expect((await call('get_page_markdown', { url: similar })).isError).toBeFalsy();
    const far = await call('get_page_markdown', { url: 'https://nowhere.example/x.html' });
    expect(far.text).toMatch(/Use a source URL exactly as get_content shows it/);
    const shown = await call('get_content', { library_id: 'quillstack', query: 'route' });
    const url = /· (http\S+)/.exec(shown.text)![1]!;
    expect((await call('get_page_markdown', { url })).isError).toBeFalsy();
    followed.add('an unknown page URL');
  });

  it('follows: a page section cut at max_tokens', async () => {
    const cut = await call('get_page_markdown', { url: README_URL, query: 'usage make part', max_tokens: 400 });
    const again = Number(/call again with max_tokens=(\d+) to read it whole/.exec(cut.text)![1]);
    const whole = await call('get_page_markdown', { url: README_URL, query: 'usage make part', max_tokens: again });
    const sections = (whole.structuredContent as { sections: Array<{ heading: string; cut: boolean }> }).sections;
    expect(sections[0]).toMatchObject({ heading: 'widget › Usage', cut: false });
    for (const line of USAGE_LINES) expect(whole.text).toContain(line);
    followed.add('a page section cut at max_tokens');
  });

  it('follows: page sections left out', async () => {
    const some = await call('get_page_markdown', { url: README_URL, query: 'turns the widget', max_tokens: 400 });
    const leftOut = (some.structuredContent as { left_out: string[] }).left_out;
    expect(leftOut.length).toBeGreaterThan(0);
    expect(some.text).toMatch(/Call again with a higher max_tokens/);
    const more = await call('get_page_markdown', { url: README_URL, query: 'turns the widget', max_tokens: 20_000 });
    expect((more.structuredContent as { left_out: string[] }).left_out).toEqual([]);
    const shown = (more.structuredContent as { sections: Array<{ heading: string }> }).sections.map((s) => s.heading);
    for (const name of leftOut) expect(shown.some((h) => h.endsWith(name))).toBe(true);
    followed.add('page sections left out');
  });

  it('follows: no section matches the query', async () => {
    const none = await call('get_page_markdown', { url: README_URL, query: 'xylophone' });
    expect(none.text).toMatch(/without query to read the page in chunks/);
    const page = await call('get_page_markdown', { url: README_URL });
    expect(body(page)).toContain('npm install widget');
    followed.add('no section matches the query');
  });

  it('follows: a version that is not indexed', async () => {
    const added = await call('add_library', { specs: [`${gitServer.origin}/gizmo.git@v1.0.0`] });
    expect(added.isError, added.text).toBeFalsy();
    await jobDone(http, (added.structuredContent as { libraries: Array<{ job_ids: string[] }> }).libraries[0]!.job_ids[0]!);
    const missing = await call('get_content', { library_id: 'gizmo@2.0.0', query: 'spin' });
    expect(missing.isError).toBe(true);
    const indexed = await call('get_content', suggestedArgs(missing.text.slice(missing.text.indexOf('Or call get_content')), 'get_content'));
    expect(indexed.text).toContain('gizmo.spinOne()');
    expect(missing.text).toMatch(/call add_library with spec "/);
    const add = await call('add_library', { specs: [/spec "([^"]+)"/.exec(missing.text)![1]!] });
    expect(add.isError, add.text).toBeFalsy();
    await jobDone(http, (add.structuredContent as { libraries: Array<{ job_ids: string[] }> }).libraries[0]!.job_ids[0]!);
    const now = await call('get_content', { library_id: 'gizmo@2.0.0', query: 'spin' });
    expect(now.isError, now.text).toBeFalsy();
    expect(now.text).toContain('gizmo.spinTwo()');
    followed.add('a version that is not indexed');
  });

  it('follows: a library already indexed', async () => {
    const spec = `${gitServer.origin}/gizmo.git@v1.0.0`;
    const again = await call('add_library', { specs: [spec] });
    expect(again.text).toMatch(/is already indexed/);
    const search = await call('get_content', { library_id: /get_content library_id="([^"]+)"/.exec(again.text)![1]!, query: 'spin', fresh: true });
    expect(search.isError, search.text).toBeFalsy();
    expect(search.text).toContain('gizmo.spin');
    expect(again.text).toMatch(/call add_library with refresh: true/);
    const refresh = await call('add_library', { specs: [spec], refresh: true });
    expect(refresh.isError, refresh.text).toBeFalsy();
    const queued = (refresh.structuredContent as { libraries: Array<{ status: string; job_ids: string[] }> }).libraries[0]!;
    expect(queued.status).toBe('queued');
    await jobDone(http, queued.job_ids[0]!);
    followed.add('a library already indexed');
  });

  it('follows: a library deleted meanwhile (the race is not staged; the call it names lists the libraries)', async () => {
    const listed = await call('search_libraries', {});
    expect(listed.text).toMatch(/quillstack/);
    followed.add('a library deleted meanwhile');
  });

  it('follows: no library indexed yet', async () => {
    const client = await connectMcpClient(empty);
    const workers = await startCrawlWorkers(empty, empty.config, FAST_WORKERS);
    try {
      const none = await callOn(client, 'get_content', { library_id: 'quillstack', query: 'route' });
      expect(none.text).toMatch(/init_crawl first/);
      expect((await callOn(client, 'search_libraries', { query: '' })).text).toMatch(/No libraries are indexed yet/);
      const started = await callOn(client, 'init_crawl', { name: 'quillstack', start_urls: [`${site.url}/guide/routing.html`], max_depth: 0 });
      expect(started.isError, started.text).toBeFalsy();
      expect((await jobDone(client, (started.structuredContent as { job_id: string }).job_id)).text).toMatch(/completed/);
      expect((await callOn(client, 'get_content', { library_id: 'quillstack', query: 'route' })).isError).toBeFalsy();
      // A crawl that has stored nothing yet: get_content names the job to follow.
      const slow = await callOn(client, 'init_crawl', { name: 'slow-docs', start_urls: [`${site.url}/slow/b.html`], max_depth: 0 });
      const waiting = await callOn(client, 'get_content', { library_id: 'slow-docs' });
      expect(waiting.text).toMatch(/has no snippets yet \(its crawl may still be running: call get_crawl_status with job_id="/);
      const status = await callOn(client, 'get_crawl_status', suggestedArgs(waiting.text, 'get_crawl_status'));
      expect(status.text).toContain((slow.structuredContent as { job_id: string }).job_id);
      expect((await callOn(client, 'cancel_crawl', { job_id: (slow.structuredContent as { job_id: string }).job_id })).isError).toBeFalsy();
      followed.add('a library without snippets yet');
    } finally {
      await client.close();
      await workers.stop();
    }
    followed.add('no library indexed yet');
  });

  it('follows: a library name that matches none clearly', async () => {
    const unclear = await call('get_content', { library_id: 'qilstak', query: 'route' });
    expect(unclear.text).toMatch(/Call get_content again with one of these names or ids as library_id/);
    const id = (unclear.structuredContent as { details?: Array<{ id: string }> } | undefined)?.details?.[0]?.id ?? /id ([0-9a-f-]{36})/.exec(unclear.text)![1]!;
    expect((await call('get_content', { library_id: id, query: 'route' })).isError).toBeFalsy();
    followed.add('a library name that matches none clearly');
  });

  it('follows: an unknown library id', async () => {
    const unknown = await call('get_content', { library_id: '00000000-0000-4000-8000-000000000000', query: 'route' });
    expect(unknown.text).toMatch(/Call search_libraries to list the indexed libraries and their ids/);
    const listed = await call('search_libraries', { query: 'quillstack' });
    const id = /id ([0-9a-f-]{36})/.exec(listed.text)![1]!;
    expect((await call('get_content', { library_id: id, query: 'route' })).isError).toBeFalsy();
    followed.add('an unknown library id');
  });

  /** A project directory: an empty requirements.txt, and gizmo from the git server (as `library`) through .docdex.yml. */
  function projectDir(name: string, library = 'gadgets'): string {
    const dir = path.join(scratch, name);
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'requirements.txt'), '');
    writeFileSync(path.join(dir, '.docdex.yml'), `name: ${name}\nsources:\n  ${library}: "${gitServer.origin}/gizmo.git@v1.0.0"\n`);
    return dir;
  }

  it('follows: a project that is not recorded (over stdio and over HTTP)', async () => {
    const dir = projectDir('stdio-app');
    const stdio = await connectMcpClient(db, { localProjectDir: scratch });
    try {
      const unknown = await callOn(stdio, 'get_project_libraries', { project: dir });
      expect(unknown.isError).toBe(true);
      expect(unknown.text).toMatch(/call sync_project with project set to the project's root directory/);
      expect((await callOn(stdio, 'sync_project', { project: dir })).isError).toBeFalsy();
      const again = await callOn(stdio, 'get_project_libraries', { project: dir });
      expect(again.isError, again.text).toBeFalsy();
    } finally {
      await stdio.close();
    }
    const httpDir = projectDir('http-app');
    const overHttp = await call('search_project', { project: httpDir, query: 'spin' });
    expect(overHttp.text).toMatch(/run `docdex sync` in the project's root directory, on the machine docdex runs on/);
    const synced = await runCli(['sync', httpDir, '--no-wait', '--json'], { env: db.env });
    expect(synced.exitCode, String(synced.stderr)).toBe(0);
    expect((await call('search_project', { project: httpDir, query: 'spin' })).isError).toBeFalsy();
    followed.add('a project that is not recorded');
  });

  it('follows: a project library without snippets', async () => {
    const prose = await createTestRepo('prose');
    try {
      prose.write({ 'README.md': '# prose\n\n## Tuning\n\nTurn the dial slowly until the lamp glows amber.\n' });
      await prose.commit('one', { tag: 'v1.0.0' });
      symlinkSync(prose.bare, path.join(scratch, 'git', 'prose.git'));
      const dir = path.join(scratch, 'prose-app');
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'requirements.txt'), '');
      writeFileSync(path.join(dir, '.docdex.yml'), `name: prose-app\nsources:\n  prose: "${gitServer.origin}/prose.git@v1.0.0"\n`);
      const synced = await runCli(['sync', dir], { env: db.env, timeout: 120_000 });
      expect(synced.exitCode, String(synced.stderr)).toBe(0);
      const libraries = await call('get_project_libraries', { project: 'prose-app' });
      expect(libraries.text).toMatch(/indexed, no code snippets: search its page sections, call get_content with library_id=/);
      const found = await call('get_content', { ...suggestedArgs(libraries.text, 'get_content'), query: 'lamp glows amber' });
      expect(found.isError, found.text).toBeFalsy();
      expect(found.text).toContain('Turn the dial slowly');
      followed.add('a project library without snippets');
    } finally {
      prose.cleanup();
    }
  });

  it('follows: a project tool without a project over HTTP', async () => {
    const none = await call('get_project_libraries', {});
    expect(none.text).toMatch(/again with project set to the project's name/);
    const known = /Known projects: ([^\s(,]+)/.exec(none.text)![1]!;
    expect((await call('get_project_libraries', { project: known })).isError).toBeFalsy();
    followed.add('a project tool without a project over HTTP');
  });

  it('follows: a project library that is not indexed', async () => {
    const dir = projectDir('later-app', 'gadgets-later');
    const first = await runCli(['sync', dir], { env: db.env, timeout: 120_000 });
    expect(first.exitCode, String(first.stderr)).toBe(0);
    const indexed = await call('get_project_libraries', { project: 'later-app' });
    expect(indexed.text).toMatch(/Search all indexed ones together with search_project/);
    expect((await call('search_project', { project: 'later-app', query: 'gizmo' })).isError).toBeFalsy();
    // Its library's index deleted: the project still uses it, so the answer says how to index it again.
    expect((await runCli(['sources', 'delete', 'gadgets-later', '--force'], { env: db.env })).exitCode).toBe(0);
    const libraries = await call('get_project_libraries', { project: 'later-app' });
    expect(libraries.text).toMatch(/NOT INDEXED .*call sync_project with project="later-app"/);
    expect(libraries.text).toMatch(/left out of search_project; call sync_project with project="later-app" to index them/);
    const sync = await call('sync_project', suggestedArgs(libraries.text, 'sync_project'));
    expect(sync.isError, sync.text).toBeFalsy();
    const jobs = (sync.structuredContent as { job_ids: string[] }).job_ids;
    expect(jobs).toHaveLength(1);
    await jobDone(http, jobs[0]!);
    expect((await call('get_project_libraries', { project: 'later-app' })).text).not.toMatch(/NOT INDEXED/);
    const readOnly = await connectMcpClient(db, { readOnly: true });
    try {
      expect((await callOn(readOnly, 'get_project_libraries', { project: 'later-app' })).isError).toBeFalsy();
    } finally {
      await readOnly.close();
    }
    followed.add('a project library that is not indexed');
  });

  it('follows: invalid arguments', async () => {
    const bad = await call('get_content', { library_id: 'quillstack', query: 'route', limit: 500 });
    expect(bad.text).toMatch(/Fix these arguments and call get_content again/);
    expect(bad.text).toMatch(/- limit: /);
    expect((await call('get_content', { library_id: 'quillstack', query: 'route', limit: 100 })).isError).toBeFalsy();
    followed.add('invalid arguments');
  });

  it('follows: after add_library and init_crawl, and get_crawl_status of each kind of job', async () => {
    const added = await call('add_library', { specs: [`${gitServer.origin}/gizmo.git@v1.0.0`], name: 'gizmo-again' });
    expect(added.text).toMatch(/Follow each job: get_crawl_status with its job_id/);
    const jobId = (added.structuredContent as { libraries: Array<{ job_ids: string[] }> }).libraries[0]!.job_ids[0]!;
    const library = /get_content with library_id="([^"]+)"/.exec(added.text)![1]!;
    await jobDone(http, jobId);
    expect((await call('get_content', { library_id: library, query: 'spin' })).text).toContain('gizmo.spinOne()');
    followed.add('after add_library');

    const started = await call('init_crawl', { name: 'slowdocs', start_urls: [`${site.url}/slow/a.html`], max_depth: 0 });
    expect(started.isError, started.text).toBeFalsy();
    const follow = suggestedArgs(started.text, 'get_crawl_status');
    const running = await call('get_crawl_status', follow);
    expect(running.isError, running.text).toBeFalsy();
    expect(running.text).toMatch(/Next: call get_crawl_status with job_id="[^"]+" again in a minute/);
    expect((await call('get_crawl_status', suggestedArgs(running.text, 'get_crawl_status'))).isError).toBeFalsy();
    const stop = suggestedArgs(started.text.slice(started.text.indexOf('Stop it')), 'cancel_crawl');
    expect((await call('cancel_crawl', stop)).isError).toBeFalsy();
    const cancelled = await jobDone(http, String(stop.job_id));
    expect(cancelled.text).toMatch(/cancelled/);
    followed.add('after init_crawl');

    const short = await call('get_crawl_status', { job_id: 'x' });
    expect(short.text).toMatch(/job_id must be the id returned by init_crawl/);
    const finished = await call('get_crawl_status', { job_id: String(follow.job_id) });
    expect(finished.isError).toBeFalsy();
    const quill = await call('search_libraries', { query: 'quillstack' });
    expect(quill.isError).toBeFalsy();
    const done = (await db.pool.query<{ id: string }>(`SELECT id FROM crawl_jobs WHERE name = 'quillstack' AND status = 'completed' LIMIT 1`)).rows[0]!.id;
    const completed = await call('get_crawl_status', { job_id: done });
    expect(completed.text).toMatch(/Next: get_content with library_id="[^"]+" and a query returns its snippets/);
    expect((await call('get_content', { ...suggestedArgs(completed.text, 'get_content'), query: 'route' })).isError).toBeFalsy();
    const failed = await call('init_crawl', { name: 'nothing-here', start_urls: [`${site.url}/missing/page.html`], max_depth: 0 });
    const emptyJob = await jobDone(http, (failed.structuredContent as { job_id: string }).job_id);
    expect(emptyJob.text).toMatch(/It stored no page, so no library was created\. Check the URL \(or the site\), then call init_crawl again/);
    const retried = await call('init_crawl', { name: 'nothing-here', start_urls: [`${site.url}/guide/install.html`], max_depth: 0 });
    expect((await jobDone(http, (retried.structuredContent as { job_id: string }).job_id)).text).toMatch(/completed/);
    followed.add('get_crawl_status of a running, finished, cancelled or empty job');
  });

  it('follows: more results of get_content, and results left out', async () => {
    const first = await call('get_content', { library_id: 'widget', query: 'widget turn', limit: 2 });
    expect(first.text).toMatch(/More results: call get_content with library_id="[^"]+", query="widget turn", page=2\.$/m);
    const second = await call('get_content', suggestedArgs(first.text.slice(first.text.indexOf('More results')), 'get_content'));
    expect(second.isError, second.text).toBeFalsy();
    expect((second.structuredContent as { page: number }).page).toBe(2);

    const fresh = await connectMcpClient(db);
    try {
      const args = { library_id: 'widget', query: 'widget turn', limit: 6, max_tokens: 320 };
      const some = await callOn(fresh, 'get_content', args);
      const m = /call get_content again with the same arguments and max_tokens=(\d+) to see them/.exec(some.text)!;
      expect(m).not.toBeNull();
      const all = await callOn(fresh, 'get_content', { ...args, max_tokens: Number(m[1]) });
      expect((all.structuredContent as { left_out: number[] }).left_out).toEqual([]);
      const seen = await callOn(fresh, 'get_content', { ...args, max_tokens: Number(m[1]) });
      expect(seen.text).toMatch(/fresh=true shows them again/);
      const shownAgain = await callOn(fresh, 'get_content', { ...args, max_tokens: Number(m[1]), fresh: true });
      expect(shownAgain.text).not.toMatch(/already shown/);
      expect(shownAgain.text).toContain('widget.turn');
    } finally {
      await fresh.close();
    }
    followed.add('more results of get_content, and results left out');
  });

  it('follows: get_content with a project but no query', async () => {
    const noQuery = await call('get_content', { project: 'http-app' });
    expect(noQuery.text).toMatch(/call get_content with its library_id from get_project_libraries/);
    const libraries = await call('get_project_libraries', { project: 'http-app' });
    const id = (libraries.structuredContent as { libraries: Array<{ library_id?: string }> }).libraries.find((l) => l.library_id)?.library_id;
    expect(id, libraries.text).toBeDefined();
    expect((await call('get_content', { library_id: id })).isError).toBeFalsy();
    followed.add('get_content with a project but no query');
  });

  it('follows: no snippet matches the query', async () => {
    const none = await call('get_content', { library_id: 'widget', query: 'xylophone zebra' });
    expect(none.text).toMatch(/call get_content without query to browse/);
    const browse = await call('get_content', { library_id: 'widget' });
    expect(browse.text).toContain('widget');
    expect((browse.structuredContent as { snippets: unknown[] }).snippets.length).toBeGreaterThan(0);
    followed.add('no snippet matches the query');
  });

  it('follows: search_libraries answers', async () => {
    const none = await call('search_libraries', { query: 'xylophone' });
    expect(none.text).toMatch(/Call search_libraries without a query/);
    expect((await call('search_libraries', {})).text).toMatch(/widget/);
    const paged = await call('search_libraries', { limit: 1 });
    expect(paged.text).toMatch(/More results: call search_libraries with page=2/);
    expect((await call('search_libraries', { ...suggestedArgs(paged.text, 'search_libraries'), limit: 1 })).isError).toBeFalsy();
    const selected = await call('search_libraries', { query: 'widget' });
    const id = /Selected: .* \(id ([0-9a-f-]{36})\) is the clear best match/.exec(selected.text)![1]!;
    expect((await call('get_content', { library_id: id })).isError).toBeFalsy();
    for (const name of ['acme-widgets', 'acme-gadgets']) {
      const source = await createSource(db.pool, name, '1.0.0');
      await addPage(db.pool, source, `https://${name}.example/a.html`, [{ title: `Use ${name}`, code: `${name.replace('-', '_')}.run()`, language: 'python' }]);
    }
    const unclear = await call('search_libraries', { query: 'acme' });
    expect(unclear.text).toMatch(/No single library is a clear match: pick one and pass its id as library_id to get_content/);
    const pick = /id: ([0-9a-f-]{36})/.exec(unclear.text)![1]!;
    expect((await call('get_content', { library_id: pick })).isError).toBeFalsy();
    followed.add('search_libraries answers');
  });

  it('follows: more results of search_project', async () => {
    const first = await call('search_project', { project: 'http-app', query: 'gizmo spin', limit: 1 });
    expect(first.isError, first.text).toBeFalsy();
    expect(first.text).toMatch(/More results: call search_project with project=/);
    const next = await call('search_project', suggestedArgs(first.text.slice(first.text.indexOf('More results')), 'search_project'));
    expect(next.isError, next.text).toBeFalsy();
    expect((next.structuredContent as { page: number }).page).toBe(2);
    followed.add('more results of search_project');
  });

  it('follows: sync_project over HTTP without a project', async () => {
    const none = await call('sync_project', {});
    expect(none.text).toMatch(/Pass project with its name or id/);
    const synced = await call('sync_project', { project: 'http-app' });
    expect(synced.isError, synced.text).toBeFalsy();
    followed.add('sync_project over HTTP without a project');
  });

  it('over REST (/mcp/execute), an error body carries the same hints, and they lead to answers', async () => {
    const daemon = await startTestDaemon(db.config, { routes: [...docsIndexRoutes, ...mcpRoutes] });
    const execute = async (tool: string, args: Record<string, unknown>) => {
      const res = await fetch(`${daemon.base}/mcp/execute/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) });
      return { status: res.status, body: (await res.json()) as { error?: string; details?: Array<{ available?: string[] }>; content?: Array<{ text: string }> } };
    };
    try {
      const past = await execute('get_page_markdown', { url: README_URL, chunk_size: 500, chunk_index: 99 });
      expect(past.status).toBe(422);
      const last = Number(/chunk_index from 0 to (\d+)/.exec(past.body.error!)![1]);
      expect((await execute('get_page_markdown', { url: README_URL, chunk_size: 500, chunk_index: last })).status).toBe(200);
      const missing = await execute('get_content', { library_id: 'widget@9.9.9', query: 'spin' });
      expect(missing.status).toBe(404);
      const indexed = await execute('get_content', suggestedArgs(missing.body.error!.slice(missing.body.error!.indexOf('Or call get_content')), 'get_content'));
      expect(indexed.status).toBe(200);
      const typo = await execute('get_page_markdwn', { url: `${README_URL}#usage` });
      expect(typo.status).toBe(404);
      expect(typo.body.error).toMatch(/Did you mean get_page_markdown\?/);
      const section = await execute('get_page_markdown', { url: `${README_URL}#usage` });
      expect(section.status).toBe(200);
      expect(section.body.content![0]!.text).toContain(USAGE_LINES.at(-1));
      expect(section.body.content![0]!.text).not.toContain('img.shields.io');
    } finally {
      await daemon.close();
    }
  });

  it('has followed every entry', () => {
    expect(HINTS.map((h) => h.id).filter((id) => !followed.has(id))).toEqual([]);
  });
});
