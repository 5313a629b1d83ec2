import { SkilldError } from '../../rpc/errors.js';

/** Error codes of a file system that cannot take a write now: full, over quota, failing, read-only, out of descriptors. */
const STORAGE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS', 'EFBIG', 'EMFILE', 'ENFILE']);

/** Whether `error` is the storage failing rather than a bug: a retry may succeed once it recovers. */
export function isStorageFault(error: unknown): boolean {
  if (error instanceof SkilldError) return error.code === 'STORAGE_UNAVAILABLE';
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' && STORAGE_CODES.has(code);
}

/**
 * The project's error for a write that failed: `STORAGE_UNAVAILABLE` when the storage is at
 * fault, the error itself otherwise (a bug stays a bug).
 */
export function asStorageError(error: unknown, what: string): unknown {
  if (error instanceof SkilldError || !isStorageFault(error)) return error;
  const code = (error as NodeJS.ErrnoException).code as string;
  return new SkilldError('STORAGE_UNAVAILABLE', `could not write ${what} (${code}); nothing of this request was kept, and a retry can succeed once the storage recovers`, { cause: error });
}
