import {ExitCode, SflError} from '../errors.js'
import {redact} from '../api/secrets.js'
import {countyByFips, describeCounty} from '../address/counties.js'
import {readCountyHousing} from '../address/county-housing.js'
import {dataDirs} from '../address/zip-counties.js'
import {decodeEvent, exportEvent, exportHeader} from '../jobs/events.js'
import {journalPaths, outDirJournalPaths, readJournal} from '../jobs/journal.js'
import {objectRunStateDir, openExportDir} from '../io/export-dir.js'
import {checkFormat, freshCounties, readManifest} from '../io/manifest.js'
import type {ParquetOptions} from '../io/parquet-codecs.js'
import {
  countyNeeds,
  DEFAULT_BUDGET,
  makePlan,
  planJson,
  probeScale,
  probeTarget,
  renderPlan,
  type Budget,
  type CheckpointUnit,
  type Plan,
  type PlanDocument,
  type ProbeFinding,
} from '../jobs/plan.js'
import type {HttpClient} from '../api/client.js'
import type {Scheduler} from '../schedule/scheduler.js'

/** What the one probe request needs: a connection of its own (no retries, no waiting; see probeBudget). */
export interface ProbeConnection {
  client: HttpClient
  scheduler: Scheduler
  baseUrl: string
  /** The key, masked wherever the probe's answer echoes it (src/keys/check.ts reads through the stages). */
  apiKey?: string | undefined
  profile: string
  /** Set when the connection is the embedded sandbox (the report's key label). */
  sandbox?: unknown
}

/**
 * `county-export --dry-run` and the `plan_export` tool of `sfl mcp`: read what earlier runs left (DIR/manifest.json, the checkpoint), learn the
 * key's budget and the size of one county from ONE probe request (as `keys check` sends it, src/keys/
 * check.ts) unless --no-probe, and make the plan (src/jobs/plan.ts) as text and as JSON; the caller
 * shows one. Nothing is exported, and nothing is printed here.
 */
export interface DryRunRequest {
  fips: string[]
  out?: string | undefined
  outDir?: string | undefined
  /** The cache folder an `s3://` run keeps its checkpoint under (the CLI's; src/jobs/run.ts JobDeps). */
  stateRoot?: string | undefined
  format: string
  maxAgeMs?: number | undefined
  /** --max-age as typed, for the text. */
  maxAge?: string | undefined
  restart: boolean
  /** --fields and --strict as the run would have them: a checkpoint of other ones is refused, as by the run. */
  fields?: string[] | undefined
  strict?: boolean | undefined
  /** --parquet-compression and --parquet-row-group-size: the checkpoint records them too. */
  parquet?: ParquetOptions | undefined
  /**
   * `--where` as the run would have it (checked by the caller): part of the checkpoint's request, and a
   * line of the plan (rows are filtered after fetching, so the requests are the same).
   */
  where?: string | undefined
  /**
   * The base URL the run would use (flag > env > profile). Undefined when there is none to know (none
   * set, or the embedded sandbox, whose address is new each run): the checkpoint's own is taken then.
   */
  baseUrl: string | undefined
  reserve: number
  /** --max-requests: the run would stop after this many. */
  maxRequests?: number | undefined
  /** The connection for the probe; undefined with --no-probe. */
  probe: (() => Promise<ProbeConnection>) | undefined
  now?: () => number
  /** The caller's cancel or deadline (`plan_export`): the probe's request ends with it. */
  signal?: AbortSignal | undefined
  /** The caller's words for a failed probe in the plan's notes (the CLI's flags, the tools'); its message otherwise. */
  words?: ((error: SflError) => string) | undefined
}

export interface DryRunResult {
  plan: Plan
  /** 0, or 4 when the probe's key was refused (the run would stop at once). */
  exitCode: number
  text: string
  json: PlanDocument
}

export async function dryRun(req: DryRunRequest): Promise<DryRunResult> {
  const now = req.now ?? Date.now
  const manifest = req.outDir ? await readManifest(req.outDir) : undefined
  if (req.outDir) checkFormat(manifest, req.format, req.outDir) // as the run would: nothing sent
  // what is in DIR, asked once (a stat per county, or one listing of an s3:// prefix), as the run asks it
  const fresh =
    manifest && req.maxAgeMs !== undefined
      ? freshCounties(
          manifest,
          req.fips,
          req.maxAgeMs,
          now(),
          await (await openExportDir(req.outDir!)).present(),
          req.where,
        )
      : undefined
  const lastPages = new Map((manifest?.counties ?? []).map((c) => [c.fips, c.pages]))
  // a count that is not one (a hand-edited or foreign manifest) sizes nothing: housing units decide then
  const lastRecords = new Map(
    (manifest?.counties ?? [])
      .filter((c) => Number.isSafeInteger(c.records) && c.records >= 0)
      .map((c) => [c.fips, c.records]),
  )
  const journal = await journalOf(req)
  const checkpoint = journal && !req.restart ? await readCheckpoint(journal, req) : undefined
  // read here, by a plan only: the lookups never load it (src/address/county-housing.ts)
  const housing = readCountyHousing(dataDirs(import.meta.url))
  const known = {...(fresh ? {fresh} : {}), lastPages, ...(checkpoint ? {checkpoint} : {}), housing}
  const target = probeTarget(countyNeeds(req.fips, known), {housing, lastRecords})
  const probed: Probed = !target
    ? {budget: DEFAULT_BUDGET, note: 'no probe: nothing to fetch', sent: 0}
    : req.probe
      ? await probeBudget(req.probe, target.fips, req)
      : {budget: DEFAULT_BUDGET, note: 'no probe sent (--no-probe)', sent: 0}
  const plan = makePlan({
    counties: req.fips.length,
    needs: countyNeeds(req.fips, {...known, probe: probed.finding}),
    budget: probed.budget,
    budgetNote: probed.note,
    probeRequests: probed.sent,
    probe: probed.finding,
    probeChoice: target,
    scale: probeScale(probed.finding, housing),
    maxAge: req.maxAge,
    where: req.where,
    names: (f) => {
      const c = countyByFips(f)
      return c ? describeCounty(c) : f
    },
    nowMs: now(),
    reserve: req.reserve,
    maxRequests: req.maxRequests,
  })
  return {
    plan,
    exitCode: probed.exitCode ?? ExitCode.ok,
    text: renderPlan(plan, now()),
    json: planJson(plan),
  }
}

/** The checkpoint the run would continue: beside --out or in DIR, or for s3:// in its local state folder. */
async function journalOf(req: DryRunRequest): Promise<string | undefined> {
  const where = req.outDir ?? req.out
  if (where === undefined) return undefined
  const state = await objectRunStateDir(where, req.outDir !== undefined, req.stateRoot)
  if (state !== undefined) return outDirJournalPaths(state).journal
  return req.outDir ? outDirJournalPaths(req.outDir).journal : journalPaths(req.out!).journal
}

/** What the probe brought: the budget, how it was learned, and what it saw of its county. */
interface Probed {
  budget: Budget
  note: string
  sent: number
  exitCode?: number
  finding?: ProbeFinding
}

/**
 * One request, as `keys check` sends it (no retry, no wait), to read X-RateLimit-Limit / -Remaining /
 * -Reset (spec 8.3) and the county's size: X-Total-Count, a next link and the first page's records (src/
 * keys/check.ts). Any failure leaves the default figures (spec 8.2) and says why; an invalid key also sets
 * exit 4, since the run itself would stop at once.
 */
async function probeBudget(
  connect: () => Promise<ProbeConnection>,
  fips: string,
  req: Pick<DryRunRequest, 'signal' | 'words'>,
): Promise<Probed> {
  const said = (error: SflError) => redact((req.words?.(error) ?? error.message).split('\n')[0]!)
  let ctx: ProbeConnection
  try {
    ctx = await connect()
  } catch (error) {
    if (!(error instanceof SflError)) throw error
    return {budget: DEFAULT_BUDGET, note: `no probe sent: ${said(error)}`, sent: 0}
  }
  const {checkKey} = await import('../keys/check.js')
  const none: ProbeFinding = {fips, answer: 'none'}
  try {
    const r = await checkKey(ctx, {
      profile: ctx.profile,
      // where the key came from is a label of keys check's report; the plan does not print it
      keySource: ctx.sandbox ? 'sandbox' : 'env',
      fips: [fips],
      why: 'asked',
      countPages: true,
      signal: req.signal,
    })
    const sent = ctx.scheduler.stats.requests
    if (!r.valid)
      return {
        budget: DEFAULT_BUDGET,
        note: `the probe to ${fips} was refused: the API key is invalid or missing (HTTP 401), so the run would stop at once`,
        sent,
        exitCode: ExitCode.auth,
        finding: none,
      }
    const refused = r.counties[fips] === 'not permitted'
    const finding: ProbeFinding = r.windowSpent
      ? none
      : refused
        ? {fips, answer: 'not permitted'}
        : r.firstPage
          ? {answer: 'records', ...r.firstPage}
          : {fips, answer: 'empty'}
    const {limit, remaining, reset} = r.rateLimit
    if (limit === null || remaining === null)
      return {
        budget: DEFAULT_BUDGET,
        note: `one probe request to ${fips}; its answer carried no X-RateLimit headers`,
        sent,
        finding,
      }
    return {
      budget: {source: 'probe', limit, remaining, resetAtMs: reset === null ? undefined : reset * 1000},
      note: `from one probe request to ${fips}${refused ? ', refused with 403' : ''}`,
      sent,
      finding,
    }
  } catch (error) {
    // the call itself ended (cancelled, or past its deadline): no plan to make
    if (req.signal?.aborted) throw error
    return {
      budget: DEFAULT_BUDGET,
      note: `the probe to ${fips} failed (${error instanceof SflError ? said(error) : redact((error as Error).message.split('\n')[0]!)})`,
      sent: ctx.scheduler.stats.requests,
      finding: none,
    }
  }
}

/**
 * An unfinished run's checkpoint: which counties ended and how many pages each kept. Read as the run reads
 * it (src/jobs/journal.ts `readJournal`, src/jobs/events.ts `decodeEvent`): a checkpoint of other
 * arguments, of another version or with an event this version does not write is refused (exit 2) with
 * the run's own message, since the run would refuse it too. None: undefined.
 */
async function readCheckpoint(
  path: string,
  req: DryRunRequest,
): Promise<Map<string, CheckpointUnit> | undefined> {
  const units = new Map<string, CheckpointUnit>()
  // the base URL the run would use; when there is none to know, the one the checkpoint names
  const header = (recorded: Record<string, unknown>) =>
    exportHeader(req, req.baseUrl ?? String((recorded['params'] as {baseUrl?: unknown})?.baseUrl))
  const read = await readJournal({journal: path}, header, (raw) => {
    const e = decodeEvent(exportEvent, raw, path)
    if (e.t === 'layout' || e.t === 'window' || e.t === 'written') return
    const unit = units.get(e.u) ?? {ended: false, pages: 0}
    units.set(e.u, unit)
    if (e.t === 'page') unit.pages++
    else if (e.t === 'reset') Object.assign(unit, {ended: false, pages: 0, forbidden: false})
    else {
      unit.ended = e.outcome.kind !== 'failed'
      unit.forbidden = e.outcome.kind === 'forbidden'
    }
  })
  return read.headed ? units : undefined
}
