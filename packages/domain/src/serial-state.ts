/**
 * The life of a serial after minting, named after OPEN-SCS (OPC 30260) where it has a name, and
 * the only moves between its states. A move names the states it expects to leave; the database
 * applies it as a compare-and-set per unit, so a unit that moved meanwhile is refused, never
 * silently overwritten. Pure: no clock, no I/O.
 */
import { IllegalStateError } from './errors.ts';

/** State of one serial. */
export type SerialState =
  /** Minted, not yet printed (a `first_scan` unit after minting); left by encode, commission, scrap or return. */
  | 'issued'
  /** Printed on a label; left by commission or scrap. */
  | 'encoded'
  /** Applied and in circulation (the spec's "active"; an `active_at_mint` unit from minting); left by decommission. */
  | 'commissioned'
  /** Label destroyed before use, never in circulation; final. */
  | 'scrapped'
  /** Taken out of circulation with a reason; left only by reactivate, and only when the reason allows it. */
  | 'decommissioned'
  /** Unused and handed back; final (a returned serial is never issued again). */
  | 'returned';

/** Every serial state. */
export const serialStates: readonly SerialState[] = ['issued', 'encoded', 'commissioned', 'scrapped', 'decommissioned', 'returned'];

/** Why a commissioned serial left circulation. */
export type DecommissionReason = 'recalled' | 'destroyed' | 'stolen' | 'expired' | 'damaged' | 'sample' | 'consumed';

/** Every decommissioning reason. */
export const decommissionReasons: readonly DecommissionReason[] = ['recalled', 'destroyed', 'stolen', 'expired', 'damaged', 'sample', 'consumed'];

/**
 * Decommissioning reasons a public answer shows: what a scan of a unit or of a container (SSCC)
 * answers anyone, in JSON, linkset and page alike. Every reason but a theft: saying "stolen" to
 * whoever holds the item would warn a thief that the item is traced, and would tell a buyer nothing
 * they can act on; such an item is said to be out of circulation, and the brand learns of the scan
 * by its alert.
 */
export const publicDecommissionReasons: readonly DecommissionReason[] = ['recalled', 'destroyed', 'expired', 'damaged', 'sample', 'consumed'];

/** The part of a decommissioning reason a public answer shows ({@link publicDecommissionReasons}); null for none or a private one. */
export function publicReasonOf(reason: string | null): DecommissionReason | null {
  return publicDecommissionReasons.find((r) => r === reason) ?? null;
}

/** Reasons after which the item may come back into circulation (a lifted recall, a recovered theft). */
export const reactivatableReasons: readonly DecommissionReason[] = ['recalled', 'stolen'];

/** What a caller asks to do to serials. */
export type SerialAction = 'encode' | 'commission' | 'scrap' | 'decommission' | 'reactivate' | 'return';

/** Every serial action. */
export const serialActions: readonly SerialAction[] = ['encode', 'commission', 'scrap', 'decommission', 'reactivate', 'return'];

/** The state a serial is in after minting under its batch's activation (the unit's minted status). */
export function mintedSerialState(unitStatus: 'active' | 'inactive'): SerialState {
  return unitStatus === 'active' ? 'commissioned' : 'issued';
}

/** True when the serial counts as in circulation (active_tokens counts exactly these). */
export function isInCirculation(state: SerialState): boolean {
  return state === 'commissioned';
}

/** A compare-and-set move of serials: apply `to` (with `reason`) only to units still in one of `from`. */
export interface SerialMove {
  readonly action: SerialAction;
  /** States the move may leave; a unit in any other state is refused and named with its state. */
  readonly from: readonly SerialState[];
  readonly to: SerialState;
  /** The decommissioning reason kept with the state; null for every other target. */
  readonly reason: DecommissionReason | null;
  /** For reactivate: only units decommissioned for one of these reasons may leave. Null otherwise. */
  readonly fromReasons: readonly DecommissionReason[] | null;
}

/** An ordinary move: no reason kept, no reason required of the source. */
const plain = (action: SerialAction, from: readonly SerialState[], to: SerialState): SerialMove => ({ action, from, to, reason: null, fromReasons: null });

/** Printing the identity on a label: issued -> encoded. */
export const encodeSerials = (): SerialMove => plain('encode', ['issued'], 'encoded');
/** Applying the label and putting the item in circulation: issued or encoded -> commissioned. */
export const commissionSerials = (): SerialMove => plain('commission', ['issued', 'encoded'], 'commissioned');
/** Destroying an unused label: issued or encoded -> scrapped. */
export const scrapSerials = (): SerialMove => plain('scrap', ['issued', 'encoded'], 'scrapped');
/** Handing unused serials back: issued -> returned (an encoded serial is scrapped, not returned). */
export const returnSerials = (): SerialMove => plain('return', ['issued'], 'returned');
/** Taking commissioned items out of circulation for `reason`: commissioned -> decommissioned. */
export const decommissionSerials = (reason: DecommissionReason): SerialMove => ({
  action: 'decommission',
  from: ['commissioned'],
  to: 'decommissioned',
  reason,
  fromReasons: null,
});
/** Putting items decommissioned for a reason that allows it back into circulation: decommissioned -> commissioned. */
export const reactivateSerials = (): SerialMove => ({
  action: 'reactivate',
  from: ['decommissioned'],
  to: 'commissioned',
  reason: null,
  fromReasons: reactivatableReasons,
});

/**
 * The move an action names. `decommission` needs a reason (IllegalStateError-free: a missing
 * reason is the caller's bad input, reported as a field violation by the use case); other actions
 * take none.
 */
export function serialMoveOf(action: SerialAction, reason: DecommissionReason | null): SerialMove {
  switch (action) {
    case 'encode':
      return encodeSerials();
    case 'commission':
      return commissionSerials();
    case 'scrap':
      return scrapSerials();
    case 'return':
      return returnSerials();
    case 'reactivate':
      return reactivateSerials();
    case 'decommission':
      if (reason === null) throw new Error('decommission needs a reason');
      return decommissionSerials(reason);
  }
}

/** Why one unit of a move was refused. */
export type SerialRefusal =
  /** No unit of the brand has that serial (or seq): another brand's serial is reported this way, never confirmed. */
  | 'unknown'
  /** The unit is in a state the move cannot leave (the report names the state). */
  | 'wrong_state'
  /** Decommissioned for a reason that does not allow reactivation (the report names the reason). */
  | 'reason_final'
  /** Its batch is voided: its identities are withdrawn for good. */
  | 'batch_voided'
  /** A partner key's move named a serial of the brand that is not in the partner's allocation (another partner's, or never allocated). */
  | 'not_allocated';

/** True when a unit in `state` (decommissioned for `reason`) may take `move`; otherwise the refusal. */
export function refusalOf(move: SerialMove, state: SerialState, reason: DecommissionReason | null): SerialRefusal | null {
  if (!move.from.includes(state)) return 'wrong_state';
  if (move.fromReasons !== null && (reason === null || !move.fromReasons.includes(reason))) return 'reason_final';
  return null;
}

/** The move for one unit, or IllegalStateError naming the state it is in (a single-unit request). */
export function moveOneSerial(move: SerialMove, state: SerialState, reason: DecommissionReason | null): SerialMove {
  const refusal = refusalOf(move, state, reason);
  if (refusal === 'wrong_state') {
    throw new IllegalStateError(`cannot ${move.action} a serial that is ${state}; ${move.action} needs ${move.from.join(' or ')}`);
  }
  if (refusal === 'reason_final') {
    throw new IllegalStateError(`cannot reactivate a serial decommissioned as ${reason ?? 'unknown'}; only ${reactivatableReasons.join(' or ')} allow it`);
  }
  return move;
}

/** Change of the commissioned count (active_tokens) per unit moved. */
export function activeDelta(move: SerialMove): -1 | 0 | 1 {
  const before = move.from.some(isInCirculation);
  const after = isInCirculation(move.to);
  return before === after ? 0 : after ? 1 : -1;
}

/** Whether a scan of an item in `state` may be answered as a live identity. */
export function publicStanding(state: SerialState, reason: DecommissionReason | null): 'live' | 'recalled' | 'not_in_circulation' | 'never_commissioned' {
  if (state === 'commissioned') return 'live';
  if (state === 'decommissioned' && reason === 'recalled') return 'recalled';
  if (state === 'issued' || state === 'encoded') return 'never_commissioned';
  return 'not_in_circulation';
}

/** The GS1 EPCIS 2.0 / CBV 2.0 vocabulary of a move's ObjectEvent. */
export interface EpcisVocabulary {
  readonly action: 'ADD' | 'OBSERVE' | 'DELETE';
  readonly bizStep: string;
  readonly disposition: string;
}

/** One row of {@link epcisMoveVocabulary}: a move from some states, and the EPCIS 2.0 / CBV 2.0 words for it. */
export interface EpcisMoveMapping {
  readonly action: SerialAction;
  /** The decommissioning reason; null for every other action. */
  readonly reason: DecommissionReason | null;
  /** The states of a unit this row reports (and, captured, applies to). */
  readonly from: readonly SerialState[];
  /** What the service writes for it. */
  readonly written: EpcisVocabulary;
  /** EPCIS actions a captured event may carry for it. */
  readonly capturedActions: readonly EpcisVocabulary['action'][];
  /** Dispositions a captured event may carry for it (null: none given). */
  readonly capturedDispositions: readonly (string | null)[];
}

const row = (
  action: SerialAction,
  reason: DecommissionReason | null,
  from: readonly SerialState[],
  written: EpcisVocabulary,
  capturedActions: readonly EpcisVocabulary['action'][],
  capturedDispositions: readonly (string | null)[],
): EpcisMoveMapping => ({ action, reason, from, written, capturedActions, capturedDispositions });
const add = ['ADD', 'OBSERVE'] as const;
const remove = ['DELETE', 'OBSERVE'] as const;

/**
 * The one table between serial moves and GS1 EPCIS 2.0 ObjectEvents with CBV 2.0 business steps
 * and dispositions, both ways: the service writes `written` for a move of a unit in one of `from`,
 * and a captured ObjectEvent whose business step is `written.bizStep`, whose action is one of
 * `capturedActions` and whose disposition is one of `capturedDispositions` applies the move of the
 * row whose `from` holds the unit's state. So one business step may stand for two moves told
 * apart by the unit's state: commissioning commissions an issued or encoded unit and reactivates a
 * decommissioned one (a recall lifted, a theft recovered: disposition active again); destroying
 * scraps a label never commissioned and decommissions a commissioned item as destroyed.
 * docs/guides/lifecycle.md prints this table.
 */
export const epcisMoveVocabulary: readonly EpcisMoveMapping[] = [
  row('encode', null, ['issued'], { action: 'ADD', bizStep: 'encoding', disposition: 'encoded' }, add, ['encoded', null]),
  row('commission', null, ['issued'], { action: 'ADD', bizStep: 'commissioning', disposition: 'active' }, add, ['active', null]),
  // A serial encoded before is already known to EPCIS: its commissioning observes it.
  row('commission', null, ['encoded'], { action: 'OBSERVE', bizStep: 'commissioning', disposition: 'active' }, add, ['active', null]),
  row('reactivate', null, ['decommissioned'], { action: 'ADD', bizStep: 'commissioning', disposition: 'active' }, add, ['active', null]),
  row('scrap', null, ['issued', 'encoded'], { action: 'DELETE', bizStep: 'destroying', disposition: 'destroyed' }, remove, ['destroyed', null]),
  row('decommission', 'destroyed', ['commissioned'], { action: 'DELETE', bizStep: 'destroying', disposition: 'destroyed' }, remove, ['destroyed', null]),
  row('decommission', 'recalled', ['commissioned'], { action: 'DELETE', bizStep: 'decommissioning', disposition: 'recalled' }, remove, ['recalled']),
  row('decommission', 'stolen', ['commissioned'], { action: 'DELETE', bizStep: 'decommissioning', disposition: 'stolen' }, remove, ['stolen']),
  row('decommission', 'expired', ['commissioned'], { action: 'DELETE', bizStep: 'decommissioning', disposition: 'expired' }, remove, ['expired']),
  row('decommission', 'damaged', ['commissioned'], { action: 'DELETE', bizStep: 'decommissioning', disposition: 'damaged' }, remove, ['damaged']),
  // CBV 2.0 `sampling`: an object taken as a sample (for testing, typically destroyed by it).
  row('decommission', 'sample', ['commissioned'], { action: 'DELETE', bizStep: 'sampling', disposition: 'inactive' }, remove, ['inactive', null]),
  row('decommission', 'consumed', ['commissioned'], { action: 'DELETE', bizStep: 'decommissioning', disposition: 'inactive' }, remove, ['inactive', null]),
  row('return', null, ['issued'], { action: 'DELETE', bizStep: 'decommissioning', disposition: 'returned' }, remove, ['returned']),
];

/**
 * The CBV 2.0 business step and disposition a move of a unit in state `from` reports, with its
 * EPCIS action: the row of {@link epcisMoveVocabulary} for the move (and, for a commissioning,
 * the state: OBSERVE for a serial encoded before).
 */
export function epcisVocabularyOf(move: SerialMove, from: SerialState): EpcisVocabulary {
  const rows = epcisMoveVocabulary.filter((r) => r.action === move.action && r.reason === move.reason);
  return (rows.find((r) => r.from.includes(from)) ?? rows[0]!).written;
}

/**
 * The rows of {@link epcisMoveVocabulary} a captured ObjectEvent's action, business step (bare CBV
 * name) and disposition (null: none) may stand for; which one applies depends on each unit's
 * state. Empty: no move of this service is reported so.
 */
export function capturedMoveRows(action: string, bizStep: string, disposition: string | null): EpcisMoveMapping[] {
  return epcisMoveVocabulary.filter(
    (r) => r.written.bizStep === bizStep && (r.capturedActions as readonly string[]).includes(action) && r.capturedDispositions.includes(disposition),
  );
}
