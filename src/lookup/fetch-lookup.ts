import {BadResponseError, NotFoundError} from '../errors.js'
import {isMissingEndpoint, missingEndpointError} from '../api/endpoint-check.js'
import type {HttpClient} from '../api/client.js'
import {lookupUrl} from '../api/query.js'
import {parseRedacted, redactedText, type Redacted} from '../api/secrets.js'
import type {LookupQuery} from '../api/validate.js'
import {problemLine, type RecordProblem} from '../pipeline/checks.js'
import {readBody, RecordStages} from '../pipeline/stages.js'
import type {Scheduler} from '../schedule/scheduler.js'

export type ServiceRecord = Record<string, unknown>

/**
 * What one lookup answered: its records, each with its JSON text exactly as the service sent it (numbers
 * such as `121000.0`, key order; the key, and any run of 8 or more of its characters, masked) and its
 * problems against the spec's rules. Read by the same record stages as an export's pages
 * (src/pipeline/stages.ts): one redactor, one envelope rule, one JSON grammar, one set of spec checks for
 * every path. The records and their texts are `Redacted` (src/api/secrets.ts): the renderers take nothing else.
 */
export interface LookupAnswer {
  records: Array<Redacted<ServiceRecord>>
  /** Each record's JSON text as sent, in the order of `records`. */
  raw: Array<Redacted<string>>
  /** Each record's problems against the spec's rules (src/pipeline/checks.ts), as data; none when it conforms. */
  faults: RecordProblem[][]
  /** The same problems as lines (`problemLine`: "Field: what is wrong"), for warnings and tool results. */
  problems: string[][]
  /** Places where the answer echoed the API key, whole or in part (masked in `records` and `raw`). */
  keyEchoes: number
}

export interface LookupContext {
  client: HttpClient
  scheduler: Scheduler
  baseUrl: string
  /** The key: masked wherever an answer echoes it (spec 5.5). */
  apiKey?: string | undefined
}

/**
 * One lookup through the scheduler (budget, retries) and the client. `signal` is the run's abort signal
 * (Ctrl-C), passed to every request so an interrupted batch does not wait for a slow answer.
 *
 * Anything but `{"status": "success", "data": record | [records]}` answered with a 200 is malformed
 * (BadResponseError, exit 6), never an empty success: so is a record that breaks the JSON grammar or is
 * not UTF-8 (in a lookup there is no "rest of the answer" to keep), and `data: []`: spec 7 answers a
 * lookup that matches nothing with 404, and calling an empty list "not found" (exit 3) would let a broken
 * server pass as a clean miss in scripts that treat exit 3 as "no such property".
 */
export async function fetchLookup(
  ctx: LookupContext,
  query: LookupQuery,
  signal?: AbortSignal,
): Promise<LookupAnswer> {
  const url = lookupUrl(ctx.baseUrl, query)
  try {
    return await ctx.scheduler.run(
      () => ctx.client.get(url, signal),
      async (res) => {
        const stages = new RecordStages({strict: false, apiKey: ctx.apiKey})
        const answer: LookupAnswer = {records: [], raw: [], faults: [], problems: [], keyEchoes: 0}
        const body = await readBody(res.body, stages, {
          record(view) {
            const text = redactedText(view.bytes)
            answer.raw.push(text)
            answer.records.push(parseRedacted<ServiceRecord>(text))
            const faults = stages.checks.problems(view)
            answer.faults.push(faults)
            answer.problems.push(faults.map(problemLine))
            return undefined
          },
        })
        const bad = body.rejected[0]
        if (bad)
          throw new BadResponseError(
            `the service answered 200 with a record that cannot be read: ${bad.reason}`,
          )
        if (answer.records.length === 0)
          throw new BadResponseError(
            'the service answered 200 with an empty `data` list; spec 7 answers a lookup that matches nothing with 404, so this is treated as a malformed answer',
          )
        answer.keyEchoes = body.keyEchoes
        return answer
      },
      signal,
    )
  } catch (error) {
    // a 404 that says the endpoint is missing is a wrong base URL (exit 2), not a missing property
    if (error instanceof NotFoundError && isMissingEndpoint(error.message))
      throw missingEndpointError(
        ctx.baseUrl,
        error.message.replace(/^no property matches \(HTTP 404\): /, ''),
      )
    throw error
  }
}
