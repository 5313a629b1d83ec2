import { userInfo } from 'node:os';
import type { RunAs } from './plan.js';
import type { ShortRunner } from '../model/short-run.js';

/** The user the systemd set-up makes for engines (systemd/skilld.sysusers.conf). */
export const JOB_USER = 'skilld-job';
/** Where there is no such user. */
const FALLBACK_USER = 'nobody';
const LOOKUP_TIMEOUT_MS = 5000;

/** Who engines are inside their sandboxes, or why no one can be. */
export type EngineUser = { user: RunAs; switched: boolean } | { problem: string };

/**
 * Who a job's engine is in its sandbox. A daemon that runs as root never runs an engine as root:
 * it runs them as `configured` (`sandbox.run_as`), else as `skilld-job` where that user exists,
 * else as `nobody`, found through the system's user database (`getent`, so that LDAP and
 * systemd's users count). Any other daemon runs them as itself.
 */
export async function engineUser(configured: string | null, run: ShortRunner, uid = process.getuid?.() ?? -1): Promise<EngineUser> {
  if (uid !== 0) {
    const me = userInfo();
    return { user: { uid: me.uid, gid: me.gid, user: me.username, group: (await lookup(run, 'group', String(me.gid)))?.[0] ?? me.username }, switched: false };
  }
  const names = configured === null ? [JOB_USER, FALLBACK_USER] : [configured];
  for (const name of names) {
    const entry = await lookup(run, 'passwd', name);
    if (entry === null) continue;
    const [user = name, , uidText = '', gidText = ''] = entry;
    const [found, gid] = [Number(uidText), Number(gidText)];
    if (!Number.isInteger(found) || !Number.isInteger(gid)) continue;
    if (found === 0 || gid === 0) return { problem: `sandbox.run_as names ${name}, which is root or in root's group: engines never run as root` };
    return { user: { uid: found, gid, user, group: (await lookup(run, 'group', String(gid)))?.[0] ?? user }, switched: true };
  }
  return { problem: configured === null ? `neither ${JOB_USER} nor ${FALLBACK_USER} is a user here: set sandbox.run_as to an unprivileged user` : `sandbox.run_as names ${configured}, which is no user here` };
}

/** A `getent` entry's fields, or null where the database has none. */
async function lookup(run: ShortRunner, database: 'passwd' | 'group', key: string): Promise<string[] | null> {
  const result = await run(['getent', database, key], { PATH: '/usr/bin:/bin' }, LOOKUP_TIMEOUT_MS);
  const line = result.ok ? result.stdout.split('\n')[0] : undefined;
  return line === undefined || line === '' ? null : line.split(':');
}
