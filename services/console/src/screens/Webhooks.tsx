// Webhooks: the brand's endpoints (keyset-paged), adding one (its signing secret shown once),
// enabling or disabling, rotating the secret (the new one shown once, the old one signing until
// the time shown), deleting; an endpoint's page (#/webhooks/<id>) lists its deliveries with their
// attempts, last answer and error, and sends one again.

import { useMutation, useQuery } from '@connectrpc/connect-query';
import { WebhookDeliveryStatus, WebhookService, type WebhookEndpoint } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useBrand } from '../context.tsx';
import { enumName, ErrorMessage, formatTime, invalidFields, Pager, useCursorPages } from '../ui.tsx';

const refresh = (queryClient: ReturnType<typeof useQueryClient>) =>
  queryClient.invalidateQueries({ predicate: (q) => /ListWebhook/.test(JSON.stringify(q.queryKey)) });

/** A secret shown once, with a note that it cannot be shown again. */
function SecretOnce({ secret, what }: { readonly secret: string; readonly what: string }): ReactNode {
  return (
    <div className="secret" role="status">
      <p>
        <strong>{what}</strong> Copy it now: it is not shown again.
      </p>
      <p>
        <code data-testid="secret">{secret}</code>
      </p>
    </div>
  );
}

/** An endpoint's state in words. */
function endpointState(e: WebhookEndpoint): string {
  if (!e.enabled) return e.disabledReason === undefined ? 'disabled' : `disabled (${e.disabledReason})`;
  if (e.pausedUntil !== undefined) return `paused until ${formatTime(e.pausedUntil)}`;
  return e.consecutiveFailures > 0 ? `enabled, ${e.consecutiveFailures} failures in a row` : 'enabled';
}

/** The Webhooks screen: endpoints. */
export function Webhooks(): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const pages = useCursorPages();
  const list = useQuery(WebhookService.method.listWebhookEndpoints, { brandId, limit: 20, ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }) });
  const create = useMutation(WebhookService.method.createWebhookEndpoint);
  const update = useMutation(WebhookService.method.updateWebhookEndpoint);
  const rotate = useMutation(WebhookService.method.rotateWebhookSecret);
  const remove = useMutation(WebhookService.method.deleteWebhookEndpoint);
  const [url, setUrl] = useState('');
  const [types, setTypes] = useState('');
  const [description, setDescription] = useState('');
  const invalid = invalidFields(create.error);
  const onCreate = (event: FormEvent) => {
    event.preventDefault();
    rotate.reset();
    create.mutate(
      {
        brandId,
        url: url.trim(),
        description: description.trim(),
        eventTypes: types
          .split(',')
          .map((t) => t.trim())
          .filter((t) => t !== ''),
      },
      {
        onSuccess: () => {
          setUrl('');
          setTypes('');
          setDescription('');
          void refresh(queryClient);
        },
      },
    );
  };
  return (
    <>
      <h1>Webhooks</h1>
      <form className="grid-form" onSubmit={onCreate} aria-labelledby="wh-new-title">
        <h2 id="wh-new-title">Add an endpoint</h2>
        <label htmlFor="wh-url">URL (https)</label>
        <input id="wh-url" aria-invalid={invalid.has('url')} type="url" required value={url} onChange={(e) => setUrl(e.target.value)} />
        <label htmlFor="wh-types">Event types (comma-separated; blank: all)</label>
        <input
          id="wh-types"
          aria-invalid={[...invalid].some((f) => f.startsWith('event_types'))}
          value={types}
          placeholder="mint_job_completed"
          onChange={(e) => setTypes(e.target.value)}
        />
        <label htmlFor="wh-desc">Description</label>
        <input id="wh-desc" aria-invalid={invalid.has('description')} value={description} onChange={(e) => setDescription(e.target.value)} />
        <div className="actions">
          <button type="submit" disabled={create.isPending}>
            Add endpoint
          </button>
        </div>
        <ErrorMessage error={create.error} />
      </form>
      {create.data !== undefined && rotate.data === undefined && (
        <SecretOnce secret={create.data.secret} what={`Signing secret of ${create.data.endpoint?.url ?? 'the endpoint'}.`} />
      )}
      {rotate.data !== undefined && (
        <SecretOnce
          secret={rotate.data.secret}
          what={`New signing secret of ${rotate.data.endpoint?.url ?? 'the endpoint'}; the old one signs until ${formatTime(rotate.data.endpoint?.previousSecretExpiresAt)} UTC.`}
        />
      )}
      <ErrorMessage error={list.error ?? update.error ?? rotate.error ?? remove.error} />
      {list.data?.endpoints.length === 0 && <p>No endpoints yet.</p>}
      {(list.data?.endpoints.length ?? 0) > 0 && (
        <div className="table-wrap">
          <table>
            <caption>Endpoints</caption>
            <thead>
              <tr>
                <th>URL</th>
                <th>Events</th>
                <th>State</th>
                <th>Created (UTC)</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data!.endpoints.map((e) => (
                <tr key={e.id}>
                  <td className="url">
                    <a href={`#/webhooks/${e.id}`}>{e.url}</a>
                    {e.description === '' ? null : <div className="hint">{e.description}</div>}
                  </td>
                  <td>{e.eventTypes.length === 0 ? 'all' : e.eventTypes.join(', ')}</td>
                  <td data-testid="endpoint-state">{endpointState(e)}</td>
                  <td>{formatTime(e.createdAt)}</td>
                  <td className="row-actions">
                    <button
                      type="button"
                      className="secondary"
                      disabled={update.isPending}
                      onClick={() =>
                        update.mutate({ brandId, endpointId: e.id, enabled: !e.enabled, eventTypes: [] }, { onSuccess: () => void refresh(queryClient) })
                      }
                    >
                      {e.enabled ? 'Disable' : 'Enable'}
                      <span className="visually-hidden"> {e.url}</span>
                    </button>
                    <button
                      type="button"
                      className="secondary"
                      disabled={rotate.isPending}
                      onClick={() => rotate.mutate({ brandId, endpointId: e.id }, { onSuccess: () => void refresh(queryClient) })}
                    >
                      Rotate secret<span className="visually-hidden"> of {e.url}</span>
                    </button>
                    <button
                      type="button"
                      className="danger"
                      disabled={remove.isPending}
                      onClick={() => {
                        if (window.confirm(`Delete the endpoint ${e.url}?`))
                          remove.mutate({ brandId, endpointId: e.id }, { onSuccess: () => void refresh(queryClient) });
                      }}
                    >
                      Delete<span className="visually-hidden"> {e.url}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        label="Endpoints"
        page={pages.page}
        hasMore={list.data?.hasMore ?? false}
        onPrevious={pages.previous}
        onNext={() => pages.next(list.data?.nextCursor)}
      />
    </>
  );
}

/** One endpoint's deliveries, newest first, with redelivery. */
export function WebhookDeliveries({ endpointId }: { readonly endpointId: string }): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const pages = useCursorPages();
  const list = useQuery(
    WebhookService.method.listWebhookDeliveries,
    { brandId, endpointId, limit: 20, ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }) },
    {
      // Look again every 2 s while the page has no delivery yet (an event's deliveries are written
      // shortly after it, by the executor's fan-out) or one of its deliveries is still being tried.
      refetchInterval: (q) => {
        const deliveries = q.state.data?.deliveries;
        const waiting =
          deliveries === undefined ||
          deliveries.length === 0 ||
          deliveries.some((d) => d.status === WebhookDeliveryStatus.PENDING || d.status === WebhookDeliveryStatus.DELIVERING);
        return waiting ? 2000 : false;
      },
    },
  );
  const redeliver = useMutation(WebhookService.method.redeliverWebhook);
  return (
    <>
      <p>
        <a href="#/webhooks">All endpoints</a>
      </p>
      <h1>Deliveries of endpoint {endpointId.slice(0, 8)}</h1>
      <ErrorMessage error={list.error ?? redeliver.error} />
      {redeliver.isSuccess && <p role="status">Delivery queued again.</p>}
      {list.data?.deliveries.length === 0 && <p>No deliveries yet: one is made for each event of the endpoint's types.</p>}
      {(list.data?.deliveries.length ?? 0) > 0 && (
        <div className="table-wrap">
          <table>
            <caption>Deliveries</caption>
            <thead>
              <tr>
                <th>Event</th>
                <th>Status</th>
                <th>Attempts</th>
                <th>Last answer</th>
                <th>Next attempt / delivered (UTC)</th>
                <th>Created (UTC)</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data!.deliveries.map((d) => (
                <tr key={d.id}>
                  <td>
                    <code>{d.eventType}</code>
                  </td>
                  <td data-testid="delivery-status">{enumName(WebhookDeliveryStatus, d.status)}</td>
                  <td data-testid="delivery-attempts">{d.attempts}</td>
                  <td>
                    {d.lastResponseCode === undefined ? '—' : `HTTP ${d.lastResponseCode}`}
                    {d.lastDurationMs === undefined ? '' : ` in ${d.lastDurationMs} ms`}
                    {d.lastError === undefined ? null : <div className="hint">{d.lastError}</div>}
                  </td>
                  <td>
                    {d.deliveredAt !== undefined ? formatTime(d.deliveredAt) : d.status === WebhookDeliveryStatus.PENDING ? formatTime(d.nextAttemptAt) : '—'}
                  </td>
                  <td>{formatTime(d.createdAt)}</td>
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      disabled={redeliver.isPending}
                      onClick={() =>
                        redeliver.mutate(
                          { brandId, deliveryId: d.id },
                          {
                            onSuccess: () =>
                              void queryClient.invalidateQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes('ListWebhookDeliveries') }),
                          },
                        )
                      }
                    >
                      Redeliver
                      <span className="visually-hidden">
                        {' '}
                        {d.eventType} {d.id.slice(0, 8)}
                      </span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        label="Deliveries"
        page={pages.page}
        hasMore={list.data?.hasMore ?? false}
        onPrevious={pages.previous}
        onNext={() => pages.next(list.data?.nextCursor)}
      />
    </>
  );
}
