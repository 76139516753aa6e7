// Events: the brand's audit log, newest first, filtered by event type, entity type and entity id.

import { useQuery } from '@connectrpc/connect-query';
import { MintService } from '@mint/contract';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useBrand } from '../context.tsx';
import { ErrorMessage, formatTime, Pager, useCursorPages } from '../ui.tsx';

interface Filters {
  readonly eventType: string;
  readonly entityType: string;
  readonly entityId: string;
}

/** The Events screen. */
export function Events(): ReactNode {
  const brandId = useBrand();
  const pages = useCursorPages();
  const [draft, setDraft] = useState<Filters>({ eventType: '', entityType: '', entityId: '' });
  const [filters, setFilters] = useState<Filters>(draft);
  const events = useQuery(MintService.method.listMintEvents, {
    brandId,
    limit: 50,
    ...(filters.eventType === '' ? {} : { eventType: filters.eventType }),
    ...(filters.entityType === '' ? {} : { entityType: filters.entityType }),
    ...(filters.entityId === '' ? {} : { entityId: filters.entityId }),
    ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }),
  });
  const apply = (event: FormEvent) => {
    event.preventDefault();
    pages.reset();
    setFilters({ eventType: draft.eventType.trim(), entityType: draft.entityType.trim(), entityId: draft.entityId.trim() });
  };
  return (
    <>
      <h1>Events</h1>
      <form className="inline-form" onSubmit={apply} aria-label="Event filters">
        <label htmlFor="event-type">Event type</label>
        <input id="event-type" placeholder="mint_job_completed" value={draft.eventType} onChange={(e) => setDraft({ ...draft, eventType: e.target.value })} />
        <label htmlFor="entity-type">Entity type</label>
        <input id="entity-type" placeholder="mint_batch" value={draft.entityType} onChange={(e) => setDraft({ ...draft, entityType: e.target.value })} />
        <label htmlFor="entity-id">Entity id</label>
        <input id="entity-id" value={draft.entityId} onChange={(e) => setDraft({ ...draft, entityId: e.target.value })} />
        <button type="submit">Filter</button>
      </form>
      <ErrorMessage error={events.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th>When (UTC)</th>
              <th>Event type</th>
              <th>Entity type</th>
              <th>Entity id</th>
              <th>Actor</th>
            </tr>
          </thead>
          <tbody>
            {(events.data?.events ?? []).map((e) => (
              <tr key={e.id}>
                <td>{formatTime(e.occurredAt)}</td>
                <td>
                  <code>{e.eventType}</code>
                </td>
                <td>{e.entityType}</td>
                <td className="url">{e.entityId}</td>
                <td>{e.actor ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {events.data?.events.length === 0 && <p>No events match.</p>}
      <Pager
        label="Events"
        page={pages.page}
        hasMore={events.data?.hasMore ?? false}
        onPrevious={pages.previous}
        onNext={() => pages.next(events.data?.nextCursor)}
      />
    </>
  );
}
