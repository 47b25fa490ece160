/** Levenshtein edit distance, for did-you-mean (county names, flags, commands). Pure. */
export function distance(a: string, b: string): number {
  const prev = Array.from({length: b.length + 1}, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!
    prev[0] = i
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!
      prev[j] = Math.min(up + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1))
      diag = up
    }
  }
  return prev[b.length]!
}

/** The candidate nearest to `word` when it is close enough to be a typo (a third of its length, at least 2). */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: {c: string; d: number} | undefined
  for (const c of candidates) {
    const d = distance(word, c)
    if (!best || d < best.d) best = {c, d}
  }
  return best && best.d <= Math.max(2, Math.floor(word.length / 3)) ? best.c : undefined
}
