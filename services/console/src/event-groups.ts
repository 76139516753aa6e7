/**
 * A batch's events as an operator reads them: a run of events of one type in a row (a job's
 * fifty `mint_units_created` chunks) is one row with its count, the units the run counts (the
 * chunks' `count`) and its first and last time; every other event is a row of its own.
 */

/** What grouping needs of an event. */
export interface GroupableEvent {
  readonly id: string;
  readonly eventType: string;
  /** When it happened, in milliseconds. */
  readonly at: number;
  readonly payload?: { readonly [key: string]: unknown } | undefined;
}

/** One row: a single event, or a run of events of one type. */
export interface EventGroup<E extends GroupableEvent> {
  readonly eventType: string;
  readonly events: readonly E[];
  /** The sum of the events' `count` (units of chunks); null when none has one. */
  readonly units: number | null;
  readonly first: number;
  readonly last: number;
}

/** Groups consecutive events of one type, in the order given. */
export function groupEvents<E extends GroupableEvent>(events: readonly E[]): EventGroup<E>[] {
  const groups: { eventType: string; events: E[] }[] = [];
  for (const event of events) {
    const last = groups.at(-1);
    if (last !== undefined && last.eventType === event.eventType) last.events.push(event);
    else groups.push({ eventType: event.eventType, events: [event] });
  }
  return groups.map((g) => {
    const counts = g.events.map((e) => e.payload?.count).filter((c): c is number => typeof c === 'number');
    const times = g.events.map((e) => e.at);
    return {
      eventType: g.eventType,
      events: g.events,
      units: counts.length === 0 ? null : counts.reduce((a, b) => a + b, 0),
      first: Math.min(...times),
      last: Math.max(...times),
    };
  });
}
