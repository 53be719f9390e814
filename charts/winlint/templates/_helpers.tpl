{{/* Names and labels. */}}
{{- define "winlint.name" -}}winlint{{- end -}}

{{- define "winlint.fullname" -}}
{{- if contains "winlint" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-winlint" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "winlint.selectorLabels" -}}
app.kubernetes.io/name: {{ include "winlint.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "winlint.labels" -}}
{{ include "winlint.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "winlint.tlsSecret" -}}{{ include "winlint.fullname" . }}-tls{{- end -}}

{{/* The Service DNS names the serving certificate must carry. */}}
{{- define "winlint.dnsNames" -}}
{{- $svc := include "winlint.fullname" . -}}
{{- list $svc (printf "%s.%s" $svc .Release.Namespace) (printf "%s.%s.svc" $svc .Release.Namespace) (printf "%s.%s.svc.cluster.local" $svc .Release.Namespace) | toJson -}}
{{- end -}}

{{/* winlint.yaml: the values' config. Target facts left empty are left out (the live cluster
     facts fill them); without cluster facts the Kubernetes version defaults to the cluster's
     own at install time. webhook.mutate says whether the mutating webhook is registered. */}}
{{- define "winlint.config" -}}
{{- $cfg := deepCopy .Values.config -}}
{{- range $k, $v := $cfg.target -}}
{{- if kindIs "invalid" $v -}}
{{- $_ := unset $cfg.target $k -}}
{{- end -}}
{{- end -}}
{{- if not $cfg.target.kubernetesVersion -}}
{{- if .Values.clusterFacts.enabled -}}
{{- $_ := unset $cfg.target "kubernetesVersion" -}}
{{- else -}}
{{- $_ := set $cfg.target "kubernetesVersion" (printf "%s.%s" .Capabilities.KubeVersion.Major (trimSuffix "+" .Capabilities.KubeVersion.Minor)) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $cfg "webhook" (merge (dict "mutate" .Values.webhook.mutate "enforcement" (.Values.webhook.enforcement | default "deny")) ($cfg.webhook | default dict)) -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* namespaceSelector of both webhooks: never kube-system, the release namespace, excluded
     namespaces, or namespaces labelled winlint.io/ignore=true. */}}
{{- define "winlint.namespaceSelector" -}}
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values: {{ concat (list "kube-system" .Release.Namespace) .Values.webhook.excludeNamespaces | uniq | toJson }}
    - key: winlint.io/ignore
      operator: NotIn
      values: ["true"]
{{- end -}}

{{/* clientConfig of a webhook; $path is /mutate or /validate. */}}
{{- define "winlint.clientConfig" -}}
{{- $root := index . 0 -}}
{{- $path := index . 1 -}}
{{- $ca := index . 2 -}}
clientConfig:
  service:
    name: {{ include "winlint.fullname" $root }}
    namespace: {{ $root.Release.Namespace }}
    path: {{ $path }}
    port: 443
  {{- if $ca }}
  caBundle: {{ $ca }}
  {{- end }}
{{- end -}}

{{/* "true" when serve reads pull secrets (registry lookups on and secrets named), else "". */}}
{{- define "winlint.pullSecrets" -}}
{{- $r := .Values.config.registry | default dict -}}
{{- if and $r.pullSecrets (ne (toString ($r.mode | default "off")) "off") (ne (toString $r.mode) "false") -}}
true
{{- end -}}
{{- end -}}

{{/* "true" when serve looks images up in registries. */}}
{{- define "winlint.registryLookups" -}}
{{- $r := .Values.config.registry | default dict -}}
{{- if and $r.mode (ne (toString $r.mode) "off") -}}
true
{{- end -}}
{{- end -}}
