import {UsageError} from '../errors.js'
import {OBJECT_SCHEME as SCHEME, isObjectUrl} from '../text/object-url.js'

/**
 * `s3://bucket/key` and `s3://bucket/prefix/`: what sfl accepts where a path is written or read. Checked
 * before any request, with one line that names the flag, the value and the rule (exit 2).
 */
export interface ObjectUrl {
  bucket: string
  /** The object's key, or for a folder-like target the prefix: '' or ending in '/'. */
  key: string
}

/** S3's limit on a key's length, in UTF-8 bytes (Amazon S3 User Guide, "Naming Amazon S3 objects"). */
export const MAX_KEY_BYTES = 1024

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** True for a value sfl treats as an object-store location rather than a local path (src/text/object-url.ts). */
export {isObjectUrl}

/**
 * Why `name` is not a bucket name S3 accepts, or undefined when it is. The rules of general purpose
 * buckets (Amazon S3 User Guide, "General purpose bucket naming rules"): 3 to 63 characters of lower-case
 * letters, digits, dots and hyphens, beginning and ending with a letter or digit, no two dots in a row, not
 * an IP address, and not a prefix or suffix S3 keeps for itself. Stores that allow more (GCS's underscores)
 * are held to S3's rules, which every S3-compatible store accepts.
 */
export function bucketNameProblem(name: string): string | undefined {
  if (name.length < 3 || name.length > 63) return `is ${name.length} characters long; use 3 to 63`
  const bad = /[^a-z0-9.-]/.exec(name)
  if (bad)
    return /[A-Z]/.test(bad[0])
      ? 'has upper-case letters; bucket names are lower case'
      : `has the character ${JSON.stringify(bad[0])}; use lower-case letters, digits, dots and hyphens`
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name)) return 'must begin and end with a letter or digit'
  if (name.includes('..')) return 'has two dots in a row'
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(name)) return 'is an IP address'
  for (const p of ['xn--', 'sthree-', 'amzn-s3-demo-'])
    if (name.startsWith(p)) return `begins with "${p}", which S3 reserves`
  for (const s of ['-s3alias', '--ol-s3', '.mrap', '--x-s3', '--table-s3'])
    if (name.endsWith(s)) return `ends with "${s}", which S3 reserves`
  return undefined
}

/**
 * Why `key` is not a key sfl writes or reads, or undefined. S3 takes any UTF-8 up to 1,024 bytes, but the
 * engines that read an export (Spark, Trino, DuckDB) and `aws s3 sync` treat some keys as paths: a `.` or
 * `..` segment or an empty one (`a//b`) names a different object than it seems to, and a control
 * character cannot be carried in the XML of a listing. sfl refuses those.
 */
export function keyProblem(key: string): string | undefined {
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES)
    return `is longer than ${MAX_KEY_BYTES} bytes, the most S3 allows for a key`
  // eslint-disable-next-line no-control-regex -- the control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'has a control character'
  if (LONE_SURROGATE.test(key)) return 'is not valid Unicode (a lone surrogate)'
  const segments = key.split('/')
  // a trailing '/' (a prefix) leaves one empty last segment, which is allowed
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]
    if (s === '' && i < segments.length - 1) return 'has an empty segment ("//" or a leading "/")'
    if (s === '.' || s === '..') return `has a "${s}" segment, which readers resolve as a path`
  }
  return undefined
}

/** The value as typed, or quoted with escapes when it holds a control character (the line stays one). */
function shown(value: string): string {
  // eslint-disable-next-line no-control-regex -- the control characters are what is escaped
  return /[\u0000-\u001f\u007f]/.test(value) ? JSON.stringify(value) : value
}

function parse(raw: string, flag: string): ObjectUrl {
  const value = shown(raw)
  if (!isObjectUrl(raw))
    throw new UsageError(`${flag} ${value}: not an s3:// location; write s3://bucket/key`)
  const rest = raw.slice(SCHEME.length)
  const slash = rest.indexOf('/')
  const bucket = slash < 0 ? rest : rest.slice(0, slash)
  const key = slash < 0 ? '' : rest.slice(slash + 1)
  if (bucket === '') throw new UsageError(`${flag} ${value}: no bucket; write s3://bucket/key`)
  const bucketProblem = bucketNameProblem(bucket)
  if (bucketProblem)
    throw new UsageError(`${flag} ${value}: the bucket name ${JSON.stringify(bucket)} ${bucketProblem}`)
  const problem = keyProblem(key)
  if (problem) throw new UsageError(`${flag} ${value}: the key ${problem}`)
  return {bucket, key}
}

/**
 * `s3://bucket/key` naming one object (`--out`, `--stats-json`, a file `stats` reads).
 *
 * @example parseObjectUrl('s3://exports/2026-11/ca.csv', '--out') // {bucket: 'exports', key: '2026-11/ca.csv'}
 */
export function parseObjectUrl(value: string, flag: string): ObjectUrl {
  const url = parse(value, flag)
  if (url.key === '' || url.key.endsWith('/'))
    throw new UsageError(
      `${flag} ${shown(value)}: names a folder-like prefix, not an object; end it with a file name (s3://${url.bucket}/${url.key}name.csv)`,
    )
  return url
}

/**
 * `s3://bucket`, `s3://bucket/` or `s3://bucket/prefix[/]` naming a folder-like prefix (`--out-dir`):
 * the key is '' or ends in '/', so `joinKey` never runs two names together.
 *
 * @example parsePrefixUrl('s3://exports/2026-11', '--out-dir') // {bucket: 'exports', key: '2026-11/'}
 */
export function parsePrefixUrl(value: string, flag: string): ObjectUrl {
  const url = parse(value, flag)
  if (url.key !== '' && !url.key.endsWith('/')) url.key += '/'
  return url
}

/** A key under a prefix: `joinKey('2026-11/', 'state=CA/fips=06001/data.csv')`. */
export function joinKey(prefix: string, relative: string): string {
  const key = `${prefix}${relative}`
  const problem = keyProblem(key)
  if (problem) throw new UsageError(`the key ${JSON.stringify(key)} ${problem}`)
  return key
}

/** The `s3://bucket/key` form, for messages. */
export function formatObjectUrl(url: ObjectUrl): string {
  return `${SCHEME}${url.bucket}/${url.key}`
}
