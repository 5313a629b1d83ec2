// What Claude Code's stream-json events say, read the same way by one-shot turns and live sessions.

/** The text blocks of an `assistant` event, joined; null when it has none (a tool call alone). */
export function assistantText(event: Record<string, unknown>): string | null {
  const content = (event['message'] as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return null;
  const texts = content.flatMap((block) => {
    const { type, text } = (block ?? {}) as { type?: unknown; text?: unknown };
    return type === 'text' && typeof text === 'string' ? [text] : [];
  });
  return texts.length === 0 ? null : texts.join('');
}

/** What went wrong according to a `result` event, or null for a success. */
export function resultError(event: Record<string, unknown>): string | null {
  if (event['subtype'] === 'success' && event['is_error'] !== true) return null;
  const errors = Array.isArray(event['errors']) ? event['errors'].filter((e): e is string => typeof e === 'string') : [];
  if (errors.length > 0) return errors.join('; ');
  if (typeof event['result'] === 'string' && event['result'] !== '') return event['result'];
  return `turn ended with ${String(event['subtype'] ?? 'an error')}`;
}
