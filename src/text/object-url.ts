/**
 * Is `value` an object-store location (`s3://bucket/key`, issue 34) rather than a local path? The one
 * test every path that takes a path asks first. It lives in the lowest layer, apart from the parser
 * (src/objstore/url.ts), so the output gate and the commands can ask it without loading anything of the
 * object store: a run that never sees `s3://` parses none of it (`bench:startup`).
 */
export const OBJECT_SCHEME = 's3://'

export function isObjectUrl(value: string): boolean {
  return value.slice(0, OBJECT_SCHEME.length).toLowerCase() === OBJECT_SCHEME
}
