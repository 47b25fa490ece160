import {InputFormatError} from './input-error.js'

/**
 * The little XML that reading a workbook's parts needs (XML 1.0): elements with attributes, text, the five
 * predefined entities and character references, CDATA, comments and processing instructions skipped.
 * Names lose their namespace prefix (`x:row` is `row`: some writers prefix SpreadsheetML). A DOCTYPE is
 * refused, so no entity is ever defined or expanded (no "billion laughs"). Fed in chunks of any size;
 * memory is the unfinished tag or text at a chunk's end, capped.
 */
export interface XmlHandler {
  /** A start tag; `attrs` is its raw attribute text, read with `attr`. A self-closing tag calls `close` too. */
  open(name: string, attrs: string): void
  close(name: string): void
  /** Text between tags, raw (entities not decoded: `decodeText`), in as many pieces as chunks cut it. */
  text(raw: string): void
}

const MAX_PENDING = 64 * 1024 ** 2

export class XmlScanner {
  private rest = ''

  constructor(private readonly h: XmlHandler) {}

  push(chunk: string): void {
    const s = this.rest.length ? this.rest + chunk : chunk
    const n = s.length
    let i = 0
    for (;;) {
      const lt = s.indexOf('<', i)
      if (lt === -1) {
        if (i < n) this.h.text(s.slice(i))
        i = n
        break
      }
      if (lt > i) this.h.text(s.slice(i, lt))
      i = lt
      const c = s.charCodeAt(lt + 1)
      if (c === 0x21 /* ! */ || c === 0x3f /* ? */) {
        const end = this.special(s, lt)
        if (end === -1) break
        i = end
        continue
      }
      const gt = tagEnd(s, lt + 1)
      if (gt === -1) break
      this.tag(s, lt + 1, gt)
      i = gt + 1
    }
    this.rest = i < n ? s.slice(i) : ''
    if (this.rest.length > MAX_PENDING)
      throw new InputFormatError('a part of it holds a tag or text longer than 64 MB; save it as CSV')
  }

  /** The input is over: anything left unfinished means the part was cut short. */
  end(): void {
    if (this.rest.trim() !== '') throw new InputFormatError('a part of it ends inside a tag')
  }

  /** A comment, CDATA section or processing instruction at `lt`: the index after it, -1 if not all here. */
  private special(s: string, lt: number): number {
    if (s.startsWith('<!--', lt)) {
      const end = s.indexOf('-->', lt + 4)
      return end === -1 ? -1 : end + 3
    }
    if (s.startsWith('<![CDATA[', lt)) {
      const end = s.indexOf(']]>', lt + 9)
      if (end === -1) return -1
      // CDATA is literal: hand it on escaped, so the handler decodes every text alike
      this.h.text(escapeText(s.slice(lt + 9, end)))
      return end + 3
    }
    if (s.startsWith('<?', lt)) {
      const end = s.indexOf('?>', lt + 2)
      return end === -1 ? -1 : end + 2
    }
    if (s.length - lt < 9) return -1 // `<!DOCTYPE` or `<![CDATA[` may be cut here
    throw new InputFormatError('a part of it declares a DOCTYPE, which no workbook has; save it as CSV')
  }

  private tag(s: string, from: number, gt: number): void {
    if (s.charCodeAt(from) === 0x2f /* / */) {
      this.h.close(localName(s.slice(from + 1, gt).trim()))
      return
    }
    const selfClosing = s.charCodeAt(gt - 1) === 0x2f
    const end = selfClosing ? gt - 1 : gt
    let j = from
    while (j < end && !isSpace(s.charCodeAt(j))) j++
    const name = localName(s.slice(from, j))
    this.h.open(name, s.slice(j, end))
    if (selfClosing) this.h.close(name)
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d
}

/** The `>` that ends the tag starting at `from`, outside quoted attribute values; -1 if not yet seen. */
function tagEnd(s: string, from: number): number {
  let quote = 0
  for (let j = from; j < s.length; j++) {
    const c = s.charCodeAt(j)
    if (quote) {
      if (c === quote) quote = 0
    } else if (c === 0x3e) return j
    else if (c === 0x22 || c === 0x27) quote = c
  }
  return -1
}

function localName(name: string): string {
  const colon = name.indexOf(':')
  return colon === -1 ? name : name.slice(colon + 1)
}

const attrPatterns = new Map<string, RegExp>()

/** One attribute's value (decoded), matched by its local name; undefined when absent. */
export function attr(attrs: string, name: string): string | undefined {
  let re = attrPatterns.get(name)
  if (!re) {
    re = new RegExp(`(?:^|\\s)(?:[\\w.-]+:)?${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`)
    attrPatterns.set(name, re)
  }
  const m = re.exec(attrs)
  return m ? decodeText(m[1] ?? m[2] ?? '') : undefined
}

const ENTITY = /&(#x[0-9a-fA-F]+|#[0-9]+|lt|gt|amp|quot|apos);/g
const NAMED: Record<string, string> = {lt: '<', gt: '>', amp: '&', quot: '"', apos: "'"}

/** Text with its entities and character references decoded (an unknown entity is left as written). */
export function decodeText(raw: string): string {
  if (!raw.includes('&')) return raw
  return raw.replace(ENTITY, (whole, e: string) => {
    if (e.charCodeAt(0) !== 0x23) return NAMED[e] ?? whole
    const code = e.charCodeAt(1) === 0x78 ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
  })
}

function escapeText(s: string): string {
  return s.replace(/[&<]/g, (c) => (c === '&' ? '&amp;' : '&lt;'))
}
