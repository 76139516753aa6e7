// Batches: the brand's mint batches, newest first, keyset-paged, with status and progress.

import { useQuery } from '@connectrpc/connect-query';
import { IdentityMode, MintBatchStatus, MintService } from '@mint/contract';
import type { ReactNode } from 'react';
import { useBrand } from '../context.tsx';
import { enumName, ErrorMessage, formatTime, Pager, Progress, useCursorPages } from '../ui.tsx';

/** The Batches screen. */
export function Batches(): ReactNode {
  const brandId = useBrand();
  const pages = useCursorPages();
  const list = useQuery(MintService.method.listMintBatches, { brandId, limit: 20, ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }) });
  return (
    <>
      <h1>Batches</h1>
      <ErrorMessage error={list.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th>Batch</th>
              <th>Product</th>
              <th>Mode</th>
              <th>Status</th>
              <th>Progress</th>
              <th>Created (UTC)</th>
            </tr>
          </thead>
          <tbody>
            {(list.data?.batches ?? []).map((b) => (
              <tr key={b.id}>
                <td>
                  <a href={`#/batches/${b.id}`}>{b.id.slice(0, 8)}</a>
                </td>
                <td>{b.productSku ?? '—'}</td>
                <td>{enumName(IdentityMode, b.identityMode)}</td>
                <td>{enumName(MintBatchStatus, b.status)}</td>
                <td>
                  <Progress value={b.mintedQuantity} max={b.requestedQuantity} label={`Batch ${b.id.slice(0, 8)} progress`} />
                </td>
                <td>{formatTime(b.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data?.batches.length === 0 && (
        <p>
          No batches yet. <a href="#/mint">Mint</a>
        </p>
      )}
      <Pager
        label="Batches"
        page={pages.page}
        hasMore={list.data?.hasMore ?? false}
        onPrevious={pages.previous}
        onNext={() => pages.next(list.data?.nextCursor)}
      />
    </>
  );
}
