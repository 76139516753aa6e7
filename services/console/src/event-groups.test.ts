import { describe, expect, it } from 'vitest';
import { groupEvents } from './event-groups.ts';

const event = (id: string, eventType: string, at: number, count?: number) => ({ id, eventType, at, ...(count === undefined ? {} : { payload: { count } }) });

describe('groupEvents', () => {
  it("folds a job's chunk events into one row with their units and time span, keeping the others apart and in order", () => {
    const events = [
      event('a', 'mint_job_completed', 900),
      ...Array.from({ length: 50 }, (_, i) => event(`c${i}`, 'mint_units_created', 850 - i, 2_000)),
      event('s', 'mint_job_started', 100),
    ];
    const groups = groupEvents(events);
    expect(groups.map((g) => [g.eventType, g.events.length, g.units, g.first, g.last])).toEqual([
      ['mint_job_completed', 1, null, 900, 900],
      ['mint_units_created', 50, 100_000, 801, 850],
      ['mint_job_started', 1, null, 100, 100],
    ]);
  });

  it('starts a new row when the type changes back, and gives nothing for nothing', () => {
    expect(groupEvents([event('1', 'x', 1), event('2', 'y', 2), event('3', 'x', 3)]).map((g) => g.events.map((e) => e.id))).toEqual([['1'], ['2'], ['3']]);
    expect(groupEvents([])).toEqual([]);
  });
});
