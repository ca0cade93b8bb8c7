/**
 * Relative links between a repository's docs (`[the guide](../guide.md)`), made absolute against the
 * document's own URL: the file at the same commit on the forge, or `remote@commit/path`. Read on their own
 * (`get_page_markdown`, a snippet's context), the pages then link where the repository's renderer would.
 * Inline links and images and reference definitions are rewritten; code (fenced, indented, in backticks),
 * anchors, absolute URLs and root-relative paths are left as written.
 */

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const INLINE_LINK = /\]\(\s*(<[^>\n]*>|[^\s()<>]+)(\s+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?\s*\)/g;
const DEFINITION = /^( {0,3}\[[^\]\n]+\]:\s*)(<[^>\n]*>|\S+)/;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function resolved(destination: string, base: string): string | null {
  const bracketed = destination.startsWith('<') && destination.endsWith('>');
  const target = bracketed ? destination.slice(1, -1) : destination;
  if (target === '' || target.startsWith('#') || target.startsWith('/') || SCHEME.test(target)) return null;
  try {
    const url = new URL(target, base).href;
    return bracketed ? `<${url}>` : url;
  } catch {
    return null;
  }
}

/** The line's text outside backtick code spans rewritten by `fn`; spans are kept as they are. */
function outsideCodeSpans(line: string, fn: (text: string) => string): string {
  if (!line.includes('`')) return fn(line);
  const parts = line.split(/(`+[^`]*`+)/);
  return parts.map((part, i) => (i % 2 === 1 ? part : fn(part))).join('');
}

function rewriteLine(line: string, base: string): string {
  const definition = DEFINITION.exec(line);
  if (definition) {
    const url = resolved(definition[2]!, base);
    return url === null ? line : definition[1]! + url + line.slice(definition[0].length);
  }
  return outsideCodeSpans(line, (text) =>
    text.replace(INLINE_LINK, (whole, destination: string, title: string | undefined) => {
      const url = resolved(destination, base);
      return url === null ? whole : `](${url}${title ?? ''})`;
    }),
  );
}

/** `markdown` with its relative link destinations resolved against `documentUrl`. */
export function absoluteMarkdownLinks(markdown: string, documentUrl: string): string {
  const lines = markdown.split('\n');
  let fence: string | null = null;
  let indented = false;
  let previousBlank = true;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const blank = line.trim() === '';
    const marker = FENCE.exec(line)?.[1];
    // Indented code starts after a blank line and runs through indented and blank lines.
    indented = /^( {4}|\t)/.test(line) ? indented || previousBlank : indented && blank;
    if (fence !== null) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
    } else if (marker) {
      fence = marker;
    } else if (!indented) {
      lines[i] = rewriteLine(line, documentUrl);
    }
    previousBlank = blank;
  }
  return lines.join('\n');
}
