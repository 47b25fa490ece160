import {writeFileSync} from 'node:fs'
import {type IncomingMessage, type ServerResponse, createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {redact} from '../../src/api/secrets.js'
import {createTransport} from '../../src/api/transport.js'
import {ExitCode, InvalidKeyError, MissingKeyError} from '../../src/errors.js'
import {ObjectStore} from '../../src/objstore/client.js'
import {resolveStoreConfig} from '../../src/objstore/config.js'
import {
  instanceRoleProvider,
  looksLikeEc2,
  webIdentityProvider,
} from '../../src/objstore/remote-credentials.js'
import {tempDir} from '../helpers/tmp.js'
import {startServer} from './fixture.js'

/** Loopback fakes of the instance metadata service and of STS; nothing leaves the machine. */
type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void
const open: Array<{close(): void; closeAllConnections(): void}> = []
afterEach(() => {
  for (const s of open.splice(0)) {
    s.closeAllConnections()
    s.close()
  }
})
async function fake(handler: Handler): Promise<{url: string; seen: string[]}> {
  const seen: string[] = []
  const s = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      seen.push(`${req.method} ${req.url}`)
      handler(req, body, res)
    })
  })
  open.push(s)
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  return {url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen}
}

/** Registered with the redactor: no run of 8 of its characters survives it. */
function expectHidden(secret: string): void {
  const out = redact(`it was ${secret}.`)
  for (let i = 0; i + 8 <= secret.length; i++) expect(out).not.toContain(secret.slice(i, i + 8))
}

const ROLE_KEY = {
  id: 'ASIAINSTANCEROLE0001',
  secret: 'instanceRoleSecretAccessKey/0000000000008',
  token: 'instanceRoleSessionToken-abcdefghij-0009',
}

function imds(expiration: () => string): Handler {
  return (req, _body, res) => {
    if (req.method === 'PUT' && req.url === '/latest/api/token') {
      if (req.headers['x-aws-ec2-metadata-token-ttl-seconds'] !== '21600')
        return void res.writeHead(400).end()
      return void res.end('imds-session-token-0123456789')
    }
    // IMDSv2 only: every read needs the session token
    if (req.headers['x-aws-ec2-metadata-token'] !== 'imds-session-token-0123456789')
      return void res.writeHead(401).end()
    if (req.url === '/latest/meta-data/iam/security-credentials/') return void res.end('sfl-export-role\n')
    if (req.url === '/latest/meta-data/iam/security-credentials/sfl-export-role')
      return void res.end(
        JSON.stringify({
          Code: 'Success',
          Type: 'AWS-HMAC',
          AccessKeyId: ROLE_KEY.id,
          SecretAccessKey: ROLE_KEY.secret,
          Token: ROLE_KEY.token,
          Expiration: expiration(),
        }),
      )
    res.writeHead(404).end()
  }
}

describe('the instance role (IMDSv2), against a loopback fake', () => {
  it('token, role name, credentials; kept until 5 minutes before they expire, then asked again; secrets redacted', async () => {
    let now = Date.parse('2026-11-26T10:00:00Z')
    const {url, seen} = await fake(imds(() => '2026-11-26T11:00:00Z'))
    const provider = instanceRoleProvider(
      {AWS_EC2_METADATA_SERVICE_ENDPOINT: url},
      createTransport(),
      () => now,
    )
    expect(provider?.source).toBe(`the instance role (IMDSv2 at ${new URL(url).host})`)
    const c = await provider?.get()
    expect(c).toEqual({
      accessKeyId: ROLE_KEY.id,
      secretAccessKey: ROLE_KEY.secret,
      sessionToken: ROLE_KEY.token,
      expiration: new Date('2026-11-26T11:00:00Z'),
      source: provider?.source,
    })
    expect(seen).toEqual([
      'PUT /latest/api/token',
      'GET /latest/meta-data/iam/security-credentials/',
      'GET /latest/meta-data/iam/security-credentials/sfl-export-role',
    ])
    now = Date.parse('2026-11-26T10:54:59Z')
    await provider?.get()
    expect(seen).toHaveLength(3)
    now = Date.parse('2026-11-26T10:55:00Z')
    await provider?.get()
    expect(seen).toHaveLength(6)
    expectHidden(ROLE_KEY.secret)
    expectHidden(ROLE_KEY.token)
    expectHidden('imds-session-token-0123456789')
  })

  it('AWS_EC2_METADATA_DISABLED=true: no provider at all', () => {
    expect(instanceRoleProvider({AWS_EC2_METADATA_DISABLED: 'true'}, createTransport())).toBeUndefined()
  })

  it('the metadata address is asked only on a machine that says it is EC2, or when the endpoint is set', () => {
    const transport = createTransport()
    expect(instanceRoleProvider({}, transport, Date.now, () => false)).toBeUndefined()
    expect(instanceRoleProvider({}, transport, Date.now, () => true)?.source).toBe(
      'the instance role (IMDSv2 at 169.254.169.254)',
    )
    expect(
      instanceRoleProvider(
        {AWS_EC2_METADATA_SERVICE_ENDPOINT: 'http://127.0.0.1:1'},
        transport,
        Date.now,
        () => false,
      )?.source,
    ).toBe('the instance role (IMDSv2 at 127.0.0.1:1)')
    const files = (vendor: string) => (path: string) => {
      if (path.endsWith('sys_vendor')) return vendor
      throw Object.assign(new Error('no file'), {code: 'ENOENT'})
    }
    expect(looksLikeEc2(files('Amazon EC2\n'))).toBe(true)
    expect(looksLikeEc2(files('QEMU\n'))).toBe(false)
    expect(
      looksLikeEc2((p) => (p === '/sys/hypervisor/uuid' ? 'ec2e1916-9099-7caf-fd21-012345abcdef' : '')),
    ).toBe(true)
    expect(
      looksLikeEc2(() => {
        throw new Error('no /sys')
      }),
    ).toBe(false)
  })

  it('no metadata service answering: MissingKeyError, exit 4, one line naming what was tried', async () => {
    const {url} = await fake((_req, _b, res) => void res.writeHead(404).end())
    const provider = instanceRoleProvider({AWS_EC2_METADATA_SERVICE_ENDPOINT: url}, createTransport())
    const e = await provider?.get().catch((error: unknown) => error)
    expect(e).toBeInstanceOf(MissingKeyError)
    expect((e as MissingKeyError).exitCode).toBe(ExitCode.auth)
    expect((e as Error).message).toBe(
      `no AWS credentials: none in the environment or the AWS files, and no instance role answered at ${new URL(url).host} (HTTP 404 for a token); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE`,
    )
  })

  it('the chain falls to the instance role only with nothing else, and its temporary credentials sign requests the store accepts', async () => {
    const {url} = await fake(imds(() => new Date(Date.now() + 3_600_000).toISOString()))
    const server = await startServer({
      credentials: [
        {accessKeyId: ROLE_KEY.id, secretAccessKey: ROLE_KEY.secret, sessionToken: ROLE_KEY.token},
      ],
    })
    const home = tempDir()
    const transport = createTransport()
    const config = await resolveStoreConfig(
      {
        env: {
          AWS_EC2_METADATA_SERVICE_ENDPOINT: url,
          AWS_ENDPOINT_URL_S3: server.endpoint,
          AWS_SHARED_CREDENTIALS_FILE: join(home, 'none'),
          AWS_CONFIG_FILE: join(home, 'none'),
        },
        home,
        readText: async () => undefined,
      },
      {instance: (env) => instanceRoleProvider(env, transport)},
    )
    const store = new ObjectStore({config, transport})
    await store.putObject('exports', 'from-role', [Buffer.from('ok')])
    expect(server.object('exports', 'from-role')?.body.toString()).toBe('ok')
  })
})

describe('web identity (STS AssumeRoleWithWebIdentity), against a loopback fake', () => {
  const STS_OK = `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIAWEBIDENTITY00001</AccessKeyId><SecretAccessKey>webIdentitySecretAccessKey/000000000010</SecretAccessKey><SessionToken>webIdentitySessionToken-klmnopqrst-0011</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>`

  it('trades the token file for temporary credentials; the token and the secrets are redacted', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'token'), 'eyJhbGciOiJSUzI1NiJ9.web-identity-token-for-sfl-tests.sig\n')
    let form: URLSearchParams | undefined
    const sts = await fake((req, body, res) => {
      form = new URLSearchParams(body)
      res
        .writeHead(req.headers['content-type'] === 'application/x-www-form-urlencoded' ? 200 : 400)
        .end(STS_OK)
    })
    const provider = webIdentityProvider(
      {
        tokenFile: join(dir, 'token'),
        roleArn: 'arn:aws:iam::123456789012:role/sfl',
        sessionName: 'sfl-test',
        region: 'us-east-1',
        stsEndpoint: new URL(sts.url),
      },
      createTransport(),
    )
    const c = await provider.get()
    expect(c).toMatchObject({
      accessKeyId: 'ASIAWEBIDENTITY00001',
      sessionToken: 'webIdentitySessionToken-klmnopqrst-0011',
      expiration: new Date('2099-01-01T00:00:00Z'),
    })
    expect(Object.fromEntries(form ?? [])).toEqual({
      Action: 'AssumeRoleWithWebIdentity',
      Version: '2011-06-15',
      RoleArn: 'arn:aws:iam::123456789012:role/sfl',
      RoleSessionName: 'sfl-test',
      WebIdentityToken: 'eyJhbGciOiJSUzI1NiJ9.web-identity-token-for-sfl-tests.sig',
    })
    expectHidden('eyJhbGciOiJSUzI1NiJ9.web-identity-token-for-sfl-tests.sig')
    expectHidden('webIdentitySecretAccessKey/000000000010')
    expectHidden('webIdentitySessionToken-klmnopqrst-0011')
  })

  it('STS refusing the token: InvalidKeyError, exit 4, one line with its code and what to check', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'token'), 'expired-token-value-000012')
    const sts = await fake((_req, _body, res) =>
      res
        .writeHead(400)
        .end(
          '<ErrorResponse><Error><Type>Sender</Type><Code>ExpiredTokenException</Code><Message>Token expired:\ncurrent date/time is after exp</Message></Error></ErrorResponse>',
        ),
    )
    const provider = webIdentityProvider(
      {
        tokenFile: join(dir, 'token'),
        roleArn: 'arn:aws:iam::123456789012:role/sfl',
        sessionName: 's',
        region: 'us-east-1',
        stsEndpoint: new URL(sts.url),
      },
      createTransport(),
    )
    const e = await provider.get().catch((error: unknown) => error)
    expect(e).toBeInstanceOf(InvalidKeyError)
    expect((e as InvalidKeyError).exitCode).toBe(ExitCode.auth)
    expect((e as Error).message).toBe(
      `STS at ${new URL(sts.url).host} refused the web-identity token for arn:aws:iam::123456789012:role/sfl (ExpiredTokenException: Token expired: current date/time is after exp); check the token file and the role's trust policy`,
    )
  })

  it('the chain picks web identity from AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, with AWS_ENDPOINT_URL_STS', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'token'), 'tok-0000000000013')
    const sts = await fake((_req, _body, res) => res.end(STS_OK))
    const transport = createTransport()
    const config = await resolveStoreConfig(
      {
        env: {
          AWS_WEB_IDENTITY_TOKEN_FILE: join(dir, 'token'),
          AWS_ROLE_ARN: 'arn:aws:iam::1:role/r',
          AWS_ENDPOINT_URL_STS: sts.url,
          AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
          AWS_CONFIG_FILE: join(dir, 'none'),
        },
        home: dir,
        readText: async () => undefined,
      },
      {webIdentity: (inputs) => webIdentityProvider(inputs, transport), instance: () => undefined},
    )
    expect(config.credentials.source).toBe(
      `the web-identity token ${join(dir, 'token')} (role arn:aws:iam::1:role/r)`,
    )
    expect((await config.credentials.get()).accessKeyId).toBe('ASIAWEBIDENTITY00001')
  })
})
