// The fakes' ACP mode says what the real `gemini --acp` says: each plan is driven through the fake
// Gemini and the fake iFlow and compared, message by message, with the transcript recorded from
// the real CLI (test/fixtures/record-gemini-acp.ts). Run-to-run noise is left out; shapes are not.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ACP_PLANS, asksApproval, driveAcp, type AcpPlanName, type TranscriptEntry } from '../fixtures/acp-plans.js';
import { waitForFile } from '../helpers/daemon.js';

const fixtures = join(import.meta.dirname, '..', 'fixtures');
const FAKES = { gemini: ['fake-gemini.mjs', '--acp', '--skip-trust'], iflow: ['fake-iflow.mjs', '--experimental-acp'] } as const;

type Json = Record<string, unknown>;

/** What a message must agree on: its method (or that it answers one), and the fields a client reads. */
function essence(entry: TranscriptEntry): string {
  const { msg } = entry;
  const params = (msg['params'] ?? {}) as Json;
  const result = msg['result'] as Json | undefined;
  const parts = [entry.dir, typeof msg['method'] === 'string' ? msg['method'] : 'answer'];
  const update = params['update'] as Json | undefined;
  if (update !== undefined) parts.push(updateEssence(update));
  if (msg['method'] === 'session/request_permission') parts.push(permissionEssence(params));
  if (typeof result?.['protocolVersion'] === 'number') parts.push(`protocol:${result['protocolVersion']}`);
  if (typeof result?.['sessionId'] === 'string') parts.push(`session mode:${String((result['modes'] as Json | undefined)?.['currentModeId'])}`);
  if (typeof result?.['stopReason'] === 'string') parts.push(`stop:${result['stopReason']}`);
  if ((result?.['outcome'] as Json | undefined) !== undefined) parts.push(`outcome:${JSON.stringify(result?.['outcome'])}`);
  return parts.join(' ');
}

function updateEssence(update: Json): string {
  const kind = String(update['sessionUpdate']);
  if (kind === 'agent_message_chunk') return `${kind}:${String((update['content'] as Json)['type'])}`;
  if (kind.startsWith('tool_call')) return `${kind}:${String(update['kind'])}/${String(update['status'])} ${String(update['title'])}`;
  return kind;
}

function permissionEssence(params: Json): string {
  const call = params['toolCall'] as Json;
  const options = (params['options'] as Json[]).map((option) => `${String(option['optionId'])}=${String(option['kind'])}`);
  return `asks ${String(call['kind'])}/${String(call['status'])} ${String(call['title'])} [${options.join(' ')}]`;
}

/** Both directions in order. Where our own messages fall between the agent's depends on timing, so each direction is compared on its own. */
function essentials(transcript: TranscriptEntry[]): { said: string[]; sent: string[] } {
  const lines = transcript.map(essence);
  return { said: lines.filter((line) => line.startsWith('<')), sent: lines.filter((line) => line.startsWith('>')) };
}

async function recorded(plan: AcpPlanName): Promise<TranscriptEntry[]> {
  const text = await readFile(join(fixtures, 'transcripts', `gemini-acp-${plan}.ndjson`), 'utf8');
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as TranscriptEntry);
}

for (const engine of ['gemini', 'iflow'] as const) {
  for (const plan of Object.keys(ACP_PLANS) as AcpPlanName[]) {
    t.test(`the fake ${engine} in ACP mode speaks as the real gemini --acp: ${plan}`, async (t) => {
      const cwd = await mkdtemp(join(tmpdir(), 'skilld-acp-transcript-'));
      t.teardown(() => rm(cwd, { recursive: true, force: true }));
      const [script, ...argv] = FAKES[engine];
      const child = spawn(process.execPath, [join(fixtures, script), ...argv, ...(asksApproval(plan) ? [] : ['--yolo'])], { cwd, stdio: ['pipe', 'pipe', 'ignore'] });
      const closed = once(child, 'close');
      const faked = await driveAcp(child, plan, cwd, async () => void (await waitForFile(join(cwd, '.fake-engine', 'child-pid'))));
      t.same(await closed, [0, null], 'stdin closed while idle: it exits 0');
      t.strictSame(essentials(faked), essentials(await recorded(plan)));
      t.ok(faked.filter((e) => e.dir === '<').every((e) => e.msg['jsonrpc'] === '2.0'), 'every message it prints is JSON-RPC 2.0');
    });
  }
}
