import {readFile} from 'node:fs/promises'
import {homedir} from 'node:os'
import {join} from 'node:path'

import {MissingKeyError, UsageError} from '../errors.js'
import {registerSecret} from '../api/secrets.js'
import {type IniFile, type IniSection, nestedSetting, parseIni, setting} from './ini.js'
import type {SigningCredentials} from './sigv4.js'

/**
 * Where the object store is and who sfl is there, from the standard AWS chain (AWS SDKs and Tools
 * Reference Guide, "Standardized credential providers" and "Settings reference"): the environment first,
 * then the profile (`AWS_PROFILE`, else `default`) in the shared credentials and config files, then a
 * web-identity token, then the instance's role. Resolved once per run, before any request to the store.
 *
 * Every secret access key and session token is given to the redactor (src/api/secrets.ts) the moment it
 * is read, so no line sfl prints can hold one, also not under --debug.
 */
export interface Credentials extends SigningCredentials {
  /** Where they came from, for messages: "the environment (AWS_ACCESS_KEY_ID)", "profile prod in ...". */
  source: string
  /** Temporary credentials end; refreshed a few minutes before. */
  expiration?: Date | undefined
}

export interface CredentialProvider {
  /** What the provider reads, for messages before it was asked ("the instance role (IMDSv2)"). */
  readonly source: string
  get(signal?: AbortSignal): Promise<Credentials>
}

export type Addressing = 'path' | 'virtual'

export interface StoreConfig {
  region: string
  /** AWS_ENDPOINT_URL_S3 and the like: MinIO, R2, GCS's XML API, an emulator. Undefined: Amazon S3. */
  endpoint: URL | undefined
  /** Path-style (`host/bucket/key`) when an endpoint is set, as MinIO and emulators need; virtual otherwise. */
  addressing: Addressing
  credentials: CredentialProvider
  /** Where the region came from, for a wrong-region message. */
  regionSource: string
}

/** What the chain reads, injected in tests (temp files, a made-up environment). */
export interface ConfigInputs {
  env: Readonly<Record<string, string | undefined>>
  home: string
  /** The text of a file, or undefined when it does not exist. */
  readText(path: string): Promise<string | undefined>
}

export const DEFAULT_REGION = 'us-east-1'

/** Providers that need the network (web identity, the instance role), supplied by the caller. */
export interface RemoteProviders {
  webIdentity?: (inputs: WebIdentityInputs) => CredentialProvider
  instance?: (env: ConfigInputs['env']) => CredentialProvider | undefined
}

export interface WebIdentityInputs {
  tokenFile: string
  roleArn: string
  sessionName: string
  region: string
  /** A region or endpoint for STS: AWS_ENDPOINT_URL_STS, else the regional endpoint. */
  stsEndpoint: URL | undefined
}

export function processInputs(): ConfigInputs {
  return {
    env: process.env,
    home: homedir(),
    readText: async (path) => {
      try {
        return await readFile(path, 'utf8')
      } catch (error) {
        if ((error as {code?: string}).code === 'ENOENT') return undefined
        throw new UsageError(
          `cannot read ${path} (${(error as {code?: string}).code ?? 'error'}): check its mode`,
        )
      }
    },
  }
}

interface Profiles {
  name: string
  /** Whether AWS_PROFILE named it (a missing named profile is an error; a missing default is not). */
  named: boolean
  credentialsPath: string
  configPath: string
  credentials: IniSection | undefined
  config: IniSection | undefined
  configFile: IniFile
}

async function loadProfiles(inputs: ConfigInputs): Promise<Profiles> {
  const env = inputs.env
  const name = env['AWS_PROFILE'] || env['AWS_DEFAULT_PROFILE'] || 'default'
  const credentialsPath = env['AWS_SHARED_CREDENTIALS_FILE'] || join(inputs.home, '.aws', 'credentials')
  const configPath = env['AWS_CONFIG_FILE'] || join(inputs.home, '.aws', 'config')
  const credentialsFile = parseIni((await inputs.readText(credentialsPath)) ?? '')
  const configFile = parseIni((await inputs.readText(configPath)) ?? '')
  // the credentials file names sections plainly; the config file as "profile NAME", except "default"
  const config =
    configFile.get(`profile ${name}`) ?? (name === 'default' ? configFile.get('default') : undefined)
  return {
    name,
    named: Boolean(env['AWS_PROFILE'] || env['AWS_DEFAULT_PROFILE']),
    credentialsPath,
    configPath,
    credentials: credentialsFile.get(name),
    config,
    configFile,
  }
}

function fixed(credentials: Credentials): CredentialProvider {
  return {source: credentials.source, get: async () => credentials}
}

/** The first of `settings` in the credentials file's section, then the config file's. */
function profileValue(p: Profiles, name: string): string | undefined {
  return setting(p.credentials, name) ?? setting(p.config, name)
}

function profileCredentials(p: Profiles): CredentialProvider | undefined {
  const id = profileValue(p, 'aws_access_key_id')
  const secret = profileValue(p, 'aws_secret_access_key')
  const token = profileValue(p, 'aws_session_token')
  registerSecret(secret)
  registerSecret(token)
  const where = setting(p.credentials, 'aws_access_key_id') ? p.credentialsPath : p.configPath
  const source = `profile ${p.name} in ${where}`
  if (id && secret) return fixed({accessKeyId: id, secretAccessKey: secret, sessionToken: token, source})
  if (id || secret)
    throw new UsageError(
      `${source} has ${id ? 'aws_access_key_id but no aws_secret_access_key' : 'aws_secret_access_key but no aws_access_key_id'}; set both`,
    )
  // what the standard chain can do but sfl does not (yet): said plainly, never skipped to the next source
  for (const [key, what] of [
    ['role_arn', 'assuming a role (role_arn)'],
    ['credential_process', 'credential_process'],
    ['sso_session', 'IAM Identity Center (sso_session)'],
    ['sso_start_url', 'IAM Identity Center (sso_start_url)'],
    ['login_session', 'console login sessions'],
  ] as const)
    if (profileValue(p, key) && !(key === 'role_arn' && profileValue(p, 'web_identity_token_file')))
      throw new UsageError(
        `profile ${p.name} uses ${what}, which sfl does not support yet; export AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (for example from \`aws configure export-credentials --format env\`)`,
      )
  return undefined
}

function envCredentials(env: ConfigInputs['env']): CredentialProvider | undefined {
  const id = env['AWS_ACCESS_KEY_ID']
  const secret = env['AWS_SECRET_ACCESS_KEY']
  const token = env['AWS_SESSION_TOKEN']
  registerSecret(secret)
  registerSecret(token)
  if (id && secret)
    return fixed({
      accessKeyId: id,
      secretAccessKey: secret,
      sessionToken: token || undefined,
      source: 'the environment (AWS_ACCESS_KEY_ID)',
    })
  if (id || secret)
    throw new UsageError(
      `${id ? 'AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not' : 'AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not'}; set both, or unset both to use a profile`,
    )
  return undefined
}

function checkRegion(region: string, source: string): string {
  // it becomes part of a host name and of the signature's scope
  if (!/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/.test(region))
    throw new UsageError(
      `the region "${region}" (from ${source}) is not a region name; write one such as us-east-1`,
    )
  return region
}

function checkEndpoint(value: string, source: string): URL {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new UsageError(`${source} "${value}" is not a URL; write one such as http://127.0.0.1:9000`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UsageError(`${source} must use https:// or http:// (got ${url.protocol})`)
  if (url.username || url.password)
    throw new UsageError(
      `${source} must not carry a user name or password; credentials come from the AWS chain`,
    )
  if (url.search || url.hash || (url.pathname !== '/' && url.pathname !== ''))
    throw new UsageError(
      `${source} must be a bare origin such as https://s3.example.com, without a path or query`,
    )
  return url
}

function endpointOf(inputs: ConfigInputs, p: Profiles): {url: URL; source: string} | undefined {
  const env = inputs.env
  if ((env['AWS_IGNORE_CONFIGURED_ENDPOINT_URLS'] ?? '').toLowerCase() === 'true') return undefined
  for (const name of ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'] as const) {
    const v = env[name]
    if (v) return {url: checkEndpoint(v, name), source: name}
  }
  // a profile's `services = NAME` points at a [services NAME] section with an `s3 =` sub-section
  const services = setting(p.config, 'services')
  const fromServices = services
    ? nestedSetting(p.configFile.get(`services ${services}`), 's3', 'endpoint_url')
    : undefined
  const fromProfile = fromServices ?? setting(p.config, 'endpoint_url')
  if (fromProfile) {
    const source = `endpoint_url of profile ${p.name} in ${p.configPath}`
    return {url: checkEndpoint(fromProfile, source), source}
  }
  return undefined
}

/**
 * Resolve the store's configuration. Nothing is sent; a provider that needs the network (a web-identity
 * token, the instance role) asks at its first `get`. No credentials anywhere is a MissingKeyError (exit 4)
 * that names every place looked at.
 */
export async function resolveStoreConfig(
  inputs: ConfigInputs,
  remote: RemoteProviders = {},
): Promise<StoreConfig> {
  const env = inputs.env
  const p = await loadProfiles(inputs)
  if (p.named && !p.credentials && !p.config)
    throw new UsageError(
      `AWS_PROFILE=${p.name}: no [${p.name}] in ${p.credentialsPath} and no [profile ${p.name}] in ${p.configPath}`,
    )
  const regionFrom: Array<[string | undefined, string]> = [
    [env['AWS_REGION'], 'AWS_REGION'],
    [env['AWS_DEFAULT_REGION'], 'AWS_DEFAULT_REGION'],
    [setting(p.config, 'region'), `region of profile ${p.name} in ${p.configPath}`],
  ]
  const [regionValue, regionSource] = regionFrom.find(([v]) => v) ?? [DEFAULT_REGION, 'the default']
  const region = checkRegion(regionValue ?? DEFAULT_REGION, regionSource)
  const endpoint = endpointOf(inputs, p)
  const style = nestedSetting(p.config, 's3', 'addressing_style')
  if (style !== undefined && !['path', 'virtual', 'auto'].includes(style))
    throw new UsageError(
      `addressing_style "${style}" of profile ${p.name} in ${p.configPath} is not path, virtual or auto`,
    )
  const addressing: Addressing =
    style === 'path' || style === 'virtual' ? style : endpoint ? 'path' : 'virtual'
  const credentials =
    envCredentials(env) ??
    profileCredentials(p) ??
    webIdentity(inputs, p, region, remote) ??
    remote.instance?.(env)
  if (!credentials)
    throw new MissingKeyError(
      `no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add profile ${p.name} to ${p.credentialsPath} (looked in the environment, ${p.credentialsPath} and ${p.configPath})`,
    )
  return {region, endpoint: endpoint?.url, addressing, credentials, regionSource}
}

function webIdentity(
  inputs: ConfigInputs,
  p: Profiles,
  region: string,
  remote: RemoteProviders,
): CredentialProvider | undefined {
  const env = inputs.env
  const tokenFile = env['AWS_WEB_IDENTITY_TOKEN_FILE'] || setting(p.config, 'web_identity_token_file')
  const roleArn = env['AWS_ROLE_ARN'] || setting(p.config, 'role_arn')
  if (!tokenFile || !roleArn) return undefined
  if (!remote.webIdentity)
    throw new UsageError('web-identity credentials (AWS_WEB_IDENTITY_TOKEN_FILE) are not available here')
  const sts = env['AWS_ENDPOINT_URL_STS']
  return remote.webIdentity({
    tokenFile,
    roleArn,
    sessionName:
      env['AWS_ROLE_SESSION_NAME'] || setting(p.config, 'role_session_name') || `sfl-${Date.now()}`,
    region,
    stsEndpoint: sts ? checkEndpoint(sts, 'AWS_ENDPOINT_URL_STS') : undefined,
  })
}
