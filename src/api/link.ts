/**
 * The target of `rel="next"` in an RFC 8288 Link header, resolved against the request URL; undefined
 * when there is none. Handles several links in one header and quoted or unquoted rel values.
 */
export function nextLink(header: string | undefined, requestUrl: string): string | undefined {
  if (!header) return undefined
  const re = /<([^>]*)>\s*((?:;\s*[^;,]+)*)/g
  for (let m = re.exec(header); m; m = re.exec(header)) {
    const params = m[2] ?? ''
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(params)
    const rels = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/)
    if (rels.includes('next')) return new URL(m[1]!, requestUrl).toString()
  }
  return undefined
}
