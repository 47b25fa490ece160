/**
 * The API key is a secret (spec 5.5). Every path that prints text passes it through `redact`, so a key
 * echoed back by a proxy or embedded in a URL cannot leak into stdout, stderr or a file.
 */
const secrets = new Set<string>()

export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 4) secrets.add(value)
}

/** `sk_1…` style: first 4 characters, then an ellipsis (the `--debug` form). */
export function maskKey(key: string): string {
  return key.length <= 4 ? '…' : `${key.slice(0, 4)}…`
}

/** `sk_1…9f3a` style for `keys list`: first 4 and last 4, only when the key is long enough to hide a middle. */
export function maskKeyEnds(key: string): string {
  return key.length < 12 ? maskKey(key) : `${key.slice(0, 4)}…${key.slice(-4)}`
}

export function redact(text: string): string {
  let out = text
  for (const s of secrets) out = out.split(s).join(maskKey(s))
  return out
}
