import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {clearSecrets, redact} from '../../src/api/secrets.js'
import {ExitCode, MissingKeyError, SflError, UsageError} from '../../src/errors.js'
import {
  type ConfigInputs,
  type CredentialProvider,
  processInputs,
  resolveStoreConfig,
} from '../../src/objstore/config.js'
import {parseIni} from '../../src/objstore/ini.js'
import {tempDir} from '../helpers/tmp.js'

afterEach(() => clearSecrets())

/** The chain over a made-up environment and AWS files in a temp folder (nothing of the machine's is read). */
function inputs(
  env: Record<string, string>,
  files: {credentials?: string; config?: string} = {},
): ConfigInputs {
  const home = tempDir()
  const dir = join(home, '.aws')
  const real = processInputs()
  if (files.credentials !== undefined || files.config !== undefined) {
    writeFileSync(join(home, 'credentials.ini'), files.credentials ?? '')
    writeFileSync(join(home, 'config.ini'), files.config ?? '')
  }
  return {
    env: {
      AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials.ini'),
      AWS_CONFIG_FILE: join(home, 'config.ini'),
      ...env,
    },
    home: dir,
    readText: real.readText,
  }
}

async function failure(run: Promise<unknown>): Promise<SflError> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(SflError)
  expect((error as Error).message.split('\n')).toHaveLength(1)
  return error as SflError
}

const CREDENTIALS = `# made-up keys
[default]
aws_access_key_id = AKIADEFAULTPROFILE01
aws_secret_access_key = defaultSecretKeyFromTheCredentialsFile0001

[prod]
aws_access_key_id=AKIAPRODPROFILE00001
aws_secret_access_key=prodSecretKeyFromTheCredentialsFile000002
aws_session_token = prodSessTok-9f8e7d6c5b4a-qwertyuiop03
`
const CONFIG = `[default]
region = eu-west-1

[profile prod]
region = us-west-2
s3 =
  addressing_style = virtual
endpoint_url = https://s3.prod.example

[profile minio]
region = us-east-1
aws_access_key_id = AKIAMINIOINCONFIG001
aws_secret_access_key = minioSecretKeyInTheConfigFile00000000004
services = local

[services local]
s3 =
  endpoint_url = http://127.0.0.1:9000

[profile sso]
sso_session = corp
`

describe('the AWS configuration chain', () => {
  it('the environment wins over every profile: its keys, its region, its endpoint, path-style', async () => {
    const c = await resolveStoreConfig(
      inputs(
        {
          AWS_ACCESS_KEY_ID: 'AKIAFROMENVIRONMENT1',
          AWS_SECRET_ACCESS_KEY: 'environmentSecretAccessKey0000000000005',
          AWS_SESSION_TOKEN: 'environmentSessionToken000000000006',
          AWS_REGION: 'ap-south-1',
          AWS_DEFAULT_REGION: 'eu-central-1',
          AWS_PROFILE: 'prod',
          AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000',
          AWS_ENDPOINT_URL: 'http://127.0.0.1:9999',
        },
        {credentials: CREDENTIALS, config: CONFIG},
      ),
    )
    const creds = await c.credentials.get()
    expect(creds).toEqual({
      accessKeyId: 'AKIAFROMENVIRONMENT1',
      secretAccessKey: 'environmentSecretAccessKey0000000000005',
      sessionToken: 'environmentSessionToken000000000006',
      source: 'the environment (AWS_ACCESS_KEY_ID)',
    })
    expect(c.region).toBe('ap-south-1')
    expect(c.regionSource).toBe('AWS_REGION')
    expect(c.endpoint?.href).toBe('http://127.0.0.1:9000/')
    // the profile says virtual, but the environment's endpoint is used with the profile's style
    expect(c.addressing).toBe('virtual')
  })

  it('without keys in the environment, the default profile of the credentials file, with the config file region', async () => {
    const c = await resolveStoreConfig(inputs({}, {credentials: CREDENTIALS, config: CONFIG}))
    const creds = await c.credentials.get()
    expect(creds.accessKeyId).toBe('AKIADEFAULTPROFILE01')
    expect(creds.sessionToken).toBeUndefined()
    expect(creds.source).toMatch(/^profile default in .*credentials\.ini$/)
    expect(c.region).toBe('eu-west-1')
    expect(c.endpoint).toBeUndefined()
    expect(c.addressing).toBe('virtual')
  })

  it('AWS_PROFILE picks [prod] in credentials and [profile prod] in config (token, region, endpoint_url, addressing)', async () => {
    const c = await resolveStoreConfig(
      inputs(
        {AWS_PROFILE: 'prod', AWS_DEFAULT_REGION: 'ca-central-1'},
        {credentials: CREDENTIALS, config: CONFIG},
      ),
    )
    expect(await c.credentials.get()).toMatchObject({
      accessKeyId: 'AKIAPRODPROFILE00001',
      sessionToken: 'prodSessTok-9f8e7d6c5b4a-qwertyuiop03',
    })
    expect(c.region).toBe('ca-central-1') // AWS_DEFAULT_REGION over the profile's region
    expect(c.endpoint?.href).toBe('https://s3.prod.example/')
    expect(c.addressing).toBe('virtual')
  })

  it('keys in the config file, and an endpoint from its [services] section, path-style by default', async () => {
    const c = await resolveStoreConfig(
      inputs({AWS_PROFILE: 'minio'}, {credentials: CREDENTIALS, config: CONFIG}),
    )
    expect((await c.credentials.get()).source).toMatch(/^profile minio in .*config\.ini$/)
    expect(c.endpoint?.href).toBe('http://127.0.0.1:9000/')
    expect(c.addressing).toBe('path')
  })

  it('AWS_ENDPOINT_URL applies when AWS_ENDPOINT_URL_S3 is unset; AWS_IGNORE_CONFIGURED_ENDPOINT_URLS turns both off', async () => {
    const env = {AWS_ACCESS_KEY_ID: 'AKIAX0000000000000001', AWS_SECRET_ACCESS_KEY: 's'.repeat(40)}
    expect(
      (await resolveStoreConfig(inputs({...env, AWS_ENDPOINT_URL: 'http://127.0.0.1:9999'}))).endpoint?.port,
    ).toBe('9999')
    const off = await resolveStoreConfig(
      inputs({
        ...env,
        AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000',
        AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true',
      }),
    )
    expect(off.endpoint).toBeUndefined()
    expect(off.region).toBe('us-east-1')
    expect(off.regionSource).toBe('the default')
  })

  it('every secret access key and session token read is given to the redactor at once', async () => {
    await resolveStoreConfig(
      inputs(
        {
          AWS_ACCESS_KEY_ID: 'AKIAFROMENVIRONMENT1',
          AWS_SECRET_ACCESS_KEY: 'environmentSecretAccessKey0000000000005',
        },
        {credentials: CREDENTIALS, config: CONFIG},
      ),
    )
    expect(redact('secret environmentSecretAccessKey0000000000005 here')).toBe('secret envi… here')
    clearSecrets()
    await resolveStoreConfig(inputs({AWS_PROFILE: 'prod'}, {credentials: CREDENTIALS, config: CONFIG}))
    expect(redact('prodSecretKeyFromTheCredentialsFile000002 / prodSessTok-9f8e7d6c5b4a-qwertyuiop03')).toBe(
      'prod… / prod…',
    )
  })
})

describe('the chain refuses, one line, before any request', () => {
  it('no credentials anywhere: MissingKeyError, exit 4, naming where it looked', async () => {
    const e = await failure(resolveStoreConfig(inputs({})))
    expect(e).toBeInstanceOf(MissingKeyError)
    expect(e.exitCode).toBe(ExitCode.auth)
    expect(e.message).toMatch(
      /^no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add profile default to .*credentials\.ini \(looked in the environment, .*credentials\.ini and .*config\.ini\)$/,
    )
  })

  it('an instance-role provider is asked only when nothing else has credentials', async () => {
    let asked = 0
    const instance = (): CredentialProvider => {
      asked++
      return {
        source: 'the instance role',
        get: async () => ({accessKeyId: 'A', secretAccessKey: 'B', source: 'the instance role'}),
      }
    }
    await resolveStoreConfig(inputs({}, {credentials: CREDENTIALS}), {instance})
    expect(asked).toBe(0)
    const c = await resolveStoreConfig(inputs({}), {instance})
    expect(asked).toBe(1)
    expect(c.credentials.source).toBe('the instance role')
  })

  it.each([
    [
      {AWS_ACCESS_KEY_ID: 'AKIAONLYTHEKEYID0001'},
      'AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not; set both, or unset both to use a profile',
    ],
    [
      {AWS_PROFILE: 'nope'},
      /^AWS_PROFILE=nope: no \[nope\] in .*credentials\.ini and no \[profile nope\] in .*config\.ini$/,
    ],
    [
      {AWS_PROFILE: 'sso'},
      'profile sso uses IAM Identity Center (sso_session), which sfl does not support yet; export AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (for example from `aws configure export-credentials --format env`)',
    ],
    [
      {AWS_REGION: 'us east 1', AWS_PROFILE: 'prod'},
      'the region "us east 1" (from AWS_REGION) is not a region name; write one such as us-east-1',
    ],
    [
      {AWS_PROFILE: 'prod', AWS_ENDPOINT_URL_S3: 'ftp://x'},
      'AWS_ENDPOINT_URL_S3 must use https:// or http:// (got ftp:)',
    ],
    [
      {AWS_PROFILE: 'prod', AWS_ENDPOINT_URL_S3: 'http://u:p@127.0.0.1:9000'},
      'AWS_ENDPOINT_URL_S3 must not carry a user name or password; credentials come from the AWS chain',
    ],
    [
      {AWS_PROFILE: 'prod', AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9000/bucket'},
      'AWS_ENDPOINT_URL_S3 must be a bare origin such as https://s3.example.com, without a path or query',
    ],
    [
      {AWS_PROFILE: 'prod', AWS_ENDPOINT_URL_S3: 'not a url'},
      'AWS_ENDPOINT_URL_S3 "not a url" is not a URL; write one such as http://127.0.0.1:9000',
    ],
  ])('%j: exit 2', async (env, message) => {
    const e = await failure(resolveStoreConfig(inputs(env, {credentials: CREDENTIALS, config: CONFIG})))
    expect(e).toBeInstanceOf(UsageError)
    expect(e.exitCode).toBe(ExitCode.usage)
    if (typeof message === 'string') expect(e.message).toBe(message)
    else expect(e.message).toMatch(message)
  })

  it('a profile with half a key pair names the file and the missing half', async () => {
    const e = await failure(
      resolveStoreConfig(inputs({}, {credentials: '[default]\naws_access_key_id = AKIAHALF000000000001\n'})),
    )
    expect(e.message).toMatch(
      /^profile default in .*credentials\.ini has aws_access_key_id but no aws_secret_access_key; set both$/,
    )
  })
})

describe('the AWS INI dialect', () => {
  it('sections, comments, spaces around =, a nested sub-section, a later value replacing an earlier one', () => {
    const f = parseIni(
      '; c\n[ profile  a ]\nRegion = x\nregion=y\ns3 =\n  addressing_style = path\n  endpoint_url = http://h\nnext = 1\n# c\n[b]\nk = v = w\n',
    )
    const a = f.get('profile a')
    expect(a?.get('region')).toBe('y')
    expect(a?.get('s3')).toEqual(
      new Map([
        ['addressing_style', 'path'],
        ['endpoint_url', 'http://h'],
      ]),
    )
    expect(a?.get('next')).toBe('1')
    expect(f.get('b')?.get('k')).toBe('v = w')
  })
})
