/**
 * The seconds a tool call of `sfl mcp` may take in all, requests, retries and rate-limit waits included:
 * below the 60 s MCP clients usually wait, so the client hears the answer (or that the call ran out of
 * time) rather than timing out itself. A module of its own: `sfl mcp --help` says it without loading the
 * server.
 */
export const CALL_DEADLINE_S = 45
