import {mkdir, readFile, rm} from 'node:fs/promises'

import {UsageError} from '../api/errors.js'
import {shapeFromJson, shapeToJson, type Shape} from '../render/columns.js'
import {writeFileAtomic} from './atomic-file.js'

/**
 * The resumable state of a run, kept beside the output as `<out>.sfl-checkpoint.json` with the finished
 * units' records in `<out>.sfl-parts/`. A unit's part is recorded only after its body was read to the end,
 * so a resumed run never fetches a finished page again and never keeps half of one. Holds no key.
 */
export interface PagePart {
  n: number
  records: number
  file: string
}
export interface UnitState {
  status: 'pending' | 'partial' | 'done' | 'failed'
  pages: PagePart[]
  /** The next page to fetch (RFC 8288 rel="next"), when the unit is partial. */
  next?: string | undefined
  error?: string | undefined
}
export interface CheckpointData {
  version: 1
  kind: 'county-export' | 'batch'
  /** What the run was asked for; a resume must ask for the same thing. */
  params: Record<string, unknown>
  units: Record<string, UnitState>
  shape: Shape
}

export function checkpointPaths(out: string): {checkpoint: string; parts: string} {
  return {checkpoint: `${out}.sfl-checkpoint.json`, parts: `${out}.sfl-parts`}
}

export class Checkpoint {
  private saving: Promise<void> = Promise.resolve()

  constructor(
    readonly path: string,
    readonly partsDir: string,
    readonly data: CheckpointData,
  ) {}

  static async open(
    out: string,
    fresh: CheckpointData,
    resume: boolean,
  ): Promise<{checkpoint: Checkpoint; resumed: boolean}> {
    const {checkpoint, parts} = checkpointPaths(out)
    let existing: string | undefined
    try {
      existing = await readFile(checkpoint, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    if (existing !== undefined && !resume)
      throw new UsageError(
        `a checkpoint from an interrupted run exists at ${checkpoint}; add --resume to continue it, or delete it and ${parts} to start over`,
      )
    if (existing === undefined) {
      if (resume)
        throw new UsageError(`--resume: no checkpoint at ${checkpoint}; run without --resume to start`)
      await rm(parts, {recursive: true, force: true})
      await mkdir(parts, {recursive: true})
      const cp = new Checkpoint(checkpoint, parts, fresh)
      await cp.save()
      return {checkpoint: cp, resumed: false}
    }
    let parsed: CheckpointData & {shape: unknown}
    try {
      parsed = JSON.parse(existing) as CheckpointData & {shape: unknown}
    } catch {
      throw new UsageError(
        `the checkpoint ${checkpoint} is not valid JSON; delete it and ${parts} to start over`,
      )
    }
    if (
      parsed.version !== 1 ||
      parsed.kind !== fresh.kind ||
      JSON.stringify(parsed.params) !== JSON.stringify(fresh.params)
    )
      throw new UsageError(
        `the checkpoint ${checkpoint} belongs to a different run (${JSON.stringify(parsed.params)}); resume with the same arguments, or delete it to start over`,
      )
    parsed.shape = shapeFromJson(parsed.shape as unknown as {top: string[]; nested: Record<string, string[]>})
    await mkdir(parts, {recursive: true})
    return {checkpoint: new Checkpoint(checkpoint, parts, parsed as CheckpointData), resumed: true}
  }

  /** Saves are serialised (units finish concurrently) and atomic (temp file + rename). */
  save(): Promise<void> {
    const text = JSON.stringify({...this.data, shape: shapeToJson(this.data.shape)}, null, 1)
    this.saving = this.saving.then(() => writeFileAtomic(this.path, text))
    return this.saving
  }

  async remove(): Promise<void> {
    await this.saving
    await rm(this.path, {force: true})
    await rm(this.partsDir, {recursive: true, force: true})
  }
}
