import {readFileSync} from 'node:fs'
import {readFile} from 'node:fs/promises'

import {registerSecret} from '../api/secrets.js'
import type {Transport} from '../api/transport.js'
import {InvalidKeyError, MissingKeyError, UsageError} from '../errors.js'
import type {ConfigInputs, CredentialProvider, Credentials, WebIdentityInputs} from './config.js'
import {cleanServerText} from './errors.js'
import {rootName, textOf} from './xml.js'

/**
 * Credentials that come over the network: a web-identity token traded with STS (EKS service accounts,
 * GitHub Actions' OIDC), and an EC2 instance's role from the instance metadata service (IMDSv2). Both are
 * temporary: kept until five minutes before they expire, then asked for again. Their secrets go to the
 * redactor the moment they arrive.
 */
const REFRESH_BEFORE_MS = 5 * 60 * 1000

function cached(
  source: string,
  fetch: (signal?: AbortSignal) => Promise<Credentials>,
  now: () => number,
): CredentialProvider {
  let current: Promise<Credentials> | undefined
  return {
    source,
    get(signal) {
      const stale = async (): Promise<boolean> => {
        if (!current) return true
        try {
          const c = await current
          return c.expiration !== undefined && c.expiration.getTime() - REFRESH_BEFORE_MS <= now()
        } catch {
          return true // a failed fetch is tried again at the next request
        }
      }
      return stale().then((again) => {
        if (again) current = fetch(signal)
        return current as Promise<Credentials>
      })
    },
  }
}

async function text(
  transport: Transport,
  method: 'GET' | 'PUT' | 'POST',
  url: URL,
  headers: Record<string, string>,
  timeoutMs: number,
  signal?: AbortSignal,
  body?: string,
): Promise<{status: number; text: string}> {
  const res = await transport.send({method, url, headers, body, timeoutMs, signal})
  return {status: res.status, text: await res.text()}
}

/**
 * STS AssumeRoleWithWebIdentity (AWS STS API Reference): the token file is read at each refresh (it is
 * rotated by whoever mounts it); the call is not signed, the token is the proof.
 */
export function webIdentityProvider(
  inputs: WebIdentityInputs,
  transport: Transport,
  now: () => number = Date.now,
): CredentialProvider {
  const source = `the web-identity token ${inputs.tokenFile} (role ${inputs.roleArn})`
  const endpoint = inputs.stsEndpoint ?? new URL(`https://sts.${inputs.region}.amazonaws.com/`)
  return cached(
    source,
    async (signal) => {
      let token: string
      try {
        token = (await readFile(inputs.tokenFile, 'utf8')).trim()
      } catch (error) {
        throw new UsageError(
          `cannot read the web-identity token ${inputs.tokenFile} (${(error as {code?: string}).code ?? 'error'}); check AWS_WEB_IDENTITY_TOKEN_FILE`,
        )
      }
      registerSecret(token)
      const form = new URLSearchParams({
        Action: 'AssumeRoleWithWebIdentity',
        Version: '2011-06-15',
        RoleArn: inputs.roleArn,
        RoleSessionName: inputs.sessionName,
        WebIdentityToken: token,
      }).toString()
      const res = await text(
        transport,
        'POST',
        endpoint,
        {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': String(Buffer.byteLength(form)),
        },
        10_000,
        signal,
        form,
      )
      if (res.status !== 200 || rootName(res.text) !== 'AssumeRoleWithWebIdentityResponse')
        throw new InvalidKeyError(
          `STS at ${endpoint.host} refused the web-identity token for ${inputs.roleArn} (${textOf(res.text, 'Code') ?? `HTTP ${res.status}`}${textOf(res.text, 'Message') ? `: ${cleanServerText(textOf(res.text, 'Message') ?? '')}` : ''}); check the token file and the role's trust policy`,
          res.status,
        )
      return credentialsFrom(
        {
          accessKeyId: textOf(res.text, 'AccessKeyId'),
          secretAccessKey: textOf(res.text, 'SecretAccessKey'),
          sessionToken: textOf(res.text, 'SessionToken'),
          expiration: textOf(res.text, 'Expiration'),
        },
        source,
        `STS at ${endpoint.host}`,
      )
    },
    now,
  )
}

const IMDS_DEFAULT = 'http://169.254.169.254'
const IMDS_TIMEOUT_MS = 1000

/** The files by which a Linux machine says it is an EC2 instance (its DMI vendor; the Xen UUID of older ones). */
const EC2_SIGNS: ReadonlyArray<[string, (text: string) => boolean]> = [
  ['/sys/devices/virtual/dmi/id/sys_vendor', (t) => t.trim() === 'Amazon EC2'],
  ['/sys/devices/virtual/dmi/id/board_vendor', (t) => t.trim() === 'Amazon EC2'],
  ['/sys/hypervisor/uuid', (t) => t.trim().toLowerCase().startsWith('ec2')],
]

/** True when this machine says it is an EC2 instance. `read` is injected in tests. */
export function looksLikeEc2(read: (path: string) => string = (p) => readFileSync(p, 'utf8')): boolean {
  return EC2_SIGNS.some(([path, test]) => {
    try {
      return test(read(path))
    } catch {
      return false
    }
  })
}

/**
 * The instance's role through IMDSv2 (Amazon EC2 User Guide, "Use the Instance Metadata Service to access
 * instance metadata"): a session token from PUT /latest/api/token, the role's name, then its credentials.
 * Each request has a 1 s deadline, as the AWS SDKs give it.
 *
 * Unlike the SDKs, sfl asks the metadata address only on a machine that says it is EC2 (`looksLikeEc2`),
 * or when AWS_EC2_METADATA_SERVICE_ENDPOINT names the service: a laptop without credentials gets its
 * one-line answer at once instead of after a timeout, and nothing is sent to a link-local address where
 * nothing can answer. Off when AWS_EC2_METADATA_DISABLED=true.
 */
export function instanceRoleProvider(
  env: ConfigInputs['env'],
  transport: Transport,
  now: () => number = Date.now,
  onEc2: () => boolean = looksLikeEc2,
): CredentialProvider | undefined {
  if ((env['AWS_EC2_METADATA_DISABLED'] ?? '').toLowerCase() === 'true') return undefined
  if (!env['AWS_EC2_METADATA_SERVICE_ENDPOINT'] && !onEc2()) return undefined
  const base = env['AWS_EC2_METADATA_SERVICE_ENDPOINT'] || IMDS_DEFAULT
  const source = `the instance role (IMDSv2 at ${new URL(base).host})`
  return cached(
    source,
    async (signal) => {
      const at = (path: string): URL => new URL(path, base)
      try {
        const token = await text(
          transport,
          'PUT',
          at('/latest/api/token'),
          {'x-aws-ec2-metadata-token-ttl-seconds': '21600'},
          IMDS_TIMEOUT_MS,
          signal,
        )
        if (token.status !== 200) throw new Error(`HTTP ${token.status} for a token`)
        registerSecret(token.text)
        const headers = {'x-aws-ec2-metadata-token': token.text}
        const roles = await text(
          transport,
          'GET',
          at('/latest/meta-data/iam/security-credentials/'),
          headers,
          IMDS_TIMEOUT_MS,
          signal,
        )
        const role = roles.text.split('\n')[0]?.trim()
        if (roles.status !== 200 || !role)
          throw new Error(`HTTP ${roles.status}: no role attached to the instance`)
        const creds = await text(
          transport,
          'GET',
          at(`/latest/meta-data/iam/security-credentials/${encodeURIComponent(role)}`),
          headers,
          IMDS_TIMEOUT_MS,
          signal,
        )
        if (creds.status !== 200) throw new Error(`HTTP ${creds.status} for the role's credentials`)
        const doc = JSON.parse(creds.text) as Record<string, unknown>
        const str = (k: string): string | undefined => (typeof doc[k] === 'string' ? doc[k] : undefined)
        return credentialsFrom(
          {
            accessKeyId: str('AccessKeyId'),
            secretAccessKey: str('SecretAccessKey'),
            sessionToken: str('Token'),
            expiration: str('Expiration'),
          },
          source,
          'the instance metadata service',
        )
      } catch (error) {
        if (signal?.aborted) throw signal.reason
        if (error instanceof InvalidKeyError) throw error
        const why = (error as {code?: string}).code ?? (error instanceof Error ? error.message : 'error')
        throw new MissingKeyError(
          `no AWS credentials: none in the environment or the AWS files, and no instance role answered at ${new URL(base).host} (${cleanServerText(why)}); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE`,
        )
      }
    },
    now,
  )
}

function credentialsFrom(
  raw: {
    accessKeyId?: string | undefined
    secretAccessKey?: string | undefined
    sessionToken?: string | undefined
    expiration?: string | undefined
  },
  source: string,
  from: string,
): Credentials {
  registerSecret(raw.secretAccessKey)
  registerSecret(raw.sessionToken)
  if (!raw.accessKeyId || !raw.secretAccessKey || !raw.sessionToken)
    throw new InvalidKeyError(
      `${from} answered without AccessKeyId, SecretAccessKey and a session token`,
      200,
    )
  const expiration = raw.expiration ? new Date(raw.expiration) : undefined
  return {
    accessKeyId: raw.accessKeyId,
    secretAccessKey: raw.secretAccessKey,
    sessionToken: raw.sessionToken,
    expiration: expiration && !Number.isNaN(expiration.getTime()) ? expiration : undefined,
    source,
  }
}
