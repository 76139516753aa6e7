// Passport access credentials (#/passport-access): the keys a brand gives repairers, recyclers
// (legitimate interest) and market surveillance or customs (authority) to read the restricted
// sections of its passports. Issuing one for a class with an expiry (the key shown this once, gone
// as soon as anything else is done), the credentials newest first in pages of 20 (class, expiry,
// revoked; never their keys), revoking one after a confirmation. Owner only: the API answers
// anyone else with its refusal, shown as it is.

import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { useMutation, useQuery } from '@connectrpc/connect-query';
import { PassportAccessClass, PassportService, type PassportAccessKey } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useBrand } from '../context.tsx';
import { ErrorMessage, formatTime, invalidFields, Pager } from '../ui.tsx';

/** Credentials per page (the API answers the whole list, newest first; the screen pages it). */
export const accessKeysPerPage = 20;

const classes = [
  [PassportAccessClass.LEGITIMATE_INTEREST, 'legitimate interest (repairers, recyclers, refurbishers)'],
  [PassportAccessClass.AUTHORITY, 'authority (market surveillance, customs)'],
] as const;

/** The class in words. */
function className(c: PassportAccessClass): string {
  return c === PassportAccessClass.AUTHORITY ? 'authority' : c === PassportAccessClass.LEGITIMATE_INTEREST ? 'legitimate interest' : 'unspecified';
}

/** `YYYY-MM-DD` of the day `days` from today (UTC). */
function dayFromToday(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

/** A credential's state in words: active, expired, or revoked at its time. */
function credentialState(k: PassportAccessKey): string {
  if (k.revokedAt !== undefined) return `revoked ${formatTime(k.revokedAt)}`;
  return k.expiresAt !== undefined && Number(k.expiresAt.seconds) * 1000 <= Date.now() ? 'expired' : 'active';
}

const refresh = (queryClient: ReturnType<typeof useQueryClient>) =>
  queryClient.invalidateQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes('ListPassportAccessKeys') });

/** The passport access credentials screen. */
export function PassportAccess(): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const list = useQuery(PassportService.method.listPassportAccessKeys, { brandId });
  const issue = useMutation(PassportService.method.issuePassportAccessKey);
  const revoke = useMutation(PassportService.method.revokePassportAccessKey);
  const [name, setName] = useState('');
  const [accessClass, setAccessClass] = useState<PassportAccessClass>(PassportAccessClass.LEGITIMATE_INTEREST);
  const [expires, setExpires] = useState(dayFromToday(90));
  const [page, setPage] = useState(1);
  const [confirming, setConfirming] = useState<string | undefined>(undefined);
  const invalid = invalidFields(issue.error);
  const onIssue = (event: FormEvent) => {
    event.preventDefault();
    revoke.reset();
    setConfirming(undefined);
    // The end of the chosen day (UTC); no day sends no expiry, which the API refuses naming expires_at.
    const expiresAt = /^\d{4}-\d{2}-\d{2}$/.test(expires) ? timestampFromDate(new Date(`${expires}T23:59:59Z`)) : undefined;
    issue.mutate(
      { brandId, name, accessClass, ...(expiresAt === undefined ? {} : { expiresAt }) },
      {
        onSuccess: () => {
          setName('');
          setPage(1);
          void refresh(queryClient);
        },
      },
    );
  };
  const all = list.data?.credentials ?? [];
  const pages = Math.max(1, Math.ceil(all.length / accessKeysPerPage));
  const shown = all.slice((page - 1) * accessKeysPerPage, page * accessKeysPerPage);
  return (
    <>
      <h1>Passport access</h1>
      <p className="hint">
        A credential lets a repairer, a recycler or an authority read the restricted sections of this brand&apos;s passports: it is sent as the{' '}
        <code>X-Passport-Key</code> header (or a Bearer token) to the resolver, until it expires or is revoked. Sections are restricted in each passport&apos;s
        editor (<a href="#/products">Products</a>, then Passport).
      </p>
      <form className="grid-form" onSubmit={onIssue} aria-labelledby="access-new-title">
        <h2 id="access-new-title">Issue a credential</h2>
        <label htmlFor="access-name">Issued to</label>
        <input id="access-name" aria-invalid={invalid.has('name')} value={name} placeholder="Repair shop Berlin" onChange={(e) => setName(e.target.value)} />
        <label htmlFor="access-class">Reads</label>
        <select
          id="access-class"
          aria-invalid={invalid.has('access_class')}
          value={accessClass}
          onChange={(e) => setAccessClass(Number(e.target.value) as PassportAccessClass)}
        >
          {classes.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        <label htmlFor="access-expires">Expires (end of day, UTC)</label>
        <input
          id="access-expires"
          type="date"
          aria-invalid={invalid.has('expires_at')}
          aria-describedby="access-expires-hint"
          value={expires}
          onChange={(e) => setExpires(e.target.value)}
        />
        <p className="hint" id="access-expires-hint">
          At most a year from today.
        </p>
        <div className="actions">
          <button type="submit" disabled={issue.isPending}>
            Issue credential
          </button>
        </div>
        <ErrorMessage error={issue.error} />
      </form>
      {issue.data !== undefined && (
        <div className="secret" role="status">
          <p>
            <strong>Credential for {issue.data.credential?.name}</strong> ({className(issue.data.credential?.accessClass ?? PassportAccessClass.UNSPECIFIED)},
            until {formatTime(issue.data.credential?.expiresAt)} UTC). Copy the key now: it is not shown again.
          </p>
          <p>
            <code data-testid="passport-key">{issue.data.key}</code>
          </p>
        </div>
      )}
      {revoke.data?.credential !== undefined && <p role="status">Credential for {revoke.data.credential.name} revoked: the resolver refuses it from now on.</p>}
      <ErrorMessage error={list.error ?? revoke.error} />
      {list.data !== undefined && all.length === 0 && <p>No credentials yet.</p>}
      {shown.length > 0 && (
        <div className="table-wrap">
          <table data-testid="passport-credentials">
            <caption>Credentials, newest first ({all.length})</caption>
            <thead>
              <tr>
                <th>Issued to</th>
                <th>Class</th>
                <th>Issued (UTC)</th>
                <th>Expires (UTC)</th>
                <th>State</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>{className(k.accessClass)}</td>
                  <td>{formatTime(k.createdAt)}</td>
                  <td>{formatTime(k.expiresAt)}</td>
                  <td data-testid="credential-state">{credentialState(k)}</td>
                  <td className="row-actions">
                    {k.revokedAt === undefined && confirming !== k.id && (
                      <button type="button" className="danger" onClick={() => setConfirming(k.id)}>
                        Revoke<span className="visually-hidden"> the credential for {k.name}</span>
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
                              { brandId, credentialId: k.id },
                              {
                                onSuccess: () => {
                                  setConfirming(undefined);
                                  issue.reset();
                                  void refresh(queryClient);
                                },
                              },
                            )
                          }
                        >
                          Yes, revoke<span className="visually-hidden"> the credential for {k.name}</span>
                        </button>
                        <button type="button" className="secondary" onClick={() => setConfirming(undefined)}>
                          Keep<span className="visually-hidden"> the credential for {k.name}</span>
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
        label="Credentials"
        page={Math.min(page, pages)}
        hasMore={page < pages}
        onPrevious={() => setPage((p) => Math.max(1, p - 1))}
        onNext={() => setPage((p) => Math.min(pages, p + 1))}
      />
    </>
  );
}
