// The resolver's container routes: GET/HEAD/OPTIONS of /r/{slug}/00/{sscc} (GS1 Digital Link, AI
// 00), and of /00/{sscc} on the brand's own resolver domain (see brandDomainRoutes). Transport
// only: the answer (state to anyone, contents to the brand) is the use cases' `answerContainer`.

import { brandResolverBaseUrl, resolverPrefix } from '@mint/domain';
import { sendAnswer, type Route } from '@mint/http';
import * as useCases from '@mint/usecases';
import { credentialsFrom } from '../auth/credentials.ts';
import { isPublicPath } from '../auth/public-paths.ts';
import type { ContainerAnswer } from './routes.ts';

const containerPath = `${resolverPrefix}:slug/00/:sscc`;
if (!isPublicPath(`${resolverPrefix}acme/00/000000000000000000`)) throw new Error('container paths must be on the public path allow-list');

/** The container answers on `ctx`. */
export function containerAnswer(ctx: useCases.UseCaseContext): ContainerAnswer {
  return (req, res, request) => sendAnswer(req, res, useCases.answerContainer(ctx, req, credentialsFrom(req.headers), request)) as Promise<void>;
}

/** The container routes under `/r/{slug}`; `publicBaseUrl` is the origin the containers' URIs start with. */
export function containerResolverRoutes(ctx: useCases.UseCaseContext, options: { readonly publicBaseUrl: string }): Route[] {
  const answer = containerAnswer(ctx);
  return [
    {
      methods: ['GET', 'HEAD', 'OPTIONS'],
      path: containerPath,
      handler: ({ req, res, params, queryString }) => {
        const slug = params['slug'] ?? '';
        return answer(req, res, { slug, sscc: params['sscc'] ?? '', queryString, root: brandResolverBaseUrl(options.publicBaseUrl, slug) });
      },
    },
  ];
}
