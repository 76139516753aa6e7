import type { FieldViolation } from './errors.ts';

/** Commercial status of a product; only ACTIVE products can be minted. */
export type CommercialStatus = 'DRAFT' | 'ACTIVE' | 'SUSPENDED' | 'DISCONTINUED';
/** All commercial statuses. */
export const commercialStatuses: readonly CommercialStatus[] = ['DRAFT', 'ACTIVE', 'SUSPENDED', 'DISCONTINUED'];

/** Whether a product's passport data is complete enough to mint; only READY products can be minted. */
export type MintReadinessStatus = 'NOT_READY' | 'READY';
/** All mint readiness statuses. */
export const mintReadinessStatuses: readonly MintReadinessStatus[] = ['NOT_READY', 'READY'];

/** Status of a production batch (ERP linkage); only READY batches can be minted against. */
export type ProductionBatchStatus = 'PLANNED' | 'READY' | 'CLOSED';
/** All production batch statuses. */
export const productionBatchStatuses: readonly ProductionBatchStatus[] = ['PLANNED', 'READY', 'CLOSED'];

/**
 * The GTIN-14 form of a GTIN-8, -12, -13 or -14 (left-padded with zeros), or null when the digits
 * or the check digit are wrong.
 */
export function normalizeGtin(gtin: string): string | null {
  if (!/^(\d{8}|\d{12,14})$/.test(gtin)) return null;
  const gtin14 = gtin.padStart(14, '0');
  return gtinCheckDigit(gtin14.slice(0, 13)) === Number(gtin14[13]) ? gtin14 : null;
}

/** The GS1 mod-10 check digit of the first 13 digits of a GTIN-14. */
export function gtinCheckDigit(first13: string): number {
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += Number(first13[i]) * (i % 2 === 0 ? 3 : 1);
  return (10 - (sum % 10)) % 10;
}

/** Violations of a GTIN field (digits and check digit). */
export function gtinViolations(gtin: string | null, field = 'gtin'): FieldViolation[] {
  if (gtin === null) return [];
  return normalizeGtin(gtin) === null ? [{ field, message: 'must be a GTIN-8, -12, -13 or -14 with a valid check digit' }] : [];
}
