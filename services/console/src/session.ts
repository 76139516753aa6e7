// The signed-in session: a bearer token and the brand worked on, kept in sessionStorage (this tab
// only). A sign-in link carries them in the URL fragment (`#token=...&brand=...`), which browsers
// never send to a server, so the token reaches no access log; it is read once and removed.

/** What the console works with once signed in. */
export interface Session {
  /** The session token (JWT) sent as `Authorization: Bearer`. */
  readonly token: string;
  /** The brand workspace every call names; null until one is picked. */
  readonly brandId: string | null;
  /** With an OpenID Connect sign-in: the refresh token that renews `token` silently. */
  readonly refreshToken?: string | undefined;
  /** With an OpenID Connect sign-in: the ID token, the hint of the provider's sign-out. */
  readonly idToken?: string | undefined;
  /** With an OpenID Connect sign-in: when `token` expires, in milliseconds. */
  readonly expiresAt?: number | undefined;
}

const storageKey = 'mint.console.session';

/** The session stored for this tab, or null. */
export function storedSession(): Session | null {
  try {
    const raw = sessionStorage.getItem(storageKey);
    if (raw === null) return null;
    const value = JSON.parse(raw) as Partial<Session>;
    if (typeof value.token !== 'string' || value.token === '') return null;
    return {
      token: value.token,
      brandId: typeof value.brandId === 'string' ? value.brandId : null,
      ...(typeof value.refreshToken === 'string' ? { refreshToken: value.refreshToken } : {}),
      ...(typeof value.idToken === 'string' ? { idToken: value.idToken } : {}),
      ...(typeof value.expiresAt === 'number' ? { expiresAt: value.expiresAt } : {}),
    };
  } catch {
    return null;
  }
}

/** Keeps `session` for this tab (null forgets it: sign-out). */
export function storeSession(session: Session | null): void {
  if (session === null) sessionStorage.removeItem(storageKey);
  else sessionStorage.setItem(storageKey, JSON.stringify(session));
}

/**
 * A sign-in link's session from the fragment (`#token=...`, optionally `&brand=...`), or null when
 * the fragment carries none. The caller replaces the fragment so the token leaves the address bar.
 */
export function sessionFromFragment(hash: string): Session | null {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const token = params.get('token');
  if (token === null || token === '') return null;
  const brand = params.get('brand');
  return { token, brandId: brand === null || brand === '' ? null : brand };
}
