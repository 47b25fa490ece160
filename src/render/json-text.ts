/**
 * JSON output that keeps a record's tokens as the service sent them (docs/lookup.md, "Output formats"): numbers such
 * as `121000.0` or `1e5`, string escapes and key order are copied, only the whitespace between tokens is
 * laid out again (two-space indent for json, none for ndjson), exactly as JSON.stringify lays out a value
 * it made itself. Pure.
 */

/** A JSON text to embed as it is (its whitespace re-laid out), e.g. the record's bytes as sent. */
export class RawJson {
  /** `text` must be valid JSON (the single lookup's body has passed JSON.parse; fetch-lookup.ts checks each record's text). */
  constructor(readonly text: string) {}
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r'])

/**
 * `text` (valid JSON) with its whitespace laid out as `JSON.stringify(value, null, indent)` would, the
 * value starting at nesting `level` (its inner lines indented from there). Tokens are copied unchanged.
 */
export function relayout(text: string, indent: number, level = 0): string {
  const pad = (n: number) => (indent ? `\n${' '.repeat(indent * n)}` : '')
  let out = ''
  let depth = level
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === '"') {
      // a string: copied to its closing quote, stepping over escapes
      let j = i + 1
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      out += text.slice(i, j + 1)
      i = j
    } else if (c === '{' || c === '[') {
      let j = i + 1
      while (WHITESPACE.has(text[j]!)) j++
      const close = c === '{' ? '}' : ']'
      if (text[j] === close) {
        out += c + close // an empty object or list stays on its line, as JSON.stringify writes it
        i = j
      } else out += c + pad(++depth)
    } else if (c === '}' || c === ']') out += pad(--depth) + c
    else if (c === ',') out += `,${pad(depth)}`
    else if (c === ':') out += indent ? ': ' : ':'
    else if (!WHITESPACE.has(c)) out += c
  }
  return out
}

/**
 * `JSON.stringify(value, null, indent)` for plain JSON values, where a RawJson is written as its own text
 * (re-laid out at its place). Values JSON.stringify leaves out of an object (undefined, functions) are
 * left out here too.
 */
export function toJsonText(value: unknown, indent: number, level = 0): string {
  if (value instanceof RawJson) return relayout(value.text, indent, level)
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  const inner = indent ? `\n${' '.repeat(indent * (level + 1))}` : ''
  const outer = indent ? `\n${' '.repeat(indent * level)}` : ''
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]'
    const items = value.map((v: unknown) => (v === undefined || typeof v === 'function' ? 'null' : toJsonText(v, indent, level + 1))) // prettier-ignore
    return `[${inner}${items.join(`,${inner}`)}${outer}]`
  }
  const members = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && typeof v !== 'function')
    .map(([k, v]) => `${JSON.stringify(k)}:${indent ? ' ' : ''}${toJsonText(v, indent, level + 1)}`)
  return members.length === 0 ? '{}' : `{${inner}${members.join(`,${inner}`)}${outer}}`
}
