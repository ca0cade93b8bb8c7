// Why a search ranks what it ranks: each ranked unit's score split into its weighted signals (rank.ts WEIGHTS),
// before the results are spread over pages. For reading a ranking while changing it, against an index `npm run
// eval` built (its databases are kept between runs):
//
//   npm run build && node --experimental-strip-types bench/why.ts DATABASE LIBRARY "query" ["query" ...]
//
// DATABASE: e.g. docdex_eval (the Debian manuals) or docdex_eval_peer (the peer benchmark's); LIBRARY: a
// library name, or '' for all libraries mixed. WHY_ROWS (default 12) units per query. Connection as for
// `npm run eval` (DOCDEX_HOME or DOCDEX_DATABASE_URL).
import { loadConfig } from '../dist/core/config.js';
import { createPool, resolveConnection } from '../dist/core/db/connect.js';
import { explainScores } from '../dist/core/search/search.js';
import { WEIGHTS } from '../dist/core/search/rank.js';

const [database, library, ...queries] = process.argv.slice(2);
if (!database || library === undefined || queries.length === 0) {
  console.error('Usage: node --experimental-strip-types bench/why.ts DATABASE LIBRARY|"" "query" ["query" ...]');
  process.exit(2);
}
const info = await resolveConnection(loadConfig(process.env));
const pool = createPool({ ...info, config: { ...info.config, database } }, { max: 2 });
const rows = Number(process.env.WHY_ROWS ?? 12);
const names = Object.keys(WEIGHTS) as Array<keyof typeof WEIGHTS>;
// Column heads: the signal names cut short (coverage → covera, pageTitleCoverage → pageTi).
const head = names.map((n) => n.slice(0, 6).padStart(7)).join('');
try {
  for (const query of queries) {
    const units = await explainScores(pool, { query, ...(library ? { source: library } : {}), limit: rows });
    console.log(`\n## ${query}\n  kind      score${head}  unit`);
    for (const u of units.slice(0, rows)) {
      const parts = names.map((n) => (u.parts[n] ?? 0).toFixed(2).padStart(7)).join('');
      console.log(`  ${u.kind.padEnd(8)}${u.score.toFixed(2).padStart(6)}${parts}  ${u.source_url.replace(/^[a-z]+:\/\/[^/]+\//, '')} | ${u.title.slice(0, 80)}`);
    }
  }
} finally {
  await pool.end();
}
