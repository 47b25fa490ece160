// node scripts/bench/bytecopy.mjs URL KEY OUT — the NDJSON floor: read the response with undici (sfl's HTTP
// client), split it with sfl's DataScanner, write each record's bytes and a newline (one write per chunk),
// with backpressure. No parsing, no checkpoint: what an NDJSON export cannot go below.
import {once} from 'node:events'
import {createWriteStream} from 'node:fs'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {ROOT} from '../lib.mjs'

const {request} = await import(pathToFileURL(join(ROOT, 'node_modules', 'undici', 'index.js')).href)
const {DataScanner} = await import(pathToFileURL(join(ROOT, 'dist-bench', 'io', 'data-scanner.js')).href)
const [url, key, outFile] = process.argv.slice(2)
const NL = Buffer.from('\n')
const out = createWriteStream(outFile)
const {statusCode, body} = await request(url, {headers: {'x-api-key': key}})
if (statusCode !== 200) throw new Error(`HTTP ${statusCode}`)
const scanner = new DataScanner()
for await (const chunk of body) {
  const parts = []
  for (const rec of scanner.push(chunk)) parts.push(rec, NL)
  if (parts.length > 0 && !out.write(Buffer.concat(parts))) await once(out, 'drain')
}
scanner.end()
out.end()
await once(out, 'close')
