import type { Socket } from 'node:net';

/** Who is at the other end of a Unix socket, as the kernel recorded at its `connect()`: the client cannot choose it. */
export interface PeerCredentials {
  pid: number;
  uid: number;
  gid: number;
}

const SOL_SOCKET = 1;
const SO_PEERCRED = 17;
const UCRED_BYTES = 12;

type GetSockOpt = (fd: number, level: number, name: number, out: Record<string, number>, length: number[]) => number;
let getsockopt: GetSockOpt | null = null;

/**
 * Node gives no way to read SO_PEERCRED, so libc's `getsockopt` is called through koffi, a
 * prebuilt FFI, on the accepted socket's descriptor (docs/access.md). Loaded by the daemon as it
 * starts, not when this module is imported (a client that imports the RPC layer never loads the
 * FFI); false where libc cannot be loaded (not Linux): every connection is then "unknown".
 */
export async function loadPeerCredentials(): Promise<boolean> {
  if (getsockopt !== null) return true;
  try {
    const koffi = (await import('koffi')).default;
    const libc = koffi.load('libc.so.6');
    // The struct is declared by name for the prototype below.
    koffi.struct('skilld_ucred', { pid: 'int32', uid: 'uint32', gid: 'uint32' });
    getsockopt = libc.func('int getsockopt(int, int, int, _Out_ skilld_ucred *, _Inout_ uint32 *)') as unknown as GetSockOpt;
    return true;
  } catch {
    return false;
  }
}

/** The peer's credentials of an accepted Unix socket; null when they cannot be read (not loaded, no descriptor, not Linux). */
export function peerCredentials(socket: Socket): PeerCredentials | null {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  const call = getsockopt;
  if (call === null || typeof fd !== 'number' || fd < 0) return null;
  const out: Record<string, number> = {};
  if (call(fd, SOL_SOCKET, SO_PEERCRED, out, [UCRED_BYTES]) !== 0) return null;
  const { pid, uid, gid } = out as { pid?: number; uid?: number; gid?: number };
  return typeof pid === 'number' && typeof uid === 'number' && typeof gid === 'number' ? { pid, uid, gid } : null;
}
