// node scripts/bench/duckdb-stats.mjs FILE OUT — the peer of `sfl stats FILE --json` in
// scripts/bench-deltas.mjs: the aggregate an analyst would write in DuckDB for the same figures (records,
// each flag's true/false/unknown, CRA levels, FinalValue quartiles, the median ConfidenceScore, assumable
// loans by type with their median rate and equity), through @duckdb/node-api as its own process so it is
// measured the same way. It writes the figures the bench checks against sfl's to OUT as JSON.
import {writeFileSync} from 'node:fs'

import {DuckDBInstance} from '@duckdb/node-api'

const [file, out] = process.argv.slice(2)
const lit = (s) => `'${s.replaceAll("'", "''")}'`
const src = /\.parquet$/.test(file) ? `read_parquet(${lit(file)})` : `read_csv(${lit(file)})`
const flags = ['FHAEligible', 'VAEligible', 'USDAAreaEligible', 'Assumable', 'FHACondoEligible']

const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
await con.run(`CREATE TEMP VIEW x AS SELECT * FROM ${src}`)
const one = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson()
const [run] = await one(`
  SELECT count(*)::INTEGER AS records,
    ${flags.map((f) => `count(*) FILTER (WHERE "${f}")::INTEGER AS "${f}_true", count(*) FILTER (WHERE NOT "${f}")::INTEGER AS "${f}_false"`).join(',\n    ')},
    quantile_cont(FinalValue, 0.25) AS p25, median(FinalValue) AS median, quantile_cont(FinalValue, 0.75) AS p75,
    median(ConfidenceScore) AS confidence
  FROM x`)
const cra = await one(`SELECT CRAEligible AS level, count(*)::INTEGER AS n FROM x GROUP BY 1 ORDER BY 1`)
// assumable loans by type (every loan of the benchmark county has its LoanType, spec 2.2 rule 1)
const loans = await one(`
  SELECT "AssumableMortgage.LoanType" AS type, count(*)::INTEGER AS n,
    median("AssumableMortgage.EstimatedInterestRate") AS rate, median("AssumableMortgage.EstimatedEquity") AS equity
  FROM x WHERE "AssumableMortgage.LoanType" IS NOT NULL GROUP BY 1 ORDER BY 1`)
writeFileSync(
  out,
  JSON.stringify({records: run.records, p25: run.p25, median: run.median, p75: run.p75, cra, loans}),
)
