/** One server-sent event: its name and its data line, as sent. */
export interface SentEvent {
  name: string;
  data: string;
}

/**
 * The whole events at the start of `buffered` (text of an event stream, as read so far), and what
 * is left of an event still coming. Comments (the keep-alive lines) and the `retry:` line are no
 * events; each event here has one `data:` line, as `skillctl web` sends them.
 */
export function takeEvents(buffered: string): { events: SentEvent[]; rest: string } {
  const blocks = buffered.split('\n\n');
  const rest = blocks.pop() ?? '';
  const events: SentEvent[] = [];
  for (const block of blocks) {
    const name = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (name !== undefined && data !== undefined) events.push({ name, data });
  }
  return { events, rest };
}
