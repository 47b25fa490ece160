import type {LookupQuery} from '../api/validate.js'
import type {LookupOutcome} from '../lookup/address-lookup.js'
import type {Context} from './connection.js'
import type {LookupFlagValues, SingleLookupHost} from './lookup-one.js'

/**
 * `--from DIR [--max-age AGE]` for one property (issue 33): the lookup answered by the export on disk when
 * its county is there, fresh enough, and matches exactly (src/jobs/lookup-from.ts, the batch's rules);
 * said on stderr with the date the county was fetched. Undefined: ask the service (said too). An `s3://`
 * export is read from a private local copy, removed after.
 */
export async function fromExport(
  f: LookupFlagValues,
  query: LookupQuery,
  ctx: Context,
  host: SingleLookupHost,
  onShape?: (shape: string) => void,
): Promise<LookupOutcome | undefined> {
  const dir = f.from!
  const {parseDuration} = await import('../jobs/plan.js')
  const maxAgeMs = f['max-age'] === undefined ? undefined : parseDuration(f['max-age'])
  const {lookupFromExport} = await import('../jobs/lookup-from.js')
  const {isObjectUrl} = await import('../text/object-url.js')
  const ask = (local: string) =>
    lookupFromExport({dir: local, shown: dir, maxAgeMs, maxAge: f['max-age']}, query, ctx.apiKey, onShape)
  const answer = isObjectUrl(dir)
    ? await (await import('../io/export-source.js')).withLocalExports([dir], ([local]) => ask(local!))
    : await ask(dir)
  if (!answer) {
    host.notice?.(
      `--from ${dir}: no record of county ${query.fips} matches exactly${f['max-age'] === undefined ? '' : ` within --max-age ${f['max-age']}`}; asking the service`,
    )
    return undefined
  }
  host.notice?.(`answered from ${answer.from} (county ${query.fips} fetched ${answer.at}); no request sent`)
  const by = query.by
  return {
    status: 'matched',
    tried: [
      by.kind === 'address'
        ? {address: by.value, form: 'as typed'}
        : by.kind === 'apn'
          ? {apn: by.value, form: 'as given'}
          : {property_id: by.value, form: 'as given'},
    ],
    records: answer.records,
    raw: answer.raw,
    faults: answer.records.map(() => []),
    problems: answer.records.map(() => []),
    keyEchoes: answer.keyEchoes,
  }
}
