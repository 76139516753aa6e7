import { create, getOption, type DescField } from '@bufbuild/protobuf';
import { field as fieldRules } from '@bufbuild/protovalidate/gen/buf/validate/validate_pb.js';
import {
  GetContainerRequestSchema,
  MintContainersRequestSchema,
  PackContainerRequestSchema,
  ListMintBatchesRequestSchema,
  MintJobStatus,
  RecordScanEventsRequestSchema,
  SubmitMintRequestRequestSchema,
  SubmitMintRequestResponseSchema,
  type SubmitMintRequestRequest,
} from '@mint/contract';
import { maxIngestScans, maxLots, maxPageSize, maxRequestedQuantity } from '@mint/domain';
import { maxContentsPage, maxMintContainers, maxPackItems } from '@mint/usecases';
import { describe, expect, it } from 'vitest';
import { namedOperations } from '@mint/wire';
import { fromSpecJson, requestSchema, toSpecJson } from '@mint/wire';

const rules = (field: DescField | undefined) => getOption(field!, fieldRules).type;

describe('schemas derived from the descriptors', () => {
  it('requires the fields whose zero value the proto refuses, takes null for the others, and names the limits', () => {
    const schema = requestSchema(SubmitMintRequestRequestSchema, '_') as {
      required: string[];
      properties: Record<string, { type?: unknown; description?: string }>;
    };
    expect(schema.required).toEqual(['_brand_id', '_product_id', '_requested_quantity', '_identity_mode', '_activation_mode']);
    expect(schema.properties['_product_batch_id']!.type).toEqual(['string', 'null']);
    expect(schema.properties['_requested_quantity']!.description).toBe('1 to 1,000,000.');
    expect(schema.properties['_lots']!.description).toBe('At most 100 entries.');
  });

  it("reads a body into the request message (enum spellings, null as unset) and writes a response in the spec's shape", () => {
    const request = fromSpecJson<SubmitMintRequestRequest>(
      SubmitMintRequestRequestSchema,
      {
        _brand_id: 'b',
        _product_id: 'p',
        _requested_quantity: 2,
        _identity_mode: 'batch',
        _activation_mode: 'first_scan',
        _lots: [{ lot_code: 'L', qty: 2 }],
        _product_batch_id: null,
      },
      '_',
    );
    expect([request.identityMode, request.activationMode, request.productBatchId, request.lots[0]?.lotCode]).toEqual([1, 2, undefined, 'L']);
    const shape = { omit: [], flatten: '', refusal: ['blocking_reasons', 'product_id', 'product_batch_id'] };
    const ok = create(SubmitMintRequestResponseSchema, { ok: true, mintJobId: 'j', mintBatchId: 'm', status: MintJobStatus.QUEUED, productId: 'p' });
    expect(toSpecJson(SubmitMintRequestResponseSchema, ok, shape)).toEqual({
      ok: true,
      mint_job_id: 'j',
      mint_batch_id: 'm',
      status: 'QUEUED',
      is_duplicate: false,
    });
    const blocked = create(SubmitMintRequestResponseSchema, { ok: false, productId: 'p', blockingReasons: [{ code: 'C', message: 'm' }] });
    expect(toSpecJson(SubmitMintRequestResponseSchema, blocked, shape)).toEqual({
      ok: false,
      blocking_reasons: [{ code: 'C', message: 'm' }],
      product_id: 'p',
      product_batch_id: null,
    });
  });
});

describe('the named operations', () => {
  it("are the RPCs that declare (mint.v1.named_operation): the spec's family A, get_mint_job and record_scan_event", () => {
    expect(Object.keys(namedOperations).sort()).toEqual([
      'create_mint_batch_from_job',
      'create_payload_pack',
      'get_container',
      'get_mint_batch_by_id',
      'get_mint_batch_reconciliation',
      'get_mint_batch_reconciliation_document',
      'get_mint_job',
      'get_mint_kpis',
      'get_passport',
      'get_passport_version',
      'get_serial_move',
      'import_passports',
      'issue_passport_access_key',
      'list_mint_batches',
      'list_mint_events',
      'list_mint_units',
      'list_passport_access_keys',
      'list_passport_versions',
      'list_payload_packs',
      'mint_containers',
      'move_serials',
      'pack_container',
      'preflight_mint_batch',
      'process_mint_job_batch',
      'publish_passport',
      'record_scan_event',
      'revoke_passport_access_key',
      'submit_mint_request',
      'unpack_container',
      'update_passport_draft',
    ]);
    expect(namedOperations['get_mint_batch_by_id']!.method.name).toBe('GetMintBatch');
    expect(namedOperations['record_scan_event']!.maxBodyBytes).toBe(16 * 1024 * 1024);
  });
});

describe("the proto's limits and the domain's", () => {
  it('agree, so the contract (protovalidate, the derived descriptions) and the use cases refuse alike', () => {
    const quantity = rules(SubmitMintRequestRequestSchema.field['requestedQuantity']);
    expect(quantity.case === 'int32' && quantity.value.lessThan.case === 'lte' ? quantity.value.lessThan.value : undefined).toBe(maxRequestedQuantity);
    const lots = rules(SubmitMintRequestRequestSchema.field['lots']);
    expect(lots.case === 'repeated' ? Number(lots.value.maxItems) : undefined).toBe(maxLots);
    const limit = rules(ListMintBatchesRequestSchema.field['limit']);
    expect(limit.case === 'int32' && limit.value.lessThan.case === 'lte' ? limit.value.lessThan.value : undefined).toBe(maxPageSize);
    const scans = rules(RecordScanEventsRequestSchema.field['scans']);
    expect(scans.case === 'repeated' ? Number(scans.value.maxItems) : undefined).toBe(maxIngestScans);
    const count = rules(MintContainersRequestSchema.field['count']);
    expect(count.case === 'int32' && count.value.lessThan.case === 'lte' ? count.value.lessThan.value : undefined).toBe(maxMintContainers);
    const items = rules(PackContainerRequestSchema.field['serials']);
    expect(items.case === 'repeated' ? Number(items.value.maxItems) : undefined).toBe(maxPackItems);
    const contents = rules(GetContainerRequestSchema.field['limit']);
    expect(contents.case === 'int32' && contents.value.lessThan.case === 'lte' ? contents.value.lessThan.value : undefined).toBe(maxContentsPage);
  });
});
