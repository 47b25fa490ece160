/**
 * Just enough XML for S3's answers (ListBucketResult, InitiateMultipartUploadResult, Error...): flat
 * elements read by name, text with the five predefined entities and character references decoded. S3's
 * answers have no attributes that matter, no CDATA and no mixed content; a document that is not what is
 * expected gives undefined or an empty list, which the caller reports as a broken answer.
 */

const ENTITIES: Record<string, string> = {amp: '&', lt: '<', gt: '>', quot: '"', apos: "'"}

export function decodeXmlText(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);/g, (whole, ref: string) => {
    if (ref.startsWith('#x')) return safeCodePoint(parseInt(ref.slice(2), 16), whole)
    if (ref.startsWith('#')) return safeCodePoint(parseInt(ref.slice(1), 10), whole)
    return ENTITIES[ref] ?? whole
  })
}

function safeCodePoint(n: number, whole: string): string {
  return Number.isInteger(n) && n >= 0 && n <= 0x10ffff ? String.fromCodePoint(n) : whole
}

export function escapeXmlText(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'))
}

/** The raw inner text of every `<tag>...</tag>` (and '' for `<tag/>`), in order, not decoded. */
export function elementsRaw(xml: string, tag: string): string[] {
  const out: string[] = []
  const re = new RegExp(`<${tag}(?:\\s[^>]*)?(?:/>|>([\\s\\S]*?)</${tag}\\s*>)`, 'g')
  for (let m = re.exec(xml); m; m = re.exec(xml)) out.push(m[1] ?? '')
  return out
}

/** The decoded text of the first `<tag>`, or undefined. */
export function textOf(xml: string, tag: string): string | undefined {
  const raw = elementsRaw(xml, tag)[0]
  return raw === undefined ? undefined : decodeXmlText(raw)
}

/** The name of the document's root element (after the declaration), or undefined. */
export function rootName(xml: string): string | undefined {
  return /^\s*(?:<\?xml[^>]*\?>\s*)?<([A-Za-z][\w.-]*)/.exec(xml)?.[1]
}
