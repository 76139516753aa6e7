import { Migration } from '@mikro-orm/migrations';

/**
 * The executor's five job events become events of the job's batch (`entity_type = mint_batch`,
 * `entity_id` = the batch id), with the job id kept in the payload as `mint_job_id`, so the spec's
 * filter (`event_type`, `entity_type = mint_batch`, `entity_id` = the batch) finds them.
 */
export class Migration20261124030000 extends Migration {
  override name = 'Migration20261124030000';

  override up(): void | Promise<void> {
    this.addSql(`update "mint_events" e set "entity_type" = 'mint_batch', "entity_id" = b."id"::text,
      "payload" = e."payload" || jsonb_build_object('mint_job_id', e."entity_id")
      from "mint_batches" b
      where e."entity_type" = 'mint_job' and b."brand_id" = e."brand_id" and b."mint_job_id"::text = e."entity_id"
        and e."event_type" in ('mint_job_started', 'mint_units_created', 'mint_lots_confirmed', 'mint_job_completed', 'mint_job_failed');`);
  }

  override down(): void | Promise<void> {
    this.addSql(`update "mint_events" set "entity_type" = 'mint_job', "entity_id" = "payload"->>'mint_job_id'
      where "entity_type" = 'mint_batch' and "payload" ? 'mint_job_id'
        and "event_type" in ('mint_job_started', 'mint_job_completed', 'mint_job_failed');`);
  }
}
