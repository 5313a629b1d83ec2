import { SkilldError } from '../../rpc/errors.js';
import { databaseFaultDetail } from './pg/db-faults.js';

/** Error codes of a file system that cannot take a write now: full, over quota, failing, read-only, out of descriptors. */
const STORAGE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS', 'EFBIG', 'EMFILE', 'ENFILE']);

/**
 * Whether `error` is the storage failing rather than a bug: a file system that cannot take the
 * write, or a database that is unreachable or going away. A retry may succeed once it recovers.
 */
export function isStorageFault(error: unknown): boolean {
  if (error instanceof SkilldError) return error.code === 'STORAGE_UNAVAILABLE';
  return fileSystemFault(error) !== undefined || databaseFaultDetail(error) !== undefined;
}

/**
 * The project's error for a write (or, `action` "answer", any request) that failed:
 * `STORAGE_UNAVAILABLE` when the storage is at fault, the error itself otherwise (a bug stays a bug).
 */
export function asStorageError(error: unknown, what: string, action: 'write' | 'answer' = 'write'): unknown {
  if (error instanceof SkilldError) return error;
  const code = fileSystemFault(error);
  if (code !== undefined) {
    return new SkilldError('STORAGE_UNAVAILABLE', `could not ${action} ${what} (${code}); nothing of this request was kept, and a retry can succeed once the storage recovers`, { cause: error });
  }
  const detail = databaseFaultDetail(error);
  if (detail !== undefined) {
    return new SkilldError('STORAGE_UNAVAILABLE', `could not ${action} ${what}: the database is unreachable or could not take it now (${detail}); nothing of this request was kept, and a retry can succeed`, { cause: error });
  }
  return error;
}

function fileSystemFault(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && STORAGE_CODES.has(code) ? code : undefined;
}
