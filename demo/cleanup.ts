/**
 * The stops of what the demo started, run latest first, each once, whatever the others do:
 * after a normal end, a failure or a signal alike. `run()` is idempotent; a second call waits for
 * the first.
 */
export class Cleanup {
  readonly #stops: Array<() => Promise<void>> = [];
  #running: Promise<void> | null = null;

  add(stop: () => Promise<void>): void {
    this.#stops.push(stop);
  }

  run(): Promise<void> {
    this.#running ??= (async () => {
      for (const stop of this.#stops.reverse()) {
        try {
          await stop();
        } catch (error) {
          process.stderr.write(`demo: a cleanup step failed: ${error instanceof Error ? error.message : String(error)}\n`);
        }
      }
    })();
    return this.#running;
  }
}
