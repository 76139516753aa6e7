import { Migration } from '@mikro-orm/migrations';

/**
 * The GIN index on the EPCIS events' EPCs writes its entries straight into the index
 * (`fastupdate = off`) instead of a pending list that every search scans in full: a captured
 * document's event-time check searches 11,000 EPCs at once, and with packing events arriving a
 * thousand a document, the pending list made that search grow from 1 s to 12 s within five
 * documents (100,000-unit scenario). The entries already pending are moved into the index.
 */
export class Migration20261130030000_epcis_epcs_no_pending extends Migration {
  override name = 'Migration20261130030000_epcis_epcs_no_pending';

  override up(): void | Promise<void> {
    this.addSql(`alter index "epcis_events_epcs_index" set (fastupdate = off);`);
    this.addSql(`select gin_clean_pending_list('epcis_events_epcs_index');`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter index "epcis_events_epcs_index" reset (fastupdate);`);
  }
}
