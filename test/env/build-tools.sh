#!/usr/bin/env bash
# Builds the pinned Kubernetes, etcd, kwok, helm and nats-server binaries from the Go module
# proxy into a cache keyed by version. A tool whose binaries are present is not rebuilt, so a
# warm run costs seconds. Usage: build-tools.sh [k8s|etcd|kwok|helm|nats|cri-api|kruise ...]
# (kruise, for bench:kruise only, is built only when named.)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
TOOLS_DIR=${FLOTILLA_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/flotilla/tools}
mkdir -p "$TOOLS_DIR"
export GOTOOLCHAIN=local CGO_ENABLED=0
export GOFLAGS="-mod=mod -buildvcs=false"

log() { printf '[build-tools] %s\n' "$*" >&2; }

# have DIR BIN... : true when every binary exists and is executable
have() {
  local dir=$1; shift
  for b in "$@"; do [ -x "$dir/bin/$b" ] || return 1; done
}

# finish TMP DIR : moves a finished build into place atomically, so an interrupted build never
# leaves a half-filled cache entry that the next run would trust.
finish() {
  rm -rf "$2"
  mv "$1" "$2"
}

build_k8s() {
  local dir=$TOOLS_DIR/k8s-$K8S_VERSION bins=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
  if have "$dir" "${bins[@]}"; then log "k8s $K8S_VERSION cached"; return; fi
  log "building k8s $K8S_VERSION (cold: 20-40 min on 2 cores)"
  local tmp=$dir.tmp.$$ staging=v0${K8S_VERSION#v1} minor
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  rm -rf "$tmp"; mkdir -p "$tmp/src" "$tmp/bin"
  (
    cd "$tmp/src"
    go mod download k8s.io/kubernetes@"$K8S_VERSION"
    local kmod
    kmod=$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$K8S_VERSION.mod
    printf 'module local/k8sbins\n\ngo 1.26.0\n' > go.mod
    # k/k requires its staging modules at v0.0.0 through replaces that do not apply to
    # dependents; point each one at its published v0.<minor>.<patch> instead.
    for m in $(sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\) v0\.0\.0$#\1#p' "$kmod"); do
      go mod edit -replace="$m=$m@$staging"
    done
    go mod edit -require=k8s.io/kubernetes@"$K8S_VERSION"
    local pkgs=() p
    for b in "${bins[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
    go get -tool $(for p in "${pkgs[@]}"; do printf '%s@%s ' "$p" "$K8S_VERSION"; done)
    local ldf="-s -w"
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldf="$ldf -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
    done
    go build -trimpath -tags=selinux,notest,grpcnotrace -ldflags="$ldf" -o "$tmp/bin/" "${pkgs[@]}"
  )
  "$tmp/bin/kube-apiserver" --version >&2
  rm -rf "$tmp/src"
  finish "$tmp" "$dir"
}

build_etcd() {
  local dir=$TOOLS_DIR/etcd-$ETCD_VERSION
  if have "$dir" etcd etcdctl; then log "etcd $ETCD_VERSION cached"; return; fi
  log "building etcd $ETCD_VERSION"
  local tmp=$dir.tmp.$$
  rm -rf "$tmp"; mkdir -p "$tmp/src" "$tmp/bin"
  (
    cd "$tmp/src"
    # etcd's server module carries replace directives, so `go install` refuses it; a wrapper
    # module that calls etcdmain builds the same server.
    printf 'module local/etcdbin\n\ngo 1.26.0\n' > go.mod
    printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' > main.go
    go get go.etcd.io/etcd/server/v3@"$ETCD_VERSION" go.etcd.io/etcd/etcdctl/v3@"$ETCD_VERSION"
    go mod tidy
    go build -trimpath -ldflags='-s -w' -o "$tmp/bin/etcd" .
    go build -trimpath -ldflags='-s -w' -o "$tmp/bin/etcdctl" go.etcd.io/etcd/etcdctl/v3
  )
  rm -rf "$tmp/src"
  finish "$tmp" "$dir"
}

build_kwok() {
  local dir=$TOOLS_DIR/kwok-$KWOK_VERSION
  if have "$dir" kwok; then log "kwok $KWOK_VERSION cached"; return; fi
  log "building kwok $KWOK_VERSION"
  local tmp=$dir.tmp.$$
  rm -rf "$tmp"; mkdir -p "$tmp/bin"
  GOBIN="$tmp/bin" GOFLAGS=-buildvcs=false go install -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
    sigs.k8s.io/kwok/cmd/kwok@"$KWOK_VERSION"
  finish "$tmp" "$dir"
}

build_helm() {
  local dir=$TOOLS_DIR/helm-$HELM_VERSION minor
  if have "$dir" helm; then log "helm $HELM_VERSION cached"; return; fi
  log "building helm $HELM_VERSION"
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  local tmp=$dir.tmp.$$
  rm -rf "$tmp"; mkdir -p "$tmp/bin"
  GOBIN="$tmp/bin" GOFLAGS=-buildvcs=false go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor" \
    helm.sh/helm/v3/cmd/helm@"$HELM_VERSION"
  finish "$tmp" "$dir"
}

build_nats() {
  local dir=$TOOLS_DIR/nats-server-$NATS_SERVER_VERSION
  if have "$dir" nats-server; then log "nats-server $NATS_SERVER_VERSION cached"; return; fi
  log "building nats-server $NATS_SERVER_VERSION"
  local tmp=$dir.tmp.$$
  rm -rf "$tmp"; mkdir -p "$tmp/bin"
  GOBIN="$tmp/bin" GOFLAGS=-buildvcs=false go install -trimpath -ldflags "-s -w" \
    github.com/nats-io/nats-server/v2@"$NATS_SERVER_VERSION"
  finish "$tmp" "$dir"
}

# The CRI api.proto for the node daemon's gRPC client, from the published cri-api module.
fetch_cri_api() {
  local dir=$TOOLS_DIR/cri-api-$CRI_API_VERSION
  if [ -f "$dir/api.proto" ]; then log "cri-api $CRI_API_VERSION cached"; return; fi
  local src
  src=$(go mod download -json k8s.io/cri-api@"$CRI_API_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  mkdir -p "$dir.tmp.$$"
  cp "$src/pkg/apis/runtime/v1/api.proto" "$dir.tmp.$$/api.proto"
  finish "$dir.tmp.$$" "$dir"
}

# kruise-manager (OpenKruise's root main package) for bench:kruise, with the CRDs and webhook
# manifests the bench applies (config/crd/bases, config/webhook), so no source tree is needed.
# The checksum database has no entry for this module version: it is fetched with the sumdb
# skipped for this one module and checked against the hashes pinned in versions.env.
build_kruise() {
  local dir=$TOOLS_DIR/kruise-$KRUISE_VERSION mod=github.com/openkruise/kruise
  if have "$dir" kruise-manager && [ -d "$dir/config/crd/bases" ] && [ -d "$dir/config/webhook" ]; then
    log "kruise $KRUISE_VERSION cached"; return
  fi
  log "building kruise-manager $KRUISE_VERSION (8 min on 2 cores with the Go caches warm; longer cold)"
  local tmp=$dir.tmp.$$
  rm -rf "$tmp"; mkdir -p "$tmp/src" "$tmp/bin" "$tmp/config/crd"
  (
    cd "$tmp/src"
    export GONOSUMDB=${GONOSUMDB:+$GONOSUMDB,}$mod
    step() { log "kruise: $1 failed"; exit 1; }
    local info sum gomodsum src
    info=$(go mod download -json "$mod@$KRUISE_VERSION") || step "downloading $mod@$KRUISE_VERSION"
    sum=$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p' <<<"$info")
    gomodsum=$(sed -n 's/^[[:space:]]*"GoModSum": "\(.*\)",$/\1/p' <<<"$info")
    src=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$info")
    [ "$sum" = "$KRUISE_SUM" ] ||
      step "verifying the module zip (got ${sum:-nothing}, versions.env pins $KRUISE_SUM)"
    [ "$gomodsum" = "$KRUISE_GOMOD_SUM" ] ||
      step "verifying its go.mod (got ${gomodsum:-nothing}, versions.env pins $KRUISE_GOMOD_SUM)"
    printf 'module local/kruisebin\n\ngo 1.26.0\n' > go.mod
    # The pinned hashes, so the go command checks the module against them rather than the sumdb.
    printf '%s %s %s\n%s %s/go.mod %s\n' "$mod" "$KRUISE_VERSION" "$KRUISE_SUM" \
      "$mod" "$KRUISE_VERSION" "$KRUISE_GOMOD_SUM" > go.sum
    # kruise's replace directives (k8s.io/* pinned to one release) only apply in its own module;
    # copy them into the wrapper so the build resolves the same versions.
    local lines line f i old new
    mapfile -t lines < <(awk '
      /^replace[ \t]*\(/ { blk = 1; next }
      blk && /^\)/ { blk = 0; next }
      blk { print; next }
      /^replace[ \t]/ { sub(/^replace[ \t]+/, ""); print }
    ' "$(go env GOMODCACHE)/cache/download/$mod/@v/$KRUISE_VERSION.mod" | sed 's#//.*##')
    for line in "${lines[@]}"; do
      read -ra f <<<"$line"
      [ ${#f[@]} -gt 0 ] || continue
      for ((i = 0; i < ${#f[@]}; i++)); do [ "${f[$i]}" = "=>" ] && break; done
      old=${f[0]}; [ "$i" -eq 2 ] && old+="@${f[1]}"
      new=${f[$((i + 1))]:-}; [ -n "${f[$((i + 2))]:-}" ] && new+="@${f[$((i + 2))]}"
      case $new in ''|.*|/*) step "copying its replace directive \"$line\" (not a module version)" ;; esac
      go mod edit -replace="$old=$new"
    done
    go mod edit -require="$mod@$KRUISE_VERSION"
    go get -tool "$mod@$KRUISE_VERSION" || step "resolving its dependencies (go get)"
    nice -n 19 go mod verify >&2 || step "verifying the module cache against go.sum (go mod verify)"
    nice -n 19 go build -trimpath -ldflags='-s -w' -o "$tmp/bin/kruise-manager" "$mod" ||
      step "building kruise-manager (go build)"
    cp -r "$src/config/crd/bases" "$tmp/config/crd/bases"
    cp -r "$src/config/webhook" "$tmp/config/webhook"
  ) || { chmod -R u+w "$tmp"; rm -rf "$tmp"; exit 1; }
  # Module cache files are read-only; make the copies removable for the next rebuild.
  chmod -R u+w "$tmp"
  rm -rf "$tmp/src"
  finish "$tmp" "$dir"
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(etcd kwok nats helm cri-api k8s)
for t in "${targets[@]}"; do
  case $t in
    k8s) build_k8s ;;
    etcd) build_etcd ;;
    kwok) build_kwok ;;
    helm) build_helm ;;
    nats) build_nats ;;
    cri-api) fetch_cri_api ;;
    kruise) build_kruise ;;
    *) log "unknown target $t"; exit 2 ;;
  esac
done
log "tools ready in $TOOLS_DIR"
