import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {DuckDBInstance, type DuckDBConnection} from '@duckdb/node-api'
import {afterAll, beforeAll} from 'vitest'

/**
 * An in-memory DuckDB and a scratch folder for a test file that writes Parquet files with DuckDB: opened
 * before its tests, closed and removed after them. `con` is valid inside the tests.
 */
export function duckdbScratch(prefix: string): {dir: string; readonly con: DuckDBConnection} {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  let db: DuckDBInstance | undefined
  let con: DuckDBConnection | undefined
  beforeAll(async () => {
    db = await DuckDBInstance.create(':memory:')
    con = await db.connect()
  })
  afterAll(() => {
    con?.closeSync()
    db?.closeSync()
    rmSync(dir, {recursive: true, force: true})
  })
  return {
    dir,
    get con() {
      if (!con) throw new Error('duckdbScratch: the connection is opened before the tests run')
      return con
    },
  }
}
