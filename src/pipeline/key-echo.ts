/**
 * The key never reaches a file (spec 5.5): a service that echoes the API key inside its answers gets it
 * masked, byte for byte, before anything reads the bytes, on every path (an export's pages, a batch's
 * answers, a single lookup). The mask is `*` of the same length, so a masked record stays the JSON it
 * was (the key is printable ASCII; inside a string its occurrence is string text). The key is looked for
 * as sent and as JSON writes it (a `"` or `\` escaped, a `/` as `\/`). An occurrence cut by a chunk's edge
 * is found too: a tail that could begin one waits for the next chunk.
 *
 * Keys shorter than 8 characters are not looked for: such a short text could be ordinary data (a test
 * key), and masking it would corrupt records; the redactor of printed lines still masks it.
 */
export const MIN_MASKED_KEY = 8

export class KeyEcho {
  private readonly patterns: Buffer[]
  private readonly longest: number
  private held: Buffer | undefined
  /** Occurrences masked so far. */
  occurrences = 0

  constructor(key: string | undefined) {
    const forms =
      key && key.length >= MIN_MASKED_KEY
        ? [key, JSON.stringify(key).slice(1, -1), key.replaceAll('/', '\\/')]
        : []
    this.patterns = [...new Set(forms)].map((f) => Buffer.from(f))
    this.longest = Math.max(0, ...this.patterns.map((p) => p.length))
  }

  /** The chunk with every occurrence masked; a tail that may begin an occurrence is held for the next push. */
  push(chunk: Buffer): Buffer {
    if (this.patterns.length === 0) return chunk
    let buf = chunk
    if (this.held) {
      buf = Buffer.concat([this.held, chunk])
      this.held = undefined
    }
    for (const p of this.patterns)
      for (let i = buf.indexOf(p); i !== -1; i = buf.indexOf(p, i + p.length)) {
        buf.fill(0x2a, i, i + p.length)
        this.occurrences++
      }
    const keep = this.prefixAtEnd(buf)
    if (keep === 0) return buf
    this.held = Buffer.from(buf.subarray(buf.length - keep))
    return buf.subarray(0, buf.length - keep)
  }

  /** What is still held when the body ends (a tail that never became the key). */
  end(): Buffer | undefined {
    const h = this.held
    this.held = undefined
    return h
  }

  /** The length of the longest tail of `buf` that is a proper prefix of a pattern (0 when none). */
  private prefixAtEnd(buf: Buffer): number {
    const n = buf.length
    for (let k = Math.min(this.longest - 1, n); k > 0; k--)
      for (const p of this.patterns)
        if (k < p.length && buf[n - k] === p[0] && buf.compare(p, 0, k, n - k, n) === 0) return k
    return 0
  }
}
