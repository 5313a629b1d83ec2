// Who a connection is (daemon/callers.ts) and what a viewer may see (daemon/model/access.ts).
import t from 'tap';
import { Callers } from '../../daemon/callers.js';
import type { HostUser, UserDirectory } from '../../daemon/base/users.js';
import { maySee, seenBy, visibleTo } from '../../daemon/model/access.js';

const HOST: Record<number, HostUser> = {
  1000: { uid: 1000, name: 'alice', groups: ['alice', 'dev'] },
  1001: { uid: 1001, name: 'bob', groups: ['bob', 'ops'] },
  1002: { uid: 1002, name: 'carol', groups: ['carol'] },
};
const users: UserDirectory = {
  byUid: (uid) => HOST[uid] ?? null,
  userNamed: (name) => Object.values(HOST).find((user) => user.name === name) ?? null,
  groupExists: (name) => Object.values(HOST).some((user) => user.groups.includes(name)),
};
const DAEMON_UID = 999;

t.test('administrators: root, the daemon user, and what access.admins names, by user or by group', async (t) => {
  const callers = new Callers({ mode: 'owner', admins: ['group:ops', 'user:carol'] }, users, DAEMON_UID);
  t.equal(callers.viewerOf(0).all, true, 'root');
  t.equal(callers.viewerOf(DAEMON_UID).all, true, "the daemon's own user");
  t.equal(callers.viewerOf(1000).all, false, 'alice');
  t.equal(callers.viewerOf(1001).all, true, 'bob, in group ops');
  t.equal(callers.viewerOf(1002).all, true, 'carol, named');
  t.same(callers.viewerOf(4242), { uid: 4242, user: '4242', groups: [], all: false }, 'a uid the host has no name for: named by its number');
  t.equal(new Callers({ mode: 'shared', admins: [] }, users, DAEMON_UID).viewerOf(1000).all, true, 'shared: everyone sees every job');
});

t.test("a connection's viewer: from its peer credentials, once; none readable is the daemon's own user", async (t) => {
  const callers = new Callers({ mode: 'owner', admins: [] }, users, DAEMON_UID);
  const conn = { peer: { pid: 1, uid: 1000, gid: 1000 } };
  t.equal(callers.of(conn), callers.of(conn), 'worked out once per connection');
  t.equal(callers.of(conn).user, 'alice');
  t.match(callers.of({ peer: null }), { uid: DAEMON_UID, all: true });
  t.same(Callers.ownerOf(callers.of(conn)), { uid: 1000, user: 'alice' });
});

t.test('who sees a job: its owner by name, those it is shared with by user or group, administrators; an ownerless job administrators alone', async (t) => {
  const callers = new Callers({ mode: 'owner', admins: [] }, users, DAEMON_UID);
  const [alice, bob, carol] = [callers.viewerOf(1000), callers.viewerOf(1001), callers.viewerOf(1002)];
  const job = { owner: { uid: 5000, user: 'alice' }, share_with: ['group:ops'] };
  t.ok(maySee(alice, job), 'the owner, by name even where the uid differs (another host of a cluster)');
  t.ok(maySee(bob, job), 'bob through group ops');
  t.notOk(maySee(carol, job));
  t.notOk(maySee(alice, {}), 'a job with no owner');
  t.ok(maySee(callers.viewerOf(0), {}), 'root sees it');
  t.same(visibleTo(bob), { user: 'bob', entries: ['user:bob', 'group:bob', 'group:ops'] });
  t.ok(seenBy({ share_with: ['user:carol'] }, visibleTo(carol)));
});
