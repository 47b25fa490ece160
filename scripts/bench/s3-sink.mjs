// The object store of `npm run bench:s3`: a loopback S3-compatible endpoint that does no work per byte, so
// it never caps the figure (as serve-body.mjs serves a pre-built body). It answers the S3 calls an export
// makes (PutObject with If-None-Match, HEAD, GET and DELETE of small objects, the multipart upload,
// ListMultipartUploads, ListObjectsV2 of the small objects) and verifies no signature: what it measures
// is sfl's side. Large bodies are counted (bytes, newlines), not kept; objects under 1 MiB are kept, for
// the lock object's read-back. `GET /_sink?key=K` answers {bytes, lines} of a completed object.
// Usage: node scripts/bench/s3-sink.mjs; prints `listening URL`.
import {createHash, randomBytes} from 'node:crypto'
import {createServer} from 'node:http'

const SMALL = 1 << 20
/** key -> {bytes, lines, body?} of completed objects; uploadId -> {key, parts: Map<n, {bytes, lines}>} */
const objects = new Map()
const uploads = new Map()

function count(chunks) {
  let bytes = 0
  let lines = 0
  for (const c of chunks) {
    bytes += c.length
    for (let i = c.indexOf(10); i >= 0; i = c.indexOf(10, i + 1)) lines++
  }
  return {bytes, lines}
}

const etagOf = (s) => `"${createHash('md5').update(s).digest('hex')}"`
const xml = (body) => `<?xml version="1.0" encoding="UTF-8"?>\n${body}`

function reply(res, status, body = '', headers = {}) {
  res.writeHead(status, {'content-length': Buffer.byteLength(body), ...headers})
  res.end(body)
}

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x')
  const [, bucket = '', ...rest] = url.pathname.split('/').map(decodeURIComponent)
  const key = rest.join('/')
  const q = url.searchParams
  const chunks = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    if (bucket === '_sink') {
      const o = objects.get(q.get('key'))
      return reply(res, o ? 200 : 404, JSON.stringify(o ? {bytes: o.bytes, lines: o.lines} : {}))
    }
    const m = req.method
    if (m === 'GET' && q.has('uploads'))
      return reply(
        res,
        200,
        xml('<ListMultipartUploadsResult><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>'),
      )
    if (m === 'GET' && q.get('list-type') === '2') {
      const prefix = q.get('prefix') ?? ''
      const contents = [...objects.keys()]
        .filter((k) => k.startsWith(`${bucket}/${prefix}`))
        .map(
          (k) =>
            `<Contents><Key>${k.slice(bucket.length + 1)}</Key><Size>${objects.get(k).bytes}</Size></Contents>`,
        )
      return reply(
        res,
        200,
        xml(`<ListBucketResult><IsTruncated>false</IsTruncated>${contents.join('')}</ListBucketResult>`),
      )
    }
    const id = `${bucket}/${key}`
    if (m === 'POST' && q.has('uploads')) {
      const uploadId = randomBytes(8).toString('hex')
      uploads.set(uploadId, {key: id, parts: new Map()})
      return reply(
        res,
        200,
        xml(
          `<InitiateMultipartUploadResult><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`,
        ),
      )
    }
    if (m === 'PUT' && q.has('partNumber')) {
      const u = uploads.get(q.get('uploadId'))
      if (!u) return reply(res, 404, xml('<Error><Code>NoSuchUpload</Code></Error>'))
      u.parts.set(Number(q.get('partNumber')), count(chunks))
      return reply(res, 200, '', {etag: `"${randomBytes(16).toString('hex')}"`})
    }
    if (m === 'POST' && q.has('uploadId')) {
      const u = uploads.get(q.get('uploadId'))
      if (!u) return reply(res, 404, xml('<Error><Code>NoSuchUpload</Code></Error>'))
      uploads.delete(q.get('uploadId'))
      let bytes = 0
      let lines = 0
      for (const p of u.parts.values()) ((bytes += p.bytes), (lines += p.lines))
      objects.set(u.key, {bytes, lines})
      const etag = `"${randomBytes(16).toString('hex')}-${u.parts.size}"`
      return reply(
        res,
        200,
        xml(`<CompleteMultipartUploadResult><ETag>${etag}</ETag></CompleteMultipartUploadResult>`),
      )
    }
    if (m === 'DELETE' && q.has('uploadId')) return (uploads.delete(q.get('uploadId')), reply(res, 204))
    if (m === 'PUT') {
      if (req.headers['if-none-match'] === '*' && objects.has(id))
        return reply(res, 412, xml('<Error><Code>PreconditionFailed</Code></Error>'))
      const body = Buffer.concat(chunks)
      objects.set(id, {...count([body]), body: body.length < SMALL ? body : undefined, etag: etagOf(body)})
      return reply(res, 200, '', {etag: objects.get(id).etag})
    }
    const o = objects.get(id)
    if (m === 'DELETE') return (objects.delete(id), reply(res, 204))
    if (!o)
      return m === 'HEAD' ? reply(res, 404) : reply(res, 404, xml('<Error><Code>NoSuchKey</Code></Error>'))
    const headers = {etag: o.etag ?? '""', 'last-modified': new Date().toUTCString()}
    if (m === 'HEAD') return (res.writeHead(200, {'content-length': o.bytes, ...headers}), res.end())
    return reply(res, 200, o.body ?? '', headers)
  })
})

server.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${server.address().port}`))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
