import { closest, distance } from 'fastest-levenshtein';

/**
 * The candidate a mistyped word most likely meant (the smallest edit distance), or null when none
 * is near enough to be worth saying: at most a third of the word's length, and at least 2 edits.
 */
export function nearest(word: string, candidates: readonly string[]): string | null {
  if (candidates.length === 0 || word === '') return null;
  const best = closest(word, [...candidates]);
  return distance(word, best) <= Math.max(2, Math.floor(word.length / 3)) ? best : null;
}

/** `; did you mean "x"?` for a mistyped word, or nothing. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const best = nearest(word, candidates);
  return best === null ? '' : `; did you mean "${best}"?`;
}
