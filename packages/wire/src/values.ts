// The contract's messages and fields in the use cases' terms: the mint request, label layouts,
// timestamps, and optional fields as null and back.

import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { LabelLayout as WireLabelLayout, SubmitMintRequestRequest } from '@mint/contract';
import type { LabelLayout, MintRequest } from '@mint/domain';
import { activationMode, identityMode, paper } from './enums.ts';

/** A mint request of SubmitMintRequest (and of the /v1 routes that submit one) as the use cases take it. */
export function mintRequestOf(req: SubmitMintRequestRequest): MintRequest {
  return {
    brandId: req.brandId,
    productId: req.productId,
    productBatchId: orNull(req.productBatchId),
    requestedQuantity: req.requestedQuantity,
    identityMode: identityMode.toDomain(req.identityMode, 'identity_mode'),
    activationMode: activationMode.toDomain(req.activationMode, 'activation_mode'),
    lots: req.lots.map((lot) => ({ lotCode: lot.lotCode, qty: lot.qty })),
    idempotencyKey: orNull(req.idempotencyKey),
    ...(req.serials === undefined ? {} : { serials: req.serials }),
  };
}

/** The layout fields a request set (unset ones take the domain's defaults); null when none was given. */
export function layoutFromWire(layout: WireLabelLayout | undefined): Partial<Record<keyof LabelLayout, unknown>> | null {
  if (layout === undefined) return null;
  const { $typeName: _type, $unknown: _unknown, paper: wirePaper, ...numbers } = layout;
  return { ...numbers, ...(wirePaper === 0 ? {} : { paper: paper.toDomain(wirePaper, 'layout.paper') }) };
}

/** A wire timestamp of a Date. */
export function toTimestamp(date: Date): Timestamp {
  return timestampFromDate(date);
}

/** The Date of an optional wire timestamp, or null when unset. */
export function dateOrNull(timestamp: Timestamp | undefined): Date | null {
  return timestamp === undefined ? null : timestampDate(timestamp);
}

/** An optional wire field as the use cases want it: null when unset. */
export function orNull<T>(value: T | undefined): T | null {
  return value === undefined ? null : value;
}

/** A nullable use-case value as an optional wire field: undefined (unset) when null. */
export function orUnset<T>(value: T | null | undefined): T | undefined {
  return value === null ? undefined : value;
}
