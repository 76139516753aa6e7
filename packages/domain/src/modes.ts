/** How a request identifies what it mints: `serial` (one token per unit) or `batch` (lots, or product-only). */
export type IdentityMode = 'batch' | 'serial';
/** All identity modes. */
export const identityModes: readonly IdentityMode[] = ['batch', 'serial'];

/**
 * When minted units become live. `first_scan` is the legacy wire value for manual activation:
 * the units stay inactive until the brand activates them.
 */
export type ActivationMode = 'active_at_mint' | 'first_scan';
/** All activation modes. */
export const activationModes: readonly ActivationMode[] = ['active_at_mint', 'first_scan'];

/** Status of one unit: `inactive` until activated (first_scan), `active` when live. */
export type UnitStatus = 'inactive' | 'active';
/** Every unit status. */
export const unitStatuses: readonly UnitStatus[] = ['inactive', 'active'];

/** The status a freshly minted unit gets under an activation mode. */
export function initialUnitStatus(mode: ActivationMode): UnitStatus {
  return mode === 'active_at_mint' ? 'active' : 'inactive';
}
