# syntax=docker/dockerfile:1
# The Flotilla agent image: `agent manager` (Deployment) and `agent daemon` (DaemonSet) in one.
# Build from the repository root:
#   docker build -f deploy/docker/agent.Dockerfile -t ghcr.io/flotilla/agent:0.1.0 .
ARG NODE_VERSION=20.20

# 1. Compile api and agent (TypeScript project references) with every dev dependency.
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.base.json ./
COPY api/package.json api/
COPY agent/package.json agent/
# npm ci checks every workspace against the lock file, so the other manifests come along.
COPY hub/package.json hub/
COPY cli/package.json cli/
COPY test/package.json test/
RUN npm ci --workspace @flotilla/api --workspace @flotilla/agent --include-workspace-root --ignore-scripts
COPY api api
COPY agent agent
# The image runs the bundle (agent/scripts/bundle.mjs): one file per thread instead of ~1,300
# modules, about 20 MiB less resident in each of the agent's two isolates.
RUN npx tsc -b agent && node agent/scripts/bundle.mjs

# 2. Production dependencies only, without the compiler and test tools.
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY api/package.json api/
COPY agent/package.json agent/
COPY hub/package.json hub/
COPY cli/package.json cli/
COPY test/package.json test/
RUN npm ci --omit=dev --workspace @flotilla/api --workspace @flotilla/agent --ignore-scripts

# 3. Runtime: distroless Node, no shell, no package manager, user 65532 (nonroot).
FROM gcr.io/distroless/nodejs20-debian12:nonroot
WORKDIR /app
ENV NODE_ENV=production
# Two malloc arenas instead of eight per core: the agent's native allocations come from a few
# threads, and with 5,000 pods cached the extra arenas held up to ~90 MiB of freed memory
# (test/bench/cloneset/README.md).
ENV MALLOC_ARENA_MAX=2
COPY --from=deps /app/package.json ./
COPY --from=deps /app/node_modules node_modules
COPY --from=deps /app/api/package.json api/
COPY --from=build /src/api/dist api/dist
COPY --from=deps /app/agent/package.json agent/
COPY --from=build /src/agent/dist agent/dist
# The CRI api.proto the node daemon loads at runtime.
COPY agent/proto agent/proto
USER 65532:65532
# --heap-growing-percent=25: after each full collection V8 lets the old generation grow by a
# quarter of what is live, not by up to 4x; the agent's heap is mostly a steady cache, so this
# costs few extra collections. With 5,000 pods cached it kept the agent near 190 MiB instead of
# 210–330 MiB; --optimize-for-size went lower (146 MiB) but doubled the agent's CPU
# (test/bench/cloneset/README.md).
# --max-semi-space-size=8: each isolate's young generation (two semi-spaces) stays at 8 MiB a
# semi-space instead of growing to 16 MiB in a burst and keeping that; after a 400-pod scale-up
# the agent is 15–19 MiB lighter for the same CPU. At 4 MiB the pods the informers replace during
# an in-place update outlive the young generation and cost up to a third more CPU
# (test/bench/kruise/README.md). Benchmarks read these flags from here.
ENTRYPOINT ["/nodejs/bin/node", "--heap-growing-percent=25", "--max-semi-space-size=8", "agent/dist/bundle/main.js"]
CMD ["manager"]
