// Text a reader cannot see because its colour is the colour behind it: `color: #fff` on `background: white`,
// `color: rgba(0,0,0,0)`, `-webkit-text-fill-color: transparent`, `<font color=white>` in a `<td bgcolor=#fff>`.
// The tree builder (html-tree.ts) asks inkOf for every element with colour attributes: the text colour is
// inherited, the background is the nearest one painted behind the element, both from inline styles and the old
// colour attributes (a stylesheet's colours are not known, so an element whose colours are unknown is never
// judged). Colours are read by culori, every CSS notation included (named, hex with alpha, rgb, hsl, hwb, lab,
// lch, oklab, oklch, color()), and compared in CIELAB.
import { createRequire } from 'node:module';
import type * as Culori from 'culori/require';
import { detach } from './encoding.js';

/** An opaque sRGB colour, channels 0..1. */
interface Rgb {
  r: number;
  g: number;
  b: number;
}

/** The colours an element's text is drawn with and on; null where no inline style or attribute says. */
export interface Ink {
  color: Rgb | null;
  background: Rgb | null;
  /** The element's text cannot be told from what is behind it (or has next to no opacity). */
  hidden: boolean;
}

export const NO_INK: Ink = { color: null, background: null, hidden: false };

// Two colours closer than this CIE76 difference look the same: ΔE 2.3 is the just-noticeable difference.
const SAME_COLOUR_DELTA_E = 2.3;
// Text drawn at under a tenth of its opacity counts as hidden whatever is behind it, as `opacity` below 0.1 does
// (FAINT_STYLE in code-classes.ts).
const FAINT_ALPHA = 0.1;
// A translucent layer over an unknown background: the result lies within (1 - alpha) × 100 ΔE of the layer's own
// colour (L* spans 0..100), so above this alpha the layer is its own colour to within the just-noticeable
// difference.
const OPAQUE_ALPHA = 1 - SAME_COLOUR_DELTA_E / 100;

type Paint = { rgb: Rgb; alpha: number } | 'inherit' | 'current' | 'none' | 'unknown';

/** What one style attribute (or colour attribute) declares; undefined fields declare nothing. */
interface Declared {
  color?: Paint;
  background?: Paint;
}

// culori's single bundled file, loaded the first time a page has colours: its ES module entry imports some
// two hundred files, which every extraction thread would pay for at start.
let culori: typeof Culori | undefined;
function colours(): typeof Culori {
  culori ??= createRequire(import.meta.url)('culori/require') as typeof Culori;
  return culori;
}

let deltaE: ((a: Rgb, b: Rgb) => number) | undefined;
function difference(a: Rgb, b: Rgb): number {
  deltaE ??= colours().differenceCie76() as unknown as (a: Rgb, b: Rgb) => number;
  return deltaE({ ...a, mode: 'rgb' } as Rgb, { ...b, mode: 'rgb' } as Rgb);
}

const KEYWORDS: Record<string, Paint> = {
  inherit: 'inherit',
  unset: 'inherit',
  currentcolor: 'current',
  none: 'none',
  initial: 'none',
  revert: 'unknown',
  'revert-layer': 'unknown',
};

/** One CSS colour value: culori's reading in sRGB, or what a keyword means; 'unknown' for var() and the like. */
function paintOf(value: string): Paint {
  const v = value.trim().toLowerCase();
  const keyword = KEYWORDS[v];
  if (keyword !== undefined) return keyword;
  const c = colours();
  const parsed = c.parse(v);
  if (parsed === undefined) return 'unknown';
  const rgb = c.clampRgb(c.rgb(parsed));
  return { rgb: { r: rgb.r, g: rgb.g, b: rgb.b }, alpha: rgb.alpha ?? 1 };
}

/** Splits at `sep` outside parentheses and quotes (a `url(data:…;…)` holds semicolons). */
function splitTop(text: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote !== '') {
      if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0 && (sep === ' ' ? /\s/.test(ch) : ch === sep)) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((s) => s.trim()).filter((s) => s !== '');
}

const IMAGE = /\b(?:url|image|image-set|element|cross-fade|(?:repeating-)?(?:linear|radial|conic)-gradient)\s*\(/i;

/** The `background` shorthand's colour: only its last layer may hold one; an image makes the background unknown. */
function backgroundShorthand(value: string): Paint {
  if (IMAGE.test(value)) return 'unknown';
  const layers = splitTop(value, ',');
  const last = layers[layers.length - 1];
  if (last === undefined) return 'unknown';
  for (const token of splitTop(last, ' ')) {
    const paint = paintOf(token);
    if (paint !== 'unknown') return paint;
  }
  // A shorthand without a colour resets it to transparent.
  return 'none';
}

const INK_PROPERTY = /color|background/i;

/** The colour declarations of one style attribute; the last one wins, and !important beats the rest. */
function declaredByStyle(style: string): Declared {
  const found: Record<string, { value: string; important: boolean }> = {};
  for (const declaration of splitTop(style, ';')) {
    const colon = declaration.indexOf(':');
    if (colon < 0) continue;
    const name = declaration.slice(0, colon).trim().toLowerCase();
    if (!INK_PROPERTY.test(name)) continue;
    let value = declaration.slice(colon + 1).trim();
    const important = /!\s*important$/i.test(value);
    if (important) value = value.replace(/!\s*important$/i, '').trim();
    const previous = found[name];
    if (previous === undefined || important || !previous.important) found[name] = { value, important };
  }
  const declared: Declared = {};
  const text = found['-webkit-text-fill-color'] ?? found.color;
  if (text !== undefined) declared.color = paintOf(text.value);
  const image = found['background-image'];
  if (image !== undefined && !/^none$/i.test(image.value)) declared.background = 'unknown';
  else if (found['background-color'] !== undefined) declared.background = paintOf(found['background-color'].value);
  else if (found.background !== undefined) declared.background = backgroundShorthand(found.background.value);
  return declared;
}

// Style strings repeat across a page (syntax highlighters colour every token inline), so each is read once.
const styleCache = new Map<string, Declared>();
const MAX_CACHED_STYLES = 20_000;

function declaredOf(style: string): Declared {
  let declared = styleCache.get(style);
  if (declared === undefined) {
    declared = declaredByStyle(style);
    if (styleCache.size >= MAX_CACHED_STYLES) styleCache.clear();
    // A copy, so the cache does not keep the page the style was sliced from alive.
    styleCache.set(detach(style), declared);
  }
  return declared;
}

/** The old colour attributes: `<font color>`, `<body text bgcolor>`, `bgcolor` on tables and their cells. */
function declaredByAttributes(tag: string, attrs: Record<string, string>): Declared {
  const declared: Declared = {};
  const color = tag === 'font' ? attrs.color : tag === 'body' ? attrs.text : undefined;
  if (color !== undefined) declared.color = paintOf(color);
  if (attrs.bgcolor !== undefined) declared.background = paintOf(attrs.bgcolor);
  return declared;
}

/** `paint` laid over `under`: null when the result cannot be known. */
function over(paint: { rgb: Rgb; alpha: number }, under: Rgb | null): Rgb | null {
  const a = paint.alpha;
  if (a >= 1) return paint.rgb;
  if (under === null) return a >= OPAQUE_ALPHA ? paint.rgb : null;
  const mix = (x: number, y: number) => x * a + y * (1 - a);
  return { r: mix(paint.rgb.r, under.r), g: mix(paint.rgb.g, under.g), b: mix(paint.rgb.b, under.b) };
}

/** The element's background: its own painted over its parent's, or its parent's. */
function backgroundOf(paint: Paint | undefined, parent: Ink, color: Paint | undefined): Rgb | null {
  if (paint === undefined || paint === 'inherit' || paint === 'none') return parent.background;
  if (paint === 'unknown') return null;
  if (paint === 'current') {
    if (typeof color === 'object') return over(color, parent.background);
    return color === undefined || color === 'inherit' || color === 'current' ? parent.color : null;
  }
  return paint.alpha === 0 ? parent.background : over(paint, parent.background);
}

/** The ink of an element that declares `color` and `background` (either may be undefined) under `parent`'s. */
function derive(parent: Ink, color: Paint | undefined, background: Paint | undefined): Ink {
  const behind = backgroundOf(background, parent, color);
  let drawn: Rgb | null;
  if (typeof color === 'object') {
    if (color.alpha < FAINT_ALPHA) return { color: color.rgb, background: behind, hidden: true };
    drawn = over(color, behind);
  } else drawn = color === undefined || color === 'inherit' || color === 'current' ? parent.color : null;
  const hidden = drawn !== null && behind !== null && difference(drawn, behind) < SAME_COLOUR_DELTA_E;
  return { color: drawn, background: behind, hidden };
}

// The same style under the same parent ink gives the same ink: a highlighted code block asks for it thousands of
// times. Keyed by the parent's object, so a page's entries go with the page.
const derived = new WeakMap<Ink, Map<Declared, Ink>>();

/**
 * The ink of an element under `parent`'s: its own colours where its style or attributes declare them. Returns
 * `parent` itself when the element declares none, so most elements share their parent's object.
 */
export function inkOf(parent: Ink, tag: string, attrs: Record<string, string>): Ink {
  const style = attrs.style;
  const byStyle = style !== undefined && INK_PROPERTY.test(style) ? declaredOf(style) : undefined;
  const byAttrs = attrs.bgcolor !== undefined || (tag === 'font' && attrs.color !== undefined) || (tag === 'body' && attrs.text !== undefined) ? declaredByAttributes(tag, attrs) : undefined;
  if (byAttrs === undefined) {
    if (byStyle === undefined || (byStyle.color === undefined && byStyle.background === undefined)) return parent;
    let known = derived.get(parent);
    if (known === undefined) derived.set(parent, (known = new Map()));
    let ink = known.get(byStyle);
    if (ink === undefined) known.set(byStyle, (ink = derive(parent, byStyle.color, byStyle.background)));
    return ink;
  }
  // Inline styles override presentational attributes.
  const color = byStyle?.color ?? byAttrs.color;
  const background = byStyle?.background ?? byAttrs.background;
  if (color === undefined && background === undefined) return parent;
  return derive(parent, color, background);
}
