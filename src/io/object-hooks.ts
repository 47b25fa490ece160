/**
 * What the CLI sets for the object store before anything of it is loaded (src/io/object-store.ts loads
 * only for an `s3://` value): where `--debug` lines go. A module of its own, so the base command can set
 * it without loading the store.
 */
export const objectHooks: {debug: ((line: string) => void) | undefined} = {debug: undefined}
