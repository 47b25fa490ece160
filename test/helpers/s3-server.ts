import {createHash, createHmac, randomBytes, timingSafeEqual} from 'node:crypto'
import {type IncomingMessage, type Server, type ServerResponse, createServer} from 'node:http'
import type {AddressInfo} from 'node:net'

/**
 * A local S3-compatible server for the tests, on loopback: an independent reading of the S3 REST API
 * (Amazon S3 API Reference), written from the documentation and not from src/objstore, so the client and
 * this server agreeing proves something. Path-style buckets (and virtual-hosted ones under `virtualHost`),
 * PutObject (with If-None-Match: *), GetObject (Range, If-Match), HeadObject, DeleteObject, ListObjectsV2,
 * the multipart upload with parts invisible until Complete, ListMultipartUploads.
 *
 * Every request is verified as S3 does: SigV4 recomputed from the request as received (the path decoded
 * and encoded again, the query sorted), the payload hash checked against the body, the session token
 * checked; a wrong key gets InvalidAccessKeyId, a wrong secret SignatureDoesNotMatch (403).
 *
 * Faults are injected per request: a status with an S3 error code (503 SlowDown for the next N), a
 * connection reset mid-body, a 200 Complete with an <Error> inside, writes denied (AccessDenied).
 */
export interface TestCredentials {
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
  /** The token is refused as expired (ExpiredToken). */
  expired?: boolean
}

export interface S3ServerOptions {
  credentials: TestCredentials[]
  region?: string
  buckets?: string[]
  /** S3's is 5 MiB; tests make parts of a few KiB. */
  minPartSize?: number
  /** 'supported' (412 when the key exists), 'ignored' (written anyway), 'not-implemented' (501). */
  conditionalWrites?: 'supported' | 'ignored' | 'not-implemented'
  /** Page size of listings (S3's is 1,000). */
  pageSize?: number
  /** Host suffix for virtual-hosted requests: `bucket.<virtualHost>`. */
  virtualHost?: string
  now?: () => number
}

export interface RequestInfo {
  method: string
  bucket: string
  key: string
  query: Record<string, string>
}

export type Fault =
  | {kind: 'status'; status: number; code: string; match?: (r: RequestInfo) => boolean}
  | {kind: 'reset'; match?: (r: RequestInfo) => boolean}
  | {kind: 'complete-error'; code: string; match?: (r: RequestInfo) => boolean}
  /** An answer cut after `bytes` of its body (the connection dropped mid-download). */
  | {kind: 'cut-body'; bytes: number; match?: (r: RequestInfo) => boolean}

export interface StoredObject {
  body: Buffer
  etag: string
  lastModified: Date
}

interface Upload {
  id: string
  bucket: string
  key: string
  initiated: Date
  parts: Map<number, {body: Buffer; etag: string}>
}

export interface LoggedRequest extends RequestInfo {
  status: number
  code: string
  bytes: number
}

const xmlEscape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** RFC 3986 as SigV4 wants it, by another route than the client's: encodeURIComponent, then !'()*. */
function encode(s: string, keepSlash: boolean): string {
  const e = encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return keepSlash ? e.replace(/%2F/g, '/') : e
}

class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

export class S3TestServer {
  readonly buckets = new Map<string, Map<string, StoredObject>>()
  readonly uploads = new Map<string, Upload>()
  readonly log: LoggedRequest[] = []
  private readonly faults: Fault[] = []
  private readonly denied = new Set<string>()
  private server!: Server
  endpoint = ''

  private constructor(private readonly options: S3ServerOptions) {
    for (const b of options.buckets ?? []) this.buckets.set(b, new Map())
  }

  static async start(options: S3ServerOptions): Promise<S3TestServer> {
    const s = new S3TestServer(options)
    // a client killed mid-request (a SIGKILL test) aborts the body being read: that connection just ends
    s.server = createServer((req, res) => void s.handle(req, res).catch(() => res.destroy()))
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve))
    s.endpoint = `http://127.0.0.1:${(s.server.address() as AddressInfo).port}`
    return s
  }

  async close(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  /** Faults for the next requests that match, one request each, in order. */
  inject(...faults: Fault[]): void {
    this.faults.push(...faults)
  }

  /** PUT, POST and DELETE in `bucket` are refused with AccessDenied. */
  denyWrites(bucket: string): void {
    this.denied.add(bucket)
  }

  /** Keys of `bucket`, sorted. */
  keys(bucket: string): string[] {
    return [...(this.buckets.get(bucket)?.keys() ?? [])].sort()
  }

  object(bucket: string, key: string): StoredObject | undefined {
    return this.buckets.get(bucket)?.get(key)
  }

  put(bucket: string, key: string, body: string | Buffer): void {
    const b = Buffer.from(body)
    this.buckets
      .get(bucket)
      ?.set(key, {body: b, etag: `"${md5(b).toString('hex')}"`, lastModified: new Date()})
  }

  /** Remove an object, as another program with the bucket's keys would. */
  delete(bucket: string, key: string): void {
    this.buckets.get(bucket)?.delete(key)
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x')
    const query: Record<string, string> = {}
    for (const [k, v] of url.searchParams) query[k] = v
    const {bucket, key} = this.route(req, url.pathname)
    const info: RequestInfo = {method: req.method ?? '', bucket, key, query}
    const fault = this.takeFault(info)
    if (fault?.kind === 'reset') {
      // a connection cut while the request's body is arriving (or at once, for a body-less request)
      req.once('data', () => req.socket.destroy())
      req.once('end', () => req.socket.destroy())
      this.log.push({...info, status: 0, code: 'reset', bytes: 0})
      return
    }
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const body = Buffer.concat(chunks)
    let status = 200
    let code = ''
    try {
      this.verify(req, url, body)
      if (fault?.kind === 'status') throw new S3Error(fault.status, fault.code, 'injected fault')
      const out = this.dispatch(info, req, body, fault?.kind === 'complete-error' ? fault.code : undefined)
      status = out.status
      res.writeHead(out.status, out.headers)
      if (fault?.kind === 'cut-body' && out.body !== undefined) {
        res.write(Buffer.from(out.body).subarray(0, fault.bytes), () => res.destroy())
        code = 'cut-body'
      } else res.end(req.method === 'HEAD' ? undefined : out.body)
    } catch (error) {
      if (!(error instanceof S3Error)) throw error
      status = error.status
      code = error.code
      const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${error.code}</Code><Message>${xmlEscape(error.message)}</Message><Resource>${xmlEscape(url.pathname)}</Resource><RequestId>${randomBytes(8).toString('hex')}</RequestId></Error>`
      res.writeHead(error.status, {'content-type': 'application/xml'})
      // a HEAD answer has no body, so its error has only the status (as S3's)
      res.end(req.method === 'HEAD' ? undefined : xml)
    }
    this.log.push({...info, status, code, bytes: body.length})
  }

  private route(req: IncomingMessage, rawPath: string): {bucket: string; key: string} {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '')
    const suffix = this.options.virtualHost
    const path = rawPath.split('/').map(decodeURIComponent).join('/')
    if (suffix && host.endsWith(`.${suffix}`))
      return {bucket: host.slice(0, -suffix.length - 1), key: path.slice(1)}
    const [, bucket = '', ...rest] = path.split('/')
    return {bucket, key: rest.join('/')}
  }

  private takeFault(info: RequestInfo): Fault | undefined {
    const i = this.faults.findIndex((f) => !f.match || f.match(info))
    return i < 0 ? undefined : this.faults.splice(i, 1)[0]
  }

  /** SigV4 as S3 checks it (S3 API Reference, "Authenticating Requests (AWS Signature Version 4)"). */
  private verify(req: IncomingMessage, url: URL, body: Buffer): void {
    const auth = req.headers.authorization ?? ''
    const m =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
        auth,
      )
    if (!m) throw new S3Error(400, 'AuthorizationHeaderMalformed', 'the authorization header is malformed')
    const [, akid = '', day = '', region = '', signedHeaders = '', signature = ''] = m
    const cred = this.options.credentials.find((c) => c.accessKeyId === akid)
    if (!cred)
      throw new S3Error(
        403,
        'InvalidAccessKeyId',
        `The AWS Access Key Id you provided does not exist in our records.`,
      )
    const expected = this.options.region ?? 'us-east-1'
    if (region !== expected)
      throw new S3Error(
        400,
        'AuthorizationHeaderMalformed',
        `the region '${region}' is wrong; expecting '${expected}'`,
      )
    const date = String(req.headers['x-amz-date'] ?? '')
    if (!/^\d{8}T\d{6}Z$/.test(date) || date.slice(0, 8) !== day)
      throw new S3Error(403, 'AccessDenied', 'x-amz-date is missing or does not match the credential scope')
    const when = Date.UTC(
      +date.slice(0, 4),
      +date.slice(4, 6) - 1,
      +date.slice(6, 8),
      +date.slice(9, 11),
      +date.slice(11, 13),
      +date.slice(13, 15),
    )
    if (Math.abs(when - (this.options.now ?? Date.now)()) > 15 * 60 * 1000)
      throw new S3Error(
        403,
        'RequestTimeTooSkewed',
        'The difference between the request time and the current time is too large.',
      )
    const names = signedHeaders.split(';')
    for (const required of ['host', 'x-amz-content-sha256', 'x-amz-date'])
      if (!names.includes(required)) throw new S3Error(403, 'AccessDenied', `${required} must be signed`)
    const payload = String(req.headers['x-amz-content-sha256'] ?? '')
    if (payload !== 'UNSIGNED-PAYLOAD' && payload !== createHash('sha256').update(body).digest('hex'))
      throw new S3Error(
        400,
        'XAmzContentSHA256Mismatch',
        "The provided 'x-amz-content-sha256' header does not match what was computed.",
      )
    const path = url.pathname
      .split('/')
      .map((s) => encode(decodeURIComponent(s), false))
      .join('/')
    const pairs = url.search
      .slice(1)
      .split('&')
      .filter(Boolean)
      .map((p) => {
        const eq = p.indexOf('=')
        const k = decodeURIComponent(eq < 0 ? p : p.slice(0, eq))
        const v = eq < 0 ? '' : decodeURIComponent(p.slice(eq + 1).replace(/\+/g, '%20'))
        return `${encode(k, false)}=${encode(v, false)}`
      })
    pairs.sort()
    const headerLines = names.map((n) => {
      const v = req.headers[n]
      return `${n}:${(Array.isArray(v) ? v.join(',') : (v ?? '')).trim().replace(/\s+/g, ' ')}\n`
    })
    const canonical = `${req.method}\n${path}\n${pairs.join('&')}\n${headerLines.join('')}\n${signedHeaders}\n${payload}`
    const toSign = `AWS4-HMAC-SHA256\n${date}\n${day}/${region}/s3/aws4_request\n${createHash('sha256').update(canonical).digest('hex')}`
    let k: Buffer = createHmac('sha256', `AWS4${cred.secretAccessKey}`).update(day).digest()
    for (const part of [region, 's3', 'aws4_request']) k = createHmac('sha256', k).update(part).digest()
    const want = createHmac('sha256', k).update(toSign).digest()
    if (!timingSafeEqual(want, Buffer.from(signature, 'hex')))
      throw new S3Error(
        403,
        'SignatureDoesNotMatch',
        'The request signature we calculated does not match the signature you provided.',
      )
    const token = req.headers['x-amz-security-token']
    if (cred.sessionToken !== undefined || token !== undefined) {
      if (token !== cred.sessionToken || !names.includes('x-amz-security-token'))
        throw new S3Error(400, 'InvalidToken', 'The provided token is malformed or otherwise invalid.')
      if (cred.expired) throw new S3Error(400, 'ExpiredToken', 'The provided token has expired.')
    }
  }

  private dispatch(
    r: RequestInfo,
    req: IncomingMessage,
    body: Buffer,
    completeError: string | undefined,
  ): {status: number; headers: Record<string, string>; body?: Buffer | string} {
    const objects = this.buckets.get(r.bucket)
    if (!objects) throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist')
    if (r.method !== 'GET' && r.method !== 'HEAD' && this.denied.has(r.bucket))
      throw new S3Error(403, 'AccessDenied', 'Access Denied')
    const q = r.query
    if (r.key === '') {
      if (r.method === 'GET' && 'uploads' in q) return this.listUploads(r)
      if (r.method === 'GET' && q['list-type'] === '2') return this.listObjects(r, objects)
      throw new S3Error(501, 'NotImplemented', 'not in this test server')
    }
    if (r.method === 'POST' && 'uploads' in q) {
      const id = randomBytes(12).toString('hex')
      this.uploads.set(id, {id, bucket: r.bucket, key: r.key, initiated: new Date(), parts: new Map()})
      return xml(
        `<InitiateMultipartUploadResult><Bucket>${r.bucket}</Bucket><Key>${xmlEscape(r.key)}</Key><UploadId>${id}</UploadId></InitiateMultipartUploadResult>`,
      )
    }
    if (q['uploadId'] !== undefined) return this.uploadOp(r, body, objects, completeError)
    switch (r.method) {
      case 'PUT':
        return this.putObject(r, req, body, objects)
      case 'GET':
      case 'HEAD':
        return this.getObject(r, req, objects)
      case 'DELETE':
        objects.delete(r.key)
        return {status: 204, headers: {}}
    }
    throw new S3Error(405, 'MethodNotAllowed', 'The specified method is not allowed against this resource.')
  }

  private putObject(r: RequestInfo, req: IncomingMessage, body: Buffer, objects: Map<string, StoredObject>) {
    const mode = this.options.conditionalWrites ?? 'supported'
    if (req.headers['if-none-match'] !== undefined) {
      if (mode === 'not-implemented')
        throw new S3Error(
          501,
          'NotImplemented',
          'A header you provided implies functionality that is not implemented',
        )
      if (mode === 'supported' && req.headers['if-none-match'] === '*' && objects.has(r.key))
        throw new S3Error(
          412,
          'PreconditionFailed',
          'At least one of the pre-conditions you specified did not hold',
        )
    }
    const etag = `"${md5(body).toString('hex')}"`
    objects.set(r.key, {body, etag, lastModified: new Date()})
    return {status: 200, headers: {etag}}
  }

  private getObject(r: RequestInfo, req: IncomingMessage, objects: Map<string, StoredObject>) {
    const o = objects.get(r.key)
    if (!o) {
      if (r.method === 'HEAD') throw new S3Error(404, 'NotFound', 'Not Found')
      throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.')
    }
    const ifMatch = req.headers['if-match']
    if (ifMatch !== undefined && ifMatch !== o.etag)
      throw new S3Error(
        412,
        'PreconditionFailed',
        'At least one of the pre-conditions you specified did not hold',
      )
    const headers = {etag: o.etag, 'last-modified': o.lastModified.toUTCString(), 'accept-ranges': 'bytes'}
    const range = /^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''))
    if (range) {
      const from = Number(range[1])
      if (from >= o.body.length)
        throw new S3Error(416, 'InvalidRange', 'The requested range is not satisfiable')
      return {
        status: 206,
        headers: {
          ...headers,
          'content-range': `bytes ${from}-${o.body.length - 1}/${o.body.length}`,
          'content-length': String(o.body.length - from),
        },
        body: o.body.subarray(from),
      }
    }
    return {status: 200, headers: {...headers, 'content-length': String(o.body.length)}, body: o.body}
  }

  private uploadOp(
    r: RequestInfo,
    body: Buffer,
    objects: Map<string, StoredObject>,
    completeError: string | undefined,
  ) {
    const upload = this.uploads.get(r.query['uploadId'] ?? '')
    if (!upload || upload.bucket !== r.bucket || upload.key !== r.key)
      throw new S3Error(404, 'NoSuchUpload', 'The specified upload does not exist.')
    if (r.method === 'PUT') {
      const n = Number(r.query['partNumber'])
      if (!Number.isInteger(n) || n < 1 || n > 10_000)
        throw new S3Error(400, 'InvalidArgument', 'Part number must be an integer between 1 and 10000')
      const etag = `"${md5(body).toString('hex')}"`
      upload.parts.set(n, {body, etag})
      return {status: 200, headers: {etag}}
    }
    if (r.method === 'DELETE') {
      this.uploads.delete(upload.id)
      return {status: 204, headers: {}}
    }
    if (completeError !== undefined)
      // S3 may answer 200 and then report the failure in the body (CompleteMultipartUpload)
      return xml(
        `<Error><Code>${completeError}</Code><Message>We encountered an internal error. Please try again.</Message></Error>`,
      )
    const listed = [
      ...body
        .toString('utf8')
        .matchAll(/<Part>\s*<PartNumber>(\d+)<\/PartNumber>\s*<ETag>([^<]*)<\/ETag>\s*<\/Part>/g),
    ]
    if (listed.length === 0) throw new S3Error(400, 'MalformedXML', 'no parts')
    const bodies: Buffer[] = []
    let previous = 0
    for (const [i, m] of listed.entries()) {
      const n = Number(m[1])
      const etag = (m[2] ?? '').replace(/&quot;/g, '"')
      if (n <= previous)
        throw new S3Error(400, 'InvalidPartOrder', 'The list of parts was not in ascending order.')
      previous = n
      const part = upload.parts.get(n)
      if (!part || part.etag !== etag)
        throw new S3Error(400, 'InvalidPart', `part ${n} was not uploaded or its ETag differs`)
      if (i < listed.length - 1 && part.body.length < (this.options.minPartSize ?? 5 * 1024 * 1024))
        throw new S3Error(
          400,
          'EntityTooSmall',
          'Your proposed upload is smaller than the minimum allowed object size.',
        )
      bodies.push(part.body)
    }
    const whole = Buffer.concat(bodies)
    const etag = `"${md5(Buffer.concat(bodies.map(md5))).toString('hex')}-${bodies.length}"`
    objects.set(r.key, {body: whole, etag, lastModified: new Date()})
    this.uploads.delete(upload.id)
    return xml(
      `<CompleteMultipartUploadResult><Bucket>${r.bucket}</Bucket><Key>${xmlEscape(r.key)}</Key><ETag>${xmlEscape(etag)}</ETag></CompleteMultipartUploadResult>`,
    )
  }

  private listObjects(r: RequestInfo, objects: Map<string, StoredObject>) {
    const prefix = r.query['prefix'] ?? ''
    const size = Math.min(Number(r.query['max-keys'] ?? 1000), this.options.pageSize ?? 1000)
    const after = r.query['continuation-token']
      ? Buffer.from(r.query['continuation-token'], 'base64').toString('utf8')
      : (r.query['start-after'] ?? '')
    const keys = [...objects.keys()].filter((k) => k.startsWith(prefix) && k > after).sort()
    const page = keys.slice(0, size)
    const truncated = keys.length > page.length
    const contents = page
      .map((k) => {
        const o = objects.get(k) as StoredObject
        return `<Contents><Key>${xmlEscape(k)}</Key><LastModified>${o.lastModified.toISOString()}</LastModified><ETag>${xmlEscape(o.etag)}</ETag><Size>${o.body.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`
      })
      .join('')
    const next = truncated
      ? `<NextContinuationToken>${Buffer.from(page[page.length - 1] ?? '').toString('base64')}</NextContinuationToken>`
      : ''
    return xml(
      `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${r.bucket}</Name><Prefix>${xmlEscape(prefix)}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${size}</MaxKeys><IsTruncated>${truncated}</IsTruncated>${contents}${next}</ListBucketResult>`,
    )
  }

  private listUploads(r: RequestInfo) {
    const prefix = r.query['prefix'] ?? ''
    const size = this.options.pageSize ?? 1000
    const marker = `${r.query['key-marker'] ?? ''}\u0000${r.query['upload-id-marker'] ?? ''}`
    const all = [...this.uploads.values()]
      .filter((u) => u.bucket === r.bucket && u.key.startsWith(prefix) && `${u.key}\u0000${u.id}` > marker)
      .sort((a, b) => (`${a.key}\u0000${a.id}` < `${b.key}\u0000${b.id}` ? -1 : 1))
    const page = all.slice(0, size)
    const last = page[page.length - 1]
    const truncated = all.length > page.length
    const items = page
      .map(
        (u) =>
          `<Upload><Key>${xmlEscape(u.key)}</Key><UploadId>${u.id}</UploadId><Initiated>${u.initiated.toISOString()}</Initiated></Upload>`,
      )
      .join('')
    const next =
      truncated && last
        ? `<NextKeyMarker>${xmlEscape(last.key)}</NextKeyMarker><NextUploadIdMarker>${last.id}</NextUploadIdMarker>`
        : ''
    return xml(
      `<ListMultipartUploadsResult><Bucket>${r.bucket}</Bucket><Prefix>${xmlEscape(prefix)}</Prefix><IsTruncated>${truncated}</IsTruncated>${next}${items}</ListMultipartUploadsResult>`,
    )
  }
}

function md5(b: Buffer): Buffer {
  return createHash('md5').update(b).digest()
}

function xml(text: string): {status: number; headers: Record<string, string>; body: string} {
  return {
    status: 200,
    headers: {'content-type': 'application/xml'},
    body: `<?xml version="1.0" encoding="UTF-8"?>\n${text}`,
  }
}
