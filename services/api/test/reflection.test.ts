// gRPC server reflection on the API's own port: `buf curl` lists the services and calls
// GetMintKpis with no schema given, a grpc-js client and a Connect client speak
// ServerReflectionInfo (v1 and v1alpha), and callers without credentials are refused unless
// REFLECTION_ALLOW_ANONYMOUS is set.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import * as v1 from '../../../packages/http/src/grpc/gen/grpc/reflection/v1/reflection_pb.js';
import * as v1alpha from '../../../packages/http/src/grpc/gen/grpc/reflection/v1alpha/reflection_pb.js';
import { startTestApi, type TestApi } from './support.ts';

const run = promisify(execFile);

let app: UseCaseBundle;
let api: TestApi;
let openApi: TestApi;
let brand: SeededBrand;

beforeAll(async () => {
  app = await setupUseCases();
  brand = await app.seedBrand();
  api = await startTestApi(app);
  openApi = await startTestApi(app, { config: { reflectionAllowAnonymous: true } });
});
afterAll(async () => {
  await Promise.all([api?.close(), openApi?.close()]);
  await app?.close();
});

/** Runs `buf curl` (the devDependency) over gRPC with HTTP/2 prior knowledge; resolves with its output or its failure. */
async function bufCurl(args: string[]): Promise<{ ok: true; stdout: string } | { ok: false; stderr: string }> {
  try {
    const { stdout } = await run('npx', ['buf', 'curl', '--protocol', 'grpc', '--http2-prior-knowledge', ...args], { timeout: 60_000 });
    return { ok: true, stdout };
  } catch (error) {
    return { ok: false, stderr: String((error as { stderr?: string }).stderr ?? error) };
  }
}

describe('buf curl', () => {
  it('lists the services with a bearer token', async () => {
    const out = await bufCurl(['--reflect-header', `Authorization: Bearer ${brand.token}`, '--list-services', api.baseUrl]);
    expect(out.ok).toBe(true);
    const services = (out as { stdout: string }).stdout.trim().split('\n');
    expect(services).toEqual(
      expect.arrayContaining([
        'mint.v1.MintService',
        'mint.v1.CatalogService',
        'mint.v1.ResolverService',
        'mint.v1.WebhookService',
        'mint.v1.ScanService',
        'mint.v1.PassportService',
        'mint.v1.WorkspaceService',
        'grpc.health.v1.Health',
        'grpc.reflection.v1.ServerReflection',
        'grpc.reflection.v1alpha.ServerReflection',
      ]),
    );
  });

  it('calls GetMintKpis with no schema given, the request in JSON', async () => {
    const out = await bufCurl([
      '-H',
      `Authorization: Bearer ${brand.token}`,
      '--reflect-header',
      '*',
      '-d',
      JSON.stringify({ brand_id: brand.brandId }),
      `${api.baseUrl}/mint.v1.MintService/GetMintKpis`,
    ]);
    expect(out.ok).toBe(true);
    const kpis = JSON.parse((out as { stdout: string }).stdout) as Record<string, unknown>;
    expect(kpis).toHaveProperty('ok', true);
  });

  it('is refused without credentials by default, and allowed when REFLECTION_ALLOW_ANONYMOUS is set', async () => {
    const refused = await bufCurl(['--list-services', api.baseUrl]);
    expect(refused.ok).toBe(false);
    // buf words gRPC's UNAUTHENTICATED as "you are not authenticated".
    expect((refused as { stderr: string }).stderr).toMatch(/unauthenticated|not authenticated/i);
    const open = await bufCurl(['--list-services', openApi.baseUrl]);
    expect(open.ok).toBe(true);
    expect((open as { stdout: string }).stdout).toContain('mint.v1.MintService');
  });

  it('still protects the services themselves when reflection is anonymous', async () => {
    const out = await bufCurl(['-d', JSON.stringify({ brand_id: brand.brandId }), `${openApi.baseUrl}/mint.v1.MintService/GetMintKpis`]);
    expect(out.ok).toBe(false);
    expect((out as { stderr: string }).stderr).toMatch(/unauthenticated|not authenticated/i);
  });
});

/** One ServerReflectionInfo exchange over grpc-js (a bidirectional stream), protobuf-es serialising. */
function grpcReflect<S extends typeof v1 | typeof v1alpha>(
  version: S,
  port: number,
  requests: Parameters<typeof create<S['ServerReflectionRequestSchema']>>[1][],
  metadata: Record<string, string>,
) {
  const Client = grpc.makeGenericClientConstructor(
    {
      info: {
        path: `/${version.ServerReflection.typeName}/ServerReflectionInfo`,
        requestStream: true,
        responseStream: true,
        requestSerialize: (m: v1.ServerReflectionRequest) => Buffer.from(toBinary(version.ServerReflectionRequestSchema, m as never)),
        requestDeserialize: (b: Buffer) => fromBinary(version.ServerReflectionRequestSchema, b),
        responseSerialize: (m: v1.ServerReflectionResponse) => Buffer.from(toBinary(version.ServerReflectionResponseSchema, m as never)),
        responseDeserialize: (b: Buffer) => fromBinary(version.ServerReflectionResponseSchema, b),
      },
    },
    'ServerReflection',
  );
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  for (const [key, value] of Object.entries(metadata)) md.set(key, value);
  return new Promise<{ responses: v1.ServerReflectionResponse[] } | { error: grpc.ServiceError }>((resolve) => {
    const responses: v1.ServerReflectionResponse[] = [];
    const call = (client as unknown as { info(md: grpc.Metadata): grpc.ClientDuplexStream<unknown, v1.ServerReflectionResponse> }).info(md);
    call.on('data', (r) => responses.push(r));
    call.on('error', (error: grpc.ServiceError) => {
      client.close();
      resolve({ error });
    });
    call.on('end', () => {
      client.close();
      resolve({ responses });
    });
    for (const request of requests) call.write(create(version.ServerReflectionRequestSchema, request as never));
    call.end();
  });
}

describe('grpc-js reflection client', () => {
  for (const version of [v1, v1alpha]) {
    it(`lists services and fetches the file of MintService with its imports (${version.ServerReflection.typeName})`, async () => {
      const out = await grpcReflect(
        version,
        api.port,
        [
          { messageRequest: { case: 'listServices', value: '' } },
          { messageRequest: { case: 'fileContainingSymbol', value: 'mint.v1.MintService.GetMintKpis' } },
          { messageRequest: { case: 'fileByFilename', value: 'google/protobuf/timestamp.proto' } },
          { messageRequest: { case: 'fileContainingSymbol', value: 'mint.v1.NoSuchService' } },
        ],
        { authorization: `Bearer ${brand.token}` },
      );
      expect(out).toHaveProperty('responses');
      const [list, file, timestamp, missing] = (out as { responses: v1.ServerReflectionResponse[] }).responses;
      expect(list!.messageResponse.case).toBe('listServicesResponse');
      expect((list!.messageResponse.value as v1.ListServiceResponse).service.map((s) => s.name)).toContain('mint.v1.MintService');
      const protos = (file!.messageResponse.value as v1.FileDescriptorResponse).fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b));
      expect(protos[0]!.name).toBe('mint/v1/mint_service.proto');
      expect(protos[0]!.service.find((s) => s.name === 'MintService')!.method.map((m) => m.name)).toContain('GetMintKpis');
      // Every import travels along, so a client can build the whole schema from one answer.
      const names = protos.map((p) => p.name);
      for (const dependency of protos.flatMap((p) => p.dependency)) expect(names).toContain(dependency);
      expect(fromBinary(FileDescriptorProtoSchema, (timestamp!.messageResponse.value as v1.FileDescriptorResponse).fileDescriptorProto[0]!).name).toBe(
        'google/protobuf/timestamp.proto',
      );
      expect(missing!.messageResponse).toMatchObject({ case: 'errorResponse', value: { errorCode: 5 } });
    });
  }

  it('is refused without credentials', async () => {
    const out = await grpcReflect(v1, api.port, [{ messageRequest: { case: 'listServices', value: '' } }], {});
    expect(out).toHaveProperty('error');
    expect((out as { error: grpc.ServiceError }).error.code).toBe(grpc.status.UNAUTHENTICATED);
  });
});

describe('Connect client', () => {
  it('speaks reflection v1 over the gRPC protocol of connect-node', async () => {
    const client = createClient(v1.ServerReflection, createGrpcTransport({ baseUrl: api.baseUrl }));
    async function* requests() {
      yield create(v1.ServerReflectionRequestSchema, { messageRequest: { case: 'listServices', value: '' } });
    }
    const names: string[] = [];
    for await (const response of client.serverReflectionInfo(requests(), { headers: { authorization: `Bearer ${brand.token}` } })) {
      if (response.messageResponse.case === 'listServicesResponse') names.push(...response.messageResponse.value.service.map((s) => s.name));
    }
    expect(names).toContain('mint.v1.CatalogService');
    const refused = await (async () => {
      try {
        for await (const _ of client.serverReflectionInfo(requests())) {
          /* drain */
        }
        return 'ok';
      } catch (error) {
        return ConnectError.from(error).code;
      }
    })();
    expect(refused).toBe(Code.Unauthenticated);
  });
});
