import {Readable} from 'node:stream'

import {isRetryableNetworkError} from '../api/client.js'
import {redact} from '../api/secrets.js'
import type {Transport, TransportResponse} from '../api/transport.js'
import {SflError} from '../errors.js'
import {type BackoffPolicy, fullJitterDelay} from '../schedule/retry.js'
import type {Credentials, StoreConfig} from './config.js'
import {
  type ErrorContext,
  type StoreFault,
  badAnswer,
  faultError,
  isRetryableFault,
  networkError,
} from './errors.js'
import {EMPTY_SHA256, sha256Hex, sign, uriEncode} from './sigv4.js'
import {decodeXmlText, elementsRaw, escapeXmlText, rootName, textOf} from './xml.js'

/**
 * An S3 client for what sfl needs (Amazon S3 API Reference, "Actions"): PutObject, the multipart upload
 * (Create, UploadPart, Complete, Abort, ListMultipartUploads), GetObject streamed, HeadObject,
 * ListObjectsV2, DeleteObject, and a conditional PutObject for a lock. Every request is signed
 * (src/objstore/sigv4.ts), sent through the one transport (src/api/transport.ts), retried with full-jitter
 * backoff on throttling, 5xx, RequestTimeout and connection resets (never on another 4xx), and a failure
 * becomes one line naming the location (src/objstore/errors.ts).
 */
export interface ObjectStoreOptions {
  config: StoreConfig
  transport: Transport
  /** One request's deadline (connect, headers, body); a long GetObject body gets more. Default 60 s. */
  timeoutMs?: number | undefined
  /** Attempts per request, the first included. Default 6. */
  attempts?: number | undefined
  backoff?: BackoffPolicy | undefined
  /** Waits between attempts, injected in tests; must end early (rejecting) when `signal` aborts. */
  sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined
  random?: (() => number) | undefined
  /** The signing clock, injected in tests. */
  now?: (() => Date) | undefined
  debug?: ((line: string) => void) | undefined
  /** The run's signal (Ctrl-C): ends the request in flight and any wait. */
  signal?: AbortSignal | undefined
}

export interface ObjectInfo {
  key: string
  size: number
  etag: string
  lastModified: string
}

export interface UploadInfo {
  key: string
  uploadId: string
  initiated: string
}

export interface ObjectBody {
  size: number | undefined
  etag: string | undefined
  body: AsyncIterable<Buffer>
  /** Stop reading and drop the connection. */
  cancel(): void
}

interface Op {
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE'
  bucket: string
  /** undefined: the bucket itself (a listing). */
  key?: string | undefined
  query?: Array<[string, string]>
  headers?: Record<string, string>
  /** Kept whole so a retry can send it again; its SHA-256 is signed. */
  body?: readonly Buffer[] | undefined
  doing: string
  /** Statuses the caller reads itself (404 of a HEAD, 412 of a conditional put). */
  accept?: readonly number[]
  /** Sent even after the run's signal aborted: the abort of an upload is cleanup that must go out. */
  cleanup?: boolean
  /** The location an error names instead of the object's (a probe names the prefix the user gave). */
  shown?: string | undefined
}

/** How a request is named in an error: the location as the user wrote it, and what sfl was doing. */
export interface Naming {
  shown?: string | undefined
  doing?: string | undefined
}

/** S3 allows at most 10,000 parts in one upload (Amazon S3 User Guide, "Multipart upload limits"). */
export const MAX_PARTS = 10_000
/** Every part but the last must be at least 5 MiB on S3 (the same page). */
export const MIN_PART_SIZE = 5 * 1024 * 1024
/** A GetObject body is given this rate at least before its deadline: a dripping store still ends. */
const MIN_BODY_BYTES_PER_S = 256 * 1024

const DEFAULT_BACKOFF: BackoffPolicy = {baseMs: 200, capMs: 20_000}

function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error)
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason as Error)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, {once: true})
  })
}

export class ObjectStore {
  private readonly timeoutMs: number
  private readonly attempts: number
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  private readonly random: () => number
  private readonly now: () => Date

  constructor(private readonly options: ObjectStoreOptions) {
    this.timeoutMs = options.timeoutMs ?? 60_000
    this.attempts = Math.max(1, options.attempts ?? 6)
    this.sleep = options.sleep ?? realSleep
    this.random = options.random ?? Math.random
    this.now = options.now ?? (() => new Date())
  }

  get config(): StoreConfig {
    return this.options.config
  }

  /** The URL of `key` in `bucket` (or of the bucket when key is undefined), path-style or virtual-hosted. */
  urlFor(bucket: string, key: string | undefined, query: ReadonlyArray<readonly [string, string]> = []): URL {
    const {endpoint, region, addressing} = this.options.config
    const base = endpoint ?? new URL(`https://s3.${region}.amazonaws.com`)
    // a dotted bucket breaks the wildcard certificate of virtual-hosted https: path-style for it
    const virtual = addressing === 'virtual' && !(base.protocol === 'https:' && bucket.includes('.'))
    const host = virtual ? `${bucket}.${base.host}` : base.host
    const objectPath = key === undefined ? '' : uriEncode(key, true)
    const path = virtual ? `/${objectPath}` : `/${bucket}${key === undefined ? '' : `/${objectPath}`}`
    const search = query.map(([k, v]) => `${uriEncode(k, false)}=${uriEncode(v, false)}`).join('&')
    return new URL(`${base.protocol}//${host}${path}${search ? `?${search}` : ''}`)
  }

  private context(op: Op, accessKeyId?: string): ErrorContext {
    const {config} = this.options
    return {
      location: op.shown ?? `s3://${op.bucket}/${op.key ?? ''}`,
      doing: op.doing,
      host: this.urlFor(op.bucket, undefined).host,
      credentialsSource: config.credentials.source,
      accessKeyId,
      region: config.region,
      regionSource: config.regionSource,
    }
  }

  private debug(line: string): void {
    this.options.debug?.(redact(line))
  }

  /**
   * Send `op` until it is answered with 2xx (or a status in `accept`), retrying what is worth retrying.
   * The response's body is the caller's to read or dump.
   */
  private async send(op: Op): Promise<TransportResponse> {
    const signal = op.cleanup ? undefined : this.options.signal
    let accessKeyId: string | undefined
    for (let attempt = 1; ; attempt++) {
      const started = Date.now()
      let fault: StoreFault | undefined
      try {
        const creds = await this.options.config.credentials.get(signal)
        accessKeyId = creds.accessKeyId
        const res = await this.sendOnce(op, creds)
        this.debug(
          `← ${res.status} ${op.method} s3://${op.bucket}/${op.key ?? ''} (${Date.now() - started} ms)`,
        )
        if ((res.status >= 200 && res.status < 300) || op.accept?.includes(res.status)) return res
        fault = await readFault(res)
      } catch (error) {
        if (signal?.aborted) throw signal.reason
        if (error instanceof SflError && !isRetryableNetworkError(error)) throw error
        if (!isRetryableNetworkError(error) || attempt >= this.attempts)
          throw networkError(error, this.context(op, accessKeyId), attempt)
        this.debug(`  ${op.method} s3://${op.bucket}/${op.key ?? ''} failed (${describe(error)}); retrying`)
      }
      if (fault) {
        if (!isRetryableFault(fault) || attempt >= this.attempts)
          throw faultError(fault, this.context(op, accessKeyId), attempt)
        this.debug(`  ${fault.code || fault.status} from the store; retrying`)
      }
      await this.sleep(
        fullJitterDelay(attempt - 1, this.random, this.options.backoff ?? DEFAULT_BACKOFF),
        signal,
      )
    }
  }

  private async sendOnce(op: Op, creds: Credentials): Promise<TransportResponse> {
    const url = this.urlFor(op.bucket, op.key, op.query ?? [])
    const length = op.body?.reduce((n, b) => n + b.length, 0)
    const headers: Record<string, string> = {host: url.host, ...op.headers}
    if (length !== undefined) headers['content-length'] = String(length)
    const signed = sign(
      {
        method: op.method,
        path: url.pathname,
        query: op.query ?? [],
        headers,
        payloadHash: op.body ? sha256Hex(op.body) : EMPTY_SHA256,
      },
      creds,
      this.options.config.region,
      's3',
      this.now(),
    )
    this.debug(
      `→ ${op.method} ${url.origin}${url.pathname}${url.search}${length !== undefined ? ` (${length} bytes)` : ''}`,
    )
    const {host: _host, ...sent} = headers // undici sets Host from the origin
    return this.options.transport.send({
      method: op.method,
      url,
      headers: {...sent, ...signed.headers},
      // the part's chunks as they are, not copied into one buffer (memory stays at one part)
      body: op.body ? (op.body.length === 1 ? op.body[0] : Readable.from(op.body)) : undefined,
      timeoutMs: this.timeoutMs,
      signal: op.cleanup ? undefined : this.options.signal,
    })
  }

  /** `send`, then the body as text, with S3's "200 with an <Error> inside" treated as that error. */
  private async sendForText(
    op: Op,
  ): Promise<{status: number; headers: Record<string, string>; text: string}> {
    for (let attempt = 1; ; attempt++) {
      const res = await this.send(op)
      let text: string
      try {
        text = await res.text()
      } catch (error) {
        // the answer was cut mid-body (a listing, an upload id): the request is sent again
        if (this.options.signal?.aborted || !isRetryableNetworkError(error) || attempt >= this.attempts)
          throw this.options.signal?.aborted
            ? this.options.signal.reason
            : networkError(error, this.context(op), attempt)
        await this.backoff(attempt)
        continue
      }
      // CompleteMultipartUpload can answer 200 and then fail in the body (S3 API Reference)
      if (res.status === 200 && rootName(text) === 'Error') {
        const fault = faultFromXml(500, text, res.headers)
        if (!isRetryableFault(fault) || attempt >= this.attempts)
          throw faultError(fault, this.context(op), attempt)
        await this.backoff(attempt)
        continue
      }
      return {status: res.status, headers: res.headers, text}
    }
  }

  private backoff(attempt: number): Promise<void> {
    return this.sleep(
      fullJitterDelay(attempt - 1, this.random, this.options.backoff ?? DEFAULT_BACKOFF),
      this.options.signal,
    )
  }

  /** PutObject of a small object (one request). Returns the ETag. */
  async putObject(
    bucket: string,
    key: string,
    body: readonly Buffer[],
    contentType?: string,
    naming: Naming = {},
  ): Promise<string> {
    const headers: Record<string, string> = {}
    if (contentType) headers['content-type'] = contentType
    const res = await this.send({
      method: 'PUT',
      bucket,
      key,
      body,
      headers,
      doing: naming.doing ?? 'writing',
      shown: naming.shown,
    })
    await res.dump()
    return res.headers['etag'] ?? ''
  }

  /**
   * PutObject only if no object has the key (`If-None-Match: *`, S3's conditional writes): 'created', or
   * 'exists' (412). 'unsupported' when the store answers 501 NotImplemented to the condition; the caller
   * falls back (src/objstore/lock.ts).
   */
  async putObjectIfAbsent(
    bucket: string,
    key: string,
    body: readonly Buffer[],
  ): Promise<'created' | 'exists' | 'unsupported'> {
    const res = await this.send({
      method: 'PUT',
      bucket,
      key,
      body,
      headers: {'if-none-match': '*'},
      doing: 'writing a lock',
      accept: [412, 409, 501],
    })
    await res.dump()
    // 409 ConditionalRequestConflict: another conditional write of the key is in flight; it wins
    if (res.status === 412 || res.status === 409) return 'exists'
    if (res.status === 501) return 'unsupported'
    return 'created'
  }

  async createMultipartUpload(bucket: string, key: string, contentType?: string): Promise<string> {
    const headers: Record<string, string> = {}
    if (contentType) headers['content-type'] = contentType
    const op: Op = {
      method: 'POST',
      bucket,
      key,
      query: [['uploads', '']],
      headers,
      doing: 'starting an upload',
    }
    const {text} = await this.sendForText(op)
    const id = textOf(text, 'UploadId')
    if (!id) throw badAnswer(this.context(op), 'no UploadId')
    return id
  }

  async uploadPart(
    bucket: string,
    key: string,
    uploadId: string,
    partNumber: number,
    body: readonly Buffer[],
  ): Promise<string> {
    const op: Op = {
      method: 'PUT',
      bucket,
      key,
      query: [
        ['partNumber', String(partNumber)],
        ['uploadId', uploadId],
      ],
      body,
      doing: `writing part ${partNumber}`,
    }
    const res = await this.send(op)
    await res.dump()
    const etag = res.headers['etag']
    if (!etag) throw badAnswer(this.context(op), `no ETag for part ${partNumber}`)
    return etag
  }

  /** Complete: the object appears whole, at once. */
  async completeMultipartUpload(
    bucket: string,
    key: string,
    uploadId: string,
    parts: ReadonlyArray<{partNumber: number; etag: string}>,
  ): Promise<string> {
    const xml = `<CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${parts
      .map(
        (p) => `<Part><PartNumber>${p.partNumber}</PartNumber><ETag>${escapeXmlText(p.etag)}</ETag></Part>`,
      )
      .join('')}</CompleteMultipartUpload>`
    const op: Op = {
      method: 'POST',
      bucket,
      key,
      query: [['uploadId', uploadId]],
      headers: {'content-type': 'application/xml'},
      body: [Buffer.from(xml, 'utf8')],
      doing: 'completing the upload',
    }
    try {
      const {text} = await this.sendForText(op)
      return textOf(text, 'ETag') ?? ''
    } catch (error) {
      // a retried Complete whose first attempt did complete finds no upload: the object tells
      if (error instanceof SflError && /NoSuchUpload/.test(error.message)) {
        const head = await this.headObject(bucket, key)
        if (head && head.etag.replace(/"/g, '').endsWith(`-${parts.length}`)) return head.etag
      }
      throw error
    }
  }

  /** Abort: the parts are dropped and nothing appears. An upload already gone is fine. */
  async abortMultipartUpload(bucket: string, key: string, uploadId: string): Promise<void> {
    const res = await this.send({
      method: 'DELETE',
      bucket,
      key,
      query: [['uploadId', uploadId]],
      doing: 'aborting an upload',
      accept: [404],
      cleanup: true,
    })
    await res.dump()
  }

  /** Uploads started and neither completed nor aborted, under `prefix` (for cleaning up after a kill). */
  async *listMultipartUploads(bucket: string, prefix: string): AsyncGenerator<UploadInfo> {
    let keyMarker: string | undefined
    let idMarker: string | undefined
    for (;;) {
      const query: Array<[string, string]> = [
        ['uploads', ''],
        ['prefix', prefix],
      ]
      if (keyMarker !== undefined) query.push(['key-marker', keyMarker])
      if (idMarker !== undefined) query.push(['upload-id-marker', idMarker])
      const op: Op = {method: 'GET', bucket, key: undefined, query, doing: 'listing uploads'}
      const {text} = await this.sendForText(op)
      if (rootName(text) !== 'ListMultipartUploadsResult')
        throw badAnswer(this.context(op), 'no ListMultipartUploadsResult')
      for (const raw of elementsRaw(text, 'Upload')) {
        const key = textOf(raw, 'Key')
        const uploadId = textOf(raw, 'UploadId')
        if (key === undefined || uploadId === undefined)
          throw badAnswer(this.context(op), 'an Upload without Key or UploadId')
        yield {key, uploadId, initiated: textOf(raw, 'Initiated') ?? ''}
      }
      if (textOf(text, 'IsTruncated') !== 'true') return
      const nextKey = textOf(text, 'NextKeyMarker')
      const nextId = textOf(text, 'NextUploadIdMarker')
      if (!nextKey || (nextKey === keyMarker && nextId === idMarker))
        throw badAnswer(this.context(op), 'a truncated listing without a new marker')
      keyMarker = nextKey
      idMarker = nextId
    }
  }

  /** HeadObject: the object's size and ETag, or undefined when there is none. */
  async headObject(bucket: string, key: string): Promise<ObjectInfo | undefined> {
    const res = await this.send({method: 'HEAD', bucket, key, doing: 'reading', accept: [404]})
    await res.dump()
    if (res.status === 404) return undefined
    return {
      key,
      size: Number(res.headers['content-length'] ?? NaN),
      etag: res.headers['etag'] ?? '',
      lastModified: res.headers['last-modified'] ?? '',
    }
  }

  /**
   * GetObject, streamed: the body is read as it arrives. `offset` asks for the bytes from there on (a read
   * resumed after a reset), `ifMatch` that the object is still the one begun (its ETag).
   */
  async getObject(
    bucket: string,
    key: string,
    from?: {offset: number; ifMatch: string},
  ): Promise<ObjectBody> {
    const headers: Record<string, string> = {}
    if (from) {
      headers['range'] = `bytes=${from.offset}-`
      headers['if-match'] = from.ifMatch
    }
    const res = await this.send({method: 'GET', bucket, key, headers, doing: 'reading'})
    const length = Number(res.headers['content-length'])
    // the deadline covers the whole body: give a long one the time a slow but honest link needs
    if (Number.isFinite(length)) res.extendDeadline(this.timeoutMs + (length / MIN_BODY_BYTES_PER_S) * 1000)
    return {
      size: Number.isFinite(length) ? length : undefined,
      etag: res.headers['etag'],
      body: res.body,
      cancel: () => res.cancel(),
    }
  }

  /**
   * GetObject of an object that may not be there (a manifest before the first run): undefined for
   * NoSuchKey; a missing bucket is still an error.
   */
  async getObjectIfExists(bucket: string, key: string): Promise<ObjectBody | undefined> {
    const op: Op = {method: 'GET', bucket, key, doing: 'reading', accept: [404]}
    const res = await this.send(op)
    if (res.status === 404) {
      const fault = await readFault(res)
      if (fault.code === 'NoSuchKey' || fault.code === '') return undefined
      throw faultError(fault, this.context(op), 1)
    }
    const length = Number(res.headers['content-length'])
    if (Number.isFinite(length)) res.extendDeadline(this.timeoutMs + (length / MIN_BODY_BYTES_PER_S) * 1000)
    return {
      size: Number.isFinite(length) ? length : undefined,
      etag: res.headers['etag'],
      body: res.body,
      cancel: () => res.cancel(),
    }
  }

  /** ListObjectsV2 under `prefix`, every page, in key order. */
  async *listObjects(bucket: string, prefix: string): AsyncGenerator<ObjectInfo> {
    let token: string | undefined
    for (;;) {
      const query: Array<[string, string]> = [
        ['list-type', '2'],
        ['prefix', prefix],
      ]
      if (token !== undefined) query.push(['continuation-token', token])
      const op: Op = {method: 'GET', bucket, key: undefined, query, doing: 'listing'}
      const {text} = await this.sendForText(op)
      if (rootName(text) !== 'ListBucketResult') throw badAnswer(this.context(op), 'no ListBucketResult')
      for (const raw of elementsRaw(text, 'Contents')) {
        const key = textOf(raw, 'Key')
        if (key === undefined) throw badAnswer(this.context(op), 'an object without a Key')
        yield {
          key,
          size: Number(textOf(raw, 'Size') ?? NaN),
          etag: textOf(raw, 'ETag') ?? '',
          lastModified: textOf(raw, 'LastModified') ?? '',
        }
      }
      if (textOf(text, 'IsTruncated') !== 'true') return
      const next = textOf(text, 'NextContinuationToken')
      if (!next || next === token)
        throw badAnswer(this.context(op), 'a truncated listing without a new token')
      token = next
    }
  }

  /** DeleteObject. Deleting what is not there is not an error (S3 answers 204 either way). */
  async deleteObject(bucket: string, key: string, naming: Naming = {}): Promise<void> {
    const res = await this.send({
      method: 'DELETE',
      bucket,
      key,
      doing: naming.doing ?? 'deleting',
      accept: [404],
      shown: naming.shown,
    })
    await res.dump()
  }
}

function describe(error: unknown): string {
  const code = (error as {code?: unknown}).code
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'error'
}

/** The fault of a non-2xx answer: S3's XML <Error>, or the status alone (a HEAD, a proxy's page). */
async function readFault(res: TransportResponse): Promise<StoreFault> {
  let text = ''
  try {
    text = (await res.text()).slice(0, 64 * 1024)
  } catch {
    // the status is still worth reporting
  }
  return faultFromXml(res.status, text, res.headers)
}

function faultFromXml(status: number, text: string, headers: Record<string, string>): StoreFault {
  const isError = rootName(text) === 'Error'
  const region = (isError ? textOf(text, 'Region') : undefined) ?? headers['x-amz-bucket-region']
  return {
    status,
    code: isError ? (textOf(text, 'Code') ?? '') : '',
    message: isError ? (textOf(text, 'Message') ?? '') : '',
    region: region ? decodeXmlText(region) : undefined,
  }
}
