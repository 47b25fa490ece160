// node scripts/bench/duckdb-deltas.mjs PREVIOUS CURRENT OUT COUNTS — the peer of `sfl changes` in
// scripts/bench-deltas.mjs: the query an analyst would write in DuckDB (through @duckdb/node-api, a
// development dependency), run as its own process so it is measured the same way. It writes the change
// list (Change, ServicePropertyID) to OUT as CSV and the counts to COUNTS as JSON, for the bench to check
// against sfl's. The format comes from the files' extension: read_csv, read_json for NDJSON, read_parquet for Parquet.
import {writeFileSync} from 'node:fs'

import {DuckDBInstance} from '@duckdb/node-api'

const [previous, current, out, counts] = process.argv.slice(2)
const lit = (s) => `'${s.replaceAll("'", "''")}'`
const read = (file) =>
  /\.(ndjson|jsonl)$/.test(file)
    ? `read_json(${lit(file)})`
    : /\.parquet$/.test(file)
      ? `read_parquet(${lit(file)})`
      : `read_csv(${lit(file)})`

const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
await con.run(`
  -- the two exports, without the column that moves at every revaluation (sfl leaves it out by default)
  CREATE VIEW prev AS SELECT * EXCLUDE (ValuationDate) FROM ${read(previous)};
  CREATE VIEW cur AS SELECT * EXCLUDE (ValuationDate) FROM ${read(current)};
  -- one hash per row (the table name stands for the whole row), joined on the property id: an id on one
  -- side only is added or deleted, on both sides with another hash updated
  CREATE TEMP TABLE changes AS
    SELECT CASE WHEN p.id IS NULL THEN 'added' WHEN c.id IS NULL THEN 'deleted' ELSE 'updated' END AS Change,
           coalesce(c.id, p.id) AS ServicePropertyID
    FROM (SELECT ServicePropertyID AS id, hash(prev) AS h FROM prev) p
    FULL OUTER JOIN (SELECT ServicePropertyID AS id, hash(cur) AS h FROM cur) c ON p.id = c.id
    WHERE p.h IS DISTINCT FROM c.h;
  COPY changes TO ${lit(out)} (HEADER);
`)
const rows = (
  await con.runAndReadAll('SELECT Change, count(*)::INTEGER AS n FROM changes GROUP BY Change')
).getRowObjectsJson()
writeFileSync(counts, JSON.stringify(Object.fromEntries(rows.map((r) => [r.Change, r.n]))))
