import { once } from 'node:events';
import { flagOpt, intOpt, listOpt, stringOpt, UsageError } from '../args.js';
import type { Command } from '../command.js';
import { jsonLine } from '../format.js';
import { socketPath } from '../socket-path.js';
import type { KeptToken } from './token-file.js';

/**
 * `web`: serves the page for the person in the loop (docs/web.md) until Ctrl-C or SIGTERM. It keeps
 * no job state of its own (on a fixed port, only its token) and needs no daemon to start: the page
 * says when the daemon is away and goes on when it is back.
 */
export const webCommand: Command = {
  name: 'web',
  usage: 'web [--port N] [--new-token] [--listen ADDR] [--allow-host NAME] [--open]',
  summary: 'serve a web page of the jobs, their questions and the skills, on 127.0.0.1, at an address with a token',
  options: {
    port: { type: 'string', value: 'N', description: 'the port to listen on; default: a free one. A fixed port keeps its token for the next start (docs/web.md)', default: '0' },
    'new-token': { type: 'boolean', description: "with --port: make a new token and keep it instead of the kept one (the old address and every browser signed in with it are refused from then on)" },
    listen: { type: 'string', value: 'ADDR', description: 'the address to listen on; anything but a loopback address lets other machines reach the page (docs/web.md)', default: '127.0.0.1' },
    'allow-host': { type: 'string', multiple: true, value: 'NAME', description: "another name the page answers to (the browser's Host), with --listen on another interface" },
    open: { type: 'boolean', description: 'open the address in a browser (xdg-open), by way of a file only you can read: the token is on no command line' },
  },
  positionals: [0, 0],
  offline: true,
  examples: ['web', 'web --port 8421 --open', 'web --port 8421  # then, elsewhere: ssh -N -L 8421:127.0.0.1:8421 server', 'web --port 8421 --new-token'],
  details: [
    'The address printed holds a token: whoever has it may answer, start, cancel and retry jobs as you. ' +
      'The page keeps no job state of its own: stop and start it at any time; it follows the daemon through restarts.',
    'With --port N the token is kept in $XDG_STATE_HOME/skilld/web-N.token (else ~/.local/state/skilld), readable by you alone, ' +
      'so that the address and a signed-in browser stay good when the page starts again; without it each start has a new token. ' +
      'systemd/skillctl-web.service runs it for you (systemctl --user).',
    'To reach it from another machine, keep it on 127.0.0.1 and forward the port through SSH (docs/web.md).',
  ],
  run: async (ctx, inv) => {
    const port = intOpt(inv.values, 'port') ?? 0;
    if (port < 0 || port > 65535) throw new UsageError(`--port ${port} is not a port (0 to 65535)`);
    const listen = stringOpt(inv.values, 'listen') ?? '127.0.0.1';
    const renew = flagOpt(inv.values, 'new-token');
    if (renew && port === 0) throw new UsageError('--new-token needs --port N: without a fixed port each start makes a new token anyway');
    const socket = socketPath(stringOpt(inv.values, 'socket'));
    // Loaded here: every other command of skillctl starts without the page's server (~15 ms to load).
    const [{ openInBrowser }, { WebServer }, { keptToken }] = await Promise.all([import('./open-file.js'), import('./server.js'), import('./token-file.js')]);
    // A fixed port keeps its token: the address printed, a bookmark of it and a signed-in browser's cookie stay good across starts.
    const held: { kept?: KeptToken } = {};
    const token = port === 0 ? undefined : async (at: number): Promise<string> => (held.kept = await keptToken(at, { renew })).token;
    const web = await WebServer.start({ socket, listen, port, allowHosts: listOpt(inv.values, 'allow-host'), ...(token === undefined ? {} : { token }) });
    // Heard from here on: a stop while the browser is being opened still removes the open file.
    const stopped = Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
    const file = held.kept?.path ?? null;
    if (held.kept?.made === 'replaced') ctx.warn(`skillctl: ${file ?? ''} held no token: a new one is kept there`);
    if (ctx.json) ctx.print(jsonLine({ url: web.url, port: web.port, listen, socket, token_file: file }));
    else {
      const keeping = file === null ? 'a new one at each start' : `kept in ${file} for the next start on this port`;
      ctx.print(`skillctl web: the page of the daemon at ${socket}:\n  ${web.url}\n(the address holds the page's token, ${keeping}; Ctrl-C stops the page)`);
    }
    const removeOpenFile = flagOpt(inv.values, 'open') ? await openInBrowser(web.url, (text) => ctx.warn(text)) : null;
    await stopped;
    await removeOpenFile?.();
    await web.close();
    return 0;
  },
};
