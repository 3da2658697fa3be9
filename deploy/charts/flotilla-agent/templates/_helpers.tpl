{{/* Names, labels and the shared pieces of the agent chart. */}}

{{- define "flotilla-agent.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "flotilla-agent.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "flotilla-agent.managerSelector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{- define "flotilla-agent.daemonSelector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: daemon
{{- end -}}

{{- define "flotilla-agent.managerServiceAccount" -}}{{ include "flotilla-agent.fullname" . }}-manager{{- end -}}
{{- define "flotilla-agent.daemonServiceAccount" -}}{{ include "flotilla-agent.fullname" . }}-daemon{{- end -}}
{{- define "flotilla-agent.webhookService" -}}{{ include "flotilla-agent.fullname" . }}-webhook{{- end -}}
{{- define "flotilla-agent.webhookSecret" -}}{{ include "flotilla-agent.fullname" . }}-webhook-certs{{- end -}}
{{- define "flotilla-agent.mutatingConfiguration" -}}{{ include "flotilla-agent.fullname" . }}-mutating{{- end -}}
{{- define "flotilla-agent.validatingConfiguration" -}}{{ include "flotilla-agent.fullname" . }}-validating{{- end -}}
{{- define "flotilla-agent.leaseName" -}}{{ include "flotilla-agent.fullname" . }}{{- end -}}
{{- define "flotilla-agent.whitelistConfigMap" -}}kruise-configuration{{- end -}}
{{/* The agent's constant (KRUISE_DAEMON_CONFIG_NAMESPACE); the daemon reads pull secrets there. */}}
{{- define "flotilla-agent.daemonConfigNamespace" -}}kruise-daemon-config{{- end -}}

{{- define "flotilla-agent.joinSecret" -}}
{{- .Values.hub.joinSecretName | default (printf "%s-join" (include "flotilla-agent.fullname" .)) -}}
{{- end -}}

{{- define "flotilla-agent.bootstrapSecret" -}}
{{- .Values.hub.bootstrapToken.existingSecret | default (printf "%s-bootstrap" (include "flotilla-agent.fullname" .)) -}}
{{- end -}}

{{- define "flotilla-agent.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* True (non-empty) when the NodeImage/ImagePullJob side runs. */}}
{{- define "flotilla-agent.daemonEnabled" -}}
{{- if .Values.featureGates.KruiseDaemon }}true{{ end -}}
{{- end -}}
{{- define "flotilla-agent.imagePullJobEnabled" -}}
{{- if and .Values.featureGates.KruiseDaemon .Values.featureGates.ImagePullJobGate }}true{{ end -}}
{{- end -}}

{{/*
FLOTILLA_COMPONENTS, the agent's one switch per component (agent/src/components.ts): every
component but those a feature gate or an `enabled: false` turns off.
*/}}
{{- define "flotilla-agent.components" -}}
{{- $c := list "*" -}}
{{- if not (include "flotilla-agent.daemonEnabled" .) }}{{ $c = append $c "-nodeimage" }}{{ end -}}
{{- if not (include "flotilla-agent.imagePullJobEnabled" .) }}{{ $c = append $c "-imagepulljob" }}{{ end -}}
{{- if not .Values.webhook.enabled }}{{ $c = append $c "-webhook" }}{{ end -}}
{{- if not .Values.hub.enabled }}{{ $c = append $c "-hublink" }}{{ end -}}
{{- join "," $c -}}
{{- end -}}

{{/* Secret read access for pull secrets: "*" (cluster-wide) or the listed namespaces. */}}
{{- define "flotilla-agent.pullSecretsClusterWide" -}}
{{- if has "*" .Values.imagePullJob.pullSecretNamespaces }}true{{ end -}}
{{- end -}}

{{/*
The webhooks the agent serves, as agent/src/webhook/registry.ts lists them (OpenKruise's names
and paths). test/integration/helm checks this list against the agent's own definitions.
*/}}
{{- /*
OpenKruise v1.9's webhook names and paths (agent/src/webhook/registry.ts): kinds served at one
version (CloneSet) keep it in the path; SidecarSet, ImagePullJob, NodeImage, BroadcastJob, DaemonSet and StatefulSet take both versions
under an unversioned path, and ImagePullJob's names end in -v1beta1.
*/ -}}
{{- define "flotilla-agent.webhookList" -}}
{{- $protection := .Values.featureGates.ResourcesDeletionProtection }}
- {name: mpod.kb.io, type: mutating, path: /mutate-pod, group: "", versions: [v1], resource: pods, operations: [CREATE], clusterScoped: false}
{{- range $kind := list "CloneSet" "SidecarSet" "ImagePullJob" "NodeImage" "BroadcastJob" "DaemonSet" "StatefulSet" }}
{{- $lower := lower $kind }}
{{- $clusterScoped := has $kind (list "SidecarSet" "NodeImage") }}
{{- $multi := ne $kind "CloneSet" }}
{{- range $type := list "mutating" "validating" }}
- name: {{ printf "%s%s%s.kb.io" (substr 0 1 $type) $lower (ternary "-v1beta1" "" (eq $kind "ImagePullJob")) }}
  type: {{ $type }}
  path: {{ printf "/%s-apps-kruise-io-%s%s" (ternary "mutate" "validate" (eq $type "mutating")) (ternary "" "v1alpha1-" $multi) $lower }}
  group: apps.kruise.io
  versions: {{ ternary "[v1alpha1, v1beta1]" "[v1alpha1]" $multi }}
  resource: {{ $lower }}s
  operations: {{ ternary "[CREATE, UPDATE, DELETE]" "[CREATE, UPDATE]" (and (eq $kind "CloneSet") (eq $type "validating") $protection) }}
  clusterScoped: {{ $clusterScoped }}
{{- end }}
{{- end }}
{{- /* ContainerRecreateRequest: served at v1alpha1 only, so its paths keep the version. */}}
{{- range $type := list "mutating" "validating" }}
- {name: {{ substr 0 1 $type }}containerrecreaterequest.kb.io, type: {{ $type }}, path: /{{ ternary "mutate" "validate" (eq $type "mutating") }}-apps-kruise-io-v1alpha1-containerrecreaterequest, group: apps.kruise.io, versions: [v1alpha1], resource: containerrecreaterequests, operations: [CREATE, UPDATE], clusterScoped: false}
{{- end }}
{{- /* WorkloadSpread: validated only (v1.9 has no defaulting webhook for it). */}}
- {name: vworkloadspread.kb.io, type: validating, path: /validate-apps-kruise-io-v1alpha1-workloadspread, group: apps.kruise.io, versions: [v1alpha1], resource: workloadspreads, operations: [CREATE, UPDATE], clusterScoped: false}
{{- /* PodUnavailableBudget: validated only, at an unversioned path though served at v1alpha1 alone. */}}
- {name: vpodunavailablebudget.kb.io, type: validating, path: /validate-policy-kruise-io-podunavailablebudget, group: policy.kruise.io, versions: [v1alpha1], resource: podunavailablebudgets, operations: [CREATE, UPDATE], clusterScoped: false}
{{- /* Pod DELETE and eviction (agent/src/webhook/registry.ts): PodUnavailableBudget's delete gate or WorkloadSpread; UPDATE: the budget update gate. */}}
{{- $pubDelete := or .Values.featureGates.PodUnavailableBudgetDeleteGate .Values.featureGates.WorkloadSpread }}
{{- $pubUpdate := .Values.featureGates.PodUnavailableBudgetUpdateGate }}
{{- if or $pubDelete $pubUpdate }}
- {name: vpod.kb.io, type: validating, path: /validate-pod, group: "", versions: [v1], resource: pods, operations: [{{ if $pubUpdate }}UPDATE{{ if $pubDelete }}, {{ end }}{{ end }}{{ if $pubDelete }}DELETE{{ end }}], clusterScoped: false}
{{- end }}
{{- if $pubDelete }}
- {name: vpodeviction.kb.io, type: validating, path: /validate-pod, group: "", versions: [v1], resource: pods/eviction, operations: [CREATE], clusterScoped: false}
{{- end }}
{{- if $protection }}
{{- /* Deletion protection (agent/src/webhook/registry.ts): DELETE only, Ignore, labelled objects only. */}}
- {name: vnamespace.kb.io, type: validating, path: /validate-namespace, group: "", versions: [v1], resource: namespaces, operations: [DELETE], clusterScoped: true, protection: true}
- {name: vcustomresourcedefinition.kb.io, type: validating, path: /validate-customresourcedefinition, group: apiextensions.k8s.io, versions: [v1], resource: customresourcedefinitions, operations: [DELETE], clusterScoped: true, protection: true}
- {name: vservice.kb.io, type: validating, path: /validate-service, group: "", versions: [v1], resource: services, operations: [DELETE], clusterScoped: false, protection: true}
- {name: vingress.kb.io, type: validating, path: /validate-ingress, group: networking.k8s.io, versions: [v1], resource: ingresses, operations: [DELETE], clusterScoped: false, protection: true}
{{- range $k := list "deployment" "replicaset" "statefulset" }}
- {name: vbuiltin{{ $k }}.kb.io, type: validating, path: /validate-apps-{{ $k }}, group: apps, versions: [v1], resource: {{ $k }}s, operations: [DELETE], clusterScoped: false, protection: true}
{{- end }}
{{- end }}
{{- end -}}

{{/* Non-empty when Cascading CRDs count their custom resources (both gates on). */}}
{{- define "flotilla-agent.crdCascadingProtection" -}}
{{- if and .Values.featureGates.ResourcesDeletionProtection .Values.featureGates.DeletionProtectionForCRDCascadingGate }}true{{ end -}}
{{- end -}}

{{- define "flotilla-agent.webhookNamespaceSelector" -}}
{{- $excluded := concat (list .Release.Namespace) .Values.webhook.excludedNamespaces | uniq | sortAlpha -}}
{{- with .Values.webhook.namespaceSelector.matchLabels }}
matchLabels:
  {{- toYaml . | nindent 2 }}
{{- end }}
matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values:
      {{- toYaml $excluded | nindent 6 }}
  {{- with .Values.webhook.namespaceSelector.matchExpressions }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* FLOTILLA_CLUSTER_LABELS: key=value pairs, sorted by key. */}}
{{- define "flotilla-agent.clusterLabels" -}}
{{- $pairs := list -}}
{{- range $k, $v := .Values.clusterLabels }}{{ $pairs = append $pairs (printf "%s=%s" $k $v) }}{{ end -}}
{{- join "," $pairs -}}
{{- end -}}
