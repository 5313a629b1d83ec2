import { open, stat } from 'node:fs/promises';
import { SkilldError } from '../rpc/errors.js';
import type { Connection } from '../rpc/connection.js';
import type { MethodHandler } from '../rpc/dispatcher.js';
import type { MethodName } from '../rpc/methods.js';
import type { Config } from './config.js';
import type { EngineCatalog } from './engines/info.js';
import type { Faults } from './faults.js';
import type { ProfileProbe } from './engines/probe.js';
import type { ContainmentView } from './process/containment.js';
import type { CreateParams } from './jobs/create-request.js';
import type { ReplyParams, Supervisor } from './jobs/supervisor.js';
import type { JobQueries } from './jobs/queries.js';
import { isTerminal, type JobStatus } from './jobs/states.js';
import type { SkillRegistry } from './skills/registry.js';
import { view } from './skills/registry.js';
import type { SlotPool } from './slots/pool.js';
import type { Store } from './store/store.js';
import type { Subscriptions } from './subscriptions.js';

/** The most bytes one `jobs/logs` call returns. */
export const LOG_CHUNK_BYTES = 256 * 1024;

export interface ApiDeps {
  version: string;
  startedAt: string;
  config: Config;
  /** How engine processes are held together and stopped. */
  containment: ContainmentView;
  store: Store;
  pool: SlotPool;
  skills: SkillRegistry;
  engines: EngineCatalog;
  probe: ProfileProbe;
  supervisor: Supervisor;
  queries: JobQueries;
  subscriptions: Subscriptions;
  faults: Faults;
}

/** The method implementations; params arrive already checked against `METHOD_PARAMS`. */
export function createApi(d: ApiDeps): Record<MethodName, MethodHandler<Connection>> {
  return {
    'daemon/ping': () => ({ ok: true, version: d.version }),
    'daemon/status': () => ({
      version: d.version,
      pid: process.pid,
      started_at: d.startedAt,
      socket: d.config.socket,
      state_dir: d.config.state_dir,
      slots: d.pool.stats(),
      jobs: d.store.countByStatus(),
      skills: d.skills.counts(),
      notices: d.store.notices,
      internal_errors: d.faults.stats(),
      containment: d.containment,
    }),
    'skills/list': () => ({ skills: d.skills.list() }),
    'skills/get': (params) => {
      const id = (params as { skill_id: string }).skill_id;
      const entry = d.skills.get(id);
      if (entry === undefined) throw new SkilldError('SKILL_NOT_FOUND', `no skill "${id}"`);
      return { ...view(entry), schemas: entry.current?.schemas ?? { input: null, parameter: null, output: null } };
    },
    'engines/list': async () => ({ engines: await d.engines.list((name) => d.probe.profileFor(name)) }),
    'jobs/create': (params) => d.supervisor.create(params as CreateParams),
    'jobs/get': (params) => d.supervisor.get((params as { job_id: string }).job_id),
    'jobs/list': (params) => {
      const p = params as { status?: JobStatus; skill_id?: string; limit?: number; before?: string };
      if (p.before !== undefined) d.queries.requireJob(p.before);
      return d.store.listJobs({ ...p, limit: p.limit ?? 50 });
    },
    'jobs/cancel': (params) => d.supervisor.cancel((params as { job_id: string }).job_id),
    'jobs/pending': (params) => d.queries.pending((params as { job_id: string }).job_id),
    'jobs/reply': (params) => d.supervisor.reply(params as ReplyParams),
    'jobs/history': (params) => d.queries.history((params as { job_id: string }).job_id),
    'jobs/result': (params) => d.queries.result((params as { job_id: string }).job_id),
    'jobs/logs': (params) => readLogs(d.supervisor, params as { job_id: string; attempt?: number; stream?: 'stdout' | 'stderr'; offset?: number }),
    'jobs/subscribe': (params, conn) => {
      const p = params as { job_id?: string; after_seq?: number };
      if (p.job_id !== undefined) d.queries.requireJob(p.job_id);
      return d.subscriptions.subscribe(conn, p);
    },
    'jobs/unsubscribe': (params, conn) => d.subscriptions.unsubscribe(conn, (params as { subscription_id: string }).subscription_id),
  };
}

/** A chunk of an attempt's log from a byte offset; `eof` once the attempt is over and all is read. */
async function readLogs(supervisor: Supervisor, p: { job_id: string; attempt?: number; stream?: 'stdout' | 'stderr'; offset?: number }): Promise<{ attempt: number; data: string; next_offset: number; eof: boolean }> {
  const job = supervisor.get(p.job_id);
  const attempt = p.attempt ?? Math.max(job.attempt, 1);
  if (attempt > Math.max(job.attempt, 1)) throw new SkilldError('INVALID_PARAMS', `job has ${job.attempt} attempt(s)`);
  const path = supervisor.runFolder(p.job_id).logFile(attempt, p.stream ?? 'stdout');
  const offset = p.offset ?? 0;
  const size = (await stat(path).catch(() => null))?.size ?? 0;
  const finished = isTerminal(job.status) || attempt < job.attempt || (job.status !== 'running' && attempt === job.attempt);
  if (offset >= size) return { attempt, data: '', next_offset: offset, eof: finished };
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(Math.min(LOG_CHUNK_BYTES, size - offset));
    const { bytesRead } = await file.read(buffer, 0, buffer.length, offset);
    const whole = utf8Boundary(buffer.subarray(0, bytesRead));
    const next = offset + whole.length;
    return { attempt, data: whole.toString('utf8'), next_offset: next, eof: finished && next >= size };
  } finally {
    await file.close();
  }
}

/** Drops a trailing partial UTF-8 character so a chunk never splits one. */
function utf8Boundary(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) !== 0x80) {
      const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return need > back ? bytes.subarray(0, bytes.length - back) : bytes;
    }
  }
  return bytes;
}
