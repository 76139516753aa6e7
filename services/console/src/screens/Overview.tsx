// Overview: the four dashboard KPIs, units minted per day, and the jobs in flight with live progress.

import { timestampDate } from '@bufbuild/protobuf/wkt';
import { useQuery, useTransport } from '@connectrpc/connect-query';
import { useQuery as useTanstackQuery } from '@tanstack/react-query';
import { MintBatchStatus, MintJobStatus, MintService, type MintBatch } from '@mint/contract';
import type { ReactNode } from 'react';
import { mintClient } from '../api.ts';
import { useBrand, useJobWatch } from '../context.tsx';
import { enumName, ErrorMessage, Progress } from '../ui.tsx';
import { DayChart } from '../charts.tsx';

/** Days shown in the chart, today included. */
const chartDays = 14;
/** Batch pages read for the chart and the in-flight list (100 batches each). */
const maxPages = 10;

/** The brand's batches created in the last `chartDays` days (newest first), read page by page. */
function useRecentBatches() {
  const brandId = useBrand();
  const transport = useTransport();
  return useTanstackQuery({
    queryKey: ['recent-batches', brandId],
    queryFn: async (): Promise<MintBatch[]> => {
      const since = Date.now() - chartDays * 86_400_000;
      const batches: MintBatch[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < maxPages; page++) {
        const answer = await mintClient(transport).listMintBatches({ brandId, limit: 100, ...(cursor === undefined ? {} : { cursor }) });
        const recent = answer.batches.filter((b) => b.createdAt !== undefined && timestampDate(b.createdAt).getTime() >= since);
        batches.push(...recent);
        if (!answer.hasMore || recent.length < answer.batches.length || answer.nextCursor === undefined) break;
        cursor = answer.nextCursor;
      }
      return batches;
    },
    refetchInterval: 15_000,
  });
}

/** Units minted per UTC day over the last `chartDays` days, oldest first. */
function perDay(batches: readonly MintBatch[]): { day: string; units: number }[] {
  const days = Array.from({ length: chartDays }, (_, i) => new Date(Date.now() - (chartDays - 1 - i) * 86_400_000).toISOString().slice(0, 10));
  const totals = new Map(days.map((d) => [d, 0]));
  for (const b of batches) {
    const day = timestampDate(b.createdAt!).toISOString().slice(0, 10);
    if (totals.has(day)) totals.set(day, totals.get(day)! + b.mintedQuantity);
  }
  return days.map((day) => ({ day, units: totals.get(day)! }));
}

/**
 * Jobs followed live at once: each WatchMintJob stream holds one of the six HTTP/1.1 connections a
 * browser opens to an origin, so the rest show the batch list's figures (refreshed every 15 s).
 */
const liveLimit = 4;

/** One job in flight: live progress from WatchMintJob when `live`, else the batch list's figures. */
function InFlight({ batch, live }: { readonly batch: MintBatch; readonly live: boolean }): ReactNode {
  const { progress, error } = useJobWatch(live ? batch.mintJobId : undefined);
  const minted = progress?.mintedQuantity ?? batch.mintedQuantity;
  return (
    <li>
      <a href={`#/batches/${batch.id}`}>
        {batch.productSku ?? batch.productId.slice(0, 8)}: batch {batch.id.slice(0, 8)}
      </a>
      <Progress value={minted} max={batch.requestedQuantity} label={`Batch ${batch.id.slice(0, 8)} progress`} />
      <span className="status">{progress === undefined ? (live ? 'waiting' : 'running') : enumName(MintJobStatus, progress.status)}</span>
      <ErrorMessage error={error} />
    </li>
  );
}

/** The Overview screen. */
export function Overview(): ReactNode {
  const brandId = useBrand();
  const kpis = useQuery(MintService.method.getMintKpis, { brandId }, { refetchInterval: 15_000 });
  const recent = useRecentBatches();
  const inFlight = (recent.data ?? []).filter((b) => b.status === MintBatchStatus.DRAFT && b.mintedQuantity < b.requestedQuantity);
  const figures: [string, bigint | undefined][] = [
    ['Tokens minted', kpis.data?.totalTokensMinted],
    ['Active tokens', kpis.data?.activeTokens],
    ['Batches created', kpis.data?.batchesCreated],
    ['Printed / applied', kpis.data?.exportedPrinted],
  ];
  return (
    <>
      <h1>Overview</h1>
      <ErrorMessage error={kpis.error} />
      <section aria-label="KPIs" className="kpis">
        {figures.map(([title, value]) => (
          <div className="kpi" key={title}>
            <span className="kpi-title">{title}</span>
            <span className="kpi-value" data-kpi={title}>
              {value === undefined ? '…' : value.toLocaleString('en-US')}
            </span>
          </div>
        ))}
      </section>
      <section aria-labelledby="chart-title">
        <h2 id="chart-title">Units minted per day</h2>
        <ErrorMessage error={recent.error} />
        <DayChart data={perDay(recent.data ?? []).map((d) => ({ day: d.day, value: d.units }))} unit="units" title="Units minted per day, last 14 days" />
      </section>
      <section aria-labelledby="inflight-title">
        <h2 id="inflight-title">Jobs in flight</h2>
        {inFlight.length === 0 ? (
          <p>No job is running.</p>
        ) : (
          <ul className="inflight">
            {inFlight.map((b, i) => (
              <InFlight key={b.id} batch={b} live={i < liveLimit} />
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
