// Sign-in: a session token and the brand workspace to work on. Dev mode's printed link carries
// both in the URL fragment and skips this screen.

import { createClient } from '@connectrpc/connect';
import { MintService } from '@mint/contract';
import { useState, type FormEvent, type ReactNode } from 'react';
import { createApiTransport } from '../api.ts';
import type { Session } from '../session.ts';
import { ErrorMessage } from '../ui.tsx';

/** The sign-in form; `session` pre-fills the token when only the brand is missing. */
export function SignIn({ session, notice, onSignIn }: { readonly session: Session | null; readonly notice: string | undefined; readonly onSignIn: (s: Session) => void }): ReactNode {
  const [token, setToken] = useState(session?.token ?? '');
  const [brandId, setBrandId] = useState(session?.brandId ?? '');
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      // The brand's KPIs are readable by every role of a member: the call proves both the token and the membership.
      await createClient(MintService, createApiTransport(token.trim())).getMintKpis({ brandId: brandId.trim() });
      onSignIn({ token: token.trim(), brandId: brandId.trim() });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="signin">
      <h1>Minting console</h1>
      {notice !== undefined && <p className="error" role="alert">Signed out: {notice}</p>}
      <form onSubmit={(e) => void submit(e)} aria-label="Sign in">
        <label htmlFor="token">Session token</label>
        <textarea id="token" required rows={3} value={token} onChange={(e) => setToken(e.target.value)} autoComplete="off" spellCheck={false} />
        <label htmlFor="brand">Brand workspace id</label>
        <input id="brand" required value={brandId} onChange={(e) => setBrandId(e.target.value)} autoComplete="off" spellCheck={false} />
        <button type="submit" disabled={busy}>Sign in</button>
        <ErrorMessage error={error} />
      </form>
      <p className="hint"><code>npm start</code> prints a sign-in link that opens the console signed in.</p>
    </main>
  );
}
