import {BadResponseError} from '../errors.js'

/**
 * One record of a response cannot be turned into a row: it is not a JSON object, it is malformed, or it nests
 * deeper than the formatter allows. A bad response from the service (spec 4: every record is a JSON object),
 * so it maps to the server exit code like any other malformed body.
 *
 * @example
 * try { flattenRecord(bytes, row, {escapeFormulas: true}) } catch (e) { if (e instanceof PoisonRecordError) ... }
 */
export class PoisonRecordError extends BadResponseError {
  constructor(
    message: string,
    /** Character offset in the record's text where the problem was found. */
    readonly offset: number,
  ) {
    super(`a record of the response cannot be read: ${message} (at character ${offset})`)
  }
}
