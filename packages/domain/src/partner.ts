/**
 * Partner allocation (OPEN-SCS request/return): a brand grants a packaging line or contract
 * manufacturer an API key restricted to one product or one mint batch, with a quota of serials.
 * With it the partner requests serials (they are allocated to it), reports encoded, commissioned
 * and scrapped units of its allocation and returns the unused ones. Pure: no clock, no I/O.
 */
import type { FieldViolation } from './errors.ts';
import type { EpcisVocabulary, SerialAction } from './serial-state.ts';

/** Most serials one allocation request may ask for (its response lists them all). */
export const maxAllocationQuantity = 10_000;
/** Largest quota of one partner key. */
export const maxPartnerQuota = 100_000_000;
/** Longest partner or key name. */
export const maxPartnerNameLength = 200;

/** What a partner key may do to the serials of its allocation; decommissioning and reactivation stay the brand's. */
export const partnerActions: readonly SerialAction[] = ['encode', 'commission', 'scrap', 'return'];

/** True when a partner key may ask for `action`. */
export function isPartnerAction(action: SerialAction): boolean {
  return partnerActions.includes(action);
}

/** The scopes a partner key carries: the operations marked for partners need no more (the key is refused every other operation). */
export const partnerKeyScopes = ['mint:write', 'mint:read'] as const;

/** What a partner key's grant restricts it to: exactly one of a product or a mint batch. */
export interface PartnerRestriction {
  readonly productId: string | null;
  readonly mintBatchId: string | null;
}

/** The field violations of a grant's restriction and quota (empty when valid). */
export function partnerGrantViolations(g: PartnerRestriction & { readonly quota: number; readonly name: string }): FieldViolation[] {
  const v: FieldViolation[] = [];
  if ((g.productId === null) === (g.mintBatchId === null)) v.push({ field: 'restriction', message: 'exactly one of product_id or mint_batch_id is required' });
  if (!Number.isInteger(g.quota) || g.quota < 1 || g.quota > maxPartnerQuota)
    v.push({ field: 'quota', message: `must be a whole number from 1 to ${maxPartnerQuota}` });
  if (g.name.trim().length === 0 || g.name.length > maxPartnerNameLength) v.push({ field: 'name', message: `must be 1 to ${maxPartnerNameLength} characters` });
  return v;
}

/**
 * Why a request for `quantity` serials exceeds the grant's quota, or null when it fits. Quota
 * counts every serial ever allocated under the key: a returned serial does not give it back.
 */
export function quotaRefusal(grant: { readonly quota: number; readonly allocated: number }, quantity: number): string | null {
  const left = grant.quota - grant.allocated;
  if (quantity <= left) return null;
  return `quantity ${quantity} exceeds the key's remaining quota of ${left} (quota ${grant.quota}, ${grant.allocated} allocated)`;
}

/**
 * The CBV 2.0 vocabulary of an allocation's ObjectEvent: business step `reserving` ("a set of
 * identifiers provisioned for use by another party") with disposition `reserved`; action ADD,
 * since the serials enter the partner's use with it. A return of unused serials is the move's own
 * event (DELETE, decommissioning, returned).
 */
export const allocationVocabulary: EpcisVocabulary = { action: 'ADD', bizStep: 'reserving', disposition: 'reserved' };
