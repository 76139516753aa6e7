// Helpers the load benchmarks share: a server in a child process that announces its port, and
// percentiles of latency samples.

import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Starts `node <args>` with stdout piped; resolves once it printed `PORT <n>`, rejects if it exits
 * first (`what` names it in the error). Its stderr goes to ours.
 */
export function spawnServer(args: readonly string[], what: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /PORT (\d+)/.exec(out);
      if (match) resolve({ child, port: Number(match[1]) });
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
  });
}

/** The `p`th percentile (nearest rank) of ascending `sorted`; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
