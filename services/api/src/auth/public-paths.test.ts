import { describe, expect, it } from 'vitest';
import { isPublicPath } from './public-paths.ts';

describe('the public path allow-list', () => {
  it("admits health, the resolver, signed downloads, the console's files and the gRPC health service", () => {
    for (const path of [
      '/console',
      '/console/',
      '/console/assets/index-Ab12.js',
      '/healthz',
      '/readyz',
      '/r/acme/01/09506000134352/21/ABC',
      '/downloads/packs/x',
      '/grpc.health.v1.Health/Check',
      '/.well-known/gs1resolver',
      '/.well-known/did.json',
      '/.well-known/passport-status/acme',
    ]) {
      expect(isPublicPath(path), path).toBe(true);
    }
  });

  it('refuses the control plane, look-alike prefixes and path tricks', () => {
    for (const path of [
      '/',
      '/v1/products',
      '/v1/mint/jobs',
      '/mint.v1.MintService/GetMintBatch',
      '/mint.v1.CatalogService/ListProducts',
      '/healthz/extra',
      '/healthzz',
      '/r',
      '/r/',
      '/rx/acme',
      '/downloads',
      '/r/../v1/products',
      '/r/acme%2f..%2fv1',
      '/downloads/..\\v1',
      '/.well-known/gs1resolver/x',
      '/.well-known/',
      '/.well-known/did.json/x',
      '/.well-known/passport-status/',
      '/consoles',
      '/console-x/',
      '/console/../v1/products',
      '/console/..%2fv1',
    ]) {
      expect(isPublicPath(path), path).toBe(false);
    }
  });
});
