// Only the explicit allow-list answers without credentials: every RPC path of every service the
// contract exports (found, not listed, so a new service is covered) and every /v1 endpoint of the
// spec is called anonymously against the real server. What may answer is written here, not read
// from the code under test.

import type { DescMethod, DescService } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import * as contract from '@mint/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { isPublicPath, publicRpcServices } from '../src/auth/public-paths.ts';
import { Health } from '@mint/http';
import { startTestApi, type TestApi } from './support.ts';

let app: UseCaseBundle;
let api: TestApi;

/** Every service of the contract, and the gRPC health protocol. */
const services: readonly DescService[] = [
  ...(Object.values(contract) as unknown[]).filter(
    (value): value is DescService => typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'service',
  ),
  Health,
];
/** Every path the server may serve: RPCs from the descriptors, the spec's /v1 endpoints, health. */
const rpcMethods: readonly DescMethod[] = services.flatMap((s) => s.methods);
/** The services anyone may call: the health protocol only. */
const anonymousServices = new Set(['grpc.health.v1.Health']);
/** The plain paths below that answer anyone with a success. */
const anonymousPaths = new Set(['/healthz', '/readyz', '/.well-known/gs1resolver', '/console/']);
const httpPaths: readonly (readonly [method: string, path: string])[] = [
  ['POST', '/v1/mint/jobs'],
  ['POST', '/v1/imports/products'],
  ['GET', '/v1/products'],
  ['GET', '/healthz'],
  ['GET', '/readyz'],
  ['GET', '/.well-known/gs1resolver'],
  ['GET', '/console/'],
];

beforeAll(async () => {
  app = await setupUseCases();
  api = await startTestApi(app);
});

afterAll(async () => {
  await api?.close();
  await app?.close();
});

describe('anonymous callers', () => {
  it('reaches every service of the contract, and the allow-list names only the health protocol', () => {
    expect(services.map((s) => s.typeName).sort()).toEqual(
      expect.arrayContaining(['mint.v1.AccountService', 'mint.v1.CatalogService', 'mint.v1.MintService', 'mint.v1.ResolverService', 'mint.v1.WebhookService']),
    );
    expect([...publicRpcServices]).toEqual([...anonymousServices]);
  });

  it.each(rpcMethods.map((m) => [`/${m.parent.typeName}/${m.name}`, m] as const))(
    '%s answers only when the allow-list says it is public',
    async (path, method) => {
      const client = createClient(method.parent, createConnectTransport({ baseUrl: api.baseUrl, httpVersion: '1.1' })) as unknown as Record<
        string,
        (req: unknown) => unknown
      >;
      let code: Code | 'ok' = 'ok';
      try {
        const result = client[method.localName]!({});
        if (method.methodKind === 'server_streaming') for await (const _ of result as AsyncIterable<unknown>) break;
        else await result;
      } catch (error) {
        code = ConnectError.from(error).code;
      }
      if (anonymousServices.has(method.parent.typeName)) expect(code).not.toBe(Code.Unauthenticated);
      else expect(code).toBe(Code.Unauthenticated);
      expect(isPublicPath(path)).toBe(anonymousServices.has(method.parent.typeName));
    },
  );

  it.each(httpPaths)('%s %s gets a success only when public', async (method, path) => {
    const res = await fetch(`${api.baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-workspace-id': '00000000-0000-4000-8000-000000000000' },
      ...(method === 'POST' ? { body: '{}' } : {}),
    });
    if (anonymousPaths.has(path)) expect(res.status).toBe(200);
    else expect(res.status >= 200 && res.status < 300, `${method} ${path} answered ${res.status} without credentials`).toBe(false);
    expect(isPublicPath(path)).toBe(anonymousPaths.has(path));
  });
});
