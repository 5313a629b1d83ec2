// The fake engines' protocol modes say what the real CLIs say: each plan is driven through the
// fake and compared, message by message, with the transcript recorded from the real CLI
// (test/fixtures/record-*.ts). Run-to-run noise is left out of the comparison; shapes are not.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { PLANS, drive, type PlanName, type TranscriptEntry } from '../fixtures/codex-app-server-plans.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures');

/** Notifications that depend on the machine, the account or timing, not on the conversation. */
const NOISE = new Set(['configWarning', 'warning', 'remoteControl/status/changed', 'thread/tokenUsage/updated', 'account/rateLimits/updated', 'mcpServer/startupStatus/updated']);

/** What a message must agree on: its method (or, for answers, that it is one), and the fields the daemon reads. */
function essence(entry: TranscriptEntry): string {
  const { msg } = entry;
  const params = (msg['params'] ?? {}) as Record<string, unknown>;
  const item = params['item'] as Record<string, unknown> | undefined;
  const turn = (params['turn'] ?? (msg['result'] as Record<string, unknown> | undefined)?.['turn']) as Record<string, unknown> | undefined;
  const parts = [entry.dir, typeof msg['method'] === 'string' ? msg['method'] : 'answer'];
  if (item !== undefined) parts.push(`item:${String(item['type'])}${item['status'] === undefined ? '' : `/${String(item['status'])}`}`);
  if (typeof params['itemId'] === 'string' && msg['id'] !== undefined) parts.push('asks');
  if (turn?.['status'] !== undefined) parts.push(`turn:${String(turn['status'])}`);
  if ((msg['result'] as Record<string, unknown> | undefined)?.['thread'] !== undefined) parts.push('thread');
  return parts.join(' ');
}

/** What the engine said, in order. Our own lines are left out (they interleave by timing), and so is the echo of the user's message, which the real CLI skips when an interrupt comes first. */
function essentials(transcript: TranscriptEntry[]): string[] {
  const said = transcript.filter((entry) => entry.dir === '<' && !NOISE.has(String(entry.msg['method'])) && entry.msg['method'] !== 'item/agentMessage/delta');
  return said.map(essence).filter((line) => !line.endsWith('item:userMessage'));
}

for (const plan of Object.keys(PLANS) as PlanName[]) {
  t.test(`the fake codex app-server speaks as the real one: ${plan}`, async (t) => {
    const recorded = (await readFile(join(fixtures, 'transcripts', `codex-app-server-${plan}.ndjson`), 'utf8'))
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as TranscriptEntry);
    const cwd = await mkdtemp(join(tmpdir(), 'skilld-transcript-'));
    t.teardown(() => rm(cwd, { recursive: true, force: true }));
    const child = spawn(process.execPath, [join(fixtures, 'fake-codex.mjs'), 'app-server'], { cwd, stdio: ['pipe', 'pipe', 'ignore'] });
    const faked = await drive(child, plan, cwd);
    await once(child, 'close');
    t.strictSame(essentials(faked), essentials(recorded));
    // Every answer and request carries an id; nothing the fake prints has a `jsonrpc` member (codex sends none).
    t.ok(faked.filter((e) => e.dir === '<').every((e) => !('jsonrpc' in e.msg)));
  });
}
