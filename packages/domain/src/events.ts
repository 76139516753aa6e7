/**
 * Audit events. Each is written in the same transaction as the change it reports.
 *
 * | event_type                | entity_type | written when (transition)                                                   |
 * |---------------------------|-------------|-----------------------------------------------------------------------------|
 * | mint_job_queued           | mint_job    | submit creates a QUEUED job (payload: quantity, modes)                      |
 * | mint_batch_created        | mint_batch  | submit (or CreateMintBatchFromJob) creates the draft batch                  |
 * | mint_job_started          | mint_batch  | the first claim of a job, QUEUED -> RESERVED (a takeover of a lapsed lease writes none) (payload: mint_job_id, identity_mode) |
 * | mint_units_created        | mint_batch  | each committed chunk of a serial job, the first one also RESERVED -> PROCESSING (payload: mint_job_id, count, first_seq) |
 * | mint_lots_confirmed       | mint_batch  | a lot-mode job's lots validate, RESERVED -> COMPLETED (product-only writes none) (payload: mint_job_id, lots, quantity) |
 * | mint_job_completed        | mint_batch  | PROCESSING -> COMPLETED (serial) or RESERVED -> COMPLETED (lots, product-only) (payload: mint_job_id, minted_quantity) |
 * | mint_batch_status_changed | mint_batch  | a batch moves (draft -> minted with the job's completion, later moves)      |
 * | mint_units_activated      | mint_batch  | ActivateMintUnits moves inactive units to active, once per batch that changed; a repeat writes none (payload: activated_count, target (mint_batch or unit_ids), unit_ids) |
 * | mint_job_failed           | mint_batch  | any non-terminal status -> FAILED: invalid lots, a permanent error, a voided batch, or retries or deliveries exhausted (payload: mint_job_id, reason, from) |
 * | payload_pack_ready        | payload_pack | generating -> ready, with the batch's minted -> exported (payload: mint_batch_id, unit_count, storage_path) |
 * | payload_pack_failed       | payload_pack | generating -> failed: the batch was voided or attempts ran out (payload: mint_batch_id, reason, attempts) |
 * | resolver_link_upserted    | resolver_link | UpsertLink (payload: level, gtin, qualifier, link_type, href, is_default, created) |
 * | resolver_link_deleted     | resolver_link | DeleteLink (payload: level, gtin, qualifier, link_type, href)              |
 * | resolver_links_replaced   | resolver_link | ReplaceLinks (entity: the level; payload: before and after counts, the new links) |
 * | resolver_links_imported   | resolver_link | each committed batch of a link CSV import (entity: the import; payload: rows written) |
 * | webhook_endpoint_created  | webhook_endpoint | CreateWebhookEndpoint (payload: url, event_types, description; never the secret) |
 * | webhook_endpoint_updated  | webhook_endpoint | UpdateWebhookEndpoint changes the URL, filter, description or enabled flag (payload: the new values) |
 * | webhook_endpoint_deleted  | webhook_endpoint | DeleteWebhookEndpoint (payload: url) |
 * | webhook_endpoint_secret_rotated | webhook_endpoint | RotateWebhookSecret (payload: previous_secret_expires_at; never a secret) |
 * | webhook_endpoint_disabled | webhook_endpoint | the executor disables it: 410 Gone, or three days of failed deliveries (payload: reason, status_code) |
 * | brand_resolver_domain_set | brand       | SetBrandResolverDomain changes the brand's domain (payload: domain, previous, resolver_base_url; domain null: removed) |
 * | scan_never_issued_serial  | scan        | a serial the brand never issued was scanned under its GTIN, once a serial a day (entity: "{gtin} {serial}"; payload: gtin, serial, scanned_at, country, client_class) |
 * | scan_withdrawn_unit       | scan        | a unit whose batch was voided (410) or whose status is a lifecycle end state was scanned, once a unit a day (entity: "{gtin} {serial}"; payload: gtin, serial, unit_status, outcome, scanned_at, country, client_class) |
 * | scan_clone_suspected      | scan        | a unit seen from two countries within N hours, or by over K visitors a day (the brand's settings; 24 and 20 by default), once a unit a day (entity: "{gtin} {serial}"; payload: gtin, serial, reason, countries, visitors_today, scanned_at) |
 * | scan_never_issued_burst   | scan        | never-issued scans beyond the brand's alerts a minute, at most one a minute (entity: the GTINs; payload: scans, gtins, countries, client_classes, minute) |
 * | scan_suspect_cleared      | scan        | ClearSuspectUnit: the brand cleared a unit that a clone or withdrawn-unit alert marked suspect (entity: "{gtin} {serial}"; payload: gtin, serial, rule, since, reason) |
 * | scan_alert_settings_updated | brand     | UpdateScanAlertSettings changes the brand's rules or thresholds (payload: the new settings) |
 * | mint_units_moved          | mint_batch  | each committed chunk of a serial move (MoveSerials) that moved units of the batch (payload: move_id, action, reason, to, count, serials (at most 100), first_seq, last_seq) |
 * | serial_move_completed     | serial_move | a serial move's last chunk (payload: action, reason, total, moved, refused) |
 * | serial_move_failed        | serial_move | running -> failed: its next chunk failed every attempt (payload: action, reason, total, moved, refused, attempts, error) |
 * | passport_draft_updated    | passport    | UpdatePassportDraft or ImportPassports writes a level's draft (entity: "{product_id} {lot} {serial}"; payload: product_id, lot, serial, revision) |
 * | passport_published        | passport    | PublishPassport makes a new version (payload: product_id, lot, serial, version, sha256, predecessor_id) |
 * | passport_restricted_read  | passport    | a credential holder read restricted sections through the resolver (payload: product_id, lot, serial, version, access_class, credential_id, sections, representation) |
 * | passport_access_key_issued | passport_access_key | IssuePassportAccessKey (payload: name, access_class, expires_at; never the key) |
 * | passport_access_key_revoked | passport_access_key | RevokePassportAccessKey (payload: name, access_class) |
 * | passport_style_set        | brand       | SetPassportStyle changes the logo or colour of the brand's passport pages (payload: logo_url, colour) |
 * | container_settings_set    | brand       | SetContainerSettings changes the brand's GS1 company prefix or max_depth (payload: gs1_company_prefix, max_depth) |
 * | containers_minted         | container_mint | MintContainers issues SSCCs (payload: level, count, first_sscc, last_sscc) |
 * | container_packed          | container   | PackContainer or a captured packing AggregationEvent (entity: the SSCC; payload: op_id, units, containers, serials (at most 100), ssccs (at most 100)) |
 * | container_unpacked        | container   | UnpackContainer or a captured unpacking AggregationEvent (entity: the SSCC; payload as container_packed) |
 * | partner_created           | partner     | CreatePartner (payload: name) |
 * | partner_key_granted       | partner     | GrantPartnerKey (payload: key_id, name, product_id, mint_batch_id, quota; never the key) |
 * | serials_allocated         | mint_batch  | AllocateSerials moved units of the batch to a partner's allocation (payload: request_id, partner_id, key_id, count, serials (at most 100), first_seq, last_seq) |
 * | api_key_created           | api_key     | CreateApiKey (payload: name, prefix, scopes; never the key) |
 * | api_key_revoked           | api_key     | RevokeApiKey revokes a key in force (payload: name, prefix) |
 * | brand_member_added        | membership  | AddBrandMember (entity: the user id; payload: user_id, email, role, user_created) |
 * | brand_member_role_changed | membership  | SetBrandMemberRole changes a role (payload: user_id, email, from, to) |
 * | brand_member_removed      | membership  | RemoveBrandMember (payload: user_id, email, role) |
 *
 * The executor's five job events (started, units created, lots confirmed, completed, failed) are
 * events of the job's batch: `entity_type = mint_batch`, `entity_id` = the batch's uuid as text,
 * the job's id in the payload as `mint_job_id`, as the spec's `process_mint_job_batch` describes.
 * Every event is delivered to the brand's enabled webhook endpoints whose filter wants it, except
 * the `webhook_endpoint_*` events: each goes to the endpoint it is about alone (created, updated,
 * rotated; a deleted or disabled one gets none), so managing endpoints never fans out to all of them.
 */
export type EventType =
  | 'mint_job_queued'
  | 'mint_batch_created'
  | 'mint_job_started'
  | 'mint_units_created'
  | 'mint_lots_confirmed'
  | 'mint_job_completed'
  | 'mint_batch_status_changed'
  | 'mint_units_activated'
  | 'mint_job_failed'
  | 'payload_pack_ready'
  | 'payload_pack_failed'
  | 'resolver_link_upserted'
  | 'resolver_link_deleted'
  | 'resolver_links_replaced'
  | 'resolver_links_imported'
  | 'webhook_endpoint_created'
  | 'webhook_endpoint_updated'
  | 'webhook_endpoint_deleted'
  | 'webhook_endpoint_secret_rotated'
  | 'webhook_endpoint_disabled'
  | 'brand_resolver_domain_set'
  | 'scan_never_issued_serial'
  | 'scan_never_issued_burst'
  | 'scan_withdrawn_unit'
  | 'scan_clone_suspected'
  | 'scan_suspect_cleared'
  | 'scan_alert_settings_updated'
  | 'mint_units_moved'
  | 'serial_move_completed'
  | 'serial_move_failed'
  | 'passport_draft_updated'
  | 'passport_published'
  | 'passport_restricted_read'
  | 'passport_access_key_issued'
  | 'passport_access_key_revoked'
  | 'passport_style_set'
  | 'container_settings_set'
  | 'containers_minted'
  | 'container_packed'
  | 'container_unpacked'
  | 'partner_created'
  | 'partner_key_granted'
  | 'serials_allocated'
  | 'api_key_created'
  | 'api_key_revoked'
  | 'brand_member_added'
  | 'brand_member_role_changed'
  | 'brand_member_removed';

/** Kind of entity an event is about. */
export type EntityType =
  | 'mint_job'
  | 'mint_batch'
  | 'mint_unit'
  | 'payload_pack'
  | 'product'
  | 'resolver_link'
  | 'webhook_endpoint'
  | 'brand'
  | 'scan'
  | 'serial_move'
  | 'passport'
  | 'passport_access_key'
  | 'container_mint'
  | 'container'
  | 'api_key'
  | 'membership'
  | 'partner';

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
