/**
 * Audit events. Each is written in the same transaction as the change it reports.
 *
 * | event_type            | entity_type | written when                                                     |
 * |-----------------------|-------------|------------------------------------------------------------------|
 * | mint_job_queued       | mint_job    | submit creates a QUEUED job (payload: quantity, modes)           |
 * | mint_batch_created    | mint_batch  | submit (or CreateMintBatchFromJob) creates the draft batch        |
 * | mint_job_started      | mint_job    | an executor claims a job (QUEUED -> RESERVED)                     |
 * | mint_units_created    | mint_batch  | each chunk of a serial job commits (payload: count, first_seq)    |
 * | mint_lots_confirmed   | mint_batch  | a lot-mode job validated and recorded its lots                    |
 * | mint_job_completed    | mint_job    | a job reaches COMPLETED                                           |
 * | mint_batch_status_changed | mint_batch | a batch moves (draft -> minted on completion, later moves)     |
 * | mint_job_failed       | mint_job    | a job reaches FAILED (payload: reason)                            |
 */
export type EventType =
  | 'mint_job_queued'
  | 'mint_batch_created'
  | 'mint_job_started'
  | 'mint_units_created'
  | 'mint_lots_confirmed'
  | 'mint_job_completed'
  | 'mint_batch_status_changed'
  | 'mint_job_failed';

/** Kind of entity an event is about. */
export type EntityType = 'mint_job' | 'mint_batch' | 'mint_unit' | 'payload_pack' | 'product';

/** An event to append, before it gets its id and time. */
export interface NewEvent {
  readonly brandId: string;
  readonly eventType: EventType;
  readonly entityType: EntityType;
  readonly entityId: string;
  readonly payload: Readonly<Record<string, unknown>>;
  /** User id or API key id that caused it; null for the executor. */
  readonly actor: string | null;
}
