// Scans: the brand's scans over a range of days (ScanService.GetScanStats) as charts with their
// scale, by UTC day, by country and by client class; the scan alerts (audit events of entity type
// `scan`, ListMintEvents, paged) with the suspect mark of a clone or withdrawn-unit alert cleared
// with a reason (ClearSuspectUnit).

import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { useMutation, useQuery } from '@connectrpc/connect-query';
import { MintService, ScanClientClass, ScanGroupBy, ScanService, ScanStatsOrder, type MintEvent } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { CategoryChart, DayChart } from '../charts.tsx';
import { useBrand } from '../context.tsx';
import { enumName, ErrorMessage, formatTime, Pager, useCursorPages } from '../ui.tsx';

const dayMs = 86_400_000;
/** Ranges offered, in days (today included). */
const ranges = [7, 30, 90] as const;

/** The UTC days from `fromMs` for `days` days, oldest first. */
function daysFrom(fromMs: number, days: number): string[] {
  return Array.from({ length: days }, (_, i) => new Date(fromMs + i * dayMs).toISOString().slice(0, 10));
}

/** The alerts a suspect mark comes with, and so a Clear button. */
const marking = new Set(['scan_clone_suspected', 'scan_withdrawn_unit']);

/** One alert row, with the clear form of a unit marked suspect. */
function Alert({ event }: { readonly event: MintEvent }): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const clear = useMutation(ScanService.method.clearSuspectUnit);
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const gtin = typeof event.payload?.['gtin'] === 'string' ? event.payload['gtin'] : undefined;
  const serial = typeof event.payload?.['serial'] === 'string' ? event.payload['serial'] : undefined;
  const detail = ['reason', 'countries', 'unit_status', 'country', 'count']
    .filter((k) => event.payload?.[k] !== undefined && event.payload[k] !== null)
    .map((k) => `${k.replace('_', ' ')}: ${Array.isArray(event.payload![k]) ? (event.payload![k] as unknown[]).join(', ') : String(event.payload![k])}`)
    .join('; ');
  const onClear = (e: FormEvent) => {
    e.preventDefault();
    clear.mutate(
      { brandId, serial: serial ?? '', reason: reason.trim(), ...(gtin === undefined || gtin === '' ? {} : { gtin }) },
      {
        onSuccess: () => void queryClient.invalidateQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes('ListMintEvents') }),
      },
    );
  };
  return (
    <tr>
      <td>{formatTime(event.occurredAt)}</td>
      <td>
        <code>{event.eventType}</code>
      </td>
      <td>
        {serial === undefined ? (
          event.entityId
        ) : (
          <a href={`#/units/${encodeURIComponent(gtin ?? '')}/${encodeURIComponent(serial)}`}>
            {gtin} {serial}
          </a>
        )}
      </td>
      <td>{detail}</td>
      <td>
        {marking.has(event.eventType) &&
          serial !== undefined &&
          (clear.data !== undefined ? (
            <span role="status">
              {clear.data.cleared ? `Cleared (was ${clear.data.rule ?? 'suspect'} since ${formatTime(clear.data.since)}).` : 'Not suspect: nothing to clear.'}
            </span>
          ) : open ? (
            <form className="inline-form" onSubmit={onClear} aria-label={`Clear ${serial}`}>
              <label htmlFor={`reason-${event.id}`}>Reason</label>
              <input id={`reason-${event.id}`} required maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
              <button type="submit" disabled={clear.isPending}>
                Clear the mark
              </button>
            </form>
          ) : (
            <button type="button" className="secondary" onClick={() => setOpen(true)}>
              Clear<span className="visually-hidden"> the suspect mark of {serial}</span>
            </button>
          ))}
        <ErrorMessage error={clear.error} />
      </td>
    </tr>
  );
}

/** The Scans screen. */
export function Scans(): ReactNode {
  const brandId = useBrand();
  const [days, setDays] = useState<number>(30);
  const today = Math.floor(Date.now() / dayMs) * dayMs;
  const fromMs = today - (days - 1) * dayMs;
  const range = { brandId, from: timestampFromMs(fromMs), to: timestampFromMs(today + dayMs) };
  const byDay = useQuery(ScanService.method.getScanStats, { ...range, groupBy: ScanGroupBy.DAY, order: ScanStatsOrder.KEY, limit: 400 });
  const byCountry = useQuery(ScanService.method.getScanStats, { ...range, groupBy: ScanGroupBy.COUNTRY, order: ScanStatsOrder.TOP, limit: 10 });
  const byClient = useQuery(ScanService.method.getScanStats, { ...range, groupBy: ScanGroupBy.CLIENT_CLASS, order: ScanStatsOrder.TOP, limit: 10 });
  const pages = useCursorPages();
  const alerts = useQuery(MintService.method.listMintEvents, {
    brandId,
    entityType: 'scan',
    limit: 20,
    ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }),
  });
  const counts = new Map((byDay.data?.groups ?? []).map((g) => [g.key, Number(g.scans)]));
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const clientName = (key: string) =>
    key === ''
      ? 'unknown'
      : key.startsWith('SCAN_CLIENT_CLASS_')
        ? enumName(ScanClientClass, ScanClientClass[key.slice('SCAN_CLIENT_CLASS_'.length) as keyof typeof ScanClientClass])
        : key;
  return (
    <>
      <h1>Scans</h1>
      <form className="inline-form" aria-label="Scan range" onSubmit={(e) => e.preventDefault()}>
        <label htmlFor="scan-range">Range</label>
        <select id="scan-range" value={days} onChange={(e) => setDays(Number(e.target.value))}>
          {ranges.map((r) => (
            <option key={r} value={r}>
              last {r} days
            </option>
          ))}
        </select>
        <span data-testid="scan-total">{total.toLocaleString('en-US')} scans</span>
      </form>
      <ErrorMessage error={byDay.error ?? byCountry.error ?? byClient.error} />
      <DayChart data={daysFrom(fromMs, days).map((day) => ({ day, value: counts.get(day) ?? 0 }))} unit="scans" title={`Scans per day, last ${days} days`} />
      <div className="chart-grid">
        <CategoryChart
          title="Top countries"
          unit="scans"
          data={(byCountry.data?.groups ?? []).map((g) => ({ key: g.key === '' ? 'unknown' : g.key, value: Number(g.scans) }))}
        />
        <CategoryChart
          title="Client classes"
          unit="scans"
          data={(byClient.data?.groups ?? []).map((g) => ({ key: clientName(g.key), value: Number(g.scans) }))}
        />
      </div>
      <section aria-labelledby="alerts-title">
        <h2 id="alerts-title">Alerts</h2>
        <ErrorMessage error={alerts.error} />
        {alerts.data?.events.length === 0 ? (
          <p>No scan alerts.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <caption>Scan alerts, newest first</caption>
              <thead>
                <tr>
                  <th>When (UTC)</th>
                  <th>Alert</th>
                  <th>Unit</th>
                  <th>Details</th>
                  <th>Suspect mark</th>
                </tr>
              </thead>
              <tbody>
                {(alerts.data?.events ?? []).map((e) => (
                  <Alert key={e.id} event={e} />
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager
          label="Alerts"
          page={pages.page}
          hasMore={alerts.data?.hasMore ?? false}
          onPrevious={pages.previous}
          onNext={() => pages.next(alerts.data?.nextCursor)}
        />
      </section>
    </>
  );
}
