import { Writable } from 'node:stream';
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { MintService } from '@mint/contract';
import {
  ConflictError,
  DomainError,
  errorKinds,
  ForbiddenError,
  IllegalStateError,
  InvalidInputError,
  NotFoundError,
  UnauthenticatedError,
  UnavailableError,
} from '@mint/domain';
import { errorCodes, errorInterceptor, loggingInterceptor, toConnectError, toHttpError } from '@mint/http';
import { createLogger } from '@mint/runtime';
import { describe, expect, it } from 'vitest';
import { callLog } from '../context.ts';

describe('toConnectError', () => {
  it('maps each domain error to its code and keeps its message', () => {
    const cases: [Error, Code, string][] = [
      [
        new InvalidInputError([
          { field: 'lots[0].qty', message: 'must be an integer greater than 0' },
          { field: 'sku', message: 'is empty' },
        ]),
        Code.InvalidArgument,
        'lots[0].qty: must be an integer greater than 0; sku: is empty',
      ],
      [new IllegalStateError('mint batch cannot move from applied to voided'), Code.FailedPrecondition, 'mint batch cannot move from applied to voided'],
      [new NotFoundError('mint batch b1 not found'), Code.NotFound, 'mint batch b1 not found'],
      [new ConflictError('mint job j1 moved concurrently'), Code.Aborted, 'mint job j1 moved concurrently'],
      [new UnauthenticatedError('access token expired'), Code.Unauthenticated, 'access token expired'],
      [new ForbiddenError('API access is not enabled'), Code.PermissionDenied, 'API access is not enabled'],
    ];
    for (const [error, code, message] of cases) {
      const mapped = toConnectError(error);
      expect([mapped.code, mapped.rawMessage]).toEqual([code, message]);
      expect(mapped.cause).toBe(error);
    }
  });

  it('answers every error kind with its row of the one table, on Connect and on plain HTTP alike', () => {
    expect(Object.keys(errorCodes).sort()).toEqual([...errorKinds].sort());
    for (const kind of errorKinds) {
      const error = new DomainError(kind, `a ${kind} error`);
      expect([toConnectError(error).code, toHttpError(error).status, toHttpError(error).code], kind).toEqual([
        errorCodes[kind].connect,
        errorCodes[kind].status,
        errorCodes[kind].code,
      ]);
    }
    // The two kinds that share HTTP 409 stay apart on Connect.
    expect(errorCodes.illegal_state.connect).not.toBe(errorCodes.conflict.connect);
  });

  it("answers a database that cannot be reached with Unavailable / 503 and Retry-After, the driver's words kept for the log", () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' });
    const wrapped = new Error('query failed', { cause: refused });
    const mapped = toConnectError(wrapped);
    expect([mapped.code, mapped.metadata.get('retry-after')]).toEqual([Code.Unavailable, '5']);
    expect(mapped.rawMessage).not.toContain('10.0.0.5');
    expect(mapped.cause).toBe(wrapped);
    expect(toHttpError(wrapped)).toMatchObject({ status: 503, code: 'unavailable' });
    expect(toHttpError(wrapped).message).not.toContain('10.0.0.5');
    expect(toConnectError(new UnavailableError('no earlier answer', 1)).metadata.get('retry-after')).toBe('1');
  });

  it('hides anything else behind Internal "internal error", keeping the original as cause', () => {
    const original = new Error('duplicate key value violates unique constraint "mint_units_pkey" at 10.0.0.5');
    const mapped = toConnectError(original);
    expect(mapped.code).toBe(Code.Internal);
    expect(mapped.rawMessage).toBe('internal error');
    expect(mapped.cause).toBe(original);
    expect(toConnectError('a string').rawMessage).toBe('internal error');
  });

  it('passes a ConnectError through unchanged', () => {
    const error = new ConnectError('no', Code.ResourceExhausted);
    expect(toConnectError(error)).toBe(error);
  });
});

describe('the error interceptor', () => {
  function client(impl: Parameters<typeof createRouterTransport>[0]) {
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const logger = createLogger({ logLevel: 'info' }, {}, destination);
    const transport = createRouterTransport(impl, { router: { interceptors: [loggingInterceptor(logger, callLog), errorInterceptor] } });
    return { mint: createClient(MintService, transport), lines };
  }

  it('turns an unexpected failure into Internal for the client and logs the original as err', async () => {
    const { mint, lines } = client((router) =>
      router.service(MintService, {
        getMintBatch() {
          throw new TypeError('cannot read properties of undefined (reading "rows")');
        },
      }),
    );
    const error = await mint.getMintBatch({}).catch((e: unknown) => ConnectError.from(e));
    expect(error).toMatchObject({ code: Code.Internal, rawMessage: 'internal error' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, rpc: 'mint.v1.MintService/GetMintBatch', code: 'internal', err: { type: 'TypeError' } });
    expect(JSON.stringify(lines[0])).toContain('reading \\"rows\\"');
  });

  it('maps errors thrown while a response streams', async () => {
    const { mint, lines } = client((router) =>
      router.service(MintService, {
        async *watchMintJob() {
          yield { mintJobId: 'j1' };
          throw new NotFoundError('mint job j1 not found');
        },
      }),
    );
    const seen: string[] = [];
    const error = await (async () => {
      for await (const update of mint.watchMintJob({})) seen.push(update.mintJobId);
    })().catch((e: unknown) => ConnectError.from(e));
    expect(seen).toEqual(['j1']);
    expect(error).toMatchObject({ code: Code.NotFound, rawMessage: 'mint job j1 not found' });
    expect(lines).toMatchObject([{ level: 30, rpc: 'mint.v1.MintService/WatchMintJob', code: 'not_found' }]);
  });
});
