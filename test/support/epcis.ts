// The brand's stored EPCIS events as the EPCIS query answers them, for tests that check every event.

import { expandEpcisUnitRanges, type Em } from '@mint/db';
import { query } from './sql.ts';

/** A stored EPCIS event: its row's columns, and its body with the `epcList` of a unit range listed. */
export interface StoredEpcisEvent {
  readonly id: string;
  readonly event_type: string;
  readonly biz_step: string;
  readonly disposition: string | null;
  /** The EPCs stored in the row for MATCH_epc (empty for an event naming a unit range). */
  readonly epcs: string[];
  readonly mint_batch_id: string | null;
  readonly first_seq: number | null;
  readonly unit_count: number | null;
  readonly event_time: Date | string;
  readonly body: Record<string, unknown>;
}

/** Every stored EPCIS event of the brand, in event time, record time and id order, with unit ranges expanded. */
export async function storedEpcisEvents(em: Em, brandId: string): Promise<StoredEpcisEvent[]> {
  const found = await query<Omit<StoredEpcisEvent, 'body'> & { body: Record<string, unknown> | string }>(
    em,
    `select id, event_type, biz_step, disposition, epcs, mint_batch_id, first_seq, unit_count, event_time, body
     from epcis_events where brand_id = ? order by event_time, record_time, id`,
    [brandId],
  );
  const bodies = await expandEpcisUnitRanges(
    em,
    brandId,
    found.map((r) => ({
      body: typeof r.body === 'string' ? (JSON.parse(r.body) as Record<string, unknown>) : r.body,
      units: r.mint_batch_id === null ? null : { mintBatchId: r.mint_batch_id, firstSeq: r.first_seq!, count: r.unit_count! },
    })),
  );
  return found.map((r, i) => ({ ...r, body: bodies[i]! }));
}
