// A rule-based content classifier, and the language a class attribute names. No
// model and no network: every rule is a regular expression with a weight, tuned on
// the four real documentation sites of the corpus test (see
// test/extract/corpus.test.ts). The names themselves are in language-names.ts.
//
// shell vs console: `shell` is a script or a list of commands; `console` is a
// terminal session where commands carry a prompt (`$ `, `% `, `PS C:\>`,
// `C:\>`) and are usually followed by their output. A Python REPL session
// (`>>> `) is `python`, because what a reader searches for there is Python.

import { requiredNeedles } from './regex-needles.js';

/** Names that may appear as a bare class token (`<pre class="rust">`). */
const BARE_CLASS_NAMES = new Set([
  'python',
  'py',
  'javascript',
  'js',
  'typescript',
  'ts',
  'bash',
  'sh',
  'shell',
  'console',
  'sql',
  'json',
  'yaml',
  'yml',
  'html',
  'xml',
  'css',
  'go',
  'golang',
  'rust',
  'java',
  'cpp',
  'csharp',
  'ruby',
  'php',
  'toml',
  'dockerfile',
  'diff',
  'ini',
  'markdown',
  'kotlin',
  'swift',
  'scala',
  'haskell',
  'perl',
  'lua',
  'elixir',
  'erlang',
  'clojure',
  'groovy',
  'powershell',
  'scss',
  'less',
  'graphql',
  'protobuf',
  'jsx',
  'tsx',
  'zsh',
  'c',
  'text',
  'plaintext',
]);

const CLASS_PREFIX = /^(?:language|lang|highlight|brush|hljs|code|syntax|sourcecode)[-:_]([\w#+.-]+)$/;
const HIGHLIGHT_NOISE = new Set(['source', 'default', 'notranslate', 'text-html']);

/**
 * The language a class attribute names, or null. `bare` allows a class token that
 * is just a language name (`<pre class="rust">`), which is only trustworthy on
 * the pre/code element itself.
 */
export function languageFromClass(className: string, bare: boolean): string | null {
  if (className.length === 0) return null;
  // SyntaxHighlighter: class="brush: js; gutter: false".
  const brush = /(?:^|\s)brush:\s*([\w#+.-]+)/.exec(className);
  if (brush?.[1]) return brush[1];
  const tokens = className.split(/\s+/);
  let sourceCode = false;
  for (const t of tokens) {
    if (t.length === 0) continue;
    const m = CLASS_PREFIX.exec(t);
    if (m?.[1] && !HIGHLIGHT_NOISE.has(m[1].toLowerCase())) {
      // Sphinx's `highlight-default` means "whatever the project default is".
      if (m[1] === 'default') continue;
      return m[1];
    }
    if (t === 'sourceCode') sourceCode = true;
  }
  if (bare || sourceCode) {
    for (const t of tokens) {
      const lower = t.toLowerCase();
      if (BARE_CLASS_NAMES.has(lower)) return lower;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------
// Content classifier.

interface Rule {
  lang: string;
  re: RegExp;
  weight: number;
  /** Matches counted at most this many times. */
  cap?: number;
  /** One of these occurs in every match (null: unknown); a sample without any cannot match. */
  needles: Needle[] | null;
}

const R = (lang: string, re: RegExp, weight: number, cap = 3): Rule => {
  const needles = requiredNeedles(re);
  return { lang, re, weight, cap, needles: needles === null ? null : compileNeedles(needles) };
};

// Rules run with the `gm` flags over a bounded sample of the code, so every
// pattern must be linear (no nested quantifiers over the same characters).
const RULES: Rule[] = [
  // python
  R('python', /^[ \t]*(?:async )?def \w+\s*\(.*\)\s*(?:->\s*[^:]+)?:[ \t]*$/gm, 4),
  R('python', /^[ \t]*class \w+(?:\([^)]*\))?:[ \t]*$/gm, 4),
  R('python', /^[ \t]*(?:from [\w.]+ )?import [\w.]+(?: as \w+)?(?:, ?[\w.]+(?: as \w+)?)*[ \t]*$/gm, 2),
  R('python', /^[ \t]*from [\w.]+ import \(?[\w*]/gm, 3),
  R('python', /^[ \t]*(?:if|elif|while|for|with|try|except|else|finally|async def|async with|async for)\b[^{};]*:[ \t]*(?:#.*)?$/gm, 2),
  R('python', /\bprint\(/g, 1),
  R('python', /\bself\./g, 2),
  R('python', /\b(?:None|True|False)\b/g, 1),
  R('python', /^[ \t]*@[\w.]+(?:\(.*\))?[ \t]*$/gm, 1),
  R('python', /\b(?:elif|lambda|nonlocal|yield from|is not|not in)\b/g, 2),
  R('python', /\b__\w+__\b/g, 2),
  R('python', /^[ \t]*raise \w+/gm, 2),
  R('python', /^[ \t]*except(?: [\w.]+(?: as \w+)?)?:/gm, 3),
  R('python', /(?:^|[^\w"'])[rbfRBF]{0,2}(?:"""|''')/gm, 2),
  R('python', /^[ \t]+\w+=(?!=)[^=\n]/gm, 1.5),
  R('python', /^[ \t]*[\w.]+ [-+*/%|&]?= [^;\n]*[^;,{\s][ \t]*$/gm, 0.5, 4),
  R('python', /-\*- coding[:=]|^\(Pdb\)/gm, 5),
  R('python', /\{'[\w -]+': /g, 1.5),
  R('python', /^[ \t]*'[^'\n]+'\s*: /gm, 1, 4),
  R('python', /^[ \t]*\w+: [\w.]+\[[^\]\n]*\]/gm, 2),
  R('python', /^[ \t]*print [\w"']/gm, 1),
  R('python', /^[ \t]*(?:assert|del|pass|global|yield) /gm, 2),
  R('python', /^[ \t]*[\w.()[\]'"]+ [=!]= [^;{}\n]+$/gm, 0.75, 3),
  R('python', /^[ \t]*\[(?:'[^'\n]*'|\d+|\(.*\))(?:, ?(?:'[^'\n]*'|-?\d+|\(.*\)))*\]$/gm, 1),
  R('python', /^[ \t]*\([\w, ]+\) = /gm, 2),
  R('python', /^[ \t]*import [\w.]+ *;/gm, 2),
  R('python', /^[ \t]*case .+: *\.\.\.$/gm, 3),
  R('python', /[)"'\]] {2,}# /g, 1),
  R('python', /\bf"[^"\n]*\{|\bf'[^'\n]*\{/g, 2),
  R('python', /\b(?:Union|Optional|List|Dict|Tuple|Callable|Annotated|Literal|TypeVar)\[/g, 2),
  R('python', /^[ \t]*File "[^"\n]+", line \d+/gm, 4),
  R('python', /^[ \t]*print >>/gm, 3),
  R('python', /\[[\w.()]+:[\w.()]*\]/g, 1),
  R('python', /^[ \t]*await [\w.]+\([^;\n]*\)[ \t]*$/gm, 1),
  R('python', /^[ \t]*\w+(?:, ?\w+)+ = /gm, 2),
  R('python', /\b\w+ (?:not )?in [\w([]/g, 0.5),
  R('python', /\.(?:append|items|keys|join|split|strip|format)\(/g, 1),
  R('python', /^[ \t]*\w+ = \w+\(.*\)[ \t]*$/gm, 0.5),
  R('python', /^[ \t]*\.\.\. /gm, 1),
  R('python', /^Traceback \(most recent call last\):/gm, 6),
  R('python', /^[ \t]*(?:async )?def \w+\(/gm, 3),
  R('python', /^[ \t]*with .+ as [\w, ()]+:[ \t]*$/gm, 3),
  R('python', /^[ \t]*(?:match|case) [^\n{};]+:[ \t]*$/gm, 3),
  R('python', /^[ \t]*\w+: [\w[\], .|]+ = [^;\n]+$/gm, 3),
  R('python', /\.(?:execute|executemany|executescript|fetchone|fetchall)\(/g, 4),
  R('python', /^[ \t]*[\w.]+(?:\[[^\]\n]*\])? = [^;\n]*[^;,{\s][ \t]*$/gm, 0.75, 4),
  R('python', /\(\s*[^()\n]*?\b\w+=(?!=)[^=\n]/g, 1.5),
  // Expression lines with calls and no statement terminator: Python more than anything else we know.
  R('python', /^[ \t]*[\w.[\]'"]+(?: = [^;{}\n]+| ?\([^;{}\n]*\))[ \t]*(?:#.*)?$/gm, 0.5, 4),
  R('python', /\b(?:len|range|isinstance|enumerate|str|int|dict|list|tuple|sorted|open)\(/g, 1),

  // javascript
  R('javascript', /\b(?:const|let|var) [\w${}[\], ]+ = /g, 2),
  R('javascript', /=>/g, 1),
  R('javascript', /\bfunction\b(?:\s*\*)?\s*[\w$]*\s*\(/g, 2),
  R('javascript', /\brequire\(\s*['"`][^'"`]+['"`]\s*\)/g, 4),
  R('javascript', /^[ \t]*import\b[^;\n]*\bfrom\s+['"][^'"]+['"];?/gm, 3),
  R('javascript', /^[ \t]*import\s+['"][^'"]+['"];?/gm, 3),
  R('javascript', /^[ \t]*\} from ['"][^'"]+['"];?[ \t]*$/gm, 3),
  R('javascript', /^[ \t]*export (?:default |const |function |class |async |\{)/gm, 3),
  R('javascript', /\bconsole\.(?:log|error|warn|info|dir)\(/g, 3),
  R('javascript', /[!=]==/g, 2),
  R('javascript', /\bmodule\.exports\b|\bexports\.\w+ =/g, 3),
  R('javascript', /;[ \t]*$/gm, 0.5, 6),
  R('javascript', /\bawait\b/g, 1),
  R('javascript', /\bnew (?:Promise|Map|Set|Error|URL|Date|Array|Uint8Array|Buffer)\b/g, 2),
  R('javascript', /^[ \t]*\}\);?[ \t]*$/gm, 2),
  R('javascript', /\b(?:undefined|null)\b/g, 0.5),
  R('javascript', /\.(?:then|catch|on|emit|forEach|map|filter|push|pipe)\(/g, 1),
  R('javascript', /\bprocess\.(?:env|argv|stdout|exit|on|nextTick)\b/g, 2),
  R('javascript', /(?:^|[;{})][ \t]*)\/\/ /gm, 0.5),
  R('javascript', /\$\{[^}\n]+\}/g, 0.5),
  // util.inspect output: `{ key: 'value', n: 1 }` across lines.
  R('javascript', /^[ \t]*\{? ?(?:[\w$]+|'[\w$]*-[\w$-]*'): (?:'[^'\n]*'|-?\d[\w.]*|\[|\{|true|false|null|undefined|\[\w+\])[^\n]*,[ \t]*$/gm, 1.5, 4),
  R('javascript', /^[ \t]*[\w$]+(?:\.[\w$]+)+ = [^;\n]+;[ \t]*$/gm, 2),
  R('javascript', /^[ \t]*[\w$]+(?:\.[\w$]+)*\(.*\);[ \t]*$/gm, 1, 4),

  // typescript (scored separately, on top of javascript)
  R('typescript', /[\w)]\??: (?:string|number|boolean|void|any|unknown|never|object|bigint)(?:\[\])?\b/g, 3),
  R('typescript', /^[ \t]*(?:export )?(?:interface|type) \w+(?:<[^>]*>)? ?(?:=|\{|extends)/gm, 4),
  R('typescript', /\bas (?:const|string|number|any|unknown)\b/g, 3),
  R('typescript', /\bimplements \w+/g, 2),
  R('typescript', /^[ \t]*(?:public|private|protected|readonly) \w+[?!]?[:(]/gm, 3),
  R('typescript', /^[ \t]*(?:export )?enum \w+ \{/gm, 3),
  R('typescript', /\bimport type\b/g, 4),
  R('typescript', /\): (?:Promise<|[A-Z]\w*(?:<[^>]*>)?(?:\[\])? \{)/g, 3),
  R('typescript', /<(?:string|number|boolean|any|unknown)>/g, 3),

  // shell
  R(
    'shell',
    /^[ \t]*(?:sudo |npm |npx |yarn |pnpm |pip3? |pipx |python3? -m |cd |ls |mkdir |rm |cp |mv |export [A-Z_]+=|echo |cat |curl |wget |git |docker |kubectl |apt(?:-get)? |brew |make |chmod |chown |tar |source |unzip |ssh |scp |systemctl |service |tee |grep |sed |awk |cargo |go (?:get|run|build|install) |rustup |nvm |conda |virtualenv |gem |bundle |composer |mvn |gradle |dotnet |node |deno |bun |openssl |ln |touch |which |env |set -|unset |psql |createdb |dropdb |pg_ctl |initdb |pg_dump |mkdocs |pytest |tox |sphinx-build )/gm,
    3,
    5,
  ),
  R('shell', /(?:^|\s)--?[a-z][\w-]*(?:=\S+)?/g, 0.5, 6),
  R('shell', /\$\{?[A-Z_][A-Z0-9_]*\}?/g, 1),
  R('shell', /\|\s*(?:grep|sed|awk|xargs|sort|uniq|head|tail|wc|tee|jq)\b/g, 3),
  R('shell', /^[ \t]*(?:if \[\[? |fi$|then$|do$|done$|esac$|elif \[)/gm, 3),
  R('shell', /\\[ \t]*$/gm, 1),
  R('shell', /&&|\|\|/g, 0.5),
  R('shell', /^#!\/(?:usr\/)?bin\/(?:env )?(?:ba|z|k)?sh\b/gm, 10),
  R('shell', /^[ \t]*(?:python[\d.]*|py) (?:-[\w-]+ )*[\w./-]+\.py\b/gm, 4),
  R('shell', /\s[12]?>\s?\/dev\/null|2>&1/g, 3),

  // sql (upper-case keywords are much stronger evidence)
  R(
    'sql',
    /\b(?:SELECT|INSERT INTO|UPDATE|DELETE FROM|CREATE (?:TABLE|INDEX|VIEW|FUNCTION|OR REPLACE|TRIGGER|SCHEMA|DATABASE|EXTENSION|TYPE|ROLE|USER|SEQUENCE|AGGREGATE|OPERATOR|DOMAIN|POLICY|PUBLICATION|SUBSCRIPTION|RULE|PROCEDURE|MATERIALIZED|UNIQUE|TEMP)|ALTER (?:TABLE|INDEX|ROLE|DATABASE|SYSTEM|USER|SEQUENCE|FUNCTION|TYPE)|DROP (?:TABLE|INDEX|VIEW|FUNCTION|DATABASE|SCHEMA|ROLE|TYPE|EXTENSION)|GRANT|REVOKE|TRUNCATE|EXPLAIN|VACUUM|ANALYZE|BEGIN;|COMMIT;|ROLLBACK;|SET \w+ TO|COPY \w+|WITH RECURSIVE|PREPARE \w+|EXECUTE \w+|DECLARE \w+ CURSOR)\b/g,
    4,
  ),
  R(
    'sql',
    /\b(?:FROM|WHERE|JOIN|GROUP BY|ORDER BY|VALUES|RETURNING|HAVING|LIMIT|UNION|AS|ON|AND|OR|NOT NULL|PRIMARY KEY|REFERENCES|INTEGER|VARCHAR|TEXT|BOOLEAN|SERIAL|DEFAULT|LANGUAGE|RETURNS)\b/g,
    1,
    8,
  ),
  R('sql', /^[ \t]*(?:select|insert into|update \w+ set|delete from|create table|create index|alter table|drop table) /gim, 2),
  R('sql', /\b(?:from|where|join|group by|order by|values)\b/g, 0.3, 5),
  R('sql', /^[ \t]*--[ \t]/gm, 1),
  R('sql', /;[ \t]*$/gm, 0.3, 5),
  R('sql', /^\w+=[#>] /gm, 4),
  R('sql', /^-{3,}\+-{3,}/gm, 4),
  R('sql', /^\(\d+ rows?\)$/gm, 4),
  R('sql', /\$\$|\$\d\b|::[a-z]\w*/g, 1),

  // json
  R('json', /^[ \t]*"[^"\n]+"[ \t]*:[ \t]*(?:"|\d|-\d|\{|\[|true|false|null)/gm, 2, 6),
  R('json', /^[ \t]*[}\]],?[ \t]*$/gm, 0.5),

  // yaml
  R('yaml', /^[ \t]*(?!(?:try|else|finally|except|do|default|public|private|protected)\b)[\w.-]+:[ \t]*$/gm, 1.5, 6),
  R('yaml', /^[ \t]*[\w.-]+: (?![ \t]*$)[^;{}\n]*$/gm, 1.5, 8),
  R('yaml', /^[ \t]*- [\w'"!.{$/-]/gm, 1, 6),
  R('yaml', /^---[ \t]*$/gm, 1),
  R('yaml', /^[ \t]*- [\w.-]+: /gm, 2),
  R('yaml', /: [|>][-+]?[ \t]*$/gm, 2),

  // ini / toml
  R('ini', /^[ \t]*\[[\w .:/"-]+\][ \t]*$/gm, 3),
  R('ini', /^[ \t]*[\w.-]+[ \t]*=[ \t]*[^"'[{\s(][^\n(]*$/gm, 1.5, 6),
  R('ini', /^[ \t]*;/gm, 1),
  R('ini', /^[ \t]*[\w.-]+[ \t]*:[ \t]+\S/gm, 0.3, 4),
  R('toml', /^[ \t]*\[\[?[\w.-]+\]\]?[ \t]*$/gm, 2),
  R('toml', /^[ \t]*\[\[[\w.-]+\]\]/gm, 4),
  R('toml', /^[ \t]*[\w.-]+[ \t]*=[ \t]*(?:"|'|\[|\{|true\b|false\b|\d)/gm, 2, 6),

  // html / xml
  R(
    'html',
    /<(?:div|span|p|a|html|head|body|script|link|meta|ul|ol|li|table|tr|td|form|input|button|h[1-6]|img|br|section|nav|header|footer|main|article|label|select|option|textarea|iframe|style|title|strong|em|pre|code)\b[^>]*>/gi,
    2,
    6,
  ),
  R('html', /<!DOCTYPE html/gi, 10),
  R('html', /\{%-? *(?:if|for|block|extends|include|endif|endfor|endblock|set|macro) /g, 3),
  R('html', /\{\{[^}\n]+\}\}/g, 0.5),
  R('xml', /<\?xml\b/g, 10),
  R('xml', /<\/?[\w]+:[\w-]+/g, 2),
  R('xml', /\bxmlns(?::\w+)?=/g, 3),
  R('xml', /<([a-z][\w.-]*)\b[^>]*>[^<\n]*<\/\1>/gi, 1, 5),
  R('xml', /<[\w-]+\/>|<[\w-]+ [\w:-]+="[^"]*"\s*\/>/g, 1),

  // css
  R(
    'css',
    /^[ \t]*(?!(?:try|catch|else|class|function|if|for|while|switch|do|import|export|const|let|var|return|new|struct|enum|union|namespace|impl|fn|interface|type|public|private|static)\b)[.#@:]?[\w-]+(?:[ \t]*[,>+~ ][ \t]*[.#:]?[\w-]+)*(?:::?[\w-]+(?:\([^)]*\))?)?[ \t]*\{[ \t]*$/gm,
    2,
  ),
  R('css', /^[ \t]*[a-z-]+[ \t]*:[ \t]*[^;\n{}]+;[ \t]*$/gm, 1.5, 6),
  R('css', /@media\b|@import\b|@font-face\b|@keyframes\b|!important\b/g, 3),
  R('css', /\b\d+(?:px|em|rem|vh|vw|pt)\b|#[0-9a-fA-F]{3,6}\b/g, 1),

  // go
  R('go', /^package \w+[ \t]*$/gm, 5),
  R('go', /\bfunc (?:\([^)]*\) )?\w+\(/g, 4),
  R('go', /:=/g, 1.5),
  R('go', /\bfmt\.\w+\(/g, 3),
  R('go', /\berr != nil\b/g, 4),
  R('go', /^import \($/gm, 4),
  R('go', /\b(?:go func|chan \w+|defer \w+)/g, 3),

  // rust
  R('rust', /\bfn \w+(?:<[^>]*>)?\(/g, 3),
  R('rust', /\blet mut\b/g, 4),
  R('rust', /\b(?:println|format|vec|panic|assert_eq|assert|write|writeln|macro_rules)!/g, 4),
  R('rust', /^[ \t]*impl\b/gm, 3),
  R('rust', /\bpub (?:fn|struct|enum|mod|trait|crate|use)\b/g, 4),
  R('rust', /^[ \t]*use \w+(?:::[\w{}*, ]+)+;/gm, 3),
  R('rust', /&mut |&'\w+|\bOption<|\bResult<|\bSome\(|\bOk\(|\.unwrap\(\)|\bBox<|\bVec<|#\[derive/g, 2),
  R('rust', /\) -> [\w<>&]+ \{/g, 2),

  // java
  R('java', /\b(?:public|private|protected)(?: static)?(?: final)? (?:class|interface|enum|void|int|String|boolean|long|double|abstract|synchronized)\b/g, 3),
  R('java', /\bSystem\.(?:out|err)\.print/g, 5),
  R('java', /^[ \t]*import (?:static )?java[x]?\.[\w.*]+;/gm, 5),
  R('java', /@Override|@Test\b|@Autowired|@Bean\b/g, 3),
  R('java', /\bString\[\] args\b/g, 5),
  R('java', /^[ \t]*package [\w.]+;/gm, 4),
  R('java', /\bnew \w+<[^>]*>\(/g, 2),
  R('java', /\b(?:final|extends|throws) \w+/g, 1),
  R('java', /^[ \t]*(?:final )?[A-Z]\w*(?:<[\w<>, ?]*>)?(?:\[\])? [a-z]\w* = [^;\n]+;[ \t]*$/gm, 2),
  R('java', /\(\) -> |\b\w+ -> [\w{(]/g, 1.5),
  R('java', /\btry \(\w+/g, 3),
  R('java', /\b(?:Duration|Optional|List|Map|ArrayList|HashMap|String|Integer|Long)\.(?:of|ofSeconds|ofMillis|empty|valueOf|format|parseInt)\(/g, 2),

  // c / cpp
  R('c', /^[ \t]*#[ \t]*include[ \t]*[<"][\w./]+\.h[>"]/gm, 4),
  R('c', /^[ \t]*#[ \t]*(?:define|ifdef|ifndef|endif|if|pragma|undef)\b/gm, 3),
  R('c', /\bint main\(/g, 3),
  R('c', /\b(?:printf|fprintf|sprintf|malloc|calloc|free|sizeof|memcpy|strlen|strcmp)\(/g, 2),
  R('c', /->\w/g, 1),
  R('c', /\bNULL\b/g, 2),
  R('c', /\b(?:struct|typedef|unsigned|static|const|extern|void|char|int|long|size_t|double) [\w*]/g, 1, 6),
  R('c', /\b\w+ \*\*?\w+\s*[;=,)[]/g, 1.5),
  R('c', /\b(?:Py\w+|napi_\w+|uv_\w+)\b/g, 2),
  R('c', /^[ \t]*(?:const )?[A-Za-z_]\w*(?: \*+| )\*?\w+(?:\[\w*\])?(?:, ?\*?\w+)*;[ \t]*$/gm, 1.5),
  R('c', /\((?:const )?\w+ ?\*+\)\s*[\w(&]/g, 2),
  R('c', /[(,=] ?&\w/g, 1.5),
  R('c', /^[ \t]*(?:static |extern )?(?:const )?(?:unsigned )?\w+ \**\w+\([^;]*\)(?: \{)?[ \t]*;?$/gm, 1),
  R('c', /^\}[ \t]*$/gm, 0.5),
  R('cpp', /\bstd::/g, 4),
  R('cpp', /^[ \t]*#[ \t]*include[ \t]*<(?:iostream|vector|string|memory|map|unordered_map|algorithm|functional|thread|utility|cstdio|cstdlib)>/gm, 5),
  R('cpp', /\btemplate\s*</g, 4),
  R('cpp', /^[ \t]*#[ \t]*include[ \t]*[<"](?:node|v8|node_buffer|node_object_wrap|node_version|nan)\.h[>"]/gm, 5),
  R('cpp', /\bnamespace \w+|using namespace\b/g, 4),
  R('cpp', /^[ \t]*(?:public|private|protected):/gm, 4),
  R('cpp', /\b[A-Za-z_]\w*::[A-Za-z_~]\w*/g, 1.5),
  R('cpp', /\b(?:void|char|int|const \w+)\* \w/g, 1),
  R('cpp', /\bnullptr\b|\bcout\s*<<|\bcerr\s*<<|\bv8::|\bLocal<|\bIsolate\b/g, 3),
  R('cpp', /\bconst \w+(?:::\w+)*&/g, 2),
  R('cpp', /\bclass \w+(?: final)? : (?:public|private|protected) [\w:]+/g, 3),
  R('cpp', /\b(?:auto|override|virtual|constexpr|noexcept)\b/g, 2),

  // csharp
  R('csharp', /^[ \t]*using System(?:\.\w+)*;/gm, 6),
  R('csharp', /\bConsole\.Write(?:Line)?\(/g, 6),
  R('csharp', /\{ get; (?:private )?set; \}/g, 5),
  R('csharp', /\basync Task\b|\bTask<\w+>/g, 3),
  R('csharp', /\bnamespace [\w.]+;?/g, 1),
  R('csharp', /\bvar \w+ = new \w+/g, 2),
  R('csharp', /^[ \t]*\[\w+(?:\([^)]*\))?\][ \t]*$/gm, 1),

  // ruby
  R('ruby', /^[ \t]*def \w+[?!]?(?:\([^)]*\))?[ \t]*$/gm, 3),
  R('ruby', /^[ \t]*end[ \t]*$/gm, 2),
  R('ruby', /\bputs\b|\battr_(?:accessor|reader|writer)\b/g, 3),
  R('ruby', /^[ \t]*require ['"][\w/]+['"]/gm, 3),
  R('ruby', /\bdo \|[\w, ]+\|/g, 4),
  R('ruby', /\.each\b|\bunless\b|\belsif\b|\bnil\b/g, 2),
  R('ruby', /:\w+ => |\b\w+: :\w+/g, 2),
  R('ruby', /^[ \t]*(?:module|class) [A-Z]\w*(?: < [\w:]+)?[ \t]*$/gm, 2),

  // php
  R('php', /<\?php/g, 10),
  R('php', /\$\w+\s*=(?!=)/g, 1.5),
  R('php', /\$this->\w+|->\w+\(/g, 2),
  R('php', /\bfunction \w+\(\$\w+/g, 4),
  R('php', /^[ \t]*(?:namespace|use) [\w\\]+;/gm, 3),
  R('php', /\becho\b/g, 0.5),

  // dockerfile
  R('dockerfile', /^FROM [\w./:@-]+(?: AS \w+)?[ \t]*$/gm, 6),
  R('dockerfile', /^(?:RUN|COPY|CMD|ENTRYPOINT|WORKDIR|ENV|EXPOSE|ADD|ARG|LABEL|USER|VOLUME|HEALTHCHECK) /gm, 3),

  // diff
  R('diff', /^(?:---|\+\+\+) [ab/]?\S/gm, 4),
  R('diff', /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/gm, 8),
  R('diff', /^diff (?:--git )?\S/gm, 6),
  R('diff', /^[+-](?![+-])/gm, 0.5, 8),

  // markdown
  R('markdown', /^#{2,6} \S/gm, 2),
  R('markdown', /^# [A-Z][^\n(=]*$/gm, 0.5),
  R('markdown', /^```/gm, 3),
  R('markdown', /\[[^\]\n]+\]\([^)\n]+\)/g, 2),
  R('markdown', /^[ \t]*[-*+] \S/gm, 0.5),
  R('markdown', /\*\*[^*\n]+\*\*/g, 1),
];

// A language's rules only run when its cheap gate passes, and a rule only when
// the sample holds one of the literals its regex needs: with ~250 rules,
// running them all on every block made detection the slowest part of
// extracting an undeclared-language site (PostgreSQL's docs). Before any
// `includes`, a literal is ruled out when one of its character pairs never
// occurs in the sample (a 2048-bit set of the sample's hashed pairs, built in
// one pass); one-character literals are answered by that pass outright.
const PAIR_BITS = 2048;

function pairBit(a: number, b: number): number {
  return (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b)) >>> 21;
}

interface Needle {
  text: string;
  /** Pair bits of `text` (length >= 2). */
  pairs: number[];
}

function compileNeedles(list: readonly string[]): Needle[] {
  return list.map((text) => {
    const pairs: number[] = [];
    for (let i = 1; i < text.length; i++) {
      const bit = pairBit(text.charCodeAt(i - 1), text.charCodeAt(i));
      if (!pairs.includes(bit)) pairs.push(bit);
    }
    return { text, pairs };
  });
}

class Needles {
  private readonly pairs = new Int32Array(PAIR_BITS / 32);
  /** ASCII characters present, bit per code. */
  private readonly chars = new Int32Array(4);

  constructor(private readonly s: string) {
    let prev = -1;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 128) this.chars[c >> 5] = (this.chars[c >> 5] as number) | (1 << (c & 31));
      if (prev >= 0) {
        const bit = pairBit(prev, c);
        this.pairs[bit >> 5] = (this.pairs[bit >> 5] as number) | (1 << (bit & 31));
      }
      prev = c;
    }
  }

  any(needles: readonly Needle[]): boolean {
    outer: for (const n of needles) {
      const text = n.text;
      if (text.length === 1) {
        const c = text.charCodeAt(0);
        if (c < 128 ? ((this.chars[c >> 5] as number) & (1 << (c & 31))) !== 0 : this.s.includes(text)) return true;
        continue;
      }
      for (const bit of n.pairs) {
        if (((this.pairs[bit >> 5] as number) & (1 << (bit & 31))) === 0) continue outer;
      }
      if (this.s.includes(text)) return true;
    }
    return false;
  }
}

function gate(list: readonly string[], orMatches?: RegExp): (s: string, n: Needles) => boolean {
  const needles = compileNeedles(list);
  return (s, n) => n.any(needles) || (orMatches !== undefined && orMatches.test(s));
}

/** A regex tested only when the sample holds one of the literals it needs. */
class Guarded {
  private readonly needles: Needle[] | null;

  constructor(readonly re: RegExp) {
    const n = requiredNeedles(re);
    this.needles = n === null ? null : compileNeedles(n);
  }

  test(s: string, n: Needles): boolean {
    return (this.needles === null || n.any(this.needles)) && this.re.test(s);
  }

  /** Number of matches (the regex has the g flag). */
  count(s: string, n: Needles): number {
    if (this.needles !== null && !n.any(this.needles)) return 0;
    return (s.match(this.re) ?? []).length;
  }
}

const GATES: Record<string, (s: string, n: Needles) => boolean> = {
  go: gate(['func ', ':=', 'package ', 'fmt.', 'err != nil', 'chan ', 'defer ', 'import (']),
  rust: gate(['fn ', 'let ', '!(', '![', 'impl', 'pub ', '::', '&mut', "&'", 'Option<', 'Result<', 'Some(', 'Ok(', 'unwrap', '#[', 'Box<', 'Vec<', ') ->']),
  java: gate(
    ['public ', 'private ', 'protected ', 'System.', 'import java', '@', 'String', 'package ', 'new ', 'final ', 'extends ', 'throws ', 'try (', '-> ', 'List<', 'Map<', 'Optional', 'Duration.'],
    /^[ \t]*[A-Z]\w*(?:<[^>\n]*>)? [a-z]\w* = /m,
  ),
  csharp: gate(['using System', 'Console.', 'get;', 'Task', 'namespace ', 'var ', '[']),
  ruby: gate(['def ', 'end', 'puts', 'attr_', 'require', 'do |', '.each', 'unless', 'elsif', 'nil', '=>', ': :', 'module ', 'class ']),
  php: gate(['<?php', '$', '->', 'echo', 'namespace ', 'use ']),
  dockerfile: (s) => /^(?:FROM|RUN|COPY|CMD|ENTRYPOINT|WORKDIR|ENV|EXPOSE|ADD|ARG|LABEL|USER|VOLUME|HEALTHCHECK) /m.test(s),
  diff: gate(['---', '+++', '@@', 'diff '], /^[+-]/m),
  markdown: gate(['#', '```', '](', '- ', '* ', '**']),
  css: gate(['{', '@']),
  typescript: gate([': ', 'interface ', 'type ', ' as ', 'implements ', 'enum ', '<', 'public ', 'private ', 'protected ', 'readonly ']),
  html: gate(['<', '{%', '{{']),
  xml: gate(['<']),
  toml: gate(['[', '=']),
  ini: gate(['[', '=', ';', ':']),
  yaml: gate([':', '- ', '---']),
  json: gate(['"', '}', ']']),
  cpp: gate([
    '::',
    'template',
    'namespace',
    'public:',
    'private:',
    'protected:',
    'nullptr',
    'cout',
    'cerr',
    'v8',
    'Local<',
    'Isolate',
    '#include',
    'auto',
    'override',
    'virtual',
    'constexpr',
    'noexcept',
    'class ',
    '&',
    '* ',
  ]),
  sql: (s) =>
    /select|insert|update|delete|create|alter|drop|grant|revoke|truncate|explain|vacuum|analyze|begin|commit|rollback|\bset |copy |prepare|execute|declare|from|where|join|values|--|\$\$|::|=[#>] |\(\d+ rows?\)/i.test(
      s,
    ),
};

interface LanguageRules {
  lang: string;
  gate: ((s: string, n: Needles) => boolean) | undefined;
  rules: Rule[];
}

const RULES_BY_LANGUAGE: LanguageRules[] = (() => {
  const m = new Map<string, Rule[]>();
  for (const r of RULES) {
    const list = m.get(r.lang);
    if (list) list.push(r);
    else m.set(r.lang, [r]);
  }
  return [...m].map(([lang, rules]) => ({ lang, gate: GATES[lang], rules }));
})();

const SAMPLE_CHARS = 8_000;
const SAMPLE_LINES = 200;

function sample(code: string): string {
  let s = code.length > SAMPLE_CHARS ? code.slice(0, SAMPLE_CHARS) : code;
  let nl = -1;
  for (let i = 0; i < SAMPLE_LINES; i++) {
    nl = s.indexOf('\n', nl + 1);
    if (nl < 0) break;
  }
  if (nl >= 0) s = s.slice(0, nl);
  return s;
}

const PROMPT_LINE =
  /^(?:\$|%|#(?=\s+(?:sudo|apt|yum|dnf|pip|npm|systemctl|service|cd|ls|mkdir|make|cp|mv|rm|chmod|chown|su)\b)|[\w.-]+@[\w.-]+(?::[^$#\n]*)?[$#]|\([\w.-]+\)\s*\$|PS [A-Za-z]:\\[^>\n]*>|[A-Za-z]:\\[^>\n]*>)(?:\s|$)/;
const SHELL_COMMAND =
  /^(?:sudo|npm|npx|yarn|pnpm|pip3?|python[\d.]*|node|cd|ls|dir|mkdir|md|rm|del|cp|copy|mv|move|echo|set|export|git|curl|wget|docker|make|cat|type|chmod|brew|apt|apt-get|where|which|cl|gcc|clang)\b/;

function firstNonBlankLines(s: string, n: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (out.length < n && start <= s.length) {
    let end = s.indexOf('\n', start);
    if (end < 0) end = s.length;
    const line = s.slice(start, end);
    if (line.trim().length > 0) out.push(line);
    start = end + 1;
  }
  return out;
}

function looksLikeJson(trimmed: string): boolean {
  const c = trimmed[0];
  if (c !== '{' && c !== '[') return false;
  if (trimmed.length > 200_000) return false;
  try {
    const v: unknown = JSON.parse(trimmed);
    // `[1, 2]` or `{}` alone are as much Python or JavaScript as JSON.
    return typeof v === 'object' && v !== null && /"\s*:/.test(trimmed);
  } catch {
    return false;
  }
}

/**
 * Guess the language of a code block from its content. `confident` is false for
 * short or ambiguous code; the returned language is then the best guess (or
 * `text` when nothing matched at all).
 */
const PYTHON_PROMPT_ANYWHERE = new Guarded(/^>>>(?: |$)/m);
// BNF grammars (Sphinx productionlist, RFCs) are not Go, whatever `:=` says.
const BNF_RULE = new Guarded(/^[ \t]*[\w<>-]+[ \t]*::=/m);
const DIFF_GIT = new Guarded(/^diff --git /m);
const DIFF_OLD = new Guarded(/^--- \S/m);
const DIFF_NEW = new Guarded(/^\+\+\+ \S/m);
const DIFF_HUNK = new Guarded(/^@@ /m);

export function detectLanguage(code: string): { language: string; confident: boolean } {
  const s = sample(String(code ?? '')).replace(/\r\n?/g, '\n');
  const trimmed = s.trim();
  if (trimmed.length === 0) return { language: 'text', confident: false };
  const needles = new Needles(s);

  // Decisive markers first: they settle the question whatever else is there.
  if (trimmed.startsWith('<?php')) return { language: 'php', confident: true };
  if (trimmed.startsWith('<?xml')) return { language: 'xml', confident: true };
  if (/^<!doctype html/i.test(trimmed)) return { language: 'html', confident: true };
  const shebang = /^#!\s*(?:\S*\/)?(?:env\s+(?:-\S+\s+)*)?([\w.-]+)/.exec(trimmed);
  if (shebang?.[1]) {
    const interp = shebang[1];
    if (/^(?:ba|z|k|da)?sh$/.test(interp)) return { language: 'shell', confident: true };
    if (/^python/.test(interp)) return { language: 'python', confident: true };
    if (interp === 'node') return { language: 'javascript', confident: true };
    if (interp === 'ruby') return { language: 'ruby', confident: true };
  }
  const head = firstNonBlankLines(s, 3);
  const first = head[0] ?? '';
  if (/^\s*>>>(?: |$)/.test(first)) return { language: 'python', confident: true };
  if (PROMPT_LINE.test(first) || (head.length > 1 && head.every((l) => PROMPT_LINE.test(l)))) {
    return { language: 'console', confident: true };
  }
  if (PYTHON_PROMPT_ANYWHERE.test(s, needles)) return { language: 'python', confident: true };
  // `> expr` lines: the Node.js REPL, or a Windows/generic prompt running a command.
  if (/^> \S/.test(first)) {
    if (SHELL_COMMAND.test(first.slice(2))) return { language: 'console', confident: true };
    if (/[(.=]|\b(?:const|let|var|await|require)\b/.test(first)) return { language: 'javascript', confident: true };
  }
  if (looksLikeJson(trimmed)) return { language: 'json', confident: true };
  if (BNF_RULE.test(s, needles)) return { language: 'text', confident: false };
  if (DIFF_GIT.test(s, needles) || (DIFF_OLD.test(s, needles) && DIFF_NEW.test(s, needles) && DIFF_HUNK.test(s, needles))) {
    return { language: 'diff', confident: true };
  }

  const scores = languageScores(s, trimmed, needles);
  let best = 'text';
  let bestScore = 0;
  let second = 0;
  for (const [lang, score] of scores) {
    if (score > bestScore) {
      second = bestScore;
      bestScore = score;
      best = lang;
    } else if (score > second) {
      second = score;
    }
  }
  if (bestScore < 0.5) return { language: 'text', confident: false };
  const confident = bestScore >= 4 && bestScore >= second * 1.5;
  return { language: best, confident };
}

/**
 * Score of each language for a code sample (diagnostics and tests); only the
 * relative order matters.
 */
export function languageScores(s: string, trimmed = s.trim(), needles = new Needles(s)): Map<string, number> {
  const scores = new Map<string, number>();
  for (const { lang, gate, rules } of RULES_BY_LANGUAGE) {
    if (gate !== undefined && !gate(s, needles)) continue;
    let score = 0;
    for (const rule of rules) {
      if (rule.needles !== null && !needles.any(rule.needles)) continue;
      rule.re.lastIndex = 0;
      let count = 0;
      const cap = rule.cap ?? 3;
      // test() advances lastIndex like exec() without building match arrays.
      while (count < cap && rule.re.test(s)) {
        count++;
        // Zero-width matches would loop forever.
        if (rule.re.lastIndex === 0) break;
      }
      score += count * rule.weight;
    }
    if (score > 0) scores.set(lang, score);
  }
  adjustScores(scores, s, trimmed, needles);
  return scores;
}

const STATEMENT_END = new Guarded(/;[ \t]*$/gm);
const LINE_COMMENT = new Guarded(/^[ \t]*\/\/ /m);
const COMMA_END = new Guarded(/,[ \t]*$/gm);
const SECTION_LINE = new Guarded(/^[ \t]*\[[\w .:/"-]+\][ \t]*$/m);
const CSS_DECLARATION = new Guarded(/^[ \t]*[a-z-]+[ \t]*:[ \t]*[^;\n{}]+;[ \t]*$/m);
const JSON_KEY_LINE = new Guarded(/^[ \t]*[{[]?[ \t]*"[^"\n]+"[ \t]*:/m);
const QUOTED_ASSIGNMENT = new Guarded(/^[ \t]*[\w.-]+[ \t]*=[ \t]*(?:"|'|\[|\{)/gm);
const PYTHON_DEF = new Guarded(/^[ \t]*def \w+.*:[ \t]*$/m);

/** Cross-language corrections that a flat sum of rules cannot express. */
function adjustScores(scores: Map<string, number>, s: string, trimmed: string, needles: Needles): void {
  const get = (l: string): number => scores.get(l) ?? 0;
  const js = get('javascript');
  const ts = get('typescript');
  // TypeScript is JavaScript plus types: it wins only with type evidence.
  if (ts > 0) scores.set('typescript', ts >= 3 ? js + ts : 0);
  // C++ is a superset of most C evidence.
  const cpp = get('cpp');
  if (cpp >= 4) scores.set('cpp', cpp + get('c') * 0.8);
  // Curly-brace languages end statements with `;`: not YAML, INI or Python.
  const semis = STATEMENT_END.count(s, needles);
  if (semis >= 1) {
    scores.set('yaml', get('yaml') * 0.3);
    scores.set('python', get('python') * (semis >= 2 ? 0.4 : 0.6));
    scores.set('ini', get('ini') * 0.2);
    scores.set('toml', get('toml') * 0.2);
  }
  if (LINE_COMMENT.test(s, needles)) scores.set('python', get('python') * 0.3);
  const commas = COMMA_END.count(s, needles);
  if (commas >= 1) {
    scores.set('ini', get('ini') * 0.3);
    scores.set('toml', get('toml') * 0.3);
  }
  // INI and TOML without a [section] are usually assignments in some program.
  if (!SECTION_LINE.test(s, needles)) {
    scores.set('ini', get('ini') * 0.3);
    scores.set('toml', get('toml') * 0.3);
  }
  // YAML values don't end with commas; object literals do.
  if (commas >= 2) scores.set('yaml', get('yaml') * 0.3);
  // CSS is declarations; without one it is some other brace language.
  if (get('css') > 0 && !CSS_DECLARATION.test(s, needles)) scores.set('css', get('css') * 0.3);
  // A JSON-looking document that failed to parse (comments, `...`) is still JSON.
  if (/^[{[]/.test(trimmed) && /[}\]]$/.test(trimmed) && get('json') >= 2 && JSON_KEY_LINE.test(s, needles)) {
    scores.set('json', get('json') + 4);
  }
  // TOML and INI share `[section]`; quoted values and arrays mean TOML.
  const toml = get('toml');
  const ini = get('ini');
  if (toml > 0 && ini > 0) {
    const quoted = QUOTED_ASSIGNMENT.count(s, needles);
    if (quoted === 0) scores.set('toml', toml * 0.4);
    else scores.set('ini', ini * 0.5);
  }
  // Ruby's `def x` without a colon also matches nothing in Python; Python's with a colon.
  if (get('ruby') > 0 && PYTHON_DEF.test(s, needles)) scores.set('ruby', get('ruby') * 0.3);
  // HTML/XML: markup everywhere and no code keywords.
  if (/^</.test(trimmed) && />$/.test(trimmed)) {
    scores.set('html', get('html') * 1.5);
    scores.set('xml', get('xml') * 1.5);
  }
}
