import { describe, expect, it } from 'vitest';
import { ConflictError, IllegalStateError, NotFoundError } from './errors.ts';
import { LeaseLostError } from './lease.ts';
import { classifyMintError, decideMintFailure, isPermanentSqlState, type MintSetback } from './mint-failure.ts';

const running = { attempts: 0, lastDelivery: false };
const lastDelivery = { attempts: 0, lastDelivery: true };

describe('isPermanentSqlState', () => {
  it('fails at once on bad data and broken constraints but retries unique violations and lost connections', () => {
    expect(['22001', '23502', '23514', '42P01'].map(isPermanentSqlState)).toEqual([true, true, true, true]);
    expect(['23505', '08006', '40001', '57P01', '55P03', undefined].map(isPermanentSqlState)).toEqual([false, false, false, false, false, false]);
  });
});

describe('classifyMintError', () => {
  it('names a lost lease first, also when a connection error hides it', () => {
    expect(classifyMintError(new LeaseLostError('taken over'), undefined, false, 30_000)).toEqual({ kind: 'lease_lost', leaseMs: 30_000 });
    expect(classifyMintError(new Error('terminating connection'), '57P01', true, 5_000)).toEqual({ kind: 'lease_lost', leaseMs: 5_000 });
  });
  it('tells a job that cannot run from a concurrent move, a permanent error and a transient one', () => {
    expect(classifyMintError(new NotFoundError('gone'), undefined, false, 1).kind).toBe('cannot_run');
    expect(classifyMintError(new IllegalStateError('no batch'), undefined, false, 1).kind).toBe('cannot_run');
    expect(classifyMintError(new ConflictError('moved'), '23505', false, 1).kind).toBe('conflict');
    expect(classifyMintError(new Error('value too long'), '22001', false, 1)).toEqual({ kind: 'permanent', message: 'value too long' });
    expect(classifyMintError(new Error('connection reset'), undefined, false, 1)).toEqual({ kind: 'transient', message: 'connection reset' });
    expect(classifyMintError('odd', '08006', false, 1)).toEqual({ kind: 'transient', message: 'odd' });
  });
});

describe('decideMintFailure', () => {
  const transient: MintSetback = { kind: 'transient', message: 'connection reset' };

  it('retries a transient error with jittered backoff from 1 s, doubling, capped at 60 s', () => {
    expect(decideMintFailure(transient, { attempts: 1, lastDelivery: false }, 0)).toEqual({ kind: 'retry', delayMs: 500 });
    expect(decideMintFailure(transient, { attempts: 1, lastDelivery: false }, 0.999_999)).toEqual({ kind: 'retry', delayMs: 1000 });
    expect(decideMintFailure(transient, { attempts: 3, lastDelivery: false }, 0.5)).toEqual({ kind: 'retry', delayMs: 3000 });
    expect(decideMintFailure(transient, { attempts: 7, lastDelivery: false }, 0.999_999)).toEqual({ kind: 'retry', delayMs: 60_000 });
    // An attempt that could not be counted still waits the first delay.
    expect(decideMintFailure(transient, { attempts: 0, lastDelivery: false }, 0)).toEqual({ kind: 'retry', delayMs: 500 });
  });

  it('fails a transient error once 8 attempts failed or on the last delivery, with the count in the reason', () => {
    expect(decideMintFailure(transient, { attempts: 8, lastDelivery: false }, 0)).toEqual({
      kind: 'fail',
      reason: 'gave up after 8 failed attempts: connection reset',
    });
    expect(decideMintFailure(transient, { attempts: 1, lastDelivery: true }, 0)).toEqual({
      kind: 'fail',
      reason: 'gave up after 1 failed attempts: connection reset',
    });
  });

  it('fails a permanent error at once, keeping the message', () => {
    expect(decideMintFailure({ kind: 'permanent', message: 'value too long' }, running, 0)).toEqual({
      kind: 'fail',
      reason: 'permanent error: value too long',
    });
  });

  it('hands a held, lost or stopping job back without failing it, even on the last delivery', () => {
    for (const delivery of [running, lastDelivery]) {
      expect(decideMintFailure({ kind: 'stopping' }, delivery, 0.5)).toEqual({ kind: 'retry', delayMs: 0 });
      expect(decideMintFailure({ kind: 'held', retryInMs: 1200 }, delivery, 0)).toEqual({ kind: 'retry', delayMs: 1200 });
      expect(decideMintFailure({ kind: 'held', retryInMs: 30_000 }, delivery, 1)).toEqual({ kind: 'retry', delayMs: 5250 });
      expect(decideMintFailure({ kind: 'lease_lost', leaseMs: 30_000 }, delivery, 0.5)).toEqual({ kind: 'retry', delayMs: 30_000 });
      expect(decideMintFailure({ kind: 'conflict' }, delivery, 0.5)).toEqual({ kind: 'retry', delayMs: 100 });
    }
  });

  it('drops the message of a job that cannot run', () => {
    expect(decideMintFailure({ kind: 'cannot_run' }, lastDelivery, 0)).toEqual({ kind: 'drop' });
  });
});
