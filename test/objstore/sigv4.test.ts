import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {
  EMPTY_SHA256,
  type RequestToSign,
  amzDate,
  canonicalRequest,
  sha256Hex,
  sign,
  uriEncode,
} from '../../src/objstore/sigv4.js'

/**
 * The worked examples of the S3 API Reference, "Signature Calculations for the Authorization Header:
 * Transferring Payload in a Single Chunk": the credentials, dates and expected signatures are AWS's.
 */
const AWS = {accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'}
const WHEN = new Date('2013-05-24T00:00:00Z')
const HOST = 'examplebucket.s3.amazonaws.com'
const scope = 'Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request'

describe("AWS's published SigV4 examples for S3", () => {
  it('GET Object with a Range: the canonical request, its hash and the signature', () => {
    const req: RequestToSign = {
      method: 'GET',
      path: '/test.txt',
      query: [],
      headers: {host: HOST, range: 'bytes=0-9'},
      payloadHash: EMPTY_SHA256,
    }
    const signed = sign(req, AWS, 'us-east-1', 's3', WHEN)
    expect(signed.canonicalRequest).toBe(
      'GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\nx-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\nx-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    )
    expect(signed.stringToSign).toBe(
      'AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972',
    )
    expect(signed.headers['authorization']).toBe(
      `AWS4-HMAC-SHA256 ${scope},SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41`,
    )
    expect(signed.headers['x-amz-date']).toBe('20130524T000000Z')
  })

  it("PUT Object: a $ in the key is encoded once, the payload hash is the body's", () => {
    const body = 'Welcome to Amazon S3.'
    expect(sha256Hex(body)).toBe('44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072')
    const signed = sign(
      {
        method: 'PUT',
        path: `/${uriEncode('test$file.text', true)}`,
        query: [],
        headers: {
          Host: HOST,
          Date: 'Fri, 24 May 2013 00:00:00 GMT',
          'x-amz-storage-class': 'REDUCED_REDUNDANCY',
        },
        payloadHash: sha256Hex(body),
      },
      AWS,
      'us-east-1',
      's3',
      WHEN,
    )
    expect(signed.canonicalRequest.split('\n')[1]).toBe('/test%24file.text')
    expect(signed.headers['authorization']).toBe(
      `AWS4-HMAC-SHA256 ${scope},SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd`,
    )
  })

  it('GET Bucket lifecycle: a parameter without a value is signed as "lifecycle="', () => {
    const signed = sign(
      {
        method: 'GET',
        path: '/',
        query: [['lifecycle', '']],
        headers: {host: HOST},
        payloadHash: EMPTY_SHA256,
      },
      AWS,
      'us-east-1',
      's3',
      WHEN,
    )
    expect(signed.canonicalRequest.split('\n')[2]).toBe('lifecycle=')
    expect(signed.headers['authorization']).toContain(
      'Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543',
    )
  })

  it('GET Bucket (list objects): parameters sorted by name whatever order they come in', () => {
    const signed = sign(
      {
        method: 'GET',
        path: '/',
        query: [
          ['prefix', 'J'],
          ['max-keys', '2'],
        ],
        headers: {host: HOST},
        payloadHash: EMPTY_SHA256,
      },
      AWS,
      'us-east-1',
      's3',
      WHEN,
    )
    expect(signed.canonicalRequest.split('\n')[2]).toBe('max-keys=2&prefix=J')
    expect(signed.headers['authorization']).toContain(
      'Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7',
    )
  })
})

describe('the signer, by property', () => {
  const base: RequestToSign = {
    method: 'PUT',
    path: '/b/k',
    query: [['partNumber', '1']],
    headers: {host: 'h'},
    payloadHash: EMPTY_SHA256,
  }
  const sig = (r: RequestToSign, creds = AWS, when = WHEN) =>
    sign(r, creds, 'us-east-1', 's3', when).headers['authorization']

  it('uriEncode keeps exactly the unreserved characters and decodes back to the text', () => {
    fc.assert(
      fc.property(fc.string({unit: 'grapheme'}), fc.boolean(), (s, keepSlash) => {
        const e = uriEncode(s, keepSlash)
        expect(e).toMatch(
          keepSlash ? /^([A-Za-z0-9\-_.~/]|%[0-9A-F]{2})*$/ : /^([A-Za-z0-9\-_.~]|%[0-9A-F]{2})*$/,
        )
        expect(decodeURIComponent(e)).toBe(s)
      }),
    )
  })

  it('any change to the path, a query value, a signed header, the payload hash or the secret changes the signature', () => {
    fc.assert(
      fc.property(fc.string({minLength: 1, maxLength: 20}), (x) => {
        const before = sig(base)
        expect(sig({...base, path: `/b/k${uriEncode(x, true)}`})).not.toBe(before)
        expect(sig({...base, query: [['partNumber', `1${x}`]]})).not.toBe(before)
        expect(sig({...base, headers: {...base.headers, 'if-none-match': x.trim() || 'x'}})).not.toBe(before)
        expect(sig({...base, payloadHash: sha256Hex(x)})).not.toBe(before)
        expect(sig(base, {...AWS, secretAccessKey: `${AWS.secretAccessKey}${x}`})).not.toBe(before)
      }),
      {numRuns: 50},
    )
  })

  it('header names are case-insensitive and values folded: the same request signs the same', () => {
    const a = sig({...base, headers: {host: 'h', 'x-amz-meta-a': 'one  two '}})
    const b = sig({...base, headers: {HOST: 'h', 'X-Amz-Meta-A': ' one two'}})
    expect(a).toBe(b)
  })

  it('a session token is sent and signed as x-amz-security-token', () => {
    const signed = sign(base, {...AWS, sessionToken: 'tok'}, 'us-east-1', 's3', WHEN)
    expect(signed.headers['x-amz-security-token']).toBe('tok')
    expect(signed.headers['authorization']).toContain(
      'SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,',
    )
    expect(signed.canonicalRequest).toContain('\nx-amz-security-token:tok\n')
  })

  it('the signature never holds the secret, and a signed request never names it', () => {
    const signed = sign(base, AWS, 'us-east-1', 's3', WHEN)
    for (const text of [...Object.values(signed.headers), signed.canonicalRequest, signed.stringToSign])
      expect(text).not.toContain(AWS.secretAccessKey)
  })

  it('the date stamp is YYYYMMDDTHHMMSSZ in UTC', () => {
    expect(amzDate(new Date('2026-11-26T07:08:09.123Z'))).toBe('20261126T070809Z')
    expect(
      canonicalRequest({
        ...base,
        query: [
          ['b', '2'],
          ['a', '1'],
          ['a', '0'],
        ],
      }).text.split('\n')[2],
    ).toBe('a=0&a=1&b=2')
  })
})
