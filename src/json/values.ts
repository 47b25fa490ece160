/**
 * Reading values where the walk (src/json/walk.ts) found them, in bytes the walk has already checked:
 * strings decoded, numbers read exactly as JSON.parse reads them, and a pretty-printed value made
 * compact with its numbers and strings as sent. These are the only readers of a value's bytes; the spec
 * checks, the CSV cells and the statistics all call them.
 */

const QUOTE = 0x22
const BACKSLASH = 0x5c
const ZERO = 0x30

/** Powers of ten exactly representable as doubles (10^0 to 10^22). */
const POW10 = Array.from({length: 23}, (_, i) => 10 ** i)

/**
 * The number whose checked JSON text is b[s, e), as JSON.parse reads it. The usual forms (an integer, or
 * a decimal with up to 15 significant digits and no exponent) are read without a string: an integer
 * mantissa below 2^53 divided by an exact power of ten rounds once, so the result is the correctly rounded
 * double, as JSON.parse's is (Clinger's fast path). Anything else goes through Number().
 */
export function numberValue(b: Uint8Array, s: number, e: number): number {
  let p = s
  const neg = b[p] === 0x2d
  if (neg) p++
  let mant = 0
  let digits = 0
  let scale = -1
  for (; p < e; p++) {
    const c = b[p]!
    if (c === 0x2e) {
      scale = 0
      continue
    }
    if (c === 0x65 || c === 0x45) return slowNumber(b, s, e)
    mant = mant * 10 + (c - ZERO)
    if (mant !== 0 || scale >= 0) digits++
    if (scale >= 0) scale++
  }
  if (digits > 15 || scale > 22) return slowNumber(b, s, e)
  const v = scale > 0 ? mant / POW10[scale]! : mant
  return neg ? -v : v
}

function slowNumber(b: Uint8Array, s: number, e: number): number {
  return Number(Buffer.from(b.buffer, b.byteOffset + s, e - s).toString('latin1'))
}

/** The text of the checked JSON string whose quotes are at b[s] and b[e - 1], escapes decoded. */
export function stringValue(b: Uint8Array, s: number, e: number, escaped: boolean): string {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength)
  if (!escaped) return buf.toString('utf8', s + 1, e - 1)
  return decodeEscapes(buf.toString('utf8', s + 1, e - 1))
}

/** Decode the escapes of a checked JSON string body (RFC 8259 section 7); \uXXXX pairs join as JSON.parse joins them. */
export function decodeEscapes(text: string): string {
  let out = ''
  let seg = 0
  for (let i = text.indexOf('\\'); i !== -1; i = text.indexOf('\\', seg)) {
    out += text.slice(seg, i)
    const e = text.charCodeAt(i + 1)
    if (e === 0x75) {
      out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16))
      seg = i + 6
    } else {
      out +=
        e === 0x62
          ? '\b'
          : e === 0x66
            ? '\f'
            : e === 0x6e
              ? '\n'
              : e === 0x72
                ? '\r'
                : e === 0x74
                  ? '\t'
                  : text[i + 1]
      seg = i + 2
    }
  }
  return out + text.slice(seg)
}

/** Does the checked JSON string at b[s, e) (quotes included) equal `text`, an ASCII text without escapes? */
export function stringIs(b: Uint8Array, s: number, e: number, text: Uint8Array): boolean {
  if (e - s - 2 !== text.length) return false
  for (let i = 0; i < text.length; i++) if (b[s + 1 + i] !== text[i]) return false
  return true
}

/**
 * A checked JSON value without the whitespace outside its strings: how NDJSON writes a record the service
 * pretty-printed (one line a record), with every number and string exactly as sent (JSON.stringify of
 * JSON.parse would rewrite `688600.0` as `688600`).
 */
export function compactJson(b: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(b.length)
  let n = 0
  for (let p = 0; p < b.length; p++) {
    const c = b[p]!
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue
    out[n++] = c
    if (c !== QUOTE) continue
    for (p++; ; p++) {
      const k = b[p]!
      out[n++] = k
      if (k === BACKSLASH) out[n++] = b[++p]!
      else if (k === QUOTE) break
    }
  }
  return out.subarray(0, n)
}

/** Does the checked JSON value at b[s, e) hold whitespace outside its strings (a pretty-printed value)? */
export function hasLayout(b: Uint8Array, s: number, e: number): boolean {
  for (let p = s; p < e; p++) {
    const c = b[p]!
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) return true
    if (c !== QUOTE) continue
    for (p++; ; p++) {
      const k = b[p]!
      if (k === BACKSLASH) p++
      else if (k === QUOTE) break
    }
  }
  return false
}
