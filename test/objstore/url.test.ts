import {describe, expect, it} from 'vitest'

import {ExitCode, UsageError} from '../../src/errors.js'
import {
  bucketNameProblem,
  formatObjectUrl,
  isObjectUrl,
  joinKey,
  keyProblem,
  parseObjectUrl,
  parsePrefixUrl,
} from '../../src/objstore/url.js'

function usage(run: () => unknown): string {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError)
    expect((error as UsageError).exitCode).toBe(ExitCode.usage)
    const message = (error as Error).message
    expect(message.split('\n')).toHaveLength(1)
    return message
  }
  throw new Error('expected a usage error')
}

describe('s3:// locations', () => {
  it('an object: bucket and key, the key kept literally (no percent-decoding, ? and # are key characters)', () => {
    expect(parseObjectUrl('s3://exports/2026-11/ca.csv', '--out')).toEqual({
      bucket: 'exports',
      key: '2026-11/ca.csv',
    })
    expect(parseObjectUrl('S3://exports/a%20b?c#d.csv', '--out')).toEqual({
      bucket: 'exports',
      key: 'a%20b?c#d.csv',
    })
    expect(isObjectUrl('./s3://x')).toBe(false)
    expect(isObjectUrl('s3://x')).toBe(true)
  })

  it('a prefix: the key is empty or ends in /, so joinKey never runs two names together', () => {
    expect(parsePrefixUrl('s3://exports', '--out-dir')).toEqual({bucket: 'exports', key: ''})
    expect(parsePrefixUrl('s3://exports/', '--out-dir')).toEqual({bucket: 'exports', key: ''})
    expect(parsePrefixUrl('s3://exports/2026-11', '--out-dir')).toEqual({bucket: 'exports', key: '2026-11/'})
    expect(joinKey('2026-11/', 'state=CA/fips=06001/data.parquet')).toBe(
      '2026-11/state=CA/fips=06001/data.parquet',
    )
    expect(formatObjectUrl({bucket: 'exports', key: '2026-11/'})).toBe('s3://exports/2026-11/')
  })

  it.each([
    [
      's3://Exports/x.csv',
      '--out s3://Exports/x.csv: the bucket name "Exports" has upper-case letters; bucket names are lower case',
    ],
    ['s3://ex/x.csv', '--out s3://ex/x.csv: the bucket name "ex" is 2 characters long; use 3 to 63'],
    [
      's3://my_bucket/x.csv',
      '--out s3://my_bucket/x.csv: the bucket name "my_bucket" has the character "_"; use lower-case letters, digits, dots and hyphens',
    ],
    [
      's3://-bucket/x',
      '--out s3://-bucket/x: the bucket name "-bucket" must begin and end with a letter or digit',
    ],
    ['s3://a..b/x', '--out s3://a..b/x: the bucket name "a..b" has two dots in a row'],
    ['s3://192.168.1.1/x', '--out s3://192.168.1.1/x: the bucket name "192.168.1.1" is an IP address'],
    [
      's3://xn--bucket/x',
      '--out s3://xn--bucket/x: the bucket name "xn--bucket" begins with "xn--", which S3 reserves',
    ],
    [
      's3://bucket-s3alias/x',
      '--out s3://bucket-s3alias/x: the bucket name "bucket-s3alias" ends with "-s3alias", which S3 reserves',
    ],
    ['s3:///x.csv', '--out s3:///x.csv: no bucket; write s3://bucket/key'],
    ['/tmp/x.csv', '--out /tmp/x.csv: not an s3:// location; write s3://bucket/key'],
    [
      's3://exports/a//b.csv',
      '--out s3://exports/a//b.csv: the key has an empty segment ("//" or a leading "/")',
    ],
    [
      's3://exports/a/../b.csv',
      '--out s3://exports/a/../b.csv: the key has a ".." segment, which readers resolve as a path',
    ],
    ['s3://exports/a\nb.csv', '--out "s3://exports/a\\nb.csv": the key has a control character'],
    [
      's3://exports/2026-11/',
      '--out s3://exports/2026-11/: names a folder-like prefix, not an object; end it with a file name (s3://exports/2026-11/name.csv)',
    ],
    [
      's3://exports',
      '--out s3://exports: names a folder-like prefix, not an object; end it with a file name (s3://exports/name.csv)',
    ],
  ])('%j is refused before any request, one line, exit 2', (value, message) => {
    expect(usage(() => parseObjectUrl(value, '--out'))).toBe(message)
  })

  it('a key over 1,024 UTF-8 bytes, a lone surrogate and a "." segment are refused; 1,024 bytes is fine', () => {
    expect(keyProblem('é'.repeat(512))).toBeUndefined()
    expect(keyProblem(`${'é'.repeat(512)}x`)).toBe('is longer than 1024 bytes, the most S3 allows for a key')
    expect(keyProblem('a\uD800b')).toBe('is not valid Unicode (a lone surrogate)')
    expect(keyProblem('./x')).toBe('has a "." segment, which readers resolve as a path')
    expect(usage(() => joinKey('p/', '../x'))).toBe(
      'the key "p/../x" has a ".." segment, which readers resolve as a path',
    )
  })

  it('bucket names S3 accepts pass', () => {
    for (const b of ['abc', 'my.bucket.name', 'a-b-c', '1bucket', 'x'.repeat(63)])
      expect(bucketNameProblem(b)).toBeUndefined()
    expect(bucketNameProblem('x'.repeat(64))).toBe('is 64 characters long; use 3 to 63')
  })
})
