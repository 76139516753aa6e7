import { assertValid, type FieldViolation } from './errors.ts';
import type { ActivationMode, IdentityMode } from './modes.ts';
import { identityModes, activationModes } from './modes.ts';

/** Largest quantity one request may mint (the platform limit). */
export const maxRequestedQuantity = 1_000_000;
/** Most lots one request may carry. */
export const maxLots = 100;
/** GS1 AI 10 (lot) values: 1-20 characters that need no escaping in a Digital Link path. */
const lotCodePattern = /^[A-Za-z0-9!'()*+,.:;=_-]{1,20}$/;
/** Lot codes GS1 allows that a URL path cannot carry: "." and ".." are dot-segments (RFC 3986, 5.2.4). */
const dotSegments: ReadonlySet<string> = new Set(['.', '..']);

/** A lot and the quantity it covers. */
export interface Lot {
  readonly lotCode: string;
  readonly qty: number;
}

/** A mint request as the use cases receive it, after transport decoding. */
export interface MintRequest {
  readonly brandId: string;
  readonly productId: string;
  readonly productBatchId: string | null;
  readonly requestedQuantity: number;
  readonly identityMode: IdentityMode;
  readonly activationMode: ActivationMode;
  readonly lots: readonly Lot[];
  readonly idempotencyKey: string | null;
  /** Reserved for future use; must be absent. */
  readonly serials?: unknown;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a textual uuid (any version). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && uuidPattern.test(value);
}

/** Violations of a requested quantity, named `field`. */
export function quantityViolations(quantity: number, field = 'requested_quantity'): FieldViolation[] {
  if (!Number.isInteger(quantity) || quantity <= 0 || quantity > maxRequestedQuantity) {
    return [{ field, message: `must be an integer greater than 0 and at most ${maxRequestedQuantity}` }];
  }
  return [];
}

/**
 * What is wrong with `code` as a lot code (AI 10), of a mint request's lot or of a resolver link,
 * or null: 1 to 20 characters that need no escaping in a Digital Link path, and not a dot-segment.
 */
export function lotCodeProblem(code: string): string | null {
  if (!lotCodePattern.test(code)) return "must be 1 to 20 characters of A-Z a-z 0-9 ! ' ( ) * + , . : ; = _ -";
  if (dotSegments.has(code)) return `must not be "${code}": URL parsers drop it from a Digital Link path (/10/${code}/...)`;
  return null;
}

/**
 * Violations of a lot list against the quantity it must cover: at most 100 lots, valid unique codes,
 * positive quantities, and a sum equal to the requested quantity.
 */
export function lotViolations(lots: readonly Lot[], requestedQuantity: number): FieldViolation[] {
  const violations: FieldViolation[] = [];
  if (lots.length > maxLots) violations.push({ field: 'lots', message: `must contain at most ${maxLots} lots, got ${lots.length}` });
  const seen = new Set<string>();
  let sum = 0;
  lots.forEach((lot, i) => {
    const problem = lotCodeProblem(lot.lotCode);
    if (problem !== null) {
      violations.push({ field: `lots[${i}].lot_code`, message: problem });
    } else if (seen.has(lot.lotCode)) {
      violations.push({ field: `lots[${i}].lot_code`, message: `duplicate lot code "${lot.lotCode}"` });
    }
    seen.add(lot.lotCode);
    if (!Number.isInteger(lot.qty) || lot.qty <= 0) violations.push({ field: `lots[${i}].qty`, message: 'must be an integer greater than 0' });
    else sum += lot.qty;
  });
  if (lots.length > 0 && violations.length === 0 && sum !== requestedQuantity) {
    violations.push({ field: 'lots', message: `quantities sum to ${sum}, must equal requested_quantity ${requestedQuantity}` });
  }
  return violations;
}

/**
 * Checks a mint request's own fields (the rules that need no database): uuids, quantity, modes,
 * lots only in batch mode, serials reserved. Throws one InvalidInputError listing every violation.
 */
export function validateMintRequest(request: MintRequest): void {
  const v: FieldViolation[] = [];
  if (!isUuid(request.brandId)) v.push({ field: 'brand_id', message: 'must be a uuid' });
  if (!isUuid(request.productId)) v.push({ field: 'product_id', message: 'must be a uuid' });
  if (request.productBatchId !== null && !isUuid(request.productBatchId)) v.push({ field: 'product_batch_id', message: 'must be a uuid' });
  if (request.idempotencyKey !== null && !isUuid(request.idempotencyKey)) v.push({ field: 'idempotency_key', message: 'must be a uuid' });
  v.push(...quantityViolations(request.requestedQuantity));
  if (!identityModes.includes(request.identityMode)) v.push({ field: 'identity_mode', message: 'must be batch or serial' });
  if (!activationModes.includes(request.activationMode)) v.push({ field: 'activation_mode', message: 'must be active_at_mint or first_scan' });
  if (request.serials !== undefined && request.serials !== null) v.push({ field: 'serials', message: 'is reserved for future use and must be unset' });
  if (request.identityMode === 'serial' && request.lots.length > 0) {
    v.push({ field: 'lots', message: 'must not be provided in serial mode' });
  } else if (v.length === 0) {
    v.push(...lotViolations(request.lots, request.requestedQuantity));
  }
  assertValid(v);
}
