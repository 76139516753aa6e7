// A process's shutdown in named steps, none of which may hold its exit up for ever.

import type { Logger } from './logger.ts';

/**
 * Runs `steps` one after another in their order, each for at most `limitMs`: a step still running
 * then (a connection that never ends) is logged by name and the next one starts, so the process
 * still exits. A step that fails ends the shutdown with its error.
 */
export async function shutdownInSteps(steps: Readonly<Record<string, () => unknown>>, limitMs: number, logger: Pick<Logger, 'warn'>): Promise<void> {
  for (const [step, run] of Object.entries(steps)) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), limitMs);
      timer.unref();
    });
    const work = new Promise((resolve) => resolve(run()));
    const outcome = await Promise.race([work.then(() => 'done' as const), late]).finally(() => clearTimeout(timer));
    if (outcome === 'late') logger.warn({ step, limitMs }, 'shutdown step did not finish in time; going on');
  }
}
