import { execFile } from 'node:child_process';
import { open, mkdtemp, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A small tmpfs of its own, to run out of space on purpose. */
export interface SmallDisk {
  dir: string;
  /** Writes a filler file until the disk is full (ENOSPC). */
  fill(): Promise<void>;
  /** Removes the filler: the space is back. */
  free(): Promise<void>;
  unmount(): Promise<void>;
}

/** Mounts a tmpfs of `size` (e.g. "2m"); a string says why it could not (not root, no mount). */
export async function mountSmallDisk(size: string): Promise<SmallDisk | string> {
  const dir = await mkdtemp(join(tmpdir(), 'skilld-disk-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    return `cannot mount a tmpfs here (${(error as Error).message.split('\n')[0] ?? 'mount failed'}); needs root and mount rights`;
  }
  const filler = join(dir, 'filler');
  return {
    dir,
    async fill() {
      const file = await open(filler, 'a');
      try {
        const block = Buffer.alloc(64 * 1024, 0x78);
        for (;;) await file.write(block);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      } finally {
        await file.close();
      }
    },
    free: () => unlink(filler),
    async unmount() {
      await run('umount', [dir]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
