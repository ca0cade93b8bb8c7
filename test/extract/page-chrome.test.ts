import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stripPageChrome } from '../../src/core/extract/context.js';
import { extractDocument } from '../../src/core/extract/index.js';

/**
 * API reference pages (Node's) put version and stability notes under every heading; they are page chrome, not
 * what the code does, and stay out of snippet descriptions (issue #37).
 */
const NODE_ENTRY = `<html><head><title>Test runner | Node.js Documentation</title></head><body><main>
<h1>Test runner</h1>
<h3 id="watch-mode">Watch mode</h3>
<div class="api_metadata">
<span>Added in: v18.13.0, v16.19.0</span>
</div><blockquote>
<p>Stability: 1 - Experimental</p>
</blockquote>
<p>The Node.js test runner supports running in watch mode by passing the <code>--watch</code> flag:</p>
<pre><code class="language-bash">node --test --watch
</code></pre>
<h3 id="napi">napi_create_object</h3>
<details><summary>History</summary><p>N-API version: 1</p></details>
<div class="api_metadata"><span>Added in: v8.0.0</span></div>
<pre><code class="language-c">napi_status napi_create_object(napi_env env, napi_value* result);
</code></pre>
</main></body></html>`;

describe('page chrome in snippet descriptions', () => {
  it('leaves "Added in", "Stability" and "N-API version" notes out of the description', () => {
    const r = extractDocument({ url: 'https://nodejs.org/api/test.html', body: NODE_ENTRY, contentType: 'text/html' });
    const watch = r.snippets.find((s) => s.code.includes('--watch'))!;
    expect(watch.description).toBe('The Node.js test runner supports running in watch mode by passing the --watch flag:');
    const napi = r.snippets.find((s) => s.code.includes('napi_create_object'))!;
    expect(napi.description).not.toMatch(/Added in|N-API version|History/);
  });

  it('keeps prose that only mentions versions or stability', () => {
    expect(stripPageChrome('Stability of the API is guaranteed since version 3.')).toBe('Stability of the API is guaranteed since version 3.');
    expect(stripPageChrome('History of the project')).toBe('History of the project');
    // The advice of a deprecation note is what matters in it.
    expect(stripPageChrome('Stability: 0 - Deprecated: Use fs.rm() instead.')).toBe('Use fs.rm() instead.');
  });

  it('never grows the text and never throws, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        const out = stripPageChrome(text);
        expect(out.length).toBeLessThanOrEqual(text.length);
      }),
    );
  });
});
