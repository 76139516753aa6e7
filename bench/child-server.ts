// Helpers the benchmarks share: a server in a child process that announces its port, percentiles
// of latency samples, and how the image starts the executor's node (flags, NODE_OPTIONS, environment)
// and the API's (flags).

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** One `name='value'` line of deploy/bin/mint. */
function mintScriptSetting(name: string): string {
  const script = readFileSync(new URL('../deploy/bin/mint', import.meta.url), 'utf8');
  const match = new RegExp(`^${name}='([^']*)'$`, 'm').exec(script);
  if (match === null) throw new Error(`deploy/bin/mint sets no ${name}`);
  return match[1]!;
}

/** One space-separated list of node flags in deploy/bin/mint, as separate arguments. */
function mintScriptFlags(name: string): string[] {
  return mintScriptSetting(name)
    .split(' ')
    .filter((flag) => flag !== '');
}

/**
 * The NODE_OPTIONS the image starts the executor with when none are set (`executor_node_options` in
 * deploy/bin/mint, the one place that states them; the chart keeps them by default), for benchmark
 * children that stand for the executor.
 */
export const executorNodeOptions: string = mintScriptSetting('executor_node_options');

/** The node command-line flags the image starts the executor with (`executor_node_flags` in deploy/bin/mint), as separate arguments. */
export const executorNodeFlags: readonly string[] = mintScriptFlags('executor_node_flags');

/** The node command-line flags the image starts the API with (`api_node_flags` in deploy/bin/mint), as separate arguments. */
export const apiNodeFlags: readonly string[] = mintScriptFlags('api_node_flags');

/**
 * `env` with what the image adds to the executor's environment: MALLOC_MMAP_THRESHOLD_
 * (`executor_malloc_mmap_threshold` in deploy/bin/mint), or this process's MALLOC_MMAP_THRESHOLD_
 * when it has one; an empty one leaves it out (glibc's dynamic threshold, to measure against).
 */
const mmapThreshold = process.env['MALLOC_MMAP_THRESHOLD_'] ?? mintScriptSetting('executor_malloc_mmap_threshold');
export function withExecutorEnv<V extends string | undefined>(env: Readonly<Record<string, V>>): Record<string, V | string> {
  const { MALLOC_MMAP_THRESHOLD_: _set, ...rest } = env;
  return mmapThreshold === '' ? rest : { ...rest, MALLOC_MMAP_THRESHOLD_: mmapThreshold };
}

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

/** Stops a server started by {@link spawnServer} (SIGTERM) and waits for it to exit; nothing when it already has. */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** The `p`th percentile (nearest rank) of ascending `sorted`; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
