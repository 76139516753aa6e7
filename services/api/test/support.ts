// Starts the real API (startApi on a fresh database's use-case context) for a test file, with
// its log lines captured, and builds clients for each protocol it serves.

import { Writable } from 'node:stream';
import { fromBinary, toBinary, type DescMethodUnary, type DescMessage, type MessageInitShape, type MessageShape, create } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { createLogger } from '@mint/runtime';
import type { Readiness } from '@mint/runtime';
import { startApi, type RunningApi, type StartApiOptions } from '../src/start.ts';
import type { UseCaseBundle } from '../../../test/support/usecases.ts';

/** A running API and the JSON log lines it wrote. */
export interface TestApi extends RunningApi {
  readonly baseUrl: string;
  /** Parsed log lines, in order. */
  readonly logs: Record<string, unknown>[];
  /** The raw log text (to assert what never appears in it). */
  rawLogs(): string;
}

/** Starts the API on port 0 of 127.0.0.1 over `app.ctx` (or `options.ctx`); readiness defaults to a database ping. */
export async function startTestApi(
  app: UseCaseBundle,
  options: { readiness?: () => Promise<Readiness>; shutdownTimeoutMs?: number } & Partial<Pick<StartApiOptions, 'ctx' | 'httpRoutes' | 'setMintBatchStatusEnabled'>> = {},
): Promise<TestApi> {
  const raw: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString();
      raw.push(text);
      for (const line of text.split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ logLevel: 'info' }, { service: 'api-test' }, destination);
  const readiness =
    options.readiness ??
    (async () => {
      await app.db.em.fork().execute('select 1');
      return { ok: true, checks: { database: 'ok' } };
    });
  const api = await startApi({
    ctx: options.ctx ?? app.ctx,
    config: { port: 0, host: '127.0.0.1', shutdownTimeoutMs: options.shutdownTimeoutMs ?? 5_000 },
    logger,
    readiness,
    ...(options.httpRoutes === undefined ? {} : { httpRoutes: options.httpRoutes }),
    ...(options.setMintBatchStatusEnabled === undefined ? {} : { setMintBatchStatusEnabled: options.setMintBatchStatusEnabled }),
  });
  return { ...api, baseUrl: `http://127.0.0.1:${api.port}`, logs, rawLogs: () => raw.join('') };
}

/** A grpc-js client for one unary method, serialising with protobuf-es (no proto-loader). */
export function grpcUnaryCall<I extends DescMessage, O extends DescMessage>(
  port: number,
  method: DescMethodUnary<I, O>,
  request: MessageInitShape<I>,
  metadata: Record<string, string> = {},
): Promise<{ response: MessageShape<O> } | { error: grpc.ServiceError }> {
  const Client = grpc.makeGenericClientConstructor(
    {
      call: {
        path: `/${method.parent.typeName}/${method.name}`,
        requestStream: false,
        responseStream: false,
        requestSerialize: (value: MessageShape<I>) => Buffer.from(toBinary(method.input, value)),
        requestDeserialize: (bytes: Buffer) => fromBinary(method.input, bytes),
        responseSerialize: (value: MessageShape<O>) => Buffer.from(toBinary(method.output, value)),
        responseDeserialize: (bytes: Buffer) => fromBinary(method.output, bytes),
      },
    },
    method.parent.name,
  );
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  for (const [key, value] of Object.entries(metadata)) md.set(key, value);
  return new Promise((resolve) => {
    (client as unknown as Record<string, Function>)['call']!.call(client, create(method.input, request), md, (error: grpc.ServiceError | null, response: MessageShape<O>) => {
      client.close();
      resolve(error === null ? { response } : { error });
    });
  });
}
