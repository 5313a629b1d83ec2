import { open } from 'node:fs/promises';
import { stringOpt } from './args.js';
import { arg, type Command } from './command.js';
import { jsonLine } from './format.js';
import type { ArtifactChunk } from './wire.js';

/** `artifact <job> <path>`: a file of the job's artifacts folder, read through the daemon (jobs/artifact). */
export const artifactCommand: Command = {
  name: 'artifact',
  usage: 'artifact <job> <path> [-o|--output FILE]',
  summary: "copy a file of a job's artifacts folder, through the daemon, to stdout or a file",
  options: {
    output: { type: 'string', short: 'o', value: 'FILE', description: 'write it to FILE (made new; an existing FILE is refused) instead of stdout' },
  },
  positionals: [2, 2],
  jobArg: 0,
  examples: ['artifact 3f9c1d2 report.md', 'artifact 3f9c1d2 charts/sales.png -o sales.png', 'artifact 3f9c1d2 report.md --json  # each jobs/artifact answer as a JSON line'],
  details: [
    'The path is the name within the artifacts folder, or the path skillctl result lists. The daemon reads it (on the host that ran the job), so it works where its folders cannot be read, from the same machine or through a tunnel to its socket. A link that leads out of the folder is refused (ARTIFACT_NOT_FOUND), as jobs/result leaves it out.',
  ],
  run: async (ctx, inv) => {
    const params = { job_id: arg(inv, 0), path: arg(inv, 1) };
    const output = stringOpt(inv.values, 'output');
    const file = output === undefined ? null : await open(output, 'wx', 0o644);
    try {
      for (let offset = 0, eof = false; !eof; ) {
        const chunk = await ctx.client.request<ArtifactChunk>('jobs/artifact', { ...params, offset });
        if (ctx.json) ctx.print(jsonLine(chunk));
        else if (file !== null) await file.write(Buffer.from(chunk.data, 'base64'));
        else ctx.write(Buffer.from(chunk.data, 'base64'));
        ({ next_offset: offset, eof } = chunk);
      }
    } finally {
      await file?.close();
    }
    return 0;
  },
};
