/** A user of the host, as its name services give it: name, uid, and every group it is in (by name). */
export interface HostUser {
  uid: number;
  name: string;
  groups: string[];
}

/** The host's users and groups, looked up by name or number. */
export interface UserDirectory {
  byUid(uid: number): HostUser | null;
  userNamed(name: string): HostUser | null;
  groupExists(name: string): boolean;
}

interface Passwd {
  pw_name: string;
  pw_uid: number;
  pw_gid: number;
}

interface Libc {
  getpwuid(uid: number): unknown;
  getpwnam(name: string): unknown;
  getgrnam(name: string): unknown;
  getgrgid(gid: number): unknown;
  getgrouplist(user: string, gid: number, groups: Uint32Array, count: number[]): number;
  decodeUser(pointer: unknown): Passwd;
  groupName(pointer: unknown): string;
}

/** Most groups a user's list is read with; more are read on a second call. */
const FIRST_GROUPS = 64;
/** How long a lookup is kept: a user added to a group is seen within this. */
export const USER_CACHE_MS = 60_000;

/**
 * libc's own lookups (getpwuid, getgrouplist, …) through koffi, so that users and groups of every
 * name service the host uses (files, LDAP, sssd) are found as `id` finds them. Null off Linux.
 * koffi is imported here, when the daemon starts, never by importing this module.
 */
async function loadLibc(): Promise<Libc | null> {
  try {
    const koffi = (await import('koffi')).default;
    const lib = koffi.load('libc.so.6');
    const passwd = koffi.struct('skilld_passwd', { pw_name: 'const char *', pw_passwd: 'const char *', pw_uid: 'uint32', pw_gid: 'uint32', pw_gecos: 'const char *', pw_dir: 'const char *', pw_shell: 'const char *' });
    const group = koffi.struct('skilld_group', { gr_name: 'const char *', gr_passwd: 'const char *', gr_gid: 'uint32', gr_mem: 'void *' });
    return {
      getpwuid: lib.func('skilld_passwd *getpwuid(uint32)'),
      getpwnam: lib.func('skilld_passwd *getpwnam(const char *)'),
      getgrnam: lib.func('skilld_group *getgrnam(const char *)'),
      getgrgid: lib.func('skilld_group *getgrgid(uint32)'),
      getgrouplist: lib.func('int getgrouplist(const char *, uint32, _Out_ uint32 *, _Inout_ int *)') as Libc['getgrouplist'],
      decodeUser: (pointer) => koffi.decode(pointer, passwd) as Passwd,
      groupName: (pointer) => (koffi.decode(pointer, group) as { gr_name: string }).gr_name,
    };
  } catch {
    return null;
  }
}

/**
 * The host's directory, each answer kept for USER_CACHE_MS (a lookup may ask a network service:
 * not once per request). `now` is the clock's time in ms. Where libc cannot be loaded, no user or
 * group is known.
 */
export async function hostUsers(now: () => number = Date.now): Promise<UserDirectory> {
  const libc = await loadLibc();
  const cache = new Map<string, { at: number; value: HostUser | boolean | null }>();
  const cached = <T extends HostUser | boolean | null>(key: string, look: () => T): T => {
    const hit = cache.get(key);
    if (hit !== undefined && now() - hit.at < USER_CACHE_MS) return hit.value as T;
    const value = look();
    cache.set(key, { at: now(), value });
    return value;
  };
  return {
    byUid: (uid) => cached(`uid:${uid}`, () => userOf(libc, libc?.getpwuid(uid) ?? null)),
    userNamed: (name) => cached(`user:${name}`, () => (name === '' ? null : userOf(libc, libc?.getpwnam(name) ?? null))),
    groupExists: (name) => cached(`group:${name}`, () => name !== '' && (libc?.getgrnam(name) ?? null) !== null),
  };
}

function userOf(lib: Libc | null, pointer: unknown): HostUser | null {
  if (lib === null || pointer === null) return null;
  const { pw_name: name, pw_uid: uid, pw_gid: gid } = lib.decodeUser(pointer);
  return { uid, name, groups: groupsOf(lib, name, gid) };
}

/** The names of every group `user` is in, its primary group first; a group with no name is left out. */
function groupsOf(lib: Libc, user: string, gid: number): string[] {
  let size = FIRST_GROUPS;
  for (let tries = 0; tries < 2; tries += 1) {
    const ids = new Uint32Array(size);
    const count = [size];
    if (lib.getgrouplist(user, gid, ids, count) >= 0) {
      const names = [...ids.slice(0, count[0])].map((id) => lib.getgrgid(id)).filter((pointer) => pointer !== null).map((pointer) => lib.groupName(pointer));
      return [...new Set(names)];
    }
    size = Math.max(count[0] ?? 0, size * 2);
  }
  return [];
}
