import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ApprovalDecision } from '../engines/live-session.js';
import type { OutputStream } from '../process/spawn.js';
import { LineSplitter } from '../../rpc/framing.js';
import type { StopReason } from './turn.js';

/**
 * What the daemon did to a live session, each at the stdout line it had received by then (`at`):
 * a turn begun, an approval answered, an interrupt asked for, a line sent to the engine, the
 * turn's clock armed or paused. A later daemon replays them against the engine's output
 * (docs/restarts.md, "Live sessions") and so rebuilds the protocol's state without asking the
 * engine anything again.
 */
export type JournalEntry =
  /** `attempt`: the job's attempt the turn is (absent in journals of daemons before it was kept). */
  | { at: number; call: 'turn'; prompt: string; hard_timeout_ms: number; logs: Record<OutputStream, string> | null; attempt?: number }
  | { at: number; call: 'answer'; decision: ApprovalDecision }
  | { at: number; call: 'interrupt'; reason: StopReason }
  | { at: number; call: 'send' }
  /** The turn's hard timeout: `remaining_ms` left as of `armed_at`, or paused (`armed_at` null) while a person decides. */
  | { at: number; call: 'timer'; remaining_ms: number; armed_at: string | null };

/** The files of a live session in its keeper's folder. */
export const LIVE_FILES = { stdout: 'live.stdout', stderr: 'live.stderr', journal: 'live-journal.ndjson' } as const;

/** One live session's journal, appended to as the daemon acts (a line at a time, synchronously, before the act). */
export class LiveJournal {
  readonly #path: string;

  constructor(keeperDir: string) {
    this.#path = join(keeperDir, LIVE_FILES.journal);
  }

  /** A new session starts with an empty journal. */
  clear(): void {
    rmSync(this.#path, { force: true });
  }

  append(entry: JournalEntry): void {
    appendFileSync(this.#path, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  }

  /** The entries in order; a torn last line (a crash mid-append) is left out. */
  read(): JournalEntry[] {
    let text: string;
    try {
      text = readFileSync(this.#path, 'utf8');
    } catch {
      return [];
    }
    const entries: JournalEntry[] = [];
    for (const line of text.split('\n')) {
      try {
        entries.push(JSON.parse(line) as JournalEntry);
      } catch {
        // the torn end
      }
    }
    return entries;
  }
}

/** One line of output as the daemon reads it: a line, or the size of one too long to keep. */
export type SpoolLine = { text: string } | { overflow: number };

/** The complete lines of a live session's stdout so far, split as the daemon splits them (a partial last line is left for later). */
export function spoolLines(keeperDir: string, maxLineBytes: number): SpoolLine[] {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(keeperDir, LIVE_FILES.stdout));
  } catch {
    return [];
  }
  const lines: SpoolLine[] = [];
  const splitter = new LineSplitter(maxLineBytes, { line: (text) => lines.push({ text }), overflow: (overflow) => lines.push({ overflow }) });
  splitter.push(bytes.subarray(0, bytes.lastIndexOf(0x0a) + 1));
  return lines;
}
