import {createHash, createHmac} from 'node:crypto'

/**
 * AWS Signature Version 4 for S3, header form ("Authenticating Requests: Using the Authorization Header",
 * Amazon S3 API Reference; "Signature Calculations for the Authorization Header: Transferring Payload in a
 * Single Chunk"). Pure: the date comes in, the headers to add come out.
 *
 * S3 differs from the other services in two ways the algorithm allows: the path is URI-encoded once (not
 * twice) and never normalised (`a/./b` is a key of its own), and `x-amz-content-sha256` is required and
 * signed: the SHA-256 of the body in hex, or `UNSIGNED-PAYLOAD`.
 */
export interface SigningCredentials {
  accessKeyId: string
  secretAccessKey: string
  /** Temporary credentials (STS, an instance role): sent and signed as x-amz-security-token. */
  sessionToken?: string | undefined
}

export interface RequestToSign {
  method: string
  /** The path as sent: already URI-encoded by `encodeKeyPath` (S3 signs it as is). */
  path: string
  /** Query parameters, not encoded; a parameter without a value (`?uploads`) has ''. */
  query: ReadonlyArray<readonly [string, string]>
  /** Header names in any case; must include `host`. */
  headers: Readonly<Record<string, string>>
  /** Hex SHA-256 of the body, or UNSIGNED_PAYLOAD. */
  payloadHash: string
}

export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD'
export const ALGORITHM = 'AWS4-HMAC-SHA256'
/** SHA-256 of nothing: the payload hash of a GET, HEAD or DELETE. */
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'

export function sha256Hex(data: string | Buffer | ReadonlyArray<Buffer>): string {
  const hash = createHash('sha256')
  if (Array.isArray(data)) for (const chunk of data as ReadonlyArray<Buffer>) hash.update(chunk)
  else hash.update(data as string | Buffer)
  return hash.digest('hex')
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest()
}

/**
 * RFC 3986 percent-encoding as SigV4 defines it: every byte but the unreserved characters
 * `A-Z a-z 0-9 - _ . ~` becomes `%XY` in upper-case hex; `/` too unless `keepSlash` (the path).
 */
export function uriEncode(text: string, keepSlash: boolean): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte)
    if (/[A-Za-z0-9\-_.~]/.test(c) || (keepSlash && c === '/')) out += c
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** The request path for `key` (path-style: with the bucket first), encoded once as S3 signs it. */
export function encodeKeyPath(segments: readonly string[]): string {
  return `/${segments.map((s) => uriEncode(s, true)).join('/')}`
}

/** `YYYYMMDD'T'HHMMSS'Z'`, the form of x-amz-date. */
export function amzDate(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '')
}

function canonicalQuery(query: RequestToSign['query']): string {
  return query
    .map(([k, v]) => [uriEncode(k, false), uriEncode(v, false)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
}

/** Lower-case names sorted; values trimmed with inner runs of spaces made one (SigV4 "CanonicalHeaders"). */
function canonicalHeaders(headers: RequestToSign['headers']): {text: string; signed: string} {
  const entries = Object.entries(headers)
    .map(([k, v]) => [k.toLowerCase(), v.trim().replace(/ +/g, ' ')] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return {
    text: entries.map(([k, v]) => `${k}:${v}\n`).join(''),
    signed: entries.map(([k]) => k).join(';'),
  }
}

export function canonicalRequest(req: RequestToSign): {text: string; signedHeaders: string} {
  const {text, signed} = canonicalHeaders(req.headers)
  return {
    text: [req.method, req.path, canonicalQuery(req.query), text, signed, req.payloadHash].join('\n'),
    signedHeaders: signed,
  }
}

/** The key of one day, region and service: derived afresh each call (cheap next to a request). */
export function signingKey(secret: string, day: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), 'aws4_request')
}

export interface Signed {
  /** The headers to send: x-amz-date, x-amz-content-sha256, x-amz-security-token, authorization. */
  headers: Record<string, string>
  /** For --debug and tests: never holds the secret. */
  canonicalRequest: string
  stringToSign: string
}

/**
 * Sign `req` for `region` and `service` (`s3`) at `date`. The x-amz-* headers are added to the signed set
 * before signing, so the caller passes only what it sends besides them (host, range, if-none-match...).
 *
 * @example
 * sign({method: 'GET', path: '/test.txt', query: [], headers: {host: 'examplebucket.s3.amazonaws.com'},
 *   payloadHash: EMPTY_SHA256}, creds, 'us-east-1', 's3', new Date('2013-05-24T00:00:00Z'))
 */
export function sign(
  req: RequestToSign,
  credentials: SigningCredentials,
  region: string,
  service: string,
  date: Date,
): Signed {
  const stamp = amzDate(date)
  const day = stamp.slice(0, 8)
  const added: Record<string, string> = {'x-amz-date': stamp, 'x-amz-content-sha256': req.payloadHash}
  if (credentials.sessionToken) added['x-amz-security-token'] = credentials.sessionToken
  const headers = {...req.headers, ...added}
  const canonical = canonicalRequest({...req, headers})
  const scope = `${day}/${region}/${service}/aws4_request`
  const stringToSign = [ALGORITHM, stamp, scope, sha256Hex(canonical.text)].join('\n')
  const signature = createHmac('sha256', signingKey(credentials.secretAccessKey, day, region, service))
    .update(stringToSign, 'utf8')
    .digest('hex')
  return {
    headers: {
      ...added,
      authorization: `${ALGORITHM} Credential=${credentials.accessKeyId}/${scope},SignedHeaders=${canonical.signedHeaders},Signature=${signature}`,
    },
    canonicalRequest: canonical.text,
    stringToSign,
  }
}
