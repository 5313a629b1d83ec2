/**
 * The points where a crash leaves the disk in a state of its own: just before each durable step
 * of the files store (an append, a cut, a replace, a rename) and of the removal of a run folder.
 * Nothing watches them in a running daemon; the crash-point tests (test/unit/store-crash-points)
 * take a picture of the state folder at each one, as SQLite's and PostgreSQL's crash tests do,
 * and check what a daemon loading that picture would find.
 */
export interface CrashPoint {
  /** What is about to happen. */
  step: 'append' | 'cut' | 'replace' | 'rename' | 'remove_folder';
  /** The file (or folder) it happens to. */
  path: string;
  /** For an append: the bytes about to be written (a crash may leave part of them). */
  text?: string;
}

let watcher: ((point: CrashPoint) => void) | null = null;

/** Called just before a durable step; synchronous, so that the picture is the disk as it is at that moment. */
export function crashPoint(point: CrashPoint): void {
  watcher?.(point);
}

/** Watches every crash point until the returned function is called. One watcher at a time. */
export function watchCrashPoints(watch: (point: CrashPoint) => void): () => void {
  if (watcher !== null) throw new Error('crash points are already watched');
  watcher = watch;
  return () => {
    watcher = null;
  };
}
