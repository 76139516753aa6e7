// Signing in with an OpenID Connect provider: the authorization code flow with PKCE (S256) for a
// public client, silent renewal with the refresh token, and sign-out at the provider's
// end-session endpoint. The API serves the console with the provider's issuer and the console's
// client id in two meta tags (CONSOLE_OIDC_ISSUER, CONSOLE_OIDC_CLIENT_ID); without them the
// console signs in by session token only. The provider's access token is the API's bearer (the
// API checks it against the provider's JWKS, AUTH_JWKS_URL).

/** The provider and the console's client id there. */
export interface OidcSettings {
  readonly issuer: string;
  readonly clientId: string;
}

/** What a token answer gives the session. */
export interface OidcTokens {
  readonly accessToken: string;
  readonly refreshToken: string | undefined;
  readonly idToken: string | undefined;
  /** When the access token expires, in milliseconds. */
  readonly expiresAt: number;
}

/** The endpoints of the provider's discovery document that the console uses. */
interface Discovery {
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly end_session_endpoint?: string;
}

/** The provider told by the API in index.html, or null when the console signs in by token only. */
export function oidcSettings(): OidcSettings | null {
  const issuer = document.querySelector<HTMLMetaElement>('meta[name="mint-oidc-issuer"]')?.content ?? '';
  const clientId = document.querySelector<HTMLMetaElement>('meta[name="mint-oidc-client-id"]')?.content ?? '';
  return issuer === '' || clientId === '' ? null : { issuer, clientId };
}

/** Where the provider sends the browser back: the console's own address. */
export function redirectUri(): string {
  return `${window.location.origin}/console/`;
}

const pendingKey = 'mint.console.oidc';
let discovered: Promise<Discovery> | undefined;

/** The provider's discovery document (read once per page). */
function discover(settings: OidcSettings): Promise<Discovery> {
  discovered ??= fetch(`${settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`).then(async (res) => {
    if (!res.ok) throw new Error(`the sign-in provider's discovery document answered HTTP ${res.status}`);
    return (await res.json()) as Discovery;
  });
  return discovered;
}

/** `bytes` random bytes as base64url. */
function randomText(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/** Sends the browser to the provider's sign-in page, keeping the PKCE verifier and state for the way back. */
export async function startSignIn(settings: OidcSettings): Promise<void> {
  const endpoints = await discover(settings);
  const verifier = randomText(32);
  const state = randomText(16);
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  sessionStorage.setItem(pendingKey, JSON.stringify({ verifier, state }));
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: settings.clientId,
    redirect_uri: redirectUri(),
    scope: 'openid offline_access',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    prompt: 'consent',
  });
  window.location.assign(`${endpoints.authorization_endpoint}?${query}`);
}

/** A token endpoint answer, or its error in the provider's words. */
async function tokenRequest(settings: OidcSettings, form: Record<string, string>): Promise<OidcTokens> {
  const endpoints = await discover(settings);
  const res = await fetch(endpoints.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: settings.clientId, ...form }),
  });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok || typeof body['access_token'] !== 'string') {
    throw new Error(`the sign-in provider refused: ${String(body['error_description'] ?? body['error'] ?? `HTTP ${res.status}`)}`);
  }
  return {
    accessToken: body['access_token'],
    refreshToken: typeof body['refresh_token'] === 'string' ? body['refresh_token'] : undefined,
    idToken: typeof body['id_token'] === 'string' ? body['id_token'] : undefined,
    expiresAt: Date.now() + (typeof body['expires_in'] === 'number' ? body['expires_in'] : 300) * 1000,
  };
}

/**
 * On the way back from the provider (`?code=…&state=…`, or `?error=…`): checks the state, trades
 * the code and the PKCE verifier for tokens and drops the query from the address bar. Resolves to
 * null when the address is not a way back.
 */
export async function finishSignIn(settings: OidcSettings): Promise<OidcTokens | null> {
  const query = new URLSearchParams(window.location.search);
  if (!query.has('code') && !query.has('error')) return null;
  history.replaceState(null, '', `${window.location.pathname}#/overview`);
  const pending = JSON.parse(sessionStorage.getItem(pendingKey) ?? 'null') as { verifier: string; state: string } | null;
  sessionStorage.removeItem(pendingKey);
  if (query.has('error')) throw new Error(`the sign-in provider refused: ${query.get('error_description') ?? query.get('error')}`);
  if (pending === null || pending.state !== query.get('state')) throw new Error('the sign-in answer does not match a sign-in started here: sign in again');
  return tokenRequest(settings, { grant_type: 'authorization_code', code: query.get('code')!, redirect_uri: redirectUri(), code_verifier: pending.verifier });
}

/** New tokens for `refreshToken` (silent renewal: no page leaves the console). */
export function renew(settings: OidcSettings, refreshToken: string): Promise<OidcTokens> {
  return tokenRequest(settings, { grant_type: 'refresh_token', refresh_token: refreshToken });
}

/** Ends the provider's session too, coming back to the console signed out. */
export async function signOutAtProvider(settings: OidcSettings, idToken: string | undefined): Promise<void> {
  const endpoints = await discover(settings);
  if (endpoints.end_session_endpoint === undefined) return;
  const query = new URLSearchParams({
    client_id: settings.clientId,
    post_logout_redirect_uri: redirectUri(),
    ...(idToken === undefined ? {} : { id_token_hint: idToken }),
  });
  window.location.assign(`${endpoints.end_session_endpoint}?${query}`);
}

/** When to renew tokens expiring at `expiresAt`: three quarters into what is left, at least 5 s from now. */
export function renewalDelay(expiresAt: number, now: number): number {
  return Math.max(5_000, Math.floor((expiresAt - now) * 0.75));
}
