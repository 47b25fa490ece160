/**
 * The one rule for "could another user have written this?", as ssh's StrictModes decides it for ~/.ssh:
 * a file or folder is trusted when it belongs to this user (or to root, unless `rootOk` is false) and
 * neither its group nor others may write to it. A folder others may write with the sticky bit set (/tmp, a
 * shared export folder made 1777) is accepted where `stickyOk` says so: others cannot rename or remove what
 * this user created in it. Pure, and it imports nothing, so the CLI's entry may bundle it (the code cache,
 * src/cli/code-cache.ts). Its users: the config (src/config/profiles.ts), the folders of an `--out-dir`
 * (src/io/folder-trust.ts), the run's private folders and the code cache (src/io/private-sync.ts).
 */
export type OwnerProblem = {kind: 'owner'; uid: number} | {kind: 'writable'; mode: number}

export interface OwnerRuleOptions {
  /** Writable by others is fine when the sticky bit is set (a parent folder, a shared export folder). */
  stickyOk?: boolean
  /** Root's files are trusted too (the config, an export folder); a private cache is this user's alone. */
  rootOk?: boolean
}

/**
 * What is wrong with a file or folder of these owner and mode bits for the user `uid`, or undefined.
 *
 * @example
 * ownerProblem({uid: 65534, mode: 0o40755}, 0) // {kind: 'owner', uid: 65534}
 * ownerProblem({uid: 0, mode: 0o41777}, 0, {stickyOk: true}) // undefined (/tmp)
 */
export function ownerProblem(
  st: {uid: number; mode: number},
  uid: number,
  opts: OwnerRuleOptions = {},
): OwnerProblem | undefined {
  const rootOk = opts.rootOk ?? true
  if (st.uid !== uid && !(rootOk && st.uid === 0)) return {kind: 'owner', uid: st.uid}
  const sticky = (st.mode & 0o1000) !== 0
  if ((st.mode & 0o022) !== 0 && !(opts.stickyOk && sticky)) return {kind: 'writable', mode: st.mode & 0o7777}
  return undefined
}
