// Tenant isolation, generated from the service descriptors: every RPC of every protected service
// is called with a second brand's credentials on the first brand's ids and must be denied, the
// same way whether the ids exist or not. A new RPC is covered without editing this file. The
// calls run in process through the server's interceptor chain (createRouterTransport).

import { randomUUID } from 'node:crypto';
import { create, type DescMessage, type DescMethod, type DescService, type Message } from '@bufbuild/protobuf';
import { reflect, type ReflectList } from '@bufbuild/protobuf/reflect';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { createValidator } from '@bufbuild/protovalidate';
import { Code, ConnectError, createClient, type Transport } from '@connectrpc/connect';
import {
  ActivationMode,
  CatalogService,
  IdentityMode,
  MintService,
  PassportService,
  ProductionBatchStatus,
  ResolverService,
  ScanService,
  WebhookService,
  WorkspaceService,
} from '@mint/contract';
import { apiKeyScopes } from '@mint/domain';
import { createApiKey, createWebhookEndpoint, drainWebhookFanout, listWebhookDeliveriesOf } from '@mint/usecases';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupUseCases, type SeededBrand, type UseCaseBundle } from '../../../test/support/usecases.ts';
import { expectLogsFreeOf, inProcessApi, type InProcessApi } from './support.ts';

const services: readonly DescService[] = [MintService, CatalogService, ResolverService, WebhookService, ScanService, PassportService, WorkspaceService];
const methods: readonly DescMethod[] = services.flatMap((s) => s.methods);

let app: UseCaseBundle;
let api: InProcessApi;
let transport: Transport;
let a: SeededBrand;
let b: SeededBrand;
let bKey: string;
/** Brand A's webhook signing secret. */
let hookSecret: string;
/** Brand A's real row ids by the request field that names them. */
let aIds: Record<string, string>;
/** A marker only brand A's rows carry. */
const aMarker = `A-SECRET-${randomUUID().slice(0, 8)}`;

type Outcome = { code: Code | 'ok'; message: string; body: string };

/** Calls any RPC generically (unary or server-streaming) and reports its outcome. */
async function call(method: DescMethod, message: Message, headers: Record<string, string>): Promise<Outcome> {
  const client = createClient(method.parent, transport) as unknown as Record<string, (req: unknown, options: unknown) => unknown>;
  try {
    const result = client[method.localName]!(message, { headers });
    if (method.methodKind === 'server_streaming') {
      const items: unknown[] = [];
      for await (const item of result as AsyncIterable<unknown>) {
        items.push(item);
        break;
      }
      return { code: 'ok', message: '', body: JSON.stringify(items) };
    }
    return { code: 'ok', message: '', body: JSON.stringify(await (result as Promise<unknown>)) };
  } catch (error) {
    const e = ConnectError.from(error);
    return { code: e.code, message: e.rawMessage, body: '' };
  }
}

/**
 * A request that passes validation: brand_id = `brandId`, every other id field = `ids[name]`
 * (a real row of brand A, or a random uuid), the first member of each oneof, 1 for numbers,
 * the first real value of enums, a short text for other required strings.
 */
function requestFor(method: DescMethod, brandId: string, ids: (name: string) => string): Message {
  return filled(method.input, brandId, ids);
}

/** A message of `schema` filled as {@link requestFor} says; a oneof's message member is filled the same way when that makes it valid. */
function filled(schema: DescMessage, brandId: string, ids: (name: string) => string): Message {
  const message = create(schema);
  const r = reflect(schema, message);
  const setOneofs = new Set<string>();
  for (const field of schema.fields) {
    if (field.oneof !== undefined) {
      if (setOneofs.has(field.oneof.name)) continue;
      setOneofs.add(field.oneof.name);
    }
    const optional = field.proto.proto3Optional === true;
    const isId = field.name === 'brand_id' || field.name.endsWith('_id');
    if (field.fieldKind === 'scalar' && field.scalar === 9 /* string */) {
      if (field.name === 'brand_id') r.set(field, brandId);
      else if (field.name === 'url') r.set(field, 'https://receiver.example/hooks');
      else if (field.name === 'level') r.set(field, 'case');
      else if (field.name === 'sscc') r.set(field, '106141410000000012');
      else if (isId && (!optional || field.name in aIds)) r.set(field, ids(field.name));
      else if (!optional) r.set(field, `X${field.name.length}`);
    } else if (field.fieldKind === 'scalar' && field.scalar === 12 /* bytes */) {
      r.set(field, new TextEncoder().encode('sku,name\nISO-1,Isolation\n'));
    } else if (field.fieldKind === 'scalar' && !optional && field.scalar !== 8 /* bool */) {
      r.set(field, 1);
    } else if (field.fieldKind === 'enum' && !optional) {
      r.set(field, field.enum.values.find((v) => v.number !== 0)!.number);
    } else if (field.fieldKind === 'list' && field.listKind === 'enum') {
      (r.get(field) as ReflectList).add(field.enum.values.find((v) => v.number !== 0)!.number);
    } else if (field.fieldKind === 'message' && field.oneof !== undefined) {
      const member = filled(field.message, brandId, ids);
      if (validator.validate(field.message, member).kind === 'valid') r.set(field, reflect(field.message, member));
      else setOneofs.delete(field.oneof.name); // a oneof member we cannot fill generically: try the next one
    } else if (field.fieldKind === 'message' && field.message.typeName === 'google.protobuf.Timestamp' && !optional) {
      // A range's end an hour after its start, whatever the clock reads between two requests' filling.
      r.set(field, reflect(field.message, timestampFromDate(new Date(Date.now() + (field.name === 'to' ? 3_600_000 : 0)))));
    } else if (field.fieldKind === 'list' && field.listKind === 'message' && validator.validate(field.message, create(field.message)).kind === 'valid') {
      // One element with every field unset, where that is a valid element (a batch must not be empty).
      (r.get(field) as ReflectList).add(reflect(field.message, create(field.message)));
    }
  }
  return message;
}

const validator = createValidator();

beforeAll(async () => {
  app = await setupUseCases();
  api = inProcessApi(app, { setMintBatchStatusEnabled: true });
  transport = api.transport;
  a = await app.seedBrand();
  b = await app.seedBrand();
  bKey = (await createApiKey(app.ctx, { brandId: b.brandId, name: 'b-all', scopes: [...apiKeyScopes] })).key;
  const asA = { headers: { authorization: `Bearer ${a.token}` } };
  const { mint, catalog } = api;
  const hook = await createWebhookEndpoint(
    app.ctx,
    { id: a.userId },
    { allowLoopback: false },
    {
      brandId: a.brandId,
      url: `https://receiver.example/${aMarker}`,
      eventTypes: [],
      description: aMarker,
    },
  );
  hookSecret = hook.secret;
  await catalog.upsertProduct({ brandId: a.brandId, sku: aMarker, name: aMarker, commercialStatus: 2, mintReadinessStatus: 2 }, asA);
  const production = await catalog.upsertProductionBatch(
    { brandId: a.brandId, productId: a.productId, code: aMarker, status: ProductionBatchStatus.READY, quantity: 100 },
    asA,
  );
  const submitted = await mint.submitMintRequest(
    { brandId: a.brandId, productId: a.productId, requestedQuantity: 2, identityMode: IdentityMode.SERIAL, activationMode: ActivationMode.ACTIVE_AT_MINT },
    asA,
  );
  await mint.processMintJobBatch({ brandId: a.brandId, jobId: submitted.mintJobId! }, asA);
  const units = await mint.listMintUnits({ brandId: a.brandId }, asA);
  const imported = await catalog.startProductImport({ brandId: a.brandId, csv: new TextEncoder().encode(`sku,name\n${aMarker}-2,${aMarker}\n`) }, asA).then(
    (res) => res.import?.id ?? randomUUID(),
    () => randomUUID(),
  );
  await drainWebhookFanout(app.ctx);
  aIds = {
    product_id: a.productId,
    product_batch_id: production.productionBatch!.id,
    batch_id: production.productionBatch!.id,
    mint_job_id: submitted.mintJobId!,
    job_id: submitted.mintJobId!,
    mint_batch_id: submitted.mintBatchId!,
    entity_id: submitted.mintBatchId!,
    unit_id: units.units[0]!.id,
    import_id: imported,
    endpoint_id: hook.endpoint.id,
    delivery_id: (await listWebhookDeliveriesOf(app.ctx, a.brandId, hook.endpoint.id, { limit: 1, cursor: null })).items[0]!.id,
  };
});

afterAll(async () => {
  await app?.close();
});

describe('tenant isolation over every RPC in the descriptors', () => {
  const aId = (name: string) => aIds[name] ?? a.productId;
  const randomId = () => randomUUID();

  it('builds a valid request for every RPC, so a denial below comes from authorization', () => {
    for (const method of methods) {
      const result = validator.validate(method.input, requestFor(method, randomUUID(), aId));
      expect(result.kind, `${method.parent.name}/${method.name}: ${result.kind === 'invalid' ? result.violations.map(String).join('; ') : ''}`).toBe('valid');
    }
  });

  it.each(methods.map((m) => [`${m.parent.name}/${m.name}`, m] as const))(
    "%s: brand B's token, key, or both on brand A's ids is PermissionDenied, same as on unknown ids",
    async (_name, method) => {
      const credentialSets = {
        token: { authorization: `Bearer ${b.token}` },
        key: { 'x-api-key': bKey },
        both: { authorization: `Bearer ${b.token}`, 'x-api-key': bKey },
      };
      for (const [kind, headers] of Object.entries(credentialSets)) {
        const real = await call(method, requestFor(method, a.brandId, aId), headers);
        const unknown = await call(method, requestFor(method, a.brandId, randomId), headers);
        expect({ kind, code: real.code }).toEqual({ kind, code: Code.PermissionDenied });
        expect(real.message).toBe(unknown.message);
      }
    },
  );

  it.each(methods.map((m) => [`${m.parent.name}/${m.name}`, m] as const))(
    "%s: under its own brand, B naming A's ids learns nothing beyond what unknown ids give",
    async (_name, method) => {
      const headers = { authorization: `Bearer ${b.token}` };
      const sent = new Set<string>();
      const real = await call(
        method,
        requestFor(method, b.brandId, (name) => {
          const id = aId(name);
          sent.add(id);
          return id;
        }),
        headers,
      );
      const unknown = await call(method, requestFor(method, b.brandId, randomId), headers);
      expect(real.code).toBe(unknown.code);
      const normalise = (text: string) => text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>');
      expect(normalise(real.message)).toBe(normalise(unknown.message));
      // Nothing of A comes back: no A-only text, and no id of A's rows beyond the ones the request echoes.
      expect(real.body).not.toContain(aMarker);
      for (const [field, id] of Object.entries(aIds)) if (!sent.has(id)) expect(real.body, field).not.toContain(id);
    },
  );

  it('no token, API key or webhook secret reaches a log line', () => {
    expectLogsFreeOf(api, [a.token, b.token, bKey, bKey.slice(16), hookSecret, hookSecret.slice(6)]);
  });
});
