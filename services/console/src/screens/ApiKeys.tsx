// API keys (#/api-keys): the brand's keys, newest first and keyset-paged, without secrets; making
// one with a name and scopes (the full key shown this once); revoking one after a confirmation.
// Owner only: the API answers anyone else with its refusal, shown as it is.

import { useMutation, useQuery } from '@connectrpc/connect-query';
import { WorkspaceService, type ApiKey } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useBrand } from '../context.tsx';
import { ErrorMessage, formatTime, invalidFields, Pager, useCursorPages } from '../ui.tsx';

/** The scopes a key can carry, with what each lets it do (workspace:admin is never a key's). */
export const apiKeyScopes = [
  ['mint:write', 'submit and process mint jobs, activate units, ask for packs, move serials'],
  ['mint:read', 'read batches, units, events, KPIs and packs; download packs'],
  ['products:write', 'create and update products and production batches, import CSV files, write passports'],
  ['products:read', 'read products, imports and passports'],
  ['links:write', 'create, replace, delete and import resolver links'],
  ['links:read', 'read resolver links and link imports'],
  ['webhooks:write', 'manage webhook endpoints and deliveries'],
  ['scans:write', 'send scans into the scan ledger'],
  ['scans:read', "read scan statistics and a unit's scans"],
  ['scans:manage', 'change scan-alert rules, clear a suspect unit'],
] as const;

const refresh = (queryClient: ReturnType<typeof useQueryClient>) =>
  queryClient.invalidateQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes('ListApiKeys') });

/** A key's state in words. */
function keyState(k: ApiKey): string {
  return k.revokedAt === undefined ? 'active' : `revoked ${formatTime(k.revokedAt)}`;
}

/** The API keys screen. */
export function ApiKeys(): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const pages = useCursorPages();
  const list = useQuery(WorkspaceService.method.listApiKeys, { brandId, limit: 20, ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }) });
  const create = useMutation(WorkspaceService.method.createApiKey);
  const revoke = useMutation(WorkspaceService.method.revokeApiKey);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['mint:read']);
  const [confirming, setConfirming] = useState<string | undefined>(undefined);
  const invalid = invalidFields(create.error);
  const onCreate = (event: FormEvent) => {
    event.preventDefault();
    revoke.reset();
    create.mutate(
      { brandId, name, scopes },
      {
        onSuccess: () => {
          setName('');
          pages.reset();
          void refresh(queryClient);
        },
      },
    );
  };
  const toggle = (scope: string, on: boolean) => setScopes((s) => (on ? [...s.filter((x) => x !== scope), scope] : s.filter((x) => x !== scope)));
  const keys = list.data?.apiKeys ?? [];
  return (
    <>
      <h1>API keys</h1>
      <p className="hint">
        A key lets a program call the API for this brand with the scopes it was given (send it as the <code>x-api-key</code> header). Keys never administer the
        workspace.
      </p>
      {list.data !== undefined && !list.data.apiAccessEnabled && (
        <p className="notice" role="status" data-testid="api-access">
          API access is not enabled for this workspace (early access): its keys are refused until it is (<code>mintctl workspace enable-api</code>).
        </p>
      )}
      <form className="grid-form" onSubmit={onCreate} aria-labelledby="key-new-title">
        <h2 id="key-new-title">Create a key</h2>
        <label htmlFor="key-name">Name</label>
        <input id="key-name" aria-invalid={invalid.has('name')} value={name} placeholder="warehouse printer" onChange={(e) => setName(e.target.value)} />
        <fieldset className="scopes" aria-invalid={[...invalid].some((f) => f.startsWith('scopes'))}>
          <legend>Scopes</legend>
          {apiKeyScopes.map(([scope, what]) => (
            <label key={scope} className="check">
              <input type="checkbox" checked={scopes.includes(scope)} onChange={(e) => toggle(scope, e.target.checked)} /> <code>{scope}</code>{' '}
              <span className="hint">{what}</span>
            </label>
          ))}
        </fieldset>
        <div className="actions">
          <button type="submit" disabled={create.isPending}>
            Create key
          </button>
        </div>
        <ErrorMessage error={create.error} />
      </form>
      {create.data !== undefined && (
        <div className="secret" role="status">
          <p>
            <strong>API key {create.data.apiKey?.name}</strong> with {create.data.apiKey?.scopes.join(', ')}. Copy it now: it is not shown again.
          </p>
          <p>
            <code data-testid="api-key">{create.data.key}</code>
          </p>
        </div>
      )}
      {revoke.data?.apiKey !== undefined && (
        <p role="status">
          Key {revoke.data.apiKey.name} (<code>{revoke.data.apiKey.prefix}</code>) revoked: it is refused from now on.
        </p>
      )}
      <ErrorMessage error={list.error ?? revoke.error} />
      {list.data !== undefined && keys.length === 0 && <p>No keys yet.</p>}
      {keys.length > 0 && (
        <div className="table-wrap">
          <table>
            <caption>Keys, newest first</caption>
            <thead>
              <tr>
                <th>Name</th>
                <th>Starts with</th>
                <th>Scopes</th>
                <th>Created (UTC)</th>
                <th>Last used (UTC)</th>
                <th>State</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.prefix}</code>
                  </td>
                  <td>{k.scopes.join(', ')}</td>
                  <td>{formatTime(k.createdAt)}</td>
                  <td>{k.lastUsedAt === undefined ? 'never' : formatTime(k.lastUsedAt)}</td>
                  <td data-testid="key-state">{keyState(k)}</td>
                  <td className="row-actions">
                    {k.revokedAt === undefined && confirming !== k.id && (
                      <button type="button" className="danger" onClick={() => setConfirming(k.id)}>
                        Revoke<span className="visually-hidden"> {k.name}</span>
                      </button>
                    )}
                    {confirming === k.id && (
                      <>
                        <button
                          type="button"
                          className="danger"
                          disabled={revoke.isPending}
                          onClick={() =>
                            revoke.mutate(
                              { brandId, apiKeyId: k.id },
                              {
                                onSuccess: () => {
                                  setConfirming(undefined);
                                  create.reset();
                                  void refresh(queryClient);
                                },
                              },
                            )
                          }
                        >
                          Yes, revoke<span className="visually-hidden"> {k.name}</span>
                        </button>
                        <button type="button" className="secondary" onClick={() => setConfirming(undefined)}>
                          Keep<span className="visually-hidden"> {k.name}</span>
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        label="Keys"
        page={pages.page}
        hasMore={list.data?.hasMore ?? false}
        onPrevious={pages.previous}
        onNext={() => pages.next(list.data?.nextCursor)}
      />
    </>
  );
}
