import { create, getOption, type DescMessage } from '@bufbuild/protobuf';
import { field as fieldRules } from '@bufbuild/protovalidate/gen/buf/validate/validate_pb.js';
import { timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import {
  CreatePayloadPackRequestSchema,
  GetScanStatsRequestSchema,
  IdentityMode,
  IssuePassportAccessKeyRequestSchema,
  MoveSerialsRequestSchema,
  PackFormat,
  Paper,
  PassportAccessClass,
  PreflightMintBatchRequestSchema,
  ScanClientClass,
  ScanGroupBy,
  ScanStatsOrder,
  SerialAction,
  SubmitMintRequestRequestSchema,
  Symbology,
} from '@mint/contract';
import {
  InvalidInputError,
  type ClientClass,
  type IdentityMode as DomainIdentityMode,
  type PackFormat as DomainPackFormat,
  type Paper as DomainPaper,
} from '@mint/domain';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { contractServices, enumMappings, valuesOf } from './index.ts';

/** The field violations `read` throws. */
function violationsOf(read: () => unknown): unknown {
  try {
    read();
  } catch (error) {
    if (error instanceof InvalidInputError) return error.violations;
    throw error;
  }
  throw new Error('nothing was refused');
}

const brandId = '3b2f6c8e-1d4a-4f7e-9b0c-5a6d7e8f9a0b';

describe('valuesOf', () => {
  it('reads unset optional fields as null and set ones as they are', () => {
    const unset = valuesOf(create(PreflightMintBatchRequestSchema, { brandId, requestedQuantity: 5 }));
    expect(unset).toEqual({ brandId, productId: '', batchId: '', requestedQuantity: 5, idempotencyKey: null, identityMode: null });
    const key = 'a7c3e2b1-0f4d-4c8a-9e6b-1d2c3b4a5f60';
    expect(valuesOf(create(PreflightMintBatchRequestSchema, { idempotencyKey: key })).idempotencyKey).toBe(key);
    expectTypeOf(unset.idempotencyKey).toEqualTypeOf<string | null>();
    expectTypeOf(unset.requestedQuantity).toEqualTypeOf<number>();
  });

  it('reads a Timestamp as a Date, null when unset', () => {
    const at = new Date('2026-03-01T12:30:00.250Z');
    const values = valuesOf(
      create(IssuePassportAccessKeyRequestSchema, { brandId, accessClass: PassportAccessClass.AUTHORITY, expiresAt: timestampFromDate(at) }),
    );
    expect(values.expiresAt).toEqual(at);
    expect(values.accessClass).toBe('authority');
    expect(valuesOf(create(IssuePassportAccessKeyRequestSchema, { accessClass: PassportAccessClass.AUTHORITY })).expiresAt).toBeNull();
    expectTypeOf(values.expiresAt).toEqualTypeOf<Date | null>();
  });

  it('keeps a timestamp to the millisecond and maps unset to null', () => {
    const at = new Date('2026-11-21T05:07:55.123Z');
    const key = (expiresAt?: Timestamp) => valuesOf(create(IssuePassportAccessKeyRequestSchema, { accessClass: PassportAccessClass.AUTHORITY, expiresAt }));
    expect(key(timestampFromDate(at)).expiresAt?.toISOString()).toBe(at.toISOString());
    expect(key().expiresAt).toBeNull();
  });

  it("reads an enum as the domain's value, refusing UNSPECIFIED and unknown numbers by the field's name", () => {
    const submit = (identityMode: IdentityMode) => valuesOf(create(SubmitMintRequestRequestSchema, { identityMode, activationMode: 1 }));
    expect(submit(IdentityMode.SERIAL).identityMode).toBe('serial');
    expect(submit(IdentityMode.BATCH).activationMode).toBe('active_at_mint');
    expect(violationsOf(() => submit(IdentityMode.UNSPECIFIED))).toEqual([{ field: 'identity_mode', message: 'must be one of batch, serial' }]);
    expect(violationsOf(() => submit(7 as IdentityMode))).toEqual([{ field: 'identity_mode', message: 'must be one of batch, serial' }]);
    expectTypeOf(submit(IdentityMode.SERIAL).identityMode).toEqualTypeOf<DomainIdentityMode>();
    // An optional enum: unset is null, a set UNSPECIFIED refused.
    expect(valuesOf(create(PreflightMintBatchRequestSchema, {})).identityMode).toBeNull();
    expect(violationsOf(() => valuesOf(create(PreflightMintBatchRequestSchema, { identityMode: IdentityMode.UNSPECIFIED })))).toEqual([
      { field: 'identity_mode', message: 'must be one of batch, serial' },
    ]);
  });

  it('reads UNSPECIFIED as null where it means none, and keeps an enum without a mapping as its number', () => {
    const stats = valuesOf(create(GetScanStatsRequestSchema, { brandId, groupBy: ScanGroupBy.DAY, order: ScanStatsOrder.TOP }));
    expect([stats.groupBy, stats.clientClass, stats.order]).toEqual(['day', null, ScanStatsOrder.TOP]);
    expect(valuesOf(create(GetScanStatsRequestSchema, { groupBy: ScanGroupBy.DAY, clientClass: ScanClientClass.BOT })).clientClass).toBe('bot');
    expect(violationsOf(() => valuesOf(create(GetScanStatsRequestSchema, { groupBy: ScanGroupBy.DAY, clientClass: 9 as ScanClientClass })))).toEqual([
      { field: 'client_class', message: 'must be one of browser, app, bot, other' },
    ]);
    expectTypeOf(stats.clientClass).toEqualTypeOf<ClientClass | null>();
    expectTypeOf(stats.order).toEqualTypeOf<ScanStatsOrder>();
  });

  it('reads repeated fields and nested messages the same way, naming a nested field by its path', () => {
    const pack = (init: Parameters<typeof create<typeof CreatePayloadPackRequestSchema>>[1]) => valuesOf(create(CreatePayloadPackRequestSchema, init));
    const values = pack({
      formats: [PackFormat.CSV, PackFormat.PDF],
      symbology: Symbology.UNSPECIFIED,
      seqTo: 20,
      layout: { paper: Paper.LETTER, columns: 2 },
    });
    expect(values).toMatchObject({ formats: ['csv', 'pdf'], symbology: null, seqFrom: null, seqTo: 20 });
    expect(values.layout).toEqual({
      paper: 'letter',
      columns: 2,
      rows: null,
      labelWidthMm: null,
      labelHeightMm: null,
      marginTopMm: null,
      marginLeftMm: null,
      gapXMm: null,
      gapYMm: null,
      dpi: null,
    });
    expect(pack({ layout: {} }).layout?.paper).toBeNull();
    expect(pack({}).layout).toBeNull();
    expect(violationsOf(() => pack({ formats: [PackFormat.CSV, 99 as PackFormat] }))).toEqual([
      { field: 'formats', message: 'must be one of csv, jsonl, svg, pdf, zpl, epcis' },
    ]);
    expect(violationsOf(() => pack({ layout: { paper: 5 as Paper } }))).toEqual([{ field: 'layout.paper', message: 'must be one of a4, letter' }]);
    expectTypeOf(values.formats).toEqualTypeOf<DomainPackFormat[]>();
    expectTypeOf(values.layout).toMatchTypeOf<{ paper: DomainPaper | null; columns: number | null } | null>();
  });

  it("reads a oneof's chosen message the same way and leaves an unchosen oneof unset", () => {
    const move = valuesOf(
      create(MoveSerialsRequestSchema, { brandId, action: SerialAction.RETURN, target: { case: 'range', value: { mintBatchId: brandId, toSeq: 9 } } }),
    );
    expect(move.target).toEqual({ case: 'range', value: { mintBatchId: brandId, fromSeq: null, toSeq: 9 } });
    expect(move.reason).toBeNull();
    expect(valuesOf(create(MoveSerialsRequestSchema, { action: SerialAction.RETURN })).target).toEqual({ case: undefined });
    if (move.target.case === 'range') expectTypeOf(move.target.value.fromSeq).toEqualTypeOf<number | null>();
  });

  it('refuses a message the contract does not define', () => {
    expect(() => valuesOf({ $typeName: 'other.v1.Thing' })).toThrow('other.v1.Thing is not a message of the contract');
  });

  it('reads UNSPECIFIED as none exactly where the contract accepts it, but for the access class the use case refuses', () => {
    const accepted: string[] = [];
    const seen = new Set<string>();
    const visit = (message: DescMessage) => {
      if (seen.has(message.typeName)) return;
      seen.add(message.typeName);
      for (const field of message.fields) {
        if (field.message !== undefined) visit(field.message);
        const mapping = field.enum === undefined ? undefined : enumMappings.get(field.enum.typeName);
        if (mapping === undefined) continue;
        const rules = getOption(field, fieldRules);
        const itemRules = rules.type.case === 'repeated' ? rules.type.value.items?.type : rules.type;
        const refused = rules.required || (itemRules?.case === 'enum' && itemRules.value.notIn.includes(0));
        if (!refused) accepted.push(`${message.typeName}.${field.name}${mapping.unspecifiedIsNone ? '' : ' (refused)'}`);
        else expect(mapping.unspecifiedIsNone, `${message.typeName}.${field.name}`).toBe(false);
      }
    };
    for (const service of contractServices) for (const method of service.methods) visit(method.input);
    expect(accepted.sort()).toEqual([
      'mint.v1.CreatePayloadPackRequest.symbology',
      'mint.v1.GetScanStatsRequest.client_class',
      'mint.v1.IssuePassportAccessKeyRequest.access_class (refused)',
      'mint.v1.LabelLayout.paper',
      'mint.v1.ListLinksRequest.level',
      'mint.v1.MoveSerialsRequest.reason',
      'mint.v1.ScanEventInput.client_class',
    ]);
  });
});
