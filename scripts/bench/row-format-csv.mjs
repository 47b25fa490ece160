// node scripts/bench/row-format-csv.mjs URL KEY OUT — the CSV floor with src/io/row-format: read the response
// with undici, split it with the DataScanner, flatten each record with flattenRecord and write its CSV line
// (one write per chunk, with backpressure). Columns are placed by name as they are first seen; the header
// (which can only be complete at the end) goes to OUT.header. No checkpoint, no spool: what the export
// pipeline could reach once it formats each record in one pass.
import {once} from 'node:events'
import {createWriteStream, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {ROOT} from '../lib.mjs'

const load = (...p) => import(pathToFileURL(join(ROOT, ...p)).href)
const {request} = await load('node_modules', 'undici', 'index.js')
const {DataScanner} = await load('dist-bench', 'io', 'data-scanner.js')
const {flattenRecord, newFlatRow} = await load('dist-bench', 'io', 'row-format.js')
const [url, key, outFile] = process.argv.slice(2)
const out = createWriteStream(outFile)
const {statusCode, body} = await request(url, {headers: {'x-api-key': key}})
if (statusCode !== 200) throw new Error(`HTTP ${statusCode}`)
const scanner = new DataScanner()
const row = newFlatRow()
const opts = {escapeFormulas: true}
const index = new Map() // column name -> position
let line = []
for await (const chunk of body) {
  let text = ''
  for (const rec of scanner.push(chunk)) {
    flattenRecord(rec, row, opts)
    line.length = index.size
    line.fill('')
    for (let i = 0; i < row.length; i++) {
      const name = row.names[i]
      let at = index.get(name)
      if (at === undefined) index.set(name, (at = index.size))
      line[at] = row.cells[i]
    }
    text += `${line.join(',')}\r\n`
  }
  if (text !== '' && !out.write(text)) await once(out, 'drain')
}
scanner.end()
out.end()
await once(out, 'close')
writeFileSync(`${outFile}.header`, `${[...index.keys()].join(',')}\r\n`)
