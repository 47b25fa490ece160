/** What a local run (`sfl stats`, `sfl changes`) prints besides its output: notices (not under --quiet) and --debug lines. */
export interface LocalIo {
  notice: (line: string) => void
  debugLine: (line: string) => void
}
