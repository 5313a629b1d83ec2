// fake-claude.mjs says what the real Claude Code 2.1.330 says: each plan of claude-plans.ts is run
// through the fake, one-shot and live, and compared event by event with the transcript recorded
// from the real CLI (test/fixtures/record-claude.ts). Values that change from run to run (ids,
// times, texts) are left out of the comparison; event kinds, members and block types are not.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { claudeStreamJson } from '../../daemon/engines/claude/stream-json.js';
import { LIVE_PLANS, ONE_SHOT_PLANS, driveLive, liveApprovals, runOneShotPlan, type ClaudeEntry, type LivePlan, type OneShotPlan } from '../fixtures/claude-plans.js';
import { FIXTURES } from '../helpers/daemon.js';

const FAKE = join(FIXTURES, 'fake-claude.mjs');

function keys(value: unknown): string {
  return typeof value === 'object' && value !== null ? Object.keys(value).sort().join(',') : String(value);
}

/** What an entry must agree on: the event's kind, its members, its content blocks, how a run or a result ended. */
function essence(entry: ClaudeEntry): string {
  if (entry.dir === 'run') return `run exit ${String(entry.exit)}`;
  const { msg } = entry;
  const parts = [entry.dir, String(msg['type']), String(msg['subtype'] ?? ''), keys(msg)];
  const message = msg['message'] as { content?: unknown } | undefined;
  if (Array.isArray(message?.content)) parts.push(message.content.map((b) => `${String((b as { type?: unknown }).type)}{${keys(b)}}`).join(' '));
  const request = msg['request'] as Record<string, unknown> | undefined;
  if (request !== undefined) parts.push(`request ${String(request['subtype'])}`);
  if (msg['type'] === 'result') parts.push(`is_error ${String(msg['is_error'])}`);
  return parts.join(' | ');
}

/** What the CLI printed; our own lines are left out (they interleave by timing). */
function said(transcript: ClaudeEntry[]): string[] {
  return transcript.filter((e) => e.dir !== '>').map(essence);
}

async function recorded(name: string): Promise<ClaudeEntry[]> {
  const text = await readFile(join(FIXTURES, 'transcripts', `claude-${name}.ndjson`), 'utf8');
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as ClaudeEntry);
}

for (const plan of Object.keys(ONE_SHOT_PLANS) as OneShotPlan[]) {
  t.test(`fake claude one-shot prints what the real one prints: ${plan}`, async (t) => {
    const cwd = await mkdtemp(join(tmpdir(), 'skilld-claude-'));
    t.teardown(() => rm(cwd, { recursive: true, force: true }));
    const faked = await runOneShotPlan([process.execPath, FAKE], plan, cwd, {});
    t.strictSame(said(faked), said(await recorded(`oneshot-${plan}`)));
  });
}

for (const plan of Object.keys(LIVE_PLANS) as LivePlan[]) {
  t.test(`fake claude stream-json says what the real one says: ${plan}`, async (t) => {
    const cwd = await mkdtemp(join(tmpdir(), 'skilld-claude-'));
    t.teardown(() => rm(cwd, { recursive: true, force: true }));
    const argv = claudeStreamJson.argv({ engine: 'claude', model: null, cwd, approvals: liveApprovals(plan), newSessionId: randomUUID() });
    const child = spawn(process.execPath, [FAKE, ...argv], { cwd, stdio: ['pipe', 'pipe', 'ignore'] });
    const faked = await driveLive(child, plan);
    await once(child, 'close');
    t.strictSame(said(faked), said(await recorded(`live-${plan}`)));
  });
}
