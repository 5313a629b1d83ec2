/** One file of a unified diff. */
export interface DiffFile {
  path: string;
  status: 'added' | 'deleted' | 'modified';
  added: number;
  removed: number;
}

/** What a `git diff` says: its files, the names it defines anew, and the kind of change. */
export interface DiffSummary {
  files: DiffFile[];
  /** Functions and classes that appear on added lines (`greet()`, `Parser`). */
  newNames: string[];
  /** The conventional-commit type: docs, test, feat or fix. */
  kind: 'docs' | 'test' | 'feat' | 'fix';
}

const DEFINITION = /\b(?:function\s+(\w+)|def\s+(\w+)|class\s+(\w+)|(?:const|let|var)\s+(\w+)\s*=\s*(?:async\s*)?\([^)]*\)\s*=>)/;

/** Reads the output of `git diff`. */
export function readDiff(text: string): DiffSummary {
  const files: DiffFile[] = [];
  const newNames: string[] = [];
  let current: DiffFile | null = null;
  for (const line of text.split('\n')) {
    const header = /^diff --git a\/(.+) b\/(.+)$/.exec(line);
    if (header !== null) {
      current = { path: header[2] as string, status: 'modified', added: 0, removed: 0 };
      files.push(current);
    } else if (current === null) continue;
    else if (line.startsWith('new file mode')) current.status = 'added';
    else if (line.startsWith('deleted file mode')) current.status = 'deleted';
    else if (line.startsWith('+') && !line.startsWith('+++')) {
      current.added += 1;
      const match = DEFINITION.exec(line);
      const name = match?.slice(1).find((m) => m !== undefined);
      const label = name === undefined ? undefined : match?.[3] === undefined ? `${name}()` : name;
      if (label !== undefined && !newNames.includes(label)) newNames.push(label);
    } else if (line.startsWith('-') && !line.startsWith('---')) current.removed += 1;
  }
  return { files, newNames, kind: kindOf(files, newNames) };
}

function kindOf(files: DiffFile[], newNames: string[]): DiffSummary['kind'] {
  if (files.length > 0 && files.every((f) => /\.(md|txt|rst|adoc)$/i.test(f.path) || f.path.startsWith('docs/'))) return 'docs';
  if (files.length > 0 && files.every((f) => /(^|\/)(test|tests|__tests__)\/|\.(test|spec)\.\w+$/.test(f.path))) return 'test';
  if (newNames.length > 0 || files.some((f) => f.status === 'added')) return 'feat';
  return 'fix';
}
