// Entry of the console: the session (sign-in link or form), then the screens behind one
// TanStack Query client and one Connect transport carrying the session's token.

import { TransportProvider } from '@connectrpc/connect-query';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode, useMemo, useState, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { createApiTransport, errorText, isTransient, isUnauthenticated } from './api.ts';
import { App } from './App.tsx';
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

function Root(): ReactNode {
  const [session, setSession] = useState<Session | null>(initialSession);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const update = (next: Session | null) => {
    storeSession(next);
    setSession(next);
  };
  // A call refused as unauthenticated (the token expired or was revoked) ends the session: sign in again.
  const onError = (error: unknown) => {
    if (!isUnauthenticated(error)) return;
    setNotice(errorText(error));
    update(null);
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new transport only when the token changes, not on every session object
  const transport = useMemo(() => (session === null ? null : createApiTransport(session.token)), [session?.token]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: one query client per signed-in token; onError reads the latest state through setters
  const queryClient = useMemo(() => new QueryClient({
    queryCache: new QueryCache({ onError }),
    mutationCache: new MutationCache({ onError }),
    defaultOptions: {
      queries: {
        retry: (count, error) => isTransient(error) && count < 2,
        refetchOnWindowFocus: false,
      },
    },
  }), [session?.token]);
  return (
    <QueryClientProvider client={queryClient}>
      {session === null || transport === null || session.brandId === null
        ? <SignIn session={session} notice={notice} onSignIn={(s) => { setNotice(undefined); update(s); }} />
        : (
          <TransportProvider transport={transport}>
            <App brandId={session.brandId} onSignOut={() => update(null)} onSwitchBrand={() => update({ token: session.token, brandId: null })} />
          </TransportProvider>
        )}
    </QueryClientProvider>
  );
}

createRoot(document.getElementById('root')!).render(<StrictMode><Root /></StrictMode>);
