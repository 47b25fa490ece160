import {execFileSync, spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:https'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {sfl} from '../helpers/cli.js'

const hasOpenssl = spawnSync('openssl', ['version']).status === 0
const dir = mkdtempSync(join(tmpdir(), 'sfl-tls-'))
let server: Server | undefined
let base = ''

/** A private CA and a localhost certificate it signed, as a corporate TLS-inspecting proxy would have. */
function makeCerts(): void {
  const o = (args: string[]) => execFileSync('openssl', args, {cwd: dir, stdio: 'ignore'})
  o([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=sfl test CA',
  ])
  o([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=localhost',
  ])
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n')
  o([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  ])
}

beforeAll(async () => {
  if (!hasOpenssl) return
  makeCerts()
  server = createServer(
    {key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.pem'))},
    (_req, res) => {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({status: 'success', data: {Fips: '06067', APN: 'tls-ok'}}))
    },
  )
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r))
  base = `https://localhost:${(server!.address() as AddressInfo).port}/v1`
})
afterAll(() => server?.close())

describe.skipIf(!hasOpenssl)('TLS (needs openssl to make a private CA)', () => {
  const args = ['lookup', '--fips', '06067', '--apn', '1', '-o', 'json']

  it('an untrusted certificate: exit 6 and a message that names NODE_EXTRA_CA_CERTS', async () => {
    const r = await sfl(args, {env: {SFL_BASE_URL: base, SFL_API_KEY: 'k-123456'}})
    expect(r.code).toBe(6)
    expect(r.stderr).toMatch(
      /the TLS certificate of localhost:\d+ is not trusted \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\); .* NODE_EXTRA_CA_CERTS/,
    )
  })

  it('works once NODE_EXTRA_CA_CERTS names the CA, as in Node', async () => {
    const r = await sfl(args, {
      env: {SFL_BASE_URL: base, SFL_API_KEY: 'k-123456', NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem')},
    })
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).APN).toBe('tls-ok')
  })
})
