import type { PeerCredentials } from '../rpc/peer-credentials.js';
import type { AccessConfig } from './base/config-access.js';
import type { UserDirectory } from './base/users.js';
import type { Viewer } from './model/access.js';
import type { JobOwner } from './model/job.js';

/**
 * Who each connection is (docs/access.md): the kernel's peer credentials of its socket, the user
 * and groups the host gives that uid, and whether it sees every job: an administrator (root, the
 * daemon's own user, or one `access.admins` names), or anyone in `shared` access. A connection
 * whose credentials cannot be read is taken as the daemon's own user, as before there were users.
 */
export class Callers {
  readonly #access: AccessConfig;
  readonly #users: UserDirectory;
  readonly #ownUid: number;
  readonly #seen = new WeakMap<object, Viewer>();

  constructor(access: AccessConfig, users: UserDirectory, ownUid: number) {
    this.#access = access;
    this.#users = users;
    this.#ownUid = ownUid;
  }

  /** The viewer of a connection, worked out once per connection. */
  of(conn: { readonly peer: PeerCredentials | null }): Viewer {
    let viewer = this.#seen.get(conn);
    if (viewer === undefined) {
      viewer = this.viewerOf(conn.peer?.uid ?? this.#ownUid);
      this.#seen.set(conn, viewer);
    }
    return viewer;
  }

  /** The viewer of a uid. One the host has no name for is named by its number. */
  viewerOf(uid: number): Viewer {
    const known = this.#users.byUid(uid);
    const user = known?.name ?? String(uid);
    const groups = known?.groups ?? [];
    const admin = uid === 0 || uid === this.#ownUid || this.#access.admins.includes(`user:${user}`) || groups.some((group) => this.#access.admins.includes(`group:${group}`));
    return { uid, user, groups, all: admin || this.#access.mode === 'shared' };
  }

  /** The owner a job created by `viewer` records. */
  static ownerOf(viewer: Viewer): JobOwner {
    return { uid: viewer.uid, user: viewer.user };
  }
}
