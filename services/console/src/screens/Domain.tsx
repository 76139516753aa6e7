// Domain: the brand's own resolver domain (SetBrandResolverDomain) and the DNS record to create
// for it. The domain in force is the latest `brand_resolver_domain_set` event's (ListMintEvents).

import { useMutation, useQuery } from '@connectrpc/connect-query';
import { MintService, ResolverService } from '@mint/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent, type ReactNode } from 'react';
import { useBrand } from '../context.tsx';
import { ErrorMessage, formatTime, invalidFields, Pager, useCursorPages } from '../ui.tsx';

/** The record pointing `domain` at this service: a CNAME to the host the console is served from. */
function DnsRecord({ domain }: { readonly domain: string }): ReactNode {
  const target = window.location.hostname;
  return (
    <section aria-labelledby="dns-title">
      <h2 id="dns-title">DNS record to create</h2>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Type</th>
              <th>Value</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td>
                <code data-testid="dns-name">{domain}.</code>
              </td>
              <td>CNAME</td>
              <td>
                <code data-testid="dns-value">{target}.</code>
              </td>
            </tr>
          </tbody>
        </table>
      </div>
      <p className="hint">
        At a zone apex, create A/AAAA records to the ingress address instead. Add the host to the ingress in front of the API with a certificate for it (the
        resolver base is always https), then register the domain here, so no unit is printed with an address that does not answer yet.
      </p>
    </section>
  );
}

/** The Domain screen. */
export function Domain(): ReactNode {
  const brandId = useBrand();
  const queryClient = useQueryClient();
  const pages = useCursorPages();
  const history = useQuery(MintService.method.listMintEvents, {
    brandId,
    eventType: 'brand_resolver_domain_set',
    limit: 10,
    ...(pages.cursor === undefined ? {} : { cursor: pages.cursor }),
  });
  // The domain in force is the newest change's, read with the first page.
  const newest = useQuery(MintService.method.listMintEvents, { brandId, eventType: 'brand_resolver_domain_set', limit: 1 });
  const set = useMutation(ResolverService.method.setBrandResolverDomain);
  const latest = newest.data?.events[0];
  const current = set.data !== undefined ? (set.data.domain ?? '') : typeof latest?.payload?.['domain'] === 'string' ? latest.payload['domain'] : '';
  const [domain, setDomain] = useState('');
  const submit = (value: string) =>
    set.mutate(
      { brandId, domain: value },
      {
        onSuccess: () => void queryClient.invalidateQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes('ListMintEvents') }),
      },
    );
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    submit(domain.trim().toLowerCase());
  };
  return (
    <>
      <h1>Resolver domain</h1>
      <p>
        Units minted from now on carry <code>https://</code> and this domain in their Digital Link; without one they carry this service's address.
      </p>
      <dl className="details">
        <dt>Domain in force</dt>
        <dd data-testid="current-domain">{current === '' ? 'none' : current}</dd>
        {set.data !== undefined && (
          <>
            <dt>Resolver base URL</dt>
            <dd>
              <code>{set.data.resolverBaseUrl}</code>
            </dd>
          </>
        )}
      </dl>
      <form className="inline-form" onSubmit={onSubmit} aria-label="Set the resolver domain">
        <label htmlFor="domain">Domain</label>
        <input
          id="domain"
          aria-invalid={invalidFields(set.error).has('domain')}
          value={domain}
          placeholder="id.brand.example"
          onChange={(e) => setDomain(e.target.value)}
        />
        <button type="submit" disabled={set.isPending || domain.trim() === ''}>
          Set domain
        </button>
        {current !== '' && (
          <button type="button" className="danger" disabled={set.isPending} onClick={() => submit('')}>
            Remove domain
          </button>
        )}
      </form>
      {set.data !== undefined && <p role="status">{set.data.changed ? 'Domain changed.' : 'Nothing changed: the brand already had this domain.'}</p>}
      <ErrorMessage error={set.error ?? history.error} />
      {(current !== '' || domain.trim() !== '') && <DnsRecord domain={current !== '' ? current : domain.trim().toLowerCase()} />}
      {(history.data?.events.length ?? 0) > 0 && (
        <section aria-labelledby="domain-history-title">
          <h2 id="domain-history-title">Changes</h2>
          <ul className="events">
            {history.data!.events.map((e) => (
              <li key={e.id}>
                <time>{formatTime(e.occurredAt)}</time> {String(e.payload?.['previous'] ?? 'none')} → {String(e.payload?.['domain'] ?? 'none')}
              </li>
            ))}
          </ul>
          {(pages.page > 1 || history.data?.hasMore === true) && (
            <Pager
              label="Domain changes"
              page={pages.page}
              hasMore={history.data?.hasMore ?? false}
              onPrevious={pages.previous}
              onNext={() => pages.next(history.data?.nextCursor)}
            />
          )}
        </section>
      )}
    </>
  );
}
