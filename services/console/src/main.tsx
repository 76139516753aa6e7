// Entry of the console: the session (sign-in link or form), then the screens behind one
// TanStack Query client and one Connect transport carrying the session's token.

import { TransportProvider } from '@connectrpc/connect-query';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { createApiTransport, errorText, isTransient, isUnauthenticated } from './api.ts';
import { App } from './App.tsx';
import { finishSignIn, oidcSettings, renew, renewalDelay, signOutAtProvider, startSignIn } from './oidc.ts';
import { sessionFromFragment, storedSession, storeSession, type Session } from './session.ts';
import { SignIn } from './screens/SignIn.tsx';
import './styles.css';

/** The session of a sign-in link (fragment removed from the address bar at once), else the stored one. */
function initialSession(): Session | null {
  const linked = sessionFromFragment(window.location.hash);
  if (linked !== null) {
    storeSession(linked);
    history.replaceState(null, '', `${window.location.pathname}#/overview`);
    return linked;
  }
  return storedSession();
}

/** The provider told by the API, when the console signs in with OpenID Connect. */
const oidc = oidcSettings();

function Root(): ReactNode {
  const [session, setSession] = useState<Session | null>(initialSession);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  // Bumped by every sign-in and sign-out (not by a silent renewal): a new API client and cache.
  const [epoch, setEpoch] = useState(0);
  const token = useRef(session?.token ?? '');
  token.current = session?.token ?? '';
  const update = (next: Session | null) => {
    storeSession(next);
    setSession(next);
    setEpoch((e) => e + 1);
  };
  // The way back from the provider's sign-in page: trade the code for tokens, then pick the brand.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once, at load
  useEffect(() => {
    if (oidc === null) return;
    finishSignIn(oidc).then(
      (tokens) => {
        if (tokens !== null)
          update({ token: tokens.accessToken, brandId: null, refreshToken: tokens.refreshToken, idToken: tokens.idToken, expiresAt: tokens.expiresAt });
      },
      (error: unknown) => setNotice(error instanceof Error ? error.message : String(error)),
    );
  }, []);
  // Silent renewal: new tokens from the refresh token before the access token expires.
  const refreshToken = session?.refreshToken;
  const expiresAt = session?.expiresAt;
  // biome-ignore lint/correctness/useExhaustiveDependencies: re-armed when the tokens change
  useEffect(() => {
    if (oidc === null || refreshToken === undefined || expiresAt === undefined) return;
    const timer = setTimeout(
      () => {
        renew(oidc, refreshToken).then(
          (tokens) => {
            setSession((current) => {
              if (current === null) return current;
              const next = {
                ...current,
                token: tokens.accessToken,
                refreshToken: tokens.refreshToken ?? refreshToken,
                idToken: tokens.idToken ?? current.idToken,
                expiresAt: tokens.expiresAt,
              };
              storeSession(next);
              return next;
            });
          },
          (error: unknown) => {
            setNotice(error instanceof Error ? error.message : String(error));
            update(null);
          },
        );
      },
      renewalDelay(expiresAt, Date.now()),
    );
    return () => clearTimeout(timer);
  }, [refreshToken, expiresAt]);
  const signOut = () => {
    const idToken = session?.idToken;
    const provider = session?.refreshToken !== undefined || idToken !== undefined;
    update(null);
    if (oidc !== null && provider) void signOutAtProvider(oidc, idToken);
  };
  // A call refused as unauthenticated (the token expired or was revoked) ends the session: sign in again.
  const onError = (error: unknown) => {
    if (!isUnauthenticated(error)) return;
    setNotice(errorText(error));
    update(null);
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: one transport per sign-in; it reads the current token on every call
  const transport = useMemo(() => (session === null ? null : createApiTransport(() => token.current)), [epoch, session === null]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: one query client per sign-in; onError reads the latest state through setters
  const queryClient = useMemo(
    () =>
      new QueryClient({
        queryCache: new QueryCache({ onError }),
        mutationCache: new MutationCache({ onError }),
        defaultOptions: {
          queries: {
            retry: (count, error) => isTransient(error) && count < 2,
            refetchOnWindowFocus: false,
          },
        },
      }),
    [epoch],
  );
  return (
    <QueryClientProvider client={queryClient}>
      {session === null || transport === null || session.brandId === null ? (
        <SignIn
          session={session}
          notice={notice}
          oidc={oidc}
          onOidc={() => {
            if (oidc !== null) startSignIn(oidc).catch((e: unknown) => setNotice(e instanceof Error ? e.message : String(e)));
          }}
          onSignIn={(s) => {
            setNotice(undefined);
            update(s);
          }}
        />
      ) : (
        <TransportProvider transport={transport}>
          <App brandId={session.brandId} onSignOut={signOut} onSwitchBrand={() => update({ ...session, brandId: null })} />
        </TransportProvider>
      )}
    </QueryClientProvider>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Root />
  </StrictMode>,
);
