import { describe, expect, it } from 'vitest';
import { shutdownInSteps } from './shutdown.ts';

describe('shutdownInSteps', () => {
  it('runs the steps in order, logs one that outlasts the limit by name and goes on to the next', async () => {
    const ran: string[] = [];
    const warnings: unknown[] = [];
    await shutdownInSteps(
      {
        first: async () => void ran.push('first'),
        hangs: () => new Promise(() => ran.push('hangs')),
        last: () => void ran.push('last'),
      },
      50,
      { warn: (line: unknown) => void warnings.push(line) },
    );
    expect(ran).toEqual(['first', 'hangs', 'last']);
    expect(warnings).toEqual([{ step: 'hangs', limitMs: 50 }]);
  });

  it('ends with the error of a step that fails, running no later step', async () => {
    const ran: string[] = [];
    const failing = shutdownInSteps(
      {
        fails: () => {
          throw new Error('socket gone');
        },
        later: () => void ran.push('later'),
      },
      50,
      { warn: () => undefined },
    );
    await expect(failing).rejects.toThrow('socket gone');
    expect(ran).toEqual([]);
  });
});
