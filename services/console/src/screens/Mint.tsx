// Mint: a request form (product, quantity, identity and activation mode, lots, production batch).
// With a production batch, PreflightMintBatch runs first and its blocking reasons stop the submit;
// SubmitMintRequest's own preflight reasons are shown the same way. An accepted job is then
// followed live over WatchMintJob until it is terminal.

import { useMutation, useQuery } from '@connectrpc/connect-query';
import {
  ActivationMode,
  CatalogService,
  CommercialStatus,
  IdentityMode,
  MintJobStatus,
  MintReadinessStatus,
  MintService,
  type BlockingReason,
} from '@mint/contract';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useBrand, useJobWatch } from '../context.tsx';
import { enumName, ErrorMessage, Progress } from '../ui.tsx';

interface LotRow {
  readonly key: number;
  lotCode: string;
  qty: string;
}

/** The blocking reasons of a refused request, code and the API's message. */
function BlockingReasons({ reasons }: { readonly reasons: readonly BlockingReason[] }): ReactNode {
  return (
    <div className="blocked" role="alert">
      <h2>The request is blocked</h2>
      <ul>
        {reasons.map((r) => (
          <li key={r.code}>
            <code>{r.code}</code> {r.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A submitted job followed live to its end. */
function FollowJob({ jobId, batchId, requested }: { readonly jobId: string; readonly batchId: string; readonly requested: number }): ReactNode {
  const { progress, error } = useJobWatch(jobId);
  return (
    <section aria-labelledby="job-title" className="job">
      <h2 id="job-title">Job {jobId.slice(0, 8)}</h2>
      <Progress value={progress?.mintedQuantity ?? 0} max={progress?.requestedQuantity ?? requested} label="Mint job progress" />
      <p>
        Status: <strong data-testid="job-status">{progress === undefined ? 'queued' : enumName(MintJobStatus, progress.status).toUpperCase()}</strong>
        {progress?.failureReason !== undefined && <> ({progress.failureReason})</>}
      </p>
      <ErrorMessage error={error} />
      <p>
        <a href={`#/batches/${batchId}`}>Open the batch</a>
      </p>
    </section>
  );
}

/** The Mint screen. */
export function Mint(): ReactNode {
  const brandId = useBrand();
  const products = useQuery(CatalogService.method.listProducts, { brandId, limit: 100 });
  const preflight = useMutation(MintService.method.preflightMintBatch);
  const submit = useMutation(MintService.method.submitMintRequest);
  const [productId, setProductId] = useState('');
  const [quantity, setQuantity] = useState('10000');
  const [identityMode, setIdentityMode] = useState(IdentityMode.SERIAL);
  const [activationMode, setActivationMode] = useState(ActivationMode.ACTIVE_AT_MINT);
  const [productBatchId, setProductBatchId] = useState('');
  const [lots, setLots] = useState<LotRow[]>([]);
  const [nextKey, setNextKey] = useState(1);
  const [blocked, setBlocked] = useState<readonly BlockingReason[]>([]);
  const [job, setJob] = useState<{ jobId: string; batchId: string; requested: number } | undefined>(undefined);
  const chosen = productId !== '' ? productId : (products.data?.products[0]?.id ?? '');

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    setBlocked([]);
    setJob(undefined);
    preflight.reset();
    submit.reset();
    const requested = Number(quantity);
    const batch = productBatchId.trim();
    if (batch !== '') {
      const check = await preflight
        .mutateAsync({ brandId, productId: chosen, batchId: batch, requestedQuantity: requested, identityMode })
        .catch(() => undefined);
      if (check === undefined) return;
      if ((check.preflight?.blockingReasons.length ?? 0) > 0) {
        setBlocked(check.preflight!.blockingReasons);
        return;
      }
    }
    const answer = await submit
      .mutateAsync({
        brandId,
        productId: chosen,
        requestedQuantity: requested,
        identityMode,
        activationMode,
        idempotencyKey: crypto.randomUUID(),
        ...(batch === '' ? {} : { productBatchId: batch }),
        lots: identityMode === IdentityMode.BATCH ? lots.map((l) => ({ lotCode: l.lotCode.trim(), qty: Number(l.qty) })) : [],
      })
      .catch(() => undefined);
    if (answer === undefined) return;
    if (!answer.ok) setBlocked(answer.blockingReasons);
    else setJob({ jobId: answer.mintJobId!, batchId: answer.mintBatchId!, requested });
  };

  const product = products.data?.products.find((p) => p.id === chosen);
  return (
    <>
      <h1>Mint</h1>
      <ErrorMessage error={products.error} />
      <form className="mint-form" onSubmit={(e) => void onSubmit(e)} aria-label="Mint request">
        <label htmlFor="product">Product</label>
        <select id="product" value={chosen} onChange={(e) => setProductId(e.target.value)} required>
          {(products.data?.products ?? []).map((p) => (
            <option key={p.id} value={p.id}>
              {p.sku}: {p.name}
            </option>
          ))}
        </select>
        {product !== undefined && (
          <p className="hint">
            Commercial status {enumName(CommercialStatus, product.commercialStatus)}, mint readiness{' '}
            {enumName(MintReadinessStatus, product.mintReadinessStatus)}
          </p>
        )}
        <label htmlFor="quantity">Quantity</label>
        <input id="quantity" type="number" min={1} max={1_000_000} required value={quantity} onChange={(e) => setQuantity(e.target.value)} />
        <fieldset>
          <legend>Identity mode</legend>
          <label>
            <input type="radio" name="identity" checked={identityMode === IdentityMode.SERIAL} onChange={() => setIdentityMode(IdentityMode.SERIAL)} /> Serial
            (one identity per unit)
          </label>
          <label>
            <input type="radio" name="identity" checked={identityMode === IdentityMode.BATCH} onChange={() => setIdentityMode(IdentityMode.BATCH)} /> Batch
            (lots or product only)
          </label>
        </fieldset>
        <fieldset>
          <legend>Activation</legend>
          <label>
            <input
              type="radio"
              name="activation"
              checked={activationMode === ActivationMode.ACTIVE_AT_MINT}
              onChange={() => setActivationMode(ActivationMode.ACTIVE_AT_MINT)}
            />{' '}
            Active at mint
          </label>
          <label>
            <input
              type="radio"
              name="activation"
              checked={activationMode === ActivationMode.FIRST_SCAN}
              onChange={() => setActivationMode(ActivationMode.FIRST_SCAN)}
            />{' '}
            Manual activation (first_scan)
          </label>
        </fieldset>
        {identityMode === IdentityMode.BATCH && (
          <fieldset className="lots">
            <legend>Lots (quantities add up to the quantity)</legend>
            {lots.map((lot, i) => (
              <div className="lot" key={lot.key}>
                <label htmlFor={`lot-code-${lot.key}`}>Lot {i + 1} code</label>
                <input
                  id={`lot-code-${lot.key}`}
                  value={lot.lotCode}
                  required
                  maxLength={20}
                  onChange={(e) => setLots(lots.map((l) => (l.key === lot.key ? { ...l, lotCode: e.target.value } : l)))}
                />
                <label htmlFor={`lot-qty-${lot.key}`}>Lot {i + 1} quantity</label>
                <input
                  id={`lot-qty-${lot.key}`}
                  type="number"
                  min={1}
                  required
                  value={lot.qty}
                  onChange={(e) => setLots(lots.map((l) => (l.key === lot.key ? { ...l, qty: e.target.value } : l)))}
                />
                <button type="button" onClick={() => setLots(lots.filter((l) => l.key !== lot.key))} aria-label={`Remove lot ${i + 1}`}>
                  Remove
                </button>
              </div>
            ))}
            <button
              type="button"
              disabled={lots.length >= 100}
              onClick={() => {
                setLots([...lots, { key: nextKey, lotCode: '', qty: '' }]);
                setNextKey(nextKey + 1);
              }}
            >
              Add lot
            </button>
          </fieldset>
        )}
        <label htmlFor="production-batch">Production batch id (optional; checked by preflight first)</label>
        <input id="production-batch" value={productBatchId} onChange={(e) => setProductBatchId(e.target.value)} autoComplete="off" spellCheck={false} />
        <button type="submit" disabled={submit.isPending || preflight.isPending || chosen === ''}>
          Submit mint request
        </button>
      </form>
      <ErrorMessage error={preflight.error ?? submit.error} />
      {blocked.length > 0 && <BlockingReasons reasons={blocked} />}
      {job !== undefined && <FollowJob key={job.jobId} {...job} />}
    </>
  );
}
