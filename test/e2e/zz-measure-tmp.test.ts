import { readFileSync } from 'node:fs';
import { TestDaemon, waitForStatus } from '/work/main/test/helpers/daemon.js';
import { mkdtempSync } from 'node:fs'; const d = await TestDaemon.start({ dir: mkdtempSync('/dev/shm/skilld-test-') });
const c = await d.client();
const cpu = () => { const s = readFileSync(`/proc/${d.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(s[11]) + Number(s[12])) * 10; };
const self = () => process.cpuUsage();
console.log('daemon cpu after start ms', cpu());
const t0 = Date.now(); const s0 = self();
for (let i = 0; i < 10; i++) { const j = await c.request<{job_id: string}>('jobs/create', { skill_id: 'echo-auto', engine: 'codex', input: {} }); await waitForStatus(c, j.job_id); }
const s1 = self(s0);
console.log('10 turns wall', Date.now() - t0, 'daemon cpu', cpu(), 'test cpu', (s1.user + s1.system) / 1000);
for (const l of d.logLines.slice(-40)) { try { const o = JSON.parse(l); console.log(o.time, o.msg, o.job_id?.slice(-4) ?? "", o.to ?? "", o.pid ?? ""); } catch {} }
await d.cleanup();
