// node scripts/bench/bytecopy.mjs URL KEY OUT — the NDJSON floor: read the response with undici (sfl's HTTP
// client), split it with sfl's records stage (src/pipeline/records.ts: the envelope rule, the JSON grammar
// and UTF-8 checked, as every NDJSON line sfl writes must be valid JSON), write each record's bytes and a
// newline (one write per chunk), with backpressure. No spec checks, no de-duplication, no checkpoint: what
// a correct NDJSON export cannot go below.
import {once} from 'node:events'
import {createWriteStream} from 'node:fs'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {ROOT} from '../lib.mjs'

const {request} = await import(pathToFileURL(join(ROOT, 'node_modules', 'undici', 'index.js')).href)
const {RecordScanner} = await import(pathToFileURL(join(ROOT, 'dist-bench', 'pipeline', 'records.js')).href)
const [url, key, outFile] = process.argv.slice(2)
const NL = Buffer.from('\n')
const out = createWriteStream(outFile)
const {statusCode, body} = await request(url, {headers: {'x-api-key': key}})
if (statusCode !== 200) throw new Error(`HTTP ${statusCode}`)
const scanner = new RecordScanner()
for await (const chunk of body) {
  const parts = []
  const n = scanner.push(chunk)
  for (let k = 0; k < n; k++) parts.push(scanner.records[k], NL)
  if (parts.length > 0 && !out.write(Buffer.concat(parts))) await once(out, 'drain')
}
scanner.end()
out.end()
await once(out, 'close')
