/** The most characters of a provider's words a job's error quotes. */
const MAX_QUOTE = 300;

/**
 * What a provider said in an error answer, for a person: the `error.message` of its JSON (OpenAI's,
 * Anthropic's and Google's errors all carry one, Google's in an array too), else the body's first
 * line, else its HTTP status; one line, cut to MAX_QUOTE characters, the key never in it.
 */
export function providerQuote(body: Buffer, status: number, key: string): string {
  const text = body.toString('utf8');
  let said: string | null = null;
  try {
    said = messageOf(JSON.parse(text));
  } catch {
    said = text.split('\n').find((line) => line.trim() !== '') ?? null;
  }
  const line = (said ?? `HTTP ${status} with no message`).replace(/[\x00-\x1f\x7f]+/g, ' ').trim();
  const safe = key === '' ? line : line.split(key).join('[key]');
  return safe.length > MAX_QUOTE ? `${safe.slice(0, MAX_QUOTE - 1)}…` : safe || `HTTP ${status} with no message`;
}

function messageOf(value: unknown): string | null {
  if (Array.isArray(value)) return value.length > 0 ? messageOf(value[0]) : null;
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  const error = record['error'];
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const message = (error as Record<string, unknown>)['message'];
    if (typeof message === 'string') return message;
  }
  return typeof record['message'] === 'string' ? record['message'] : null;
}
