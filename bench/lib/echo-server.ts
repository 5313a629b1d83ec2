import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { LineSplitter, MAX_RPC_LINE_BYTES, encodeLine } from '../../rpc/framing.js';
import { onCleanup } from './cleanup.js';
import { libModule } from './paths.js';
import { benchEnv } from './util.js';

/**
 * The baseline of P1: a bare NDJSON JSON-RPC server built with the daemon's own framing
 * (LineSplitter, encodeLine) and nothing else: it parses each line and answers at once with the
 * canned result for the method (the same payload the daemon returns), or echoes the params.
 */
export function createEchoServer(canned: Readonly<Record<string, unknown>>): Server {
  return createServer((socket) => {
    const splitter = new LineSplitter(MAX_RPC_LINE_BYTES, {
      line: (text) => {
        if (text.trim() === '') return;
        let request: { id?: unknown; method?: unknown; params?: unknown };
        try {
          request = JSON.parse(text) as typeof request;
        } catch {
          socket.write(encodeLine({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }));
          return;
        }
        const result = typeof request.method === 'string' && request.method in canned ? canned[request.method] : (request.params ?? {});
        socket.write(encodeLine({ jsonrpc: '2.0', id: request.id ?? null, result }));
      },
      overflow: () => socket.destroy(),
    });
    socket.on('data', (chunk: Buffer) => splitter.push(chunk));
    socket.on('end', () => socket.end());
    socket.on('error', () => undefined);
  });
}

/** The echo server in a process of its own (as the daemon is), listening on `<dir>/echo.sock`. */
export interface EchoChild {
  socket: string;
  pid: number;
  stop(): Promise<void>;
}

export async function spawnEchoServer(dir: string, canned: Readonly<Record<string, unknown>>): Promise<EchoChild> {
  const socket = join(dir, 'echo.sock');
  const cannedPath = join(dir, 'echo-canned.json');
  await writeFile(cannedPath, JSON.stringify(canned));
  const child: ChildProcess = spawn(process.execPath, [libModule('echo-server-main'), socket, cannedPath], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'], env: benchEnv() });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  const unregister = onCleanup(stop);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('ready\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`echo server exited with ${String(code)} before it was ready`)));
  });
  return {
    socket,
    pid: child.pid ?? Number.NaN,
    stop: async () => {
      await stop();
      unregister();
    },
  };
}
