import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestSite {
  base: string;
  hits: string[];
  close(): Promise<void>;
}

/** A page in the style of a small documentation site, with a heading, prose and a code block. */
export function docPage(title: string, sections: Array<{ heading: string; prose: string; code: string; lang?: string }>, links: string[] = []): string {
  const body = sections
    .map(
      (s, i) =>
        `<h2 id="s${i}">${s.heading}</h2>\n<p>${s.prose}</p>\n<div class="highlight-${s.lang ?? 'python'}"><pre><code class="language-${s.lang ?? 'python'}">${s.code
          .replace(/&/g, '&amp;')
          .replace(/</g, '&lt;')}</code></pre></div>`,
    )
    .join('\n');
  const nav = links.map((l) => `<li><a href="${l}">${l}</a></li>`).join('');
  return `<!doctype html><html><head><title>${title} - Testlib docs</title><meta name="description" content="${title} reference"></head>
<body><nav><ul>${nav}</ul></nav><main><h1>${title}</h1>\n${body}</main></body></html>`;
}

/** Serves `pages` (path → HTML) on 127.0.0.1; optional per-request delay to keep a crawl running. */
export async function serveSite(pages: Record<string, string>, options: { delayMs?: number } = {}): Promise<TestSite> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.push(path);
    const send = () => {
      if (path === '/robots.txt') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
        return;
      }
      const page = pages[path];
      if (page === undefined) {
        res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    };
    if (options.delayMs) setTimeout(send, options.delayMs);
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A small generated site: an index linking to `count` pages, each with two code blocks. */
export function generatedSite(count: number): Record<string, string> {
  const pages: Record<string, string> = {};
  const links = Array.from({ length: count }, (_, i) => `/guide/page-${i}.html`);
  pages['/'] = docPage('Testlib', [{ heading: 'Install', prose: 'Install the package with pip.', code: 'pip install testlib', lang: 'shell' }], links);
  for (let i = 0; i < count; i++) {
    pages[`/guide/page-${i}.html`] = docPage(`Guide ${i}`, [
      { heading: `Open widget ${i}`, prose: `Create a widget number ${i} and open it.`, code: `import testlib\nw${i} = testlib.Widget(${i})\nw${i}.open_widget()` },
      { heading: `Close widget ${i}`, prose: `Close the widget when done.`, code: `w${i}.close_widget(force=True)\nprint("closed ${i}")` },
    ]);
  }
  return pages;
}
