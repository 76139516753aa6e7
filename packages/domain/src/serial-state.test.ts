import { describe, expect, it } from 'vitest';
import { IllegalStateError } from './errors.ts';
import {
  activeDelta,
  capturedMoveRows,
  commissionSerials,
  decommissionReasons,
  decommissionSerials,
  encodeSerials,
  epcisMoveVocabulary,
  epcisVocabularyOf,
  moveOneSerial,
  publicReasonOf,
  publicStanding,
  reactivateSerials,
  refusalOf,
  returnSerials,
  scrapSerials,
  serialActions,
  serialMoveOf,
  serialStates,
  type SerialState,
} from './serial-state.ts';

const moves = [encodeSerials(), commissionSerials(), scrapSerials(), returnSerials(), decommissionSerials('stolen'), reactivateSerials()];

describe('serial moves', () => {
  it('leave exactly the states the issue names and never leave a final state', () => {
    const exits = (s: SerialState) =>
      moves
        .filter((m) => m.from.includes(s))
        .map((m) => m.action)
        .sort();
    expect(exits('issued')).toEqual(['commission', 'encode', 'return', 'scrap']);
    expect(exits('encoded')).toEqual(['commission', 'scrap']);
    expect(exits('commissioned')).toEqual(['decommission']);
    expect(exits('decommissioned')).toEqual(['reactivate']);
    expect(exits('scrapped')).toEqual([]);
    expect(exits('returned')).toEqual([]);
    expect(serialActions.map((a) => serialMoveOf(a, 'recalled').action)).toEqual(serialActions);
  });

  it('refuses a move naming the state the serial is in', () => {
    expect(() => moveOneSerial(decommissionSerials('recalled'), 'scrapped', null)).toThrow(IllegalStateError);
    expect(() => moveOneSerial(decommissionSerials('recalled'), 'scrapped', null)).toThrow(/serial that is scrapped; decommission needs commissioned/);
    expect(refusalOf(returnSerials(), 'encoded', null)).toBe('wrong_state');
  });

  it('reactivates only a recall or a theft', () => {
    for (const reason of decommissionReasons) {
      expect(refusalOf(reactivateSerials(), 'decommissioned', reason)).toBe(reason === 'recalled' || reason === 'stolen' ? null : 'reason_final');
    }
    expect(() => moveOneSerial(reactivateSerials(), 'decommissioned', 'destroyed')).toThrow(/decommissioned as destroyed/);
  });

  it('changes the commissioned count exactly when circulation changes', () => {
    expect(moves.map((m) => [m.action, activeDelta(m)])).toEqual([
      ['encode', 0],
      ['commission', 1],
      ['scrap', 0],
      ['return', 0],
      ['decommission', -1],
      ['reactivate', 1],
    ]);
  });

  it('tells the public whether an item is live, recalled, out of circulation or never commissioned', () => {
    expect(serialStates.map((s) => publicStanding(s, s === 'decommissioned' ? 'stolen' : null))).toEqual([
      'never_commissioned',
      'never_commissioned',
      'live',
      'not_in_circulation',
      'not_in_circulation',
      'not_in_circulation',
    ]);
    expect(publicStanding('decommissioned', 'recalled')).toBe('recalled');
  });

  it('shows every decommissioning reason publicly but a theft, and nothing for no reason or an unknown word', () => {
    expect(decommissionReasons.map(publicReasonOf)).toEqual(decommissionReasons.map((r) => (r === 'stolen' ? null : r)));
    expect([publicReasonOf(null), publicReasonOf('scrapped'), publicReasonOf('')]).toEqual([null, null, null]);
  });

  it('reports CBV 2.0 steps and dispositions', () => {
    expect(epcisVocabularyOf(commissionSerials(), 'encoded')).toEqual({ action: 'OBSERVE', bizStep: 'commissioning', disposition: 'active' });
    expect(epcisVocabularyOf(decommissionSerials('destroyed'), 'commissioned')).toEqual({ action: 'DELETE', bizStep: 'destroying', disposition: 'destroyed' });
    expect(epcisVocabularyOf(decommissionSerials('recalled'), 'commissioned')).toEqual({
      action: 'DELETE',
      bizStep: 'decommissioning',
      disposition: 'recalled',
    });
    expect(epcisVocabularyOf(decommissionSerials('sample'), 'commissioned').disposition).toBe('inactive');
  });
});

describe('the EPCIS mapping table', () => {
  it("reads back every event the service writes as the move that wrote it, told apart by the unit's state", () => {
    for (const row of epcisMoveVocabulary) {
      for (const state of row.from) {
        const w = row.written;
        const read = capturedMoveRows(w.action, w.bizStep, w.disposition).find((r) => r.from.includes(state));
        expect(read, `${row.action} ${row.reason ?? ''} from ${state}`).toBe(row);
        expect(epcisVocabularyOf(serialMoveOf(row.action, row.reason), state)).toEqual(w);
      }
    }
    // One step, two moves: destroying scraps a label never commissioned and decommissions a commissioned item.
    expect(capturedMoveRows('DELETE', 'destroying', 'destroyed').map((r) => `${r.action} ${r.from.join('|')}`)).toEqual([
      'scrap issued|encoded',
      'decommission commissioned',
    ]);
    expect(epcisVocabularyOf(decommissionSerials('sample'), 'commissioned')).toEqual({ action: 'DELETE', bizStep: 'sampling', disposition: 'inactive' });
    expect(capturedMoveRows('OBSERVE', 'shipping', 'in_transit')).toEqual([]);
  });
});
