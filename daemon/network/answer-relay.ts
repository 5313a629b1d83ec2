import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Passes a provider's answer body on to the engine as it arrives, handing each piece to `seen`
 * (the usage meter) once it is on its way. What one read of the provider's connection brought
 * leaves in one write: the response is corked at the read's first piece and uncorked once the
 * read's work is done (a microtask runs after the ticks it queued, the body's end among them), so
 * that a short answer goes out with its end in one write rather than its body and then its end,
 * and a long one crosses the next hops in as few writes as it came (each costs a wake-up of every
 * hop after it). The meter reads a piece after the write that carries it: its work never delays
 * the engine's bytes.
 *
 * An early end of either side destroys the other: the engine sees a cut, never a short body
 * that looks whole. `ended` is called once the whole body was passed on, and seen.
 */
export function relayAnswer(incoming: IncomingMessage, response: ServerResponse, seen: (chunk: Buffer) => void, ended: () => void): void {
  let corked = false;
  let paused = false;
  let done = false;
  /** The pieces written since the last uncork, for the meter. */
  let unseen: Buffer[] = [];
  const see = (): void => {
    const pieces = unseen;
    unseen = [];
    for (const piece of pieces) seen(piece);
  };
  const uncork = (): void => {
    corked = false;
    response.uncork();
    see();
  };
  incoming.on('data', (chunk: Buffer) => {
    unseen.push(chunk);
    if (!corked) {
      corked = true;
      response.cork();
      queueMicrotask(uncork);
    }
    if (!response.write(chunk) && !paused) {
      paused = true;
      incoming.pause();
      response.once('drain', () => {
        paused = false;
        incoming.resume();
      });
    }
  });
  incoming.once('end', () => {
    done = true;
    response.end();
    see();
    ended();
  });
  incoming.once('error', () => response.destroy());
  incoming.once('close', () => {
    if (!done) response.destroy();
  });
  response.once('close', () => {
    if (!response.writableFinished) incoming.destroy();
  });
}
