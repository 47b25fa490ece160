/**
 * Where bytes go (src/io/output.ts is the gate that makes one from a path): a file written atomically, a
 * FIFO or device written in order, stdout, gzip into another target (src/io/gzip.ts), an object (s3://).
 * Its own module so that writers and wrappers (record-writer, parquet-writer, gzip) need not import the
 * gate that imports them.
 */
export interface OutputTarget {
  write(chunk: Buffer | string): boolean
  drain(): Promise<void>
  /** Everything written: flush (and for a file, fsync and rename into place). */
  commit(): Promise<void>
  /** Give up: a file target removes its temp file; the target is untouched. */
  abort(): Promise<void>
}
