// Sign-in: a session token, then the brand workspace to work on, picked from the user's
// memberships (AccountService.ListMyMemberships). Dev mode's printed link carries the token and
// the demo brand in the URL fragment and skips this screen; "Switch brand" comes back here with
// the token kept.

import { createClient } from '@connectrpc/connect';
import { AccountService, type Membership } from '@mint/contract';
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { createApiTransport } from '../api.ts';
import type { OidcSettings } from '../oidc.ts';
import type { Session } from '../session.ts';
import { ErrorMessage } from '../ui.tsx';

/** The memberships of `token`'s user. */
async function membershipsOf(token: string): Promise<Membership[]> {
  return (await createClient(AccountService, createApiTransport(token)).listMyMemberships({})).memberships;
}

/** The sign-in screen; `session` (token without a brand) skips to the brand choice. */
export function SignIn({
  session,
  notice,
  oidc,
  onOidc,
  onSignIn,
}: {
  readonly session: Session | null;
  readonly notice: string | undefined;
  readonly oidc: OidcSettings | null;
  readonly onOidc: () => void;
  readonly onSignIn: (s: Session) => void;
}): ReactNode {
  const [token, setToken] = useState(session?.token ?? '');
  const [memberships, setMemberships] = useState<Membership[] | undefined>(undefined);
  const [brandId, setBrandId] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  const load = async (value: string) => {
    setBusy(true);
    setError(undefined);
    try {
      const found = await membershipsOf(value);
      setMemberships(found);
      setBrandId(found[0]?.brandId ?? '');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  // Switching brand: the token is known, go straight to the choice.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the session changes; load is a new function every render
  useEffect(() => {
    if (session !== null) void load(session.token);
  }, [session]);

  const onToken = (event: FormEvent) => {
    event.preventDefault();
    void load(token.trim());
  };
  const onBrand = (event: FormEvent) => {
    event.preventDefault();
    // An OpenID Connect session keeps its refresh and ID tokens.
    if (brandId !== '') onSignIn({ ...(session ?? {}), token: session?.token ?? token.trim(), brandId });
  };

  return (
    <main className="signin">
      <h1>Minting console</h1>
      {notice !== undefined && (
        <p className="error" role="alert">
          Signed out: {notice}
        </p>
      )}
      {memberships === undefined && oidc !== null && session === null && (
        <p>
          <button type="button" onClick={onOidc}>
            Sign in with {new URL(oidc.issuer).host}
          </button>
        </p>
      )}
      {memberships === undefined ? (
        <form onSubmit={onToken} aria-label="Sign in">
          <label htmlFor="token">Session token</label>
          <textarea id="token" required rows={3} value={token} onChange={(e) => setToken(e.target.value)} autoComplete="off" spellCheck={false} />
          <button type="submit" disabled={busy}>
            Sign in
          </button>
          <p className="hint">
            <code>npm start</code> prints a sign-in link that opens the console signed in; <code>npx mintctl token issue --user &lt;id&gt;</code> issues a
            token.
          </p>
        </form>
      ) : memberships.length === 0 ? (
        <p role="alert">This user is a member of no brand workspace.</p>
      ) : (
        <form onSubmit={onBrand} aria-label="Choose a brand">
          <label htmlFor="brand">Brand workspace</label>
          <select id="brand" value={brandId} onChange={(e) => setBrandId(e.target.value)}>
            {memberships.map((m) => (
              <option key={m.brandId} value={m.brandId}>
                {m.brandName} ({m.role})
              </option>
            ))}
          </select>
          <button type="submit">Open the console</button>
        </form>
      )}
      <ErrorMessage error={error} />
    </main>
  );
}
