// Text an HTML page holds but a reader never sees: comments, and elements hidden by attribute, inline style,
// a visually-hidden class or ink the colour of their background (ink.ts). None of it is indexed (the renderer drops hidden elements, the parser drops
// comments); it is collected here only so screening can read it, because instructions to an assistant
// hidden from the page's reader are the clearest sign that a page is not what it looks like.
import { concealedByAttributes } from './code-classes.js';
import { NO_ATTRS } from './html-parser.js';
import { type HElement, type HNode, type HtmlTree, textOf } from './html-tree.js';

/** How much hidden-element text a page gives screening. */
const MAX_CONCEALED_TEXT = 64 * 1024;

function isConcealed(el: HElement): boolean {
  if (el.inkHidden) return true;
  return el.attrs !== NO_ATTRS && concealedByAttributes(el.attrs);
}

/** The page's comments and hidden elements' text, each a separate piece, bounded in total. */
export function concealedText(tree: HtmlTree): string[] {
  const out = [...tree.comments, ...tree.hiddenPastCap];
  let budget = MAX_CONCEALED_TEXT;
  const stack: HNode[] = [tree.root];
  while (stack.length > 0 && budget > 0) {
    const n = stack.pop() as HNode;
    if (typeof n === 'string') continue;
    if (n !== tree.root && isConcealed(n)) {
      const text = textOf(n).trim();
      if (/\p{L}{2}/u.test(text)) {
        const kept = text.slice(0, budget);
        budget -= kept.length;
        out.push(kept);
      }
      continue;
    }
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i] as HNode);
  }
  return out;
}
