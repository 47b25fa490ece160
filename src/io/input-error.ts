/**
 * A file given to sfl as input cannot be read as what it claims or looks to be (a damaged ZIP, a workbook
 * with no sheet of that name, a gzip stream that expands past its cap). The message is one line that names
 * the problem and what to do; the job layer (src/jobs/batch-input.ts) makes it a usage error (exit 2) with
 * the file's name in front, before any request is sent.
 */
export class InputFormatError extends Error {}
