// The signed-in brand and the job watch shared by the screens.

import type { WatchMintJobResponse } from '@mint/contract';
import { useTransport } from '@connectrpc/connect-query';
import { useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useState } from 'react';
import { mintClient } from './api.ts';

/** The brand the screens work on (picked at sign-in). */
export const BrandContext = createContext<string>('');

/** The brand every call of the screens names. */
export function useBrand(): string {
  return useContext(BrandContext);
}

/** A job's latest progress from the WatchMintJob stream, and the stream's error if it failed. */
export interface JobWatch {
  readonly progress: WatchMintJobResponse | undefined;
  readonly error: unknown;
}

/**
 * Follows a job live over the WatchMintJob server stream until it is terminal; when it ends,
 * every cached read is refetched (KPIs, batches, units) so the screens show the outcome.
 */
export function useJobWatch(jobId: string | undefined): JobWatch {
  const brandId = useBrand();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const [progress, setProgress] = useState<WatchMintJobResponse | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    if (jobId === undefined) return;
    const abort = new AbortController();
    setProgress(undefined);
    setError(undefined);
    void (async () => {
      try {
        for await (const update of mintClient(transport).watchMintJob({ brandId, mintJobId: jobId }, { signal: abort.signal })) {
          setProgress(update);
          if (update.done) break;
        }
        await queryClient.invalidateQueries();
      } catch (err) {
        if (!abort.signal.aborted) setError(err);
      }
    })();
    return () => abort.abort();
  }, [jobId, brandId, transport, queryClient]);
  return { progress, error };
}
