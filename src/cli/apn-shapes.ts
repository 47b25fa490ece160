import {closeSync, constants, fstatSync, openSync, readFileSync} from 'node:fs'
import {isAbsolute, join} from 'node:path'

import {ownerProblem} from '../io/owner-rule.js'
import {makePrivateDirSync, writeFileAtomicSync} from '../io/private-sync.js'
import {apnShape, SHAPE_PATTERN} from '../text/apn-shape.js'

/**
 * The APN shapes sfl has seen, one per county (issue 31): `<cache folder>/apn-shapes.json`,
 * {"v":1,"shapes":{"06067":"999-9999-999-9999"}}. A lookup that gets a record remembers the shape of its
 * APN (src/text/apn-shape.ts: 9s, As and separators, never the number); an APN that then misses in that
 * county is told how the county's APNs look. Only a hint rides on it, so nothing here ever fails a
 * lookup: a file that is missing, not a regular file, not this user's alone, larger than MAX_BYTES, not
 * JSON of this form, or holding one entry that is not a FIPS code and a shape, is ignored whole (and
 * replaced at the next write). At most MAX_COUNTIES entries (the US counties, spec 3.1's FIPS list).
 */
const FILE = 'apn-shapes.json'
export const MAX_COUNTIES = 3235
// 3,235 entries of `"12345":"<40 characters>",` and the wrapping
const MAX_BYTES = 200_000

export type Shapes = Map<string, string>

/** The file's path, or undefined when the cache folder is not an absolute path. */
export function shapesPath(cacheDir: string | undefined): string | undefined {
  return cacheDir && isAbsolute(cacheDir) ? join(cacheDir, FILE) : undefined
}

/** Pure: the shapes a file's text holds, or undefined when any of it is not of this file's form. */
export function parseShapes(text: string): Shapes | undefined {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof doc !== 'object' || doc === null || (doc as {v?: unknown}).v !== 1) return undefined
  const shapes = (doc as {shapes?: unknown}).shapes
  if (typeof shapes !== 'object' || shapes === null || Array.isArray(shapes)) return undefined
  const entries = Object.entries(shapes)
  if (entries.length > MAX_COUNTIES) return undefined
  const out: Shapes = new Map()
  for (const [fips, shape] of entries) {
    if (!/^\d{5}$/.test(fips) || typeof shape !== 'string' || !SHAPE_PATTERN.test(shape)) return undefined
    out.set(fips, shape)
  }
  return out
}

/** The shapes stored, or an empty map when there is no file to trust. Never throws. */
export function readShapes(cacheDir: string | undefined): Shapes {
  const path = shapesPath(cacheDir)
  if (!path) return new Map<string, string>()
  let fd: number | undefined
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0))
    const st = fstatSync(fd)
    const uid = process.getuid?.()
    if (!st.isFile() || st.size > MAX_BYTES) return new Map<string, string>()
    if (uid !== undefined && ownerProblem(st, uid, {rootOk: false}) !== undefined)
      return new Map<string, string>()
    return parseShapes(readFileSync(fd, 'utf8')) ?? new Map<string, string>()
  } catch {
    return new Map<string, string>()
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/**
 * Remember the shape of the first of `records`' APNs that has one, for `fips`. Never throws
 * (rememberShapes).
 */
export function rememberShape(
  cacheDir: string | undefined,
  fips: string,
  records: ReadonlyArray<Record<string, unknown>>,
): void {
  const shape = records.map((r) => apnShape(r['APN'])).find((s) => s !== undefined)
  if (shape !== undefined) rememberShapes(cacheDir, new Map([[fips, shape]]))
}

/**
 * The shape of each county's APNs seen in a batch: the last record's of each county (its `Fips`), for
 * rememberShapes at the end of the run. Pure but for the map it fills.
 */
export function shapeCollector(): {seen: Shapes; add: (record: Record<string, unknown>) => void} {
  const seen: Shapes = new Map()
  return {
    seen,
    add: (record) => {
      const fips = record['Fips']
      const shape = apnShape(record['APN'])
      if (typeof fips === 'string' && /^\d{5}$/.test(fips) && shape !== undefined) seen.set(fips, shape)
    },
  }
}

/**
 * Store `fresh` (FIPS code to shape) over the shapes stored. Written only when something changes, mode
 * 0600 through the output gate's private primitives (an exclusive temp file renamed), in the cache folder
 * made 0700 when its parent exists (never a chain of folders); a county past MAX_COUNTIES is not added.
 * Never throws.
 */
export function rememberShapes(cacheDir: string | undefined, fresh: ReadonlyMap<string, string>): void {
  try {
    const path = shapesPath(cacheDir)
    if (!path || fresh.size === 0) return
    const shapes = readShapes(cacheDir)
    let changed = false
    for (const [fips, shape] of fresh) {
      if (!/^\d{5}$/.test(fips) || !SHAPE_PATTERN.test(shape) || shapes.get(fips) === shape) continue
      if (!shapes.has(fips) && shapes.size >= MAX_COUNTIES) continue
      shapes.set(fips, shape)
      changed = true
    }
    if (!changed || !makePrivateDirSync(cacheDir!)) return
    const text = `${JSON.stringify({v: 1, shapes: Object.fromEntries([...shapes].sort()) as unknown})}\n`
    writeFileAtomicSync(path, Buffer.from(text), {mode: 0o600, sync: false})
  } catch {
    // a hint's memory: a full disk or a read-only cache folder costs the hint, never the lookup
  }
}
