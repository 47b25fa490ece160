// node scripts/bench/bare-export.mjs URL KEY OUT — the export done the easy way, for comparison: fetch the whole
// county, JSON.parse it, write CSV of every column sfl writes (top-level fields, option objects flattened one
// level to Option.Field), RFC 4180 quoting, CRLF. No checkpoint, no formula guard, no schema check.
import {writeFileSync} from 'node:fs'

const [url, key, out] = process.argv.slice(2)
const res = await fetch(url, {headers: {'x-api-key': key}})
if (!res.ok) throw new Error(`HTTP ${res.status}`)
const {data} = await res.json()
const fields = new Map() // field -> Set of sub-fields (object-valued) or null
for (const r of data)
  for (const k in r) {
    const v = r[k]
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      let subs = fields.get(k)
      if (!(subs instanceof Set)) fields.set(k, (subs = new Set()))
      for (const s in v) subs.add(s)
    } else if (!fields.has(k)) fields.set(k, null)
  }
const cols = [...fields].flatMap(([k, subs]) => (subs ? [...subs].map((s) => [k, s]) : [[k]]))
const esc = (v) => {
  if (v === null || v === undefined) return ''
  const t = typeof v === 'object' ? JSON.stringify(v) : String(v)
  return /[",\r\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t
}
const lines = [cols.map((c) => c.join('.')).join(',')]
for (const r of data)
  lines.push(cols.map(([k, s]) => esc(s === undefined ? r[k] : r[k] === null ? null : r[k]?.[s])).join(','))
writeFileSync(out, lines.join('\r\n') + '\r\n')
