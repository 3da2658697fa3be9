{{/* Names, labels and the shared pieces of the hub chart. */}}

{{- define "flotilla-hub.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "flotilla-hub.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: hub
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "flotilla-hub.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: hub
{{- end -}}

{{- define "flotilla-hub.serviceAccount" -}}
{{- .Values.serviceAccount.name | default (include "flotilla-hub.fullname" .) -}}
{{- end -}}

{{- define "flotilla-hub.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* "https" when the hub serves HTTPS itself, else "http". */}}
{{- define "flotilla-hub.scheme" -}}
{{- if .Values.tls.existingSecret }}https{{ else }}http{{ end -}}
{{- end -}}

{{- define "flotilla-hub.servicePort" -}}
{{- .Values.service.port | default (ternary 443 80 (not (empty .Values.tls.existingSecret))) -}}
{{- end -}}

{{/* Where the mounted secrets and CA appear in the container. */}}
{{- define "flotilla-hub.natsAuthDir" -}}/etc/flotilla/nats-auth{{- end -}}
{{- define "flotilla-hub.natsCaDir" -}}/etc/flotilla/nats-ca{{- end -}}
{{- define "flotilla-hub.tlsDir" -}}/etc/flotilla/tls{{- end -}}

{{/* The URL NOTES tells agents and the CLI to use. */}}
{{- define "flotilla-hub.externalUrl" -}}
{{- if .Values.externalUrl -}}
{{- trimSuffix "/" .Values.externalUrl -}}
{{- else if and .Values.ingress.enabled .Values.ingress.host -}}
{{- printf "%s://%s" (ternary "https" "http" (not (empty .Values.ingress.tlsSecretName))) .Values.ingress.host -}}
{{- else -}}
{{- printf "%s://%s.%s.svc:%s" (include "flotilla-hub.scheme" .) (include "flotilla-hub.fullname" .) .Release.Namespace (include "flotilla-hub.servicePort" .) -}}
{{- end -}}
{{- end -}}

{{/* A kubectl jsonpath for a data key (dots escaped). */}}
{{- define "flotilla-hub.jsonpathKey" -}}
{{- printf "{.data.%s}" (replace "." "\\." .) -}}
{{- end -}}
