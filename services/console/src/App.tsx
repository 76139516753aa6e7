// The signed-in console: navigation and the screen named by the URL fragment (`#/batches/<id>`).

import { useQuery } from '@connectrpc/connect-query';
import { AccountService } from '@mint/contract';
import { useEffect, useState, type ReactNode } from 'react';
import { BrandContext } from './context.tsx';
import { Batch } from './screens/Batch.tsx';
import { Batches } from './screens/Batches.tsx';
import { Events } from './screens/Events.tsx';
import { Links } from './screens/Links.tsx';
import { Mint } from './screens/Mint.tsx';
import { Overview } from './screens/Overview.tsx';
import { Passport } from './screens/Passport.tsx';
import { Products } from './screens/Products.tsx';
import { Domain } from './screens/Domain.tsx';
import { Scans } from './screens/Scans.tsx';
import { Unit, UnitSearch } from './screens/Units.tsx';
import { WebhookDeliveries, Webhooks } from './screens/Webhooks.tsx';
import { ApiKeys } from './screens/ApiKeys.tsx';
import { Members } from './screens/Members.tsx';
import { ContainerPage, Containers } from './screens/Containers.tsx';
import { PassportAccess } from './screens/PassportAccess.tsx';
import { PassportStyle } from './screens/PassportStyle.tsx';

const screens = [
  ['overview', 'Overview'],
  ['mint', 'Mint'],
  ['batches', 'Batches'],
  ['units', 'Units'],
  ['containers', 'Containers'],
  ['products', 'Products'],
  ['links', 'Links'],
  ['domain', 'Domain'],
  ['scans', 'Scans'],
  ['webhooks', 'Webhooks'],
  ['api-keys', 'API keys'],
  ['members', 'Members'],
  ['passport-access', 'Passport access'],
  ['passport-style', 'Passport style'],
  ['events', 'Events'],
] as const;

/** Screens of the workspace's administration (the API answers them to owners alone): not in the navigation of other roles, though their address still opens them with the API's refusal. */
const ownerScreens: ReadonlySet<string> = new Set(['api-keys', 'members', 'passport-access', 'passport-style']);

/** The fragment's route: `#/batches/abc` is ['batches', 'abc']. */
function currentRoute(): string[] {
  const parts = window.location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts.length === 0 || parts[0] === '' ? ['overview'] : parts;
}

/** Navigation, the brand, sign-out and the current screen. */
export function App({
  brandId,
  onSignOut,
  onSwitchBrand,
}: {
  readonly brandId: string;
  readonly onSignOut: () => void;
  readonly onSwitchBrand: () => void;
}): ReactNode {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const onHash = () => setRoute(currentRoute());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  const [screen, id, more, levelKind, levelValue] = route;
  const memberships = useQuery(AccountService.method.listMyMemberships, {});
  const membership = memberships.data?.memberships.find((m) => m.brandId === brandId);
  return (
    <BrandContext.Provider value={brandId}>
      <header className="top">
        <span className="brand-name">Minting console</span>
        <nav aria-label="Screens">
          <ul>
            {screens
              .filter(([key]) => !ownerScreens.has(key) || membership === undefined || membership.role === 'owner')
              .map(([key, title]) => (
                <li key={key}>
                  <a href={`#/${key}`} aria-current={screen === key ? 'page' : undefined}>
                    {title}
                  </a>
                </li>
              ))}
          </ul>
        </nav>
        <div className="session">
          <span className="brand-id" title={`Brand workspace ${brandId}`}>
            {membership === undefined ? `Brand ${brandId.slice(0, 8)}` : `${membership.brandName} (${membership.role})`}
          </span>
          <button type="button" onClick={onSwitchBrand}>
            Switch brand
          </button>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main className="screen">
        {screen === 'overview' && <Overview />}
        {screen === 'mint' && <Mint />}
        {screen === 'batches' && id === undefined && <Batches />}
        {screen === 'batches' && id !== undefined && <Batch id={id} />}
        {screen === 'products' && id === undefined && <Products />}
        {screen === 'products' && id !== undefined && (
          <Passport
            key={route.join('/')}
            productId={id}
            lot={more === 'passport' && levelKind === 'lot' ? levelValue : undefined}
            serial={more === 'passport' && levelKind === 'unit' ? levelValue : undefined}
          />
        )}
        {screen === 'links' && <Links />}
        {screen === 'units' && id === undefined && <UnitSearch />}
        {screen === 'units' && id !== undefined && more !== undefined && <Unit key={`${id}/${more}`} gtin={id} serial={more} />}
        {screen === 'units' && id !== undefined && more === undefined && <Unit key={`/${id}`} gtin="" serial={id} />}
        {screen === 'containers' && id === undefined && <Containers />}
        {screen === 'containers' && id !== undefined && <ContainerPage key={id} sscc={id} />}
        {screen === 'domain' && <Domain />}
        {screen === 'scans' && <Scans />}
        {screen === 'webhooks' && id === undefined && <Webhooks />}
        {screen === 'webhooks' && id !== undefined && <WebhookDeliveries key={id} endpointId={id} />}
        {screen === 'api-keys' && <ApiKeys />}
        {screen === 'members' && <Members />}
        {screen === 'passport-access' && <PassportAccess />}
        {screen === 'passport-style' && <PassportStyle />}
        {screen === 'events' && <Events />}
        {!screens.some(([key]) => key === screen) && (
          <p>
            No such screen. <a href="#/overview">Overview</a>
          </p>
        )}
      </main>
    </BrandContext.Provider>
  );
}
