/**
 * Containers (cases, pallets, ...) identified by an SSCC, and the rules of packing them: what an
 * SSCC is, which containers and units may be packed where, how deep containers may nest, and the
 * CBV 2.0 vocabulary of their events. Pure: no clock, no I/O.
 *
 * The GS1 company prefix an SSCC carries is brand configuration (`gs1_company_prefix`), never
 * derived from the brand's GTINs: a GTIN holds a company prefix followed by an item reference, but
 * the prefix's length (4 to 12 digits) is not written in the GTIN, only in GS1's registry, so any
 * split of a GTIN would be a guess; and a brand may sell GTINs licensed under another company's
 * prefix. A brand without a prefix mints no containers.
 */
import type { FieldViolation } from './errors.ts';
import { IllegalStateError } from './errors.ts';
import type { DecommissionReason, SerialState } from './serial-state.ts';

/** Digits of an SSCC (GS1 AI 00). */
export const ssccLength = 18;

/** The GS1 mod-10 check digit of a string of digits (weights 3 and 1 from the right, as for GTINs and SSCCs). */
export function gs1CheckDigit(digits: string): number {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) sum += Number(digits[digits.length - 1 - i]) * (i % 2 === 0 ? 3 : 1);
  return (10 - (sum % 10)) % 10;
}

/** True when `sscc` is 18 digits whose last is the mod-10 check digit of the first 17. */
export function isSscc(sscc: string): boolean {
  return /^\d{18}$/.test(sscc) && gs1CheckDigit(sscc.slice(0, 17)) === Number(sscc[17]);
}

/** Violations of an SSCC field. */
export function ssccViolations(sscc: string, field: string): FieldViolation[] {
  return isSscc(sscc) ? [] : [{ field, message: 'must be an SSCC: 18 digits with a valid GS1 check digit' }];
}

/** Violations of a GS1 company prefix: 4 to 12 digits (GS1 General Specifications, 1.4.4). */
export function companyPrefixViolations(prefix: string, field = 'gs1_company_prefix'): FieldViolation[] {
  return /^\d{4,12}$/.test(prefix) ? [] : [{ field, message: 'must be a GS1 company prefix: 4 to 12 digits' }];
}

/**
 * How many serial references an SSCC under `prefix` can hold: the digits left between the
 * extension digit and the check digit (16 minus the prefix's length) as a count.
 */
export function serialReferenceCapacity(prefix: string): number {
  return 10 ** (16 - prefix.length);
}

/**
 * The SSCC of serial reference `serialRef` under `prefix` with `extensionDigit`: the extension
 * digit, the prefix, the reference left-padded with zeros to fill 16 digits, then the check digit.
 * Throws on a reference beyond the prefix's capacity (the caller checks it first).
 */
export function ssccOf(extensionDigit: number, prefix: string, serialRef: number): string {
  if (!Number.isInteger(extensionDigit) || extensionDigit < 0 || extensionDigit > 9) throw new Error('the extension digit is 0 to 9');
  if (!Number.isInteger(serialRef) || serialRef < 0 || serialRef >= serialReferenceCapacity(prefix))
    throw new Error(`serial reference ${serialRef} does not fit under prefix ${prefix}`);
  const body = `${extensionDigit}${prefix}${String(serialRef).padStart(16 - prefix.length, '0')}`;
  return `${body}${gs1CheckDigit(body)}`;
}

/** The GS1 Digital Link URI of a container at a brand's resolver base: `{base}/00/{sscc}` (its EPC in events). */
export function containerUri(resolverBaseUrl: string, sscc: string): string {
  return `${resolverBaseUrl.replace(/\/+$/, '')}/00/${sscc}`;
}

/** The SSCC of a GS1 Digital Link URI naming a container (`…/00/{sscc}`), or null. */
export function ssccOfUri(uri: string): string | null {
  const m = /\/00\/(\d{18})(?:[/?#]|$)/.exec(uri);
  return m !== null && isSscc(m[1]!) ? m[1]! : null;
}

/** A container level's name: case, pallet, tote, ... (lower-case letters, digits and underscores). */
export function containerLevelViolations(level: string, field = 'level'): FieldViolation[] {
  return /^[a-z][a-z0-9_]{0,31}$/.test(level)
    ? []
    : [{ field, message: 'must be 1 to 32 lower-case letters, digits or underscores, starting with a letter (case, pallet)' }];
}

/** Default of the brand's `max_depth`: units in cases in pallets in one more level. */
export const defaultContainerMaxDepth = 3;
/** Largest `max_depth` a brand may set. */
export const maxContainerMaxDepth = 8;

/** State of a container. */
export type ContainerState =
  /** Minted and in circulation (its commissioning event is written at mint); left by decommission. */
  | 'commissioned'
  /** Taken out of circulation with a reason, with everything inside it; left by reactivate when the reason allows it. */
  | 'decommissioned';

/** Every container state. */
export const containerStates: readonly ContainerState[] = ['commissioned', 'decommissioned'];

/** The container state a serial move leaves a container of its tree in; null when the move leaves containers as they are. */
export function containerStateAfter(
  action: string,
  from: ContainerState,
  fromReason: DecommissionReason | null,
  reactivatable: readonly DecommissionReason[],
): ContainerState | null {
  if (action === 'decommission' && from === 'commissioned') return 'decommissioned';
  if (action === 'reactivate' && from === 'decommissioned' && fromReason !== null && reactivatable.includes(fromReason)) return 'commissioned';
  return null;
}

/** Why a unit or container cannot be packed. */
export type PackRefusal =
  /** No unit or container of the brand has that serial or SSCC. */
  | 'unknown'
  /** The unit is not commissioned (the report names its state): only items in circulation are aggregated. */
  | 'not_commissioned'
  /** It is in a container already; unpack it first. */
  | 'already_packed'
  /** The container is decommissioned. */
  | 'decommissioned'
  /** Packing it would put a container inside itself. */
  | 'cycle'
  /** Packing it would nest containers deeper than the brand's max_depth. */
  | 'too_deep';

/** Whether a unit in `state` may be packed; otherwise the refusal. */
export function unitPackRefusal(state: SerialState, batchVoided: boolean, packedIn: string | null): PackRefusal | null {
  if (state !== 'commissioned' || batchVoided) return 'not_commissioned';
  if (packedIn !== null) return 'already_packed';
  return null;
}

/**
 * Whether a child container may go into `parent`: not decommissioned, not inside a container
 * already, not the parent or one of its ancestors, and the nesting it makes (the parent's
 * ancestors, the parent, the child and the child's own levels below it) at most `maxDepth`.
 */
export function containerPackRefusal(
  child: {
    readonly id: string;
    readonly state: ContainerState;
    readonly parentId: string | null;
    /** Container levels inside it, itself included (1 for a case holding only units). */
    readonly height: number;
  },
  parent: {
    readonly id: string;
    /** Ids of the containers the parent is inside, nearest first. */
    readonly ancestors: readonly string[];
  },
  maxDepth: number,
): PackRefusal | null {
  if (child.state !== 'commissioned') return 'decommissioned';
  if (child.id === parent.id || parent.ancestors.includes(child.id)) return 'cycle';
  if (child.parentId !== null) return 'already_packed';
  if (parent.ancestors.length + 1 + child.height > maxDepth) return 'too_deep';
  return null;
}

/** The parent of a pack must be in circulation: IllegalStateError naming its state otherwise. */
export function checkPackParent(sscc: string, state: ContainerState): void {
  if (state !== 'commissioned') throw new IllegalStateError(`cannot pack into container ${sscc}, which is ${state}`);
}

/** CBV 2.0 vocabulary of an aggregation: packing adds children (ADD, in_progress), unpacking removes them (DELETE). */
export function aggregationVocabulary(op: 'pack' | 'unpack'): { readonly action: 'ADD' | 'DELETE'; readonly bizStep: string; readonly disposition: string } {
  return op === 'pack'
    ? { action: 'ADD', bizStep: 'packing', disposition: 'in_progress' }
    : { action: 'DELETE', bizStep: 'unpacking', disposition: 'in_progress' };
}
