import type { ModelReply } from '../../clients/skill-test/model-server.js';
import { finalAnswer, outputOf, readSkillMd, type SkillTurn } from './turn.js';

/**
 * `summarize-text`: reads SKILL.md, then answers with an extractive summary of the given text: its
 * most telling sentences (scored by how often their words recur in the text) as the summary, and
 * its sentences in order as the key points.
 */
export function summarizeText(turn: SkillTurn): ModelReply {
  if (outputOf(turn, 'cat ') === null) return { toolCall: { command: readSkillMd(turn) } };
  const text = typeof turn.input['text'] === 'string' ? turn.input['text'] : '';
  const maxPoints = typeof turn.input['max_points'] === 'number' ? turn.input['max_points'] : 5;
  const { summary, keyPoints } = summarize(text, maxPoints);
  return finalAnswer(`I read the text (${wordsIn(text).length} words) and kept what a busy reader needs.`, { summary, key_points: keyPoints });
}

const STOP_WORDS = new Set('a an and are as at be by for from has have in is it its of on or that the this to was were will with which who would can so but not their they them than then there these those also about after before into over only'.split(' '));

/** Up to three sentences as the summary, and up to `maxPoints` short key points. */
export function summarize(text: string, maxPoints: number): { summary: string; keyPoints: string[] } {
  const sentences = sentencesOf(text);
  if (sentences.length === 0) return { summary: 'The text is empty.', keyPoints: [] };
  const counts = new Map<string, number>();
  for (const word of wordsIn(text)) if (!STOP_WORDS.has(word)) counts.set(word, (counts.get(word) ?? 0) + 1);
  const score = (sentence: string): number => {
    const words = wordsIn(sentence).filter((w) => !STOP_WORDS.has(w));
    return words.reduce((sum, w) => sum + (counts.get(w) ?? 0), 0) / Math.sqrt(words.length + 1);
  };
  // The opening sentence usually says what the text is about; then the best scored others, in text order.
  const ranked = sentences.slice(1).map((s, i) => ({ s, i: i + 1, score: score(s) })).sort((a, b) => b.score - a.score);
  const chosen = [0, ...ranked.slice(0, Math.min(2, Math.ceil(sentences.length / 3))).map((r) => r.i)].sort((a, b) => a - b);
  const summary = chosen.map((i) => sentences[i]).join(' ');
  const keyPoints = sentences.slice(0, maxPoints).map(keyPoint);
  return { summary, keyPoints };
}

/** The sentences of a text, on `.`, `!` or `?` followed by a space and a capital or digit. */
function sentencesOf(text: string): string[] {
  return text
    .replace(/\s+/g, ' ')
    .trim()
    .split(/(?<=[.!?])\s+(?=[A-Z0-9"“])/)
    .filter((s) => s !== '');
}

/** A sentence as a key point: without a leading "After two hours of debate," kind of clause. */
function keyPoint(sentence: string): string {
  const clause = /^(?:After|Before|During|With|Following|In|On|At|For)\b[^,]{0,40},\s*(.+)$/.exec(sentence);
  const point = clause?.[1] ?? sentence;
  return point.charAt(0).toUpperCase() + point.slice(1);
}

function wordsIn(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
}
