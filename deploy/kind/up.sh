#!/usr/bin/env bash
# Brings up a kind cluster with the Flotilla agent installed from this checkout.
#
#   deploy/kind/up.sh                      # standalone agent (no hub)
#   HUB_URL=https://hub.example:8080 BOOTSTRAP_TOKEN=... deploy/kind/up.sh
#   deploy/kind/up.sh --down               # delete the cluster
#
# Needs docker, kind and helm on PATH. Builds the agent image, loads it into the kind nodes
# (no registry involved) and installs deploy/charts/flotilla-agent with --wait.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cluster="${KIND_CLUSTER:-flotilla}"
image="${AGENT_IMAGE:-ghcr.io/flotilla/agent:dev}"
namespace="${NAMESPACE:-flotilla-system}"

for tool in docker kind helm; do
  command -v "$tool" >/dev/null || { echo "up.sh: $tool is not installed" >&2; exit 1; }
done

if [[ "${1:-}" == "--down" ]]; then
  kind delete cluster --name "$cluster"
  exit 0
fi

if ! kind get clusters | grep -qx "$cluster"; then
  kind create cluster --name "$cluster" --config "$root/deploy/kind/kind-config.yaml"
fi

docker build -f "$root/deploy/docker/agent.Dockerfile" -t "$image" "$root"
kind load docker-image --name "$cluster" "$image"

hub_args=(--set hub.enabled=false)
if [[ -n "${HUB_URL:-}" ]]; then
  hub_args=(--set "hub.url=$HUB_URL")
  # The token goes into a Secret created here, never into the release's values.
  if [[ -n "${BOOTSTRAP_TOKEN:-}" ]]; then
    kubectl --context "kind-$cluster" create namespace "$namespace" --dry-run=client -o yaml |
      kubectl --context "kind-$cluster" apply -f -
    kubectl --context "kind-$cluster" -n "$namespace" create secret generic flotilla-bootstrap \
      --from-literal=token="$BOOTSTRAP_TOKEN" --dry-run=client -o yaml |
      kubectl --context "kind-$cluster" apply -f -
    hub_args+=(--set hub.bootstrapToken.existingSecret=flotilla-bootstrap)
  fi
fi

helm upgrade --install flotilla-agent "$root/deploy/charts/flotilla-agent" \
  --kube-context "kind-$cluster" --namespace "$namespace" --create-namespace \
  --set clusterName="${CLUSTER_NAME:-kind-$cluster}" \
  --set image.repository="${image%:*}" --set image.tag="${image##*:}" --set image.pullPolicy=Never \
  --set daemon.socketFile=containerd/containerd.sock \
  "${hub_args[@]}" --wait --timeout 5m

kubectl --context "kind-$cluster" -n "$namespace" get pods -o wide
