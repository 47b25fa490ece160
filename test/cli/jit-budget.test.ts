import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {JS_INTERRUPT_BUDGET, parquetFiles, raiseJsTieringBudget} from '../../src/cli/jit-budget.js'
import {raiseWasmTieringBudget} from '../../src/cli/wasm-budget.js'

const dir = mkdtempSync(join(tmpdir(), 'sfl-jit-budget-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe("V8's budget for a run of the Parquet kernel", () => {
  it('is raised on V8 before 12 (Node 20), with the one flag, and left alone from V8 12 on', () => {
    const set: string[] = []
    expect(raiseJsTieringBudget('11.3.244.8-node.33', (f) => set.push(f))).toBe(true)
    expect(set).toEqual([`--interrupt-budget=${JS_INTERRUPT_BUDGET}`])
    expect(raiseJsTieringBudget('12.4.254.21-node.33', (f) => set.push(f))).toBe(false)
    expect(raiseJsTieringBudget('13.6.233.17-node.37', (f) => set.push(f))).toBe(false)
    expect(set).toHaveLength(1)
  })

  it("the WebAssembly budget (undici's parser, a single lookup) likewise: raised before V8 13 only", () => {
    const set: string[] = []
    expect(raiseWasmTieringBudget('11.3.244.8-node.33', (f) => set.push(f))).toBe(true)
    expect(raiseWasmTieringBudget('12.4.254.21-node.33', (f) => set.push(f))).toBe(true)
    expect(raiseWasmTieringBudget('13.6.233.17-node.37', (f) => set.push(f))).toBe(false)
    expect(set).toEqual(['--wasm-tiering-budget=13000000', '--wasm-tiering-budget=13000000'])
  })

  it('files named .parquet or beginning with PAR1 are Parquet; anything else, or nothing, is not', () => {
    writeFileSync(join(dir, 'a.parquet'), '')
    writeFileSync(join(dir, 'b'), 'PAR1 and more')
    writeFileSync(join(dir, 'c.csv'), 'Fips\n')
    writeFileSync(join(dir, 'short'), 'PA')
    mkdirSync(join(dir, 'folder.parquet'))
    expect(parquetFiles([join(dir, 'a.parquet'), join(dir, 'b')])).toBe(true)
    expect(parquetFiles([join(dir, 'a.parquet'), join(dir, 'c.csv')])).toBe(false)
    expect(parquetFiles([join(dir, 'short')])).toBe(false)
    // a folder (an --out-dir export) is decided once its manifest is read, not at the entry
    expect(parquetFiles([join(dir, 'folder.parquet')])).toBe(false)
    expect(parquetFiles([join(dir, 'missing.parquet')])).toBe(false)
    expect(parquetFiles(['s3://bucket/x.parquet'])).toBe(false)
    // a named pipe, even one named .parquet: not opened (that would wait for a writer), not Parquet
    execFileSync('mkfifo', [join(dir, 'pipe.parquet')])
    expect(parquetFiles([join(dir, 'pipe.parquet')])).toBe(false)
    expect(parquetFiles([])).toBe(false)
  })
})
