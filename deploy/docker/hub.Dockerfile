# syntax=docker/dockerfile:1
# The Flotilla hub image (REST API, wave scheduler, NATS distribution). It applies the committed
# migrations on start. Build from the repository root:
#   docker build -f deploy/docker/hub.Dockerfile -t ghcr.io/flotilla/hub:0.1.0 .
ARG NODE_VERSION=20.20

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.base.json ./
COPY api/package.json api/
COPY hub/package.json hub/
COPY agent/package.json agent/
COPY cli/package.json cli/
COPY test/package.json test/
RUN npm ci --workspace @flotilla/api --workspace @flotilla/hub --include-workspace-root --ignore-scripts
COPY api api
COPY hub hub
RUN npx tsc -b hub

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY api/package.json api/
COPY hub/package.json hub/
COPY agent/package.json agent/
COPY cli/package.json cli/
COPY test/package.json test/
RUN npm ci --omit=dev --workspace @flotilla/api --workspace @flotilla/hub --ignore-scripts

FROM gcr.io/distroless/nodejs20-debian12:nonroot
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/package.json ./
COPY --from=deps /app/node_modules node_modules
COPY --from=deps /app/api/package.json api/
COPY --from=build /src/api/dist api/dist
COPY --from=deps /app/hub/package.json hub/
COPY --from=build /src/hub/dist hub/dist
# The dashboard's files are served as written (hub/dist/dashboard/static.js reads them here).
COPY hub/src/dashboard/public hub/src/dashboard/public
# hub/dist/db/migrate.js reads ../../../migrations.
COPY migrations migrations
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/nodejs/bin/node", "hub/dist/main.js"]
