// The part of the `oidc-provider` package's API the tests use (it ships no type declarations).
declare module 'oidc-provider' {
  import type { Server } from 'node:http';

  interface ProviderContext {
    readonly oidc: { readonly params?: Record<string, unknown> };
  }

  export default class Provider {
    constructor(
      issuer: string,
      configuration: Record<string, unknown> & {
        findAccount?: (ctx: ProviderContext, id: string) => Promise<{ accountId: string; claims: () => Promise<Record<string, unknown>> }>;
        clientBasedCORS?: (ctx: ProviderContext, origin: string, client: unknown) => boolean;
      },
    );
    on(event: string, listener: (ctx: ProviderContext) => void): void;
    listen(port: number, host: string): Server;
  }
}
