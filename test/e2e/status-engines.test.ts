// skillctl status says of each engine whether a job of it can run here, and why not: its command
// does not start, or the daemon refuses its jobs (engines/list `reason`, docs/protocol.md).
import t from 'tap';
import { join } from 'node:path';
import { FIXTURES, ENGINE_NAMES, TestDaemon } from '../helpers/daemon.js';
import { runSkillctl } from '../helpers/skillctl.js';

const MISSING = '/nonexistent/iflow';
const engines = Object.fromEntries(ENGINE_NAMES.map((name) => [name, { command: [name === 'iflow' ? MISSING : join(FIXTURES, `fake-${name}.mjs`)] }]));
// Without a sandbox, as root, Claude Code's jobs are refused (ENGINE_UNAVAILABLE); as anyone else they run.
const daemon = await TestDaemon.start({ config: { engines, sandbox: 'off', default_engine: 'gemini' } });
t.teardown(() => daemon.cleanup());
const client = await daemon.client();
const asRoot = process.getuid?.() === 0;

interface Listed {
  name: string;
  available: boolean;
  reason: string | null;
}

t.test('engines/list: reason says why an engine cannot run, null where it can', async (t) => {
  const { engines: listed } = await client.request<{ engines: Listed[] }>('engines/list');
  const byName = new Map(listed.map((engine) => [engine.name, engine]));
  t.match(byName.get('codex'), { available: true, reason: null });
  t.match(byName.get('iflow'), { available: false, reason: `${MISSING} --version did not start: spawn ${MISSING} ENOENT` });
  if (asRoot) t.match(byName.get('claude'), { available: true, reason: /^Claude Code does not run with its permission checks bypassed as root outside a sandbox/ }, 'its command starts, and its jobs are refused');
  else t.match(byName.get('claude'), { available: true, reason: null });
});

t.test('skillctl status: one line an engine, with why it cannot run; the default engine; --json as before', async (t) => {
  const env = { ...process.env, SKILLD_SOCKET: daemon.socket, NO_COLOR: '1' };
  const status = await runSkillctl(['status'], env);
  t.equal(status.code, 0, status.stderr);
  t.match(status.stdout, /^engine codex:\s+version unknown \(\S+fake-codex\.mjs\);/m);
  t.match(status.stdout, new RegExp(`^engine iflow:\\s+cannot run: ${MISSING} --version did not start: spawn ${MISSING} ENOENT$`, 'm'));
  if (asRoot) t.match(status.stdout, /^engine claude:\s+cannot run: Claude Code does not run with its permission checks bypassed as root/m);
  t.match(status.stdout, /^default engine:\s+gemini$/m);
  t.match(status.stdout, /^sandbox:\s+off: jobs run without a sandbox/m);
  const table = await runSkillctl(['engines'], env);
  t.match(table.stdout, new RegExp(`^iflow\\s+no\\s+-\\s+\\S+\\s+${MISSING}\\s+${MISSING} --version did not start: spawn ${MISSING} ENOENT$`, 'm'), 'skillctl engines: the same, in a column');
  t.match(table.stdout, /^codex\s+yes\s+.*\s+-$/m);
  if (asRoot) t.match(table.stdout, /^claude\s+no\s+/m, 'an engine whose jobs are refused does not run, though its command starts');
  const json = JSON.parse((await runSkillctl(['status', '--json'], env)).stdout) as Record<string, unknown>;
  t.equal(json['default_engine'], 'gemini');
  t.notOk('engines' in json, 'daemon/status as the daemon answers it');
});
