#!/usr/bin/env bash
# Makes a fresh machine ready to run Flotilla's demo and tests: starts Postgres if it is down,
# installs the OS packages and npm dependencies, and builds (or reuses) the pinned
# Kubernetes, etcd, kwok, helm and nats-server binaries. Safe to run again; warm runs take seconds.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH="$PATH:/usr/local/go/bin"
log() { printf '[setup] %s\n' "$*" >&2; }

# OS tools the harness shells out to.
missing=()
command -v openssl >/dev/null || missing+=(openssl)
command -v setpriv >/dev/null || missing+=(util-linux)
command -v pg_isready >/dev/null || missing+=(postgresql-client)
# containerd (CRI) and a local OCI registry for the node daemon's image-pull tests.
command -v containerd >/dev/null || missing+=(containerd)
command -v docker-registry >/dev/null || missing+=(docker-registry)
# Headless Chromium for the dashboard's browser test (test/integration/cli).
command -v chromium >/dev/null || missing+=(chromium)
# Prometheus for the metric-analysis tests (test/env/src/prometheus.ts).
command -v prometheus >/dev/null || missing+=(prometheus)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Postgres on 127.0.0.1:5432 (trust auth), as the machine image provides it.
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  log "starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi
pg_isready -h 127.0.0.1 -p 5432 >/dev/null || { log "PostgreSQL did not come up"; exit 1; }

# No machine-wide nats-server: the demo and every suite start their own TLS NATS cluster
# (test/env/src/nats.ts) from the pinned build below.

# npm dependencies: a clean install when the lockfile changed since the last one.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] || [ -n "${CI:-}" ]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi

bash test/env/build-tools.sh
