import ms from 'ms';

/**
 * A duration as people write it — `30d`, `12h`, `90m`, `1.5h`, `2 weeks` — in milliseconds, or
 * null. A unit is required: a bare number would be milliseconds to `ms` and seconds to a reader.
 */
export function parseDuration(text: string): number | null {
  if (!/^\s*\d+(\.\d+)?\s*[a-z]+\s*$/i.test(text)) return null;
  const value = ms(text.trim() as ms.StringValue);
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : null;
}
