// Screening of indexed text for instructions aimed at AI assistants (prompt injection). Everything docdex
// serves lands in an assistant's context, so a page that tells "AI assistants" to run a command, to ignore
// their instructions or to send a key file somewhere is flagged when it is indexed, and the sentence that
// did it is kept so a person (or the assistant) can see why.
//
// The rules are phrases, not words: documentation says "ignore", "run this command" and "system prompt" all
// the time. Each rule needs a shape only instruction-giving text has: an override of earlier instructions,
// an assistant addressed and told to act, a secret file and a network sink in one sentence. The false-positive
// rate on real documentation is measured by bench/screening.ts and floored by test/extract/screening-corpus.test.ts.
//
// Every pattern is linear: words are literals, gaps are bounded classes, nothing quantified nests, so a
// megabyte of near-misses costs a scan, not a backtracking explosion.

export const PROMPT_INJECTION = 'possible_prompt_injection';

/** What screenText found: the flags (empty when clean) and the sentence that raised them. */
export interface ScreenResult {
  flags: string[];
  passage?: string;
}

/** A rule's match: which rule, and where in the text. */
export interface ScreenMatch {
  rule: string;
  start: number;
  end: number;
}

// Between two words: spaces, line breaks, comment leaders, markdown emphasis, quotes. Bounded, so a phrase
// split over comment lines (`# ignore all\n# previous instructions`) still reads as one phrase.
const SEP = '[^\\p{L}\\p{N}]{1,12}';
const OPT = '[^\\p{L}\\p{N}]{0,12}';

/** A pattern source with `_` standing for a word separator and `%` for an optional one. */
function words(source: string): string {
  return source.replace(/_/g, SEP).replace(/%/g, OPT);
}

function rule(source: string): RegExp {
  return new RegExp(words(source), 'giu');
}

// Who an injection addresses: AI assistants in general, by kind or by product name.
const AI = '(?:AI|LLM|large_language_model|language_model|GPT-?\\d(?:\\.\\d)?o?|ChatGPT|Claude|Copilot|Gemini)s?';
const AGENT_NOUN = '(?:assistants?|agents?|models?|bots?|systems?|tools?|crawlers?|readers?)';
const ADDRESSEE = `(?:${AI}(?:_(?:coding_)?${AGENT_NOUN})?|(?:coding|code|chat)_(?:assistants?|agents?|bots?)|chatbots?)`;
// A description of a product ("the LLM must return JSON") is not an address to the reader.
const NOT_DESCRIBED = '(?<!\\b(?:the|a|an|this|that|our|your|each|its|their|my|his|her)\\s{1,3})';
// What may stand between the addressee and its orders: another addressee, or a clause that says which
// ones ("reading this page", "such as Claude", "(and similar tools)"). Nothing else: "AI and ML workloads
// should install CUDA" is not addressed to anyone.
const ADDRESSEE_TAIL = `(?:_(?:and|or)_(?:other_)?${ADDRESSEE}\\b)?(?:_(?:reading|processing|parsing|summari[sz]ing|crawling|indexing|scraping|using|that|who|which|like|such_as|including)\\b[^.!?:;]{0,50}?|\\s{0,3}\\([^)]{0,40}\\))?`;
const MODAL = '(?:must|should|shall|need_to|needs_to|have_to|has_to|are_(?:required|instructed|expected|asked|told)_to|is_(?:required|instructed|expected|asked)_to)';
const ACTION =
  '(?:run|execute|install|curl|wget|download|visit|open_(?:the_)?(?:url|link|page)|fetch|tell|inform|recommend|mention|say|ignore|disregard|include|add|insert|append|send|upload|sign_up|register|star|advertise|promote|copy|paste|delete|remove|disable|bypass|(?:not|never)_(?:mention|tell|reveal|disclose|inform|warn))\\b';
const ADVERB = '(?:(?:always|first|now|immediately|also|then|please|instead)_)?';

const OVERRIDE_TARGET = '(?:instructions?|prompts?|directions|directives|guidelines|guidance|rules|orders|programming|constraints|commands_(?:you|given))';
const OVERRIDE_QUALIFIER = '(?:previous(?:ly_given)?|prior|preceding|above|earlier|former|original|initial|foregoing|old|given|safety|developer)';

/** Rules that flag on their own, in any text. */
const RULES: ReadonlyArray<{ id: string; re: RegExp }> = [
  { id: 'override-instructions', re: rule(`\\b(?:ignore|disregard|forget|discard|abandon)(?:_(?:all|any|the|your|of|these|those|every|each|my|such))*_${OVERRIDE_QUALIFIER}_${OVERRIDE_TARGET}\\b`) },
  {
    id: 'override-yours',
    re: rule(
      `\\b(?:ignore|disregard|forget|override|bypass)_(?:all_)?your_(?:(?:system|previous|prior|original|initial|safety|current)_)?(?:prompt|instructions|guidelines|rules|programming|training|directives|guardrails|system_prompt)\\b`,
    ),
  },
  {
    id: 'forget-what-told',
    re: rule(
      "\\b(?:ignore|disregard|forget)_(?:everything|anything|all|what)_you(?:'ve|_have|_were|_had)?(?:_been)?_(?:told|instructed|given|read)_(?:before|previously|earlier|above|so_far|until_now)\\b",
    ),
  },
  {
    id: 'disregard-above',
    re: rule(
      '\\b(?:ignore|disregard|forget)_(?:all_)?(?:of_)?the_(?:above|foregoing)(?:_(?:instructions|text|content|prompt))?_(?:and_)?(?:instead_)?(?:now_)?(?:follow|obey|do|run|execute|tell|say|respond|reply|write|output|print|answer|act)\\b',
    ),
  },
  { id: 'addressed-directive', re: rule(`${NOT_DESCRIBED}\\b${ADDRESSEE}\\b${ADDRESSEE_TAIL}_${MODAL}_${ADVERB}${ACTION}`) },
  { id: 'addressed-colon', re: rule(`${NOT_DESCRIBED}\\b${ADDRESSEE}\\s{0,3}[:,]\\s{0,3}${ADVERB}(?:run|execute|install|ignore|disregard|tell|recommend|send|visit|download|never|do_not|don't)\\b`) },
  { id: 'note-to-ai', re: rule(`\\b(?:note|message|memo|instructions?|attention|important|notice|reminder|psa|warning|hint)_(?:for|to)_(?:(?:all|any|every)_)?${ADDRESSEE}%[:!]`) },
  { id: 'dear-ai', re: rule(`\\b(?:dear|attention|hey|hello|hi)_${ADDRESSEE}\\s{0,3}[:!,]`) },
  {
    id: 'if-you-are-ai',
    re: rule(
      `\\bif_you(?:'re|_are)_(?:an?_)?(?:${AI}|AI_(?:assistant|agent|model)|coding_(?:assistant|agent)|chatbot|automated_(?:agent|assistant|system))(?:\\s{0,3}[,.:;!—–-]|_(?:reading|processing|parsing|summari[sz]ing|crawling|indexing|scraping|that|who|and)\\b)`,
    ),
  },
  { id: 'as-an-ai-you', re: rule(`\\bas_an?_(?:${AI})(?:_(?:assistant|agent|model))?%,?%you_(?:must|should|need_to|have_to|are_required_to|will|shall)\\b`) },
  {
    id: 'before-answering',
    re: rule(
      '\\bbefore_(?:answering|responding|replying|you_(?:answer|respond|reply|summari[sz]e)|generating_(?:an?_)?(?:answer|response|reply))\\b[^.!?]{0,40}?\\b(?:run|execute|install|curl|wget|tell|recommend|visit|download|send|include|mention)\\b',
    ),
  },
  {
    id: 'when-answering',
    re: rule(
      '\\b(?:when|whenever|while)_(?:you_(?:are_)?)?(?:(?:answering|responding_to)_(?:any_)?(?:questions|queries|prompts)|summari[sz]ing_(?:this|these|the_(?:page|document|docs|documentation|content))|asked_(?:about|questions)|generating_(?:answers|responses|an?_(?:answer|response)))\\b[^.!?]{0,120}?\\b(?:always|must|be_sure_to|make_sure_to|tell|recommend|mention|run|install|instruct)\\b',
    ),
  },
  {
    id: 'tell-the-user',
    re: rule(
      '(?<=(?:^|[.!?:]\\s{1,3}|\\n\\s{0,12}|\\byou_(?:must|should|need_to|have_to)_)(?:please_)?(?:always_)?)(?:tell|instruct|advise|urge|inform)_(?:the_)?users?_(?:that_they_(?:must|should|need_to)|to)_(?:run|install|execute|sign_up|register|visit|download|curl|send|share|paste|star|buy|purchase|subscribe)\\b',
    ),
  },
  {
    id: 'reveal-prompt',
    re: rule(
      '\\b(?:reveal|print|show|output|repeat|leak|disclose|display|share|send|tell_(?:me|us))_(?:me_|us_)?(?:your|the_(?:hidden|secret|original|initial))_(?:system_prompt|(?:initial|original|hidden|secret|system)_(?:instructions|prompt))\\b',
    ),
  },
  { id: 'system-override', re: rule('\\b(?:(?:new|updated|revised|real|true|actual|secret|hidden)_system_(?:prompt|instructions?|message|directives?)\\s{0,3}[:!]|system_(?:prompt_)?override\\b)') },
  {
    id: 'you-are-now',
    re: rule(
      '\\byou_are_now_(?:in_)?(?:DAN\\b|developer_mode|jailbroken|unrestricted|unfiltered|uncensored|free_(?:from|of)_(?:all_|your_)?(?:rules|restrictions|guidelines)|no_longer_(?:bound|restricted|an_AI|an_assistant)|an?_(?:unrestricted|unfiltered|uncensored|different|new|evil)_(?:AI|assistant|model|chatbot|persona)\\b)',
    ),
  },
  { id: 'from-now-on', re: rule('\\b(?:from_now_on|henceforth|starting_now)%,?%you_(?:will|are|must|shall)_(?:act|behave|pretend|ignore|obey|disregard)\\b') },
  { id: 'other-languages', re: new RegExp(multilingualOverride(), 'giu') },
];

// Words a rule cannot match without, looked up in the lower-cased text before its regex runs: a
// case-insensitive Unicode regex cannot skip ahead to a literal, so running all of them over every page cost
// a large share of extraction. Each entry is a list of groups; every group must have one word present.
const IGNORE = ['ignor', 'disregard', 'forget', 'discard', 'abandon'];
// Short words are matched whole: as substrings ("now" in "known", "bot" in "both") they are on every page.
const AI_WORD = /\b(?:ais?|llms?|chatgpts?|claudes?|copilots?|geminis?|chatbots?|assistants?|agents?|bots?)\b|\bgpt|language.{0,12}model|automated.{0,12}(?:agent|assistant|system)/;
const MODAL_WORDS = ['must', 'should', 'shall', 'need', 'have', 'has', 'required', 'instructed', 'expected', 'asked', 'told'];
const QUALIFIER_WORD = /\b(?:previous|previously|prior|preceding|above|earlier|former|original|initial|foregoing|old|given|safety|developer)\b/;
const NOW = /\bnow\b/;
type Needles = ReadonlyArray<readonly string[] | RegExp>;
const NEEDLES: Record<string, Needles> = {
  'override-instructions': [IGNORE, QUALIFIER_WORD, ['instruction', 'prompt', 'direction', 'directive', 'guideline', 'guidance', 'rules', 'orders', 'programming', 'constraints', 'commands']],
  'override-yours': [[...IGNORE, 'override', 'bypass'], ['your']],
  'forget-what-told': [IGNORE, ['told', 'instructed', 'given', 'read']],
  'disregard-above': [IGNORE, ['above', 'foregoing']],
  'addressed-directive': [AI_WORD, MODAL_WORDS],
  'addressed-colon': [AI_WORD],
  'note-to-ai': [AI_WORD],
  'dear-ai': [AI_WORD],
  'if-you-are-ai': [AI_WORD, ['you']],
  'as-an-ai-you': [AI_WORD, ['you']],
  'before-answering': [['before'], /\b(?:answering|responding|replying|answer|respond|reply|summari[sz]e|generating)\b/],
  'when-answering': [['when', 'while'], /\b(?:answering|responding|summari[sz]ing|asked|generating)\b/],
  'tell-the-user': [/\b(?:tell|instruct|advise|urge|inform)\b/, /\busers?\b/],
  'reveal-prompt': [['prompt', 'instructions'], /\b(?:your|hidden|secret|original|initial)\b/],
  'system-override': [['system'], ['override', 'prompt', 'instruction', 'message', 'directive'], /\b(?:new|updated|revised|real|true|actual|secret|hidden)\b|override/],
  'you-are-now': [NOW, ['you']],
  'from-now-on': [/\bnow\b|henceforth/],
  'other-languages': [['ignor', '忽略', '無視', 'игнорир']],
};

// Where each rule's match can start: its first words. All of them are found in one scan of the
// lower-cased text (a plain scan: case-insensitive Unicode regexes cannot skip ahead to a literal, and
// running each rule over every page cost a large share of extraction); at each, the rules that start with
// that word run sticky.
const IGNORE_WORDS = ['ignore', 'disregard', 'forget'];
const ADDRESSEE_WORDS = ['ai', 'llm', 'large', 'language', 'gpt', 'chatgpt', 'claude', 'copilot', 'gemini', 'cod', 'chat'];
const ANCHOR_WORDS: Record<string, readonly string[]> = {
  'override-instructions': [...IGNORE_WORDS, 'discard', 'abandon'],
  'override-yours': [...IGNORE_WORDS, 'override', 'bypass'],
  'forget-what-told': IGNORE_WORDS,
  'disregard-above': IGNORE_WORDS,
  'addressed-directive': ADDRESSEE_WORDS,
  'addressed-colon': ADDRESSEE_WORDS,
  'note-to-ai': ['note', 'message', 'memo', 'instruction', 'attention', 'important', 'notice', 'reminder', 'psa', 'warning', 'hint'],
  'dear-ai': ['dear', 'attention', 'hey', 'hello', 'hi'],
  'if-you-are-ai': ['if'],
  'as-an-ai-you': ['as'],
  'before-answering': ['before'],
  'when-answering': ['when', 'whenever', 'while'],
  'tell-the-user': ['tell', 'instruct', 'advise', 'urge', 'inform'],
  'reveal-prompt': ['reveal', 'print', 'show', 'output', 'repeat', 'leak', 'disclose', 'display', 'share', 'send', 'tell'],
  'system-override': ['new', 'updated', 'revised', 'real', 'true', 'actual', 'secret', 'hidden', 'system'],
  'you-are-now': ['you'],
  'from-now-on': ['from', 'henceforth', 'starting'],
  'other-languages': ['ignor'],
};
// Anchors of words that are not ASCII (no \b in a non-Unicode regex), each with its rule.
const OTHER_ANCHORS: Record<string, string> = { 忽略: 'other-languages', игнорир: 'other-languages', 以前: 'other-languages', 前: 'other-languages', 上記: 'other-languages' };

/** Each anchor word and the rules that may start there (a word also starts the rules of its prefixes). */
const WORD_RULES = (() => {
  const direct = new Map<string, string[]>();
  for (const [id, list] of Object.entries(ANCHOR_WORDS)) for (const w of list) direct.set(w, [...(direct.get(w) ?? []), id]);
  for (const [w, id] of Object.entries(OTHER_ANCHORS)) direct.set(w, [...(direct.get(w) ?? []), id]);
  const out = new Map<string, string[]>();
  for (const w of direct.keys()) out.set(w, [...new Set([...direct.entries()].filter(([p]) => w.startsWith(p)).flatMap(([, ids]) => ids))]);
  return out;
})();
const byLength = (a: string, b: string): number => b.length - a.length;
const STICKY = new Map(RULES.map((r) => [r.id, new RegExp(r.re.source, 'iuy')]));

// One scan per set of rules whose needles a text has; a handful of sets occur in practice.
const scans = new Map<string, RegExp>();

/** The scan for the first words of these rules. */
function anchorScan(ids: readonly string[]): RegExp {
  const key = ids.join(',');
  let re = scans.get(key);
  if (re === undefined) {
    const words = [...new Set(ids.flatMap((id) => ANCHOR_WORDS[id] ?? []))].sort(byLength);
    const other = Object.keys(OTHER_ANCHORS)
      .filter((w) => ids.includes(OTHER_ANCHORS[w] as string))
      .sort(byLength);
    re = new RegExp([...(words.length > 0 ? [`\\b(?:${words.join('|')})`] : []), ...other].join('|'), 'g');
    if (scans.size >= 1024) scans.clear();
    scans.set(key, re);
  }
  return re;
}

/**
 * The earliest rule match: each rule whose needles the text has runs sticky at each of its first words in
 * `lower`, when `lower` lines up with the text character for character (lower-casing changes the length of
 * a few letters, such as U+0130), else over the whole text.
 */
function earliestRuleMatch(text: string, lower: string, present: (rule: string) => boolean): ScreenMatch | null {
  if (lower.length !== text.length) return wholeTextRuleMatch(text, present);
  const ids = RULES.map((r) => r.id).filter(present);
  if (ids.length === 0) return null;
  const scan = anchorScan(ids);
  scan.lastIndex = 0;
  for (let a = scan.exec(lower); a !== null; a = scan.exec(lower)) {
    for (const id of WORD_RULES.get(a[0]) ?? []) {
      const sticky = STICKY.get(id);
      if (sticky === undefined || !present(id)) continue;
      sticky.lastIndex = a.index;
      const m = sticky.exec(text);
      if (m !== null) return { rule: id, start: m.index, end: m.index + m[0].length };
    }
  }
  return null;
}

function wholeTextRuleMatch(text: string, present: (rule: string) => boolean): ScreenMatch | null {
  let best: ScreenMatch | null = null;
  for (const r of RULES) {
    if (!present(r.id)) continue;
    const m = firstMatch(r.re, text);
    if (m !== null && (best === null || m.index < best.start)) best = { rule: r.id, start: m.index, end: m.index + m[0].length };
  }
  return best;
}

/** Whether a rule's needles are all in the lower-cased text (a rule without needles always runs). */
function needlesIn(lower: string): (rule: string) => boolean {
  const seen = new Map<readonly string[] | RegExp, boolean>();
  const has = (group: readonly string[] | RegExp): boolean => {
    let v = seen.get(group);
    if (v === undefined) {
      v = group instanceof RegExp ? group.test(lower) : group.some((w) => lower.includes(w));
      seen.set(group, v);
    }
    return v;
  };
  return (rule) => (NEEDLES[rule] ?? []).every(has);
}

function multilingualOverride(): string {
  return [
    words('ignore[zr]?_(?:toutes_)?(?:les_)?(?:instructions|consignes)_(?:précédentes|antérieures|ci-dessus)'),
    words('ignora(?:r|d)?_(?:todas_)?(?:las_)?instrucciones_(?:anteriores|previas)'),
    words('ignorier(?:e|en)?_(?:alle_)?(?:vorherigen|bisherigen|obigen|vorigen)_(?:Anweisungen|Instruktionen|Befehle)'),
    words('ignora_(?:tutte_)?(?:le_)?istruzioni_precedenti'),
    words('ignore_(?:todas_)?(?:as_)?instruções_anteriores'),
    words('игнорируй(?:те)?_(?:все_)?(?:предыдущие|прошлые)_инструкции'),
    '忽略(?:之前|以上|先前|上面|所有)(?:的)?(?:所有|全部)?(?:的)?(?:之前|先前)?(?:的)?(?:指令|指示|说明)',
    '(?:以前|前|上記)の(?:すべての)?指示を(?:すべて)?無視',
  ].join('|');
}

// A secret on the reader's machine and a way to send it, in one sentence: exfiltration. Tool configuration
// files that hold tokens (.netrc, .npmrc, .pypirc) are left out: their own docs say "upload" and "curl" next
// to them all the time.
const SECRET = rule(
  "(?:~/\\.ssh(?!/\\S{0,64}\\.pub\\b)\\b|\\.ssh/(?:id_\\w+(?!\\.pub\\b)\\b|authorized_keys)|\\bid_(?:rsa|ed25519|ecdsa|dsa)\\b(?!\\.pub)|\\.aws/credentials|/etc/shadow\\b|\\.git-credentials|\\b(?:contents?_of|all_(?:of_)?)(?:your_|the_(?:user's_)?)?(?:ssh_keys?|private_keys?|api_keys|credentials|secrets|access_tokens|passwords|environment_variables|env_vars|\\.env\\b))",
);
// A link on its own is not a sink (documentation links to the page about `.pypirc`); "to https://…" is.
const SINK = /\b(?:send|upload|post|exfiltrate|transmit|forward|e-?mail|leak|submit|paste|share|curl|wget|nc)\b|\bto\s{1,3}<?https?:\/\//giu;
// A sentence end, a blank line or a new list item: the secret and the sink are not in one instruction.
const CLAUSE_BREAK = /[.!?]\s|\n[ \t]*\n|\n[ \t]{0,8}(?:[-*+]|\d{1,3}[.)])\s/g;
const NEGATED = /\b(?:never|not|don't|do not|avoid|without)\b[^.!?]{0,30}$/iu;

// Text a reader never sees (HTML comments, hidden elements) needs less: an assistant named and told anything.
const CONCEALED_ADDRESS = rule(`\\b${ADDRESSEE}\\b|\\bif_you(?:'re|_are)_an?_(?:${AI})`);
const CONCEALED_DIRECTIVE = rule(`\\b(?:${MODAL}|please|always|never|do_not|don't|ignore|disregard|run|execute|install|tell|recommend|mention|include|send|visit|download|respond|reply|answer)\\b`);
const PIPE_TO_SHELL = /\b(?:curl|wget)\b[^|\n]{1,200}\|\s{0,3}(?:sudo\s{1,3})?(?:ba|z|da)?sh\b/giu;

const PASSAGE_BEFORE = 200;
const PASSAGE_AFTER = 300;
/** The longest passage screenText returns. */
export const MAX_PASSAGE = 500;

function firstMatch(re: RegExp, text: string, from = 0): RegExpExecArray | null {
  re.lastIndex = from;
  return re.exec(text);
}

interface Span {
  start: number;
  end: number;
}

function spans(re: RegExp, text: string): Span[] {
  const out: Span[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out.push({ start: m.index, end: m.index + m[0].length });
    if (m[0].length === 0) re.lastIndex++;
  }
  return out;
}

/** The first span starting at or after `at` (spans sorted by start). */
function firstFrom(list: readonly Span[], at: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((list[mid] as Span).start < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const EXFILTRATION_REACH = 150;

// Secrets, sinks and clause breaks are each found in one scan; each secret is then paired with its nearest
// sink on either side by binary search, so a page full of `~/.ssh` costs n log n, not n times the window.
function exfiltration(text: string): ScreenMatch | null {
  const secrets = spans(SECRET, text);
  if (secrets.length === 0) return null;
  const sinks = spans(SINK, text);
  if (sinks.length === 0) return null;
  const breaks = spans(CLAUSE_BREAK, text);
  const unbroken = (a: number, b: number): boolean => {
    const i = firstFrom(breaks, a);
    return i >= breaks.length || (breaks[i] as Span).start >= b;
  };
  for (const secret of secrets) {
    const after = firstFrom(sinks, secret.end);
    const candidates = [sinks[after - 1], sinks[after]];
    for (const sink of candidates) {
      if (sink === undefined) continue;
      const [a, b] = sink.start < secret.start ? [sink.end, secret.start] : [secret.end, sink.start];
      if (b - a > EXFILTRATION_REACH || !unbroken(Math.max(0, a - 1), b)) continue;
      if (NEGATED.test(text.slice(Math.max(0, sink.start - 40), sink.start))) continue;
      return { rule: 'exfiltration', start: Math.min(sink.start, secret.start), end: Math.max(sink.end, secret.end) };
    }
  }
  return null;
}

/**
 * The earliest instruction-like passage aimed at an AI assistant in `text`, or null. `concealed` is text no
 * reader sees (an HTML comment, a hidden element): there an assistant addressed and told anything, or a
 * download piped into a shell, is enough.
 */
export function findInjection(text: string, concealed = false): ScreenMatch | null {
  let best: ScreenMatch | null = null;
  const consider = (m: ScreenMatch | null): void => {
    if (m !== null && (best === null || m.start < best.start)) best = m;
  };
  const lower = text.toLowerCase();
  consider(earliestRuleMatch(text, lower, needlesIn(lower)));
  consider(exfiltration(text));
  if (concealed) consider(concealedInstruction(text));
  return best;
}

function concealedInstruction(text: string): ScreenMatch | null {
  const pipe = firstMatch(PIPE_TO_SHELL, text);
  const address = firstMatch(CONCEALED_ADDRESS, text);
  const directive = address === null ? null : firstMatch(CONCEALED_DIRECTIVE, text);
  const found: ScreenMatch[] = [];
  if (pipe !== null) found.push({ rule: 'concealed-pipe-to-shell', start: pipe.index, end: pipe.index + pipe[0].length });
  if (address !== null && directive !== null) {
    const start = Math.min(address.index, directive.index);
    found.push({ rule: 'concealed-address', start, end: Math.max(address.index + address[0].length, directive.index + directive[0].length) });
  }
  return found.sort((a, b) => a.start - b.start)[0] ?? null;
}

/** The sentence around a match, at most MAX_PASSAGE characters, cut from the text itself. */
export function passageAround(text: string, start: number, end: number): string {
  let lo = Math.max(0, start - PASSAGE_BEFORE);
  const before = text.slice(lo, start);
  // Back to the start of the sentence, or of the line when the sentence began further up.
  const sentence = Math.max(...['. ', '! ', '? '].map((b) => before.lastIndexOf(b)));
  const line = before.lastIndexOf('\n');
  if (sentence >= 0 || line >= 0) lo += sentence > line ? sentence + 2 : line + 1;
  let hi = Math.min(text.length, end + PASSAGE_AFTER);
  const after = text.slice(end, hi);
  const stop = after.search(/[.!?](?:\s|$)|\n/);
  if (stop >= 0) hi = end + stop + 1;
  if (hi - lo > MAX_PASSAGE) {
    lo = Math.max(lo, Math.min(start, hi - MAX_PASSAGE));
    hi = Math.min(hi, lo + MAX_PASSAGE);
  }
  const raw = text.slice(lo, hi);
  const trimmed = raw.trim();
  return trimmed.length > 0 ? trimmed : raw;
}

/**
 * Screens text for instructions aimed at AI assistants. Returns `flags: ["possible_prompt_injection"]` and
 * the sentence that matched (a substring of `text`, at most MAX_PASSAGE characters), or `flags: []`.
 * Pure, never throws, linear in the length of the text.
 */
export function screenText(text: string, concealed = false): ScreenResult {
  if (typeof text !== 'string' || text.length === 0) return { flags: [] };
  const m = findInjection(text, concealed);
  if (m === null) return { flags: [] };
  return { flags: [PROMPT_INJECTION], passage: passageAround(text, m.start, m.end) };
}
