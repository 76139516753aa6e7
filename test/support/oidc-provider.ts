// A real OpenID Connect provider for tests (the `oidc-provider` package, node-oidc-provider), on
// loopback: one public client (PKCE, refresh tokens) for the console at `consoleOrigin`, its
// built-in sign-in and consent pages (any login name is an account whose `sub` is that name), and
// access tokens issued as RS256 JWTs for the API (resource `urn:mint:api`), so the API checks them
// against the provider's JWKS.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

/** A running provider. */
export interface OidcProvider {
  /** Its issuer (http://127.0.0.1:<port>). */
  readonly issuer: string;
  /** Its JWKS URL, for AUTH_JWKS_URL. */
  readonly jwksUrl: string;
  /** The console's client id. */
  readonly clientId: string;
  /** Token endpoint calls seen, by grant type. */
  readonly grants: string[];
  close(): Promise<void>;
}

/** Starts a provider whose console client's redirect URI is `{consoleOrigin}/console/`; access tokens live `accessTokenTtl` seconds. */
export async function startOidcProvider(options: { readonly consoleOrigin: string; readonly accessTokenTtl: number }): Promise<OidcProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'e2e', use: 'sig', alg: 'RS256' };
  const redirect = `${options.consoleOrigin}/console/`;
  const clientId = 'mint-console';
  const grants: string[] = [];
  let server: Server | undefined;
  // The port is known once listening; the issuer names it, so the provider is made after a first listen.
  const probe = await new Promise<Server>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        token_endpoint_auth_method: 'none',
        application_type: 'web',
        redirect_uris: [redirect],
        post_logout_redirect_uris: [redirect],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['console-e2e-cookie-key-0123456789abcdef'] },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    scopes: ['openid', 'offline_access'],
    clientBasedCORS: (_ctx, origin) => origin === options.consoleOrigin,
    ttl: { AccessToken: options.accessTokenTtl, IdToken: 3600, RefreshToken: 3600, Session: 3600, Grant: 3600, Interaction: 600 },
    features: {
      devInteractions: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => 'urn:mint:api',
        useGrantedResource: async () => true,
        getResourceServerInfo: async () => ({
          scope: 'openid offline_access',
          audience: 'urn:mint:api',
          accessTokenFormat: 'jwt',
          accessTokenTTL: options.accessTokenTtl,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  provider.on('grant.success', (ctx) => {
    grants.push(String(ctx.oidc.params?.['grant_type'] ?? ''));
  });
  server = provider.listen(port, '127.0.0.1') as Server;
  await new Promise<void>((resolve) => server!.once('listening', () => resolve()));
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    clientId,
    grants,
    close: () =>
      new Promise<void>((resolve) => {
        server!.closeAllConnections();
        server!.close(() => resolve());
      }),
  };
}
