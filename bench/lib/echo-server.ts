import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { LineSplitter, MAX_RPC_LINE_BYTES, encodeLine } from '../../rpc/framing.js';
import { spawnServerChild, type ServerChild } from './server-child.js';

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
export interface EchoChild extends ServerChild {
  socket: string;
}

export async function spawnEchoServer(dir: string, canned: Readonly<Record<string, unknown>>): Promise<EchoChild> {
  const socket = join(dir, 'echo.sock');
  const cannedPath = join(dir, 'echo-canned.json');
  await writeFile(cannedPath, JSON.stringify(canned));
  return { socket, ...(await spawnServerChild(dir, 'echo-server-main', [socket, cannedPath])) };
}
