import { closest, distance } from 'fastest-levenshtein';

/**
 * The candidate a mistyped word most likely meant, or null when none is near enough to be worth
 * saying: one that starts the word or that the word starts (`claude-code` → `claude`), else the
 * one at the smallest edit distance, if that is at most a third of the word's length (at least 2).
 */
export function nearest(word: string, candidates: readonly string[]): string | null {
  if (candidates.length === 0 || word.length < 2) return null;
  const lower = word.toLowerCase();
  const prefix = candidates.find((c) => c.length >= 3 && (lower.startsWith(c.toLowerCase()) || c.toLowerCase().startsWith(lower)));
  if (prefix !== undefined) return prefix;
  const best = closest(word, [...candidates]);
  return distance(word, best) <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

/** `; did you mean "x"?` for a mistyped word, or nothing. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const best = nearest(word, candidates);
  return best === null ? '' : `; did you mean "${best}"?`;
}
