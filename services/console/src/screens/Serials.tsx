// A batch's serials on the batch page: the reconciliation (units per lifecycle state and per
// decommissioning reason, balanced or not, its CSV) and the serial move form (a seq range or a
// pasted list; GetSerialMove follows a running move and lists every refused unit with why).

import { useMutation, useQuery } from '@connectrpc/connect-query';
import { DecommissionReason, MintService, SerialAction, SerialState, type SerialMoveReport } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type FormEvent, type ReactNode } from 'react';
import { isTransient } from '../api.ts';
import { useBrand } from '../context.tsx';
import { parseSerials } from '../form-text.ts';
import { enumName, ErrorMessage, invalidFields, Progress } from '../ui.tsx';

/** Actions offered, in lifecycle order, with what each does. */
export const actions: readonly (readonly [SerialAction, string])[] = [
  [SerialAction.ENCODE, 'encode (issued → encoded)'],
  [SerialAction.COMMISSION, 'commission (issued or encoded → commissioned)'],
  [SerialAction.SCRAP, 'scrap (issued or encoded → scrapped)'],
  [SerialAction.DECOMMISSION, 'decommission (commissioned → decommissioned)'],
  [SerialAction.REACTIVATE, 'reactivate (recalled or stolen → commissioned)'],
  [SerialAction.RETURN, 'return (issued → returned)'],
];

/** Decommissioning reasons, UNSPECIFIED left out. */
export const reasons = Object.values(DecommissionReason).filter((v): v is DecommissionReason => typeof v === 'number' && v !== DecommissionReason.UNSPECIFIED);

/** Refused units shown in the table (the report holds every one; the count says how many). */
const refusalsShown = 200;

/** True when a query key is one of the batch's reconciliation queries. */
function isReconciliation(key: readonly unknown[]): boolean {
  return JSON.stringify(key).includes('GetMintBatchReconciliation');
}

/** Saves `text` as a file named `name` through a temporary link. */
function saveText(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The batch's reconciliation: requested, minted, per state and per reason, balanced or not, and its CSV. */
export function Reconciliation({ batchId }: { readonly batchId: string }): ReactNode {
  const brandId = useBrand();
  const rec = useQuery(MintService.method.getMintBatchReconciliation, { brandId, mintBatchId: batchId });
  const r = rec.data;
  return (
    <section aria-labelledby="reconciliation-title">
      <h2 id="reconciliation-title">Reconciliation</h2>
      <ErrorMessage error={rec.error} />
      {r !== undefined && (
        <>
          <p role="status">
            <strong data-testid="reconciliation-balanced">{r.balanced ? 'Balanced' : 'Not balanced'}</strong>: {r.requested.toLocaleString('en-US')} requested,{' '}
            {r.minted.toLocaleString('en-US')} minted, {r.notMinted.toLocaleString('en-US')} not minted.
          </p>
          <div className="table-wrap">
            <table data-testid="reconciliation-states">
              <caption>Units per state</caption>
              <thead>
                <tr>
                  <th>State</th>
                  <th>Units</th>
                </tr>
              </thead>
              <tbody>
                {r.byState.map((c) => (
                  <tr key={c.name}>
                    <td>{c.name}</td>
                    <td>{c.count.toLocaleString('en-US')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {r.byReason.length > 0 && (
            <div className="table-wrap">
              <table data-testid="reconciliation-reasons">
                <caption>Decommissioned units per reason</caption>
                <thead>
                  <tr>
                    <th>Reason</th>
                    <th>Units</th>
                  </tr>
                </thead>
                <tbody>
                  {r.byReason.map((c) => (
                    <tr key={c.name}>
                      <td>{c.name}</td>
                      <td>{c.count.toLocaleString('en-US')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <button type="button" onClick={() => saveText(`reconciliation-${batchId}.csv`, r.csv, 'text/csv')}>
            Download the reconciliation CSV
          </button>
        </>
      )}
    </section>
  );
}

/** A move's progress and its refused units; asks GetSerialMove every second while it runs. */
export function MoveReport({ first }: { readonly first: SerialMoveReport }): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const running = (m: SerialMoveReport | undefined) => m?.status === 'running';
  const follow = useQuery(
    MintService.method.getSerialMove,
    { brandId, moveId: first.moveId },
    {
      enabled: running(first),
      refetchInterval: (q) => {
        if (running(q.state.data?.move)) return 1000;
        void queryClient.invalidateQueries({ predicate: (query) => isReconciliation(query.queryKey) });
        return false;
      },
    },
  );
  const m = follow.data?.move ?? first;
  return (
    <div className="move-report" data-testid="move-report">
      <p role="status">
        Move {m.moveId.slice(0, 8)} ({enumName(SerialAction, m.action)}
        {m.reason === DecommissionReason.UNSPECIFIED ? '' : `, ${enumName(DecommissionReason, m.reason)}`}):{' '}
        <strong data-testid="move-status">{m.status}</strong>, <span data-testid="move-moved">{m.moved.toLocaleString('en-US')}</span> moved,{' '}
        <span data-testid="move-refused">{m.refused.toLocaleString('en-US')}</span> refused of {m.total.toLocaleString('en-US')}
        {m.replayed ? ' (a repeat: this request moved nothing)' : ''}.
      </p>
      <Progress value={m.moved + m.refused} max={m.total} label="Serial move progress" />
      <ErrorMessage error={follow.error} />
      {m.refusals.length > 0 && (
        <div className="table-wrap">
          <table data-testid="move-refusals">
            <caption>
              Refused units{m.refusals.length > refusalsShown ? ` (first ${refusalsShown} of ${m.refusals.length.toLocaleString('en-US')})` : ''}
            </caption>
            <thead>
              <tr>
                <th>Serial</th>
                <th>Seq</th>
                <th>Why</th>
                <th>State</th>
                <th>Reason</th>
              </tr>
            </thead>
            <tbody>
              {m.refusals.slice(0, refusalsShown).map((u, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a refusal has no id, and an unknown serial may repeat
                <tr key={i}>
                  <td>
                    <code>{u.serial ?? ''}</code>
                  </td>
                  <td>{u.seq ?? ''}</td>
                  <td>{u.refusal}</td>
                  <td>{u.state === SerialState.UNSPECIFIED ? '' : enumName(SerialState, u.state)}</td>
                  <td>{u.reason === DecommissionReason.UNSPECIFIED ? '' : enumName(DecommissionReason, u.reason)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/** The form moving a seq range or a pasted list of serials, and the last move's report. */
export function MoveSerials({ batchId }: { readonly batchId: string }): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const move = useMutation(MintService.method.moveSerials);
  const [by, setBy] = useState<'range' | 'list'>('range');
  const [action, setAction] = useState<SerialAction>(SerialAction.DECOMMISSION);
  const [reason, setReason] = useState<DecommissionReason>(DecommissionReason.RECALLED);
  const [fromSeq, setFromSeq] = useState('');
  const [toSeq, setToSeq] = useState('');
  const [list, setList] = useState('');
  // One key per request: kept while the request only failed in transit (a retry is then safe),
  // a new one once the API answered it.
  const key = useRef<string>(crypto.randomUUID());
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    const target =
      by === 'range'
        ? {
            case: 'range' as const,
            value: { mintBatchId: batchId, ...(fromSeq === '' ? {} : { fromSeq: Number(fromSeq) }), ...(toSeq === '' ? {} : { toSeq: Number(toSeq) }) },
          }
        : { case: 'serials' as const, value: { serials: parseSerials(list) } };
    move.mutate(
      {
        brandId,
        action,
        target,
        idempotencyKey: key.current,
        ...(action === SerialAction.DECOMMISSION ? { reason } : {}),
      },
      {
        onSettled: (_data, error) => {
          if (error === null || !isTransient(error)) key.current = crypto.randomUUID();
          void queryClient.invalidateQueries({ predicate: (q) => isReconciliation(q.queryKey) || JSON.stringify(q.queryKey).includes('ListMintUnits') });
        },
      },
    );
  };
  const invalid = invalidFields(move.error);
  return (
    <section aria-labelledby="serial-move-title">
      <h2 id="serial-move-title">Move serials</h2>
      <form className="serial-move-form" onSubmit={onSubmit}>
        <fieldset>
          <legend>Which serials</legend>
          <label>
            <input type="radio" name="move-by" checked={by === 'range'} onChange={() => setBy('range')} /> This batch by seq range
          </label>
          <label>
            <input type="radio" name="move-by" checked={by === 'list'} onChange={() => setBy('list')} /> A pasted list of serials
          </label>
        </fieldset>
        {by === 'range' ? (
          <fieldset>
            <legend>Seq range (inclusive; blank: the whole batch)</legend>
            <label htmlFor="move-from-seq">First seq</label>
            <input
              id="move-from-seq"
              type="number"
              min={1}
              aria-invalid={invalid.has('range.from_seq') || invalid.has('from_seq')}
              value={fromSeq}
              onChange={(e) => setFromSeq(e.target.value)}
            />
            <label htmlFor="move-to-seq">Last seq</label>
            <input
              id="move-to-seq"
              type="number"
              min={1}
              aria-invalid={invalid.has('range.to_seq') || invalid.has('to_seq')}
              value={toSeq}
              onChange={(e) => setToSeq(e.target.value)}
            />
          </fieldset>
        ) : (
          <>
            <label htmlFor="move-serials">Serials (one per line, or separated by commas; up to 10,000)</label>
            <textarea
              id="move-serials"
              rows={5}
              aria-invalid={[...invalid].some((f) => f === 'serials' || f.startsWith('serials[') || f.startsWith('serials.'))}
              value={list}
              onChange={(e) => setList(e.target.value)}
            />
          </>
        )}
        <label htmlFor="move-action">Action</label>
        <select id="move-action" value={action} aria-invalid={invalid.has('action')} onChange={(e) => setAction(Number(e.target.value) as SerialAction)}>
          {actions.map(([a, label]) => (
            <option key={a} value={a}>
              {label}
            </option>
          ))}
        </select>
        {action === SerialAction.DECOMMISSION && (
          <>
            <label htmlFor="move-reason-code">Decommissioning reason</label>
            <select
              id="move-reason-code"
              value={reason}
              aria-invalid={invalid.has('reason')}
              onChange={(e) => setReason(Number(e.target.value) as DecommissionReason)}
            >
              {reasons.map((r) => (
                <option key={r} value={r}>
                  {enumName(DecommissionReason, r)}
                </option>
              ))}
            </select>
          </>
        )}
        <button type="submit" disabled={move.isPending}>
          Move serials
        </button>
      </form>
      <ErrorMessage error={move.error} />
      {move.data?.move !== undefined && <MoveReport key={move.data.move.moveId} first={move.data.move} />}
    </section>
  );
}
