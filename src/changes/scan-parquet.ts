import {asText, machineError} from '../io/export-reader.js'
import {
  cellOf,
  ParquetColumns,
  ParquetLayoutError,
  type ColumnValues,
  type ParquetColumn,
  type RawChunk,
  type RowSums,
} from '../io/parquet-reader.js'
import {ParquetKernel} from './kernel/parquet-kernel.js'
import type {EntrySink} from './entries.js'
import {ROLE_APN, ROLE_COMPARED, ROLE_FIPS, ROLE_ID, type FieldIds} from './names.js'
import {ScanAnomaly, type ScanTarget} from './scan-io.js'
import {hashNumber, hashText, hashTextBytes, type Lanes} from './row-digest.js'

/**
 * One pass over a Parquet export, column by column (src/io/parquet-reader.ts): only the columns the
 * comparison needs (the compared ones, the key's, the county's: an ignored column is never read), a row
 * group at a time; each distinct value of a column chunk is hashed once (a dictionary's values once for
 * all the rows that use them), then added into each row's digest, so no record object is made. The
 * fingerprints are src/changes/row-digest.ts's, as the CSV and NDJSON scans make them: a double is hashed
 * as the number it is, so `688600.0` in a CSV and 688600 here are one value. An entry's place is its row
 * number. A file the column reader does not lay out throws ScanAnomaly, and the caller reads the side as
 * record objects (src/io/export-reader.ts, hyparquet's general reader).
 */
export async function scanParquet(ids: FieldIds, sink: EntrySink, target: ScanTarget): Promise<void> {
  let file: ParquetColumns
  try {
    file = await ParquetColumns.open(target.path)
  } catch (error) {
    if (error instanceof ParquetLayoutError) throw new ScanAnomaly(error.message)
    throw error
  }
  try {
    const colIds = file.columns.map((c) => ids.ofText(c.name))
    if (colIds.includes(-1)) throw new ScanAnomaly('more columns than the scan names')
    // a name given to two columns: the record object keeps the last one's value
    const used = ROLE_COMPARED | ROLE_ID | ROLE_APN | ROLE_FIPS
    const needed = file.columns.filter(
      (c, i) => (ids.role[colIds[i]!]! & used) !== 0 && colIds.lastIndexOf(colIds[i]!) === i,
    )
    const roles = needed.map((c) => ids.role[colIds[c.index]!]!)
    const seeds = needed.map((c) => ids.seeds[colIds[c.index]!]!)
    // a column only compared goes into the row sums, and a key's into the keys, through the kernel
    // (src/changes/kernel/); what it gives back, and the county's column, are decoded here (a column only
    // compared into the row sums as its pages are decoded, RowSums: no slot per row)
    const compared = needed.filter((_, i) => roles[i] === ROLE_COMPARED)
    const byKernel = needed.filter((_, i) => (roles[i]! & ROLE_FIPS) === 0)
    const roleOf = new Map(needed.map((c, i) => [c.index, kernelRole(roles[i]!)]))
    const seedOf = new Map(needed.map((c, i) => [c.index, seeds[i]!]))
    const kernel = ParquetKernel.get()
    let county: string | undefined
    for (let g = 0; g < file.groups.length; g++) {
      const {first, rows} = file.groups[g]!
      const {sumA, sumB, key, keyA, keyB} = rowArrays(rows)
      const taken = kernel
        ? kernelSums(kernel, file, g, byKernel, seedOf, roleOf, {sumA, sumB, key, keyA, keyB})
        : new Set<number>()
      const summed = new Set(compared.filter((c) => !taken.has(c.index)).map((c) => c.index))
      const sums: RowSums = {
        summed,
        sumA,
        sumB,
        fingerprint: (v, from, to) => fingerprints(v, seedOf.get(v.column.index)!, from, to),
      }
      const here = needed.filter((c) => !taken.has(c.index))
      const values = readGroup(file, g, here, sums)
      let fips: ColumnValues | undefined
      values.forEach((v) => {
        const role = ids.role[colIds[v.column.index]!]!
        if (!summed.has(v.column.index))
          addColumn(v, seedOf.get(v.column.index)!, role, sumA, sumB, key, keyA, keyB)
        if (role & ROLE_FIPS) fips = v
      })
      const arrays = {key, keyA, keyB, sumA, sumB}
      if (target.group !== undefined) {
        // a manifest's county file: every record the county's
        if (county === undefined) select(sink, (county = target.group), colIds)
        sink.addRows(arrays, 0, rows, first, target.index)
      } else {
        // a record's county is its Fips (asText; none: ""), usually the last record's: runs of one Fips
        // value go to the sink at once
        const slots = fips?.slot
        for (let r = 0; r < rows;) {
          const slot = slots ? slots[r]! : -1
          const text = slot < 0 ? '' : (asText(cellOf(fips!, slot)) ?? '')
          if (text !== county) select(sink, (county = text), colIds)
          let end = r + 1
          if (slots) while (end < rows && slots[end] === slot) end++
          else end = rows
          sink.addRows(arrays, r, end, first, target.index)
          r = end
        }
      }
      // a row group at a time: Ctrl-C gets in between
      await new Promise((resolve) => setImmediate(resolve))
    }
  } finally {
    file.close()
  }
}

/** What the kernel does with a column of these roles (src/changes/names.ts): its sums, its key's rank. */
function kernelRole(role: number): {compared: boolean; rank: number} {
  return {
    compared: (role & ROLE_COMPARED) !== 0,
    rank: role & ROLE_ID ? 2 : role & ROLE_APN ? 1 : 0,
  }
}

/**
 * The row group's `columns` that the kernel takes, added into the sums and keys of `rows` (which it sets:
 * call it first); the others (another codec, a value only JavaScript fingerprints, damage) are left for
 * readGroup, which decodes them here and names what is wrong with them.
 */
function kernelSums(
  kernel: ParquetKernel,
  file: ParquetColumns,
  g: number,
  columns: ParquetColumn[],
  seedOf: Map<number, Lanes>,
  roleOf: Map<number, {compared: boolean; rank: number}>,
  rows: {sumA: Int32Array; sumB: Int32Array; key: Uint8Array; keyA: Int32Array; keyB: Int32Array},
): Set<number> {
  const taken = new Set<number>()
  if (!columns.length) return taken
  let chunks: RawChunk[]
  try {
    chunks = file.chunks(g, columns)
  } catch (error) {
    if (machineError(error)) throw error
    return taken // the JavaScript decoder meets the same and says what it is
  }
  const most = (f: (c: RawChunk) => number) => Math.max(...chunks.map(f))
  if (
    !kernel.begin(
      file.groups[g]!.rows,
      most((c) => c.bytes.length),
      most((c) => Number(c.meta.total_uncompressed_size)),
    )
  )
    return taken
  for (const chunk of chunks) {
    const i = chunk.column.index
    if (kernel.add(chunk, seedOf.get(i)!, roleOf.get(i))) taken.add(i)
  }
  kernel.copyInto(rows.sumA, rows.sumB, rows)
  return taken
}

/**
 * A row group's columns; a page the reader cannot decode (damaged inside its compressed bytes, which the
 * side's check does not decompress: src/changes/sides.ts) is a ScanAnomaly, so the side is read through
 * export-reader, which names what is wrong in one line.
 */
function readGroup(file: ParquetColumns, g: number, needed: ParquetColumn[], sums: RowSums): ColumnValues[] {
  try {
    return file.readGroup(g, needed, sums)
  } catch (error) {
    // the file system's errors (EIO...) are the machine's, not the file's: they go up as they are
    if (machineError(error)) throw error
    throw new ScanAnomaly(`row group ${g}: ${(error as Error).message}`)
  }
}

/**
 * A row group's digests and keys, zeroed: one set of arrays for every group (a group's are spent before
 * the next is read), so a scan allocates none per group (typed arrays' memory outside the heap made the
 * collector run often).
 */
function rowArrays(rows: number) {
  if (rowScratch.sumA.length < rows) rowScratch = rowArraysOf(rows)
  const r = rowScratch
  const out = {
    sumA: r.sumA.subarray(0, rows),
    sumB: r.sumB.subarray(0, rows),
    key: r.key.subarray(0, rows),
    keyA: r.keyA.subarray(0, rows),
    keyB: r.keyB.subarray(0, rows),
  }
  out.sumA.fill(0)
  out.sumB.fill(0)
  out.key.fill(0)
  return out
}
let rowScratch = rowArraysOf(0)
function rowArraysOf(n: number) {
  return {
    sumA: new Int32Array(n),
    sumB: new Int32Array(n),
    key: new Uint8Array(n),
    keyA: new Int32Array(n),
    keyB: new Int32Array(n),
  }
}

/**
 * A column chunk's table fingerprints (`la`, `lb` per slot) and `empty` (slots whose value is an empty
 * text: no key, as export-reader's asText gives ''), one set for every column chunk.
 */
function slotArrays(size: number) {
  if (slotScratch.la.length < size) {
    // grown keeping what is there: a chunk's later pages add slots after its dictionary's
    const n = Math.max(size, slotScratch.la.length * 2)
    const grown = {la: new Int32Array(n), lb: new Int32Array(n), empty: new Uint8Array(n)}
    grown.la.set(slotScratch.la)
    grown.lb.set(slotScratch.lb)
    grown.empty.set(slotScratch.empty)
    slotScratch = grown
  }
  return slotScratch
}
let slotScratch = {la: new Int32Array(0), lb: new Int32Array(0), empty: new Uint8Array(0)}

/** Every column of the file is a field of every record (null or not), as export-reader's objects have them. */
function select(sink: EntrySink, county: string, colIds: number[]): void {
  sink.select(county)
  for (const id of colIds) sink.see(id)
}

/** One column chunk into the rows' digests and keys: each table value hashed once, then added per row. */
function addColumn(
  v: ColumnValues,
  seed: Lanes,
  role: number,
  sumA: Int32Array,
  sumB: Int32Array,
  key: Uint8Array,
  keyA: Int32Array,
  keyB: Int32Array,
): void {
  const {la, lb, empty} = fingerprints(v, seed, 0, v.size)
  const slots = v.slot
  const n = v.rows
  if (role & ROLE_COMPARED)
    for (let r = 0; r < n; r++) {
      const s = slots[r]!
      if (s < 0) continue
      sumA[r] = (sumA[r]! + la[s]!) | 0
      sumB[r] = (sumB[r]! + lb[s]!) | 0
    }
  if (role & (ROLE_ID | ROLE_APN)) {
    const rank = role & ROLE_ID ? 2 : 1
    for (let r = 0; r < n; r++) {
      const s = slots[r]!
      if (s < 0 || empty[s] || key[r]! >= rank) continue
      key[r] = rank
      keyA[r] = la[s]!
      keyB[r] = lb[s]!
    }
  }
}

/**
 * The fingerprints of a column table's slots [from, to) (`la`, `lb` by slot) and which are an empty text
 * (`empty`: no key, as export-reader's asText gives ''): each table value hashed once.
 */
function fingerprints(v: ColumnValues, seed: Lanes, from: number, to: number) {
  const arrays = slotArrays(to)
  const {la, lb, empty} = arrays
  empty.fill(0, from, to)
  const out: Lanes = {a: 0, b: 0}
  const kind = v.column.kind
  if (kind === 'string')
    for (let i = from; i < to; i++) {
      hashTextBytes(v.bytes, v.start[i]!, v.end[i]!, seed, out)
      la[i] = out.a
      lb[i] = out.b
      empty[i] = v.end[i] === v.start[i] ? 1 : 0
    }
  else if (kind === 'number')
    for (let i = from; i < to; i++) {
      const x = v.num[i]!
      if (Number.isFinite(x)) hashNumber(x, seed, out)
      else hashText(String(x), seed, out)
      la[i] = out.a
      lb[i] = out.b
    }
  else if (kind === 'boolean') {
    // a boolean is the text true or false: two fingerprints for every row of the column
    const t: Lanes = {a: 0, b: 0}
    const f: Lanes = {a: 0, b: 0}
    hashText('true', seed, t)
    hashText('false', seed, f)
    for (let i = from; i < to; i++) {
      const l = v.num[i] === 1 ? t : f
      la[i] = l.a
      lb[i] = l.b
    }
  } else {
    // dates and timestamps as their text: each distinct value hashed once
    const known = new Map<number, Lanes>()
    for (let i = from; i < to; i++) {
      const x = v.num[i]!
      let l = known.get(x)
      if (!l) {
        l = {a: 0, b: 0}
        hashText(cellOf(v, i) as string, seed, l)
        known.set(x, l)
      }
      la[i] = l.a
      lb[i] = l.b
    }
  }
  return arrays
}
