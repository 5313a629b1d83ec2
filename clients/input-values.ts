import { readFile } from 'node:fs/promises';
import { looseValue, parseJsonObject, UsageError } from './args.js';

/**
 * The values of `run`'s `--input`/`--param` (`k=v`) and `--input-json`/`--param-json`, read where
 * they point, as curl and gh read them: `k=@path` is the file's text, `k=@-` and `--input-json -`
 * standard input (once in a whole command line), `--input-json @path` a file of JSON; `k=@@text`
 * is the text `@text` itself. Any other `k=v` is JSON when it parses, else the text.
 */

/** Where `@` values are read from; the real ones by default. */
export interface ValueSources {
  readFile(path: string): Promise<string>;
  readStdin(): Promise<string>;
}

const realSources: ValueSources = {
  readFile: (path) => readFile(path, 'utf8'),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
};

/** One command line's reads: standard input may be read by one value only. */
class Reader {
  #stdinBy: string | null = null;

  constructor(readonly sources: ValueSources) {}

  async stdin(by: string): Promise<string> {
    if (this.#stdinBy !== null) throw new UsageError(`${by} and ${this.#stdinBy} both read standard input; it can be read once`);
    this.#stdinBy = by;
    return this.sources.readStdin();
  }

  /** `hint`: what to write instead when the `@` was meant as text (a `k=v` value). */
  async file(path: string, by: string, hint = ''): Promise<string> {
    if (path === '') throw new UsageError(`${by} names no file after @${hint}`);
    try {
      return await this.sources.readFile(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A value that merely starts with @ (a handle, a decorator) missing as a file most likely meant the text.
      throw new UsageError(`${by}: cannot read ${path}: ${code ?? (error as Error).message}${code === 'ENOENT' ? hint : ''}`);
    }
  }
}

/** `--<name>-json` as the base, then each `--<name> k=v` on top; undefined when neither is given. */
export async function readValues(json: string | undefined, pairs: readonly string[], flag: string, sources: ValueSources = realSources, reader = new Reader(sources)): Promise<Record<string, unknown> | undefined> {
  if (json === undefined && pairs.length === 0) return undefined;
  const base = json === undefined ? {} : parseJsonObject(await jsonText(json, `--${flag}-json`, reader), `--${flag}-json`);
  const values: Record<string, unknown> = { ...base };
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--${flag} needs key=value, got "${pair}"`);
    const key = pair.slice(0, at);
    values[key] = await pairValue(pair.slice(at + 1), `--${flag} ${key}=`, reader);
  }
  return values;
}

/** The `--input-json`/`--param-json` of both of `run`'s objects, standard input shared between them. */
export async function readRunValues(given: { input: [string | undefined, readonly string[]]; param: [string | undefined, readonly string[]] }, sources: ValueSources = realSources): Promise<{ input: Record<string, unknown> | undefined; parameter: Record<string, unknown> | undefined }> {
  const reader = new Reader(sources);
  return { input: await readValues(...given.input, 'input', sources, reader), parameter: await readValues(...given.param, 'param', sources, reader) };
}

async function jsonText(text: string, by: string, reader: Reader): Promise<string> {
  if (text === '-') return reader.stdin(`${by} -`);
  if (text.startsWith('@')) return reader.file(text.slice(1), `${by} ${text}`);
  return text;
}

async function pairValue(value: string, by: string, reader: Reader): Promise<unknown> {
  if (value.startsWith('@@')) return value.slice(1);
  if (value === '@-') return reader.stdin(`${by}@-`);
  if (value.startsWith('@')) return reader.file(value.slice(1), `${by}${value}`, ` (to send the text ${value}, write ${by}@${value})`);
  return looseValue(value);
}
