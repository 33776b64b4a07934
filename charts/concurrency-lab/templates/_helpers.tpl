{{/*
Names, labels and security settings, defined once and used by every template.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "concurrency-lab.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Prefix of every resource name: <release>-<chart>, or just the release name when it already
contains the chart name. Kept short enough that "<prefix>-<target>" stays a DNS label.
*/}}
{{- define "concurrency-lab.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 32 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 32 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 32 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Name of a component's resources. Call with (dict "root" $ "component" "grafana"). */}}
{{- define "concurrency-lab.componentName" -}}
{{- printf "%s-%s" (include "concurrency-lab.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Name of one target's Deployment and Service. Call with (dict "root" $ "target" $target). */}}
{{- define "concurrency-lab.targetName" -}}
{{- include "concurrency-lab.componentName" (dict "root" .root "component" .target.name) }}
{{- end }}

{{/* In-cluster URL of one target's Service. Call with (dict "root" $ "target" $target). */}}
{{- define "concurrency-lab.targetURL" -}}
{{- printf "http://%s:%v" (include "concurrency-lab.targetName" .) .root.Values.targetDefaults.port }}
{{- end }}

{{/* Selector labels. Call with (dict "root" $ "component" "tester" "target" $optionalTarget). */}}
{{- define "concurrency-lab.selectorLabels" -}}
app.kubernetes.io/name: {{ include "concurrency-lab.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- with .target }}
concurrency-lab/target: {{ .name }}
{{- end }}
{{- end }}

{{/* Recommended labels for every object. Same arguments as selectorLabels. */}}
{{- define "concurrency-lab.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "concurrency-lab.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: concurrency-lab
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}

{{/*
A lab image (targets, tester): its own tag from image.tags (its content tag, set by `make run-lab`),
else the shared image.tag. Call with (dict "root" $ "image" "repo").
*/}}
{{- define "concurrency-lab.labImage" -}}
{{- $images := .root.Values.image }}
{{- printf "%s:%s" .image (get ($images.tags | default dict) .image | default $images.tag | toString) }}
{{- end }}

{{/*
Pod-level lockdown, the same for every pod. Call with the user id to run as. No service account
token: nothing in the lab talks to the Kubernetes API.
*/}}
{{- define "concurrency-lab.podSecurity" -}}
automountServiceAccountToken: false
enableServiceLinks: false
securityContext:
  runAsNonRoot: true
  runAsUser: {{ . }}
  runAsGroup: {{ . }}
  fsGroup: {{ . }}
  seccompProfile:
    type: RuntimeDefault
{{- end }}

{{/* Container-level lockdown, the same for every container (writable paths are emptyDirs). */}}
{{- define "concurrency-lab.containerSecurity" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  runAsNonRoot: true
  capabilities:
    drop:
      - ALL
  seccompProfile:
    type: RuntimeDefault
{{- end }}

{{/*
Resources from a {cpu, memory, cpuRequest} map. `cpu` is the limit (the exact cgroup quota worker
counts follow); the scheduler reserves `cpuRequest`, by default the same (Guaranteed QoS). Memory
is never overcommitted: request = limit.
*/}}
{{- define "concurrency-lab.resources" -}}
resources:
  requests:
    cpu: {{ .cpuRequest | default .cpu | quote }}
    memory: {{ .memory | quote }}
  limits:
    cpu: {{ .cpu | quote }}
    memory: {{ .memory | quote }}
{{- end }}

{{/*
The targets this profile deploys, as YAML: .Values.targets less the entries `omitTargets` names
(those its node has no room for), and none when app.enabled (an app lab measures the app's
configurations only, so it fits the node the lab's own targets would). Every template that lists
targets reads them from here; the local lab starts every entry. Call with the root context; read
with `fromYamlArray`.
*/}}
{{- define "concurrency-lab.deployedTargets" -}}
{{- $omitted := .Values.omitTargets | default list }}
{{- $deployed := list }}
{{- if not .Values.app.enabled }}
{{- range .Values.targets }}
{{- if not (has .name $omitted) }}
{{- $deployed = append $deployed . }}
{{- end }}
{{- end }}
{{- end }}
{{- toYaml $deployed }}
{{- end }}

{{/* "true" when a target is load-tested; `measure` defaults to true, as in the local launcher. */}}
{{- define "concurrency-lab.measured" -}}
{{- if hasKey . "measure" }}{{ .measure }}{{ else }}true{{ end }}
{{- end }}

{{/*
prometheus.yml: one static target per deployed target (and per app server), labelled with its name, at its
`metrics` port: /metrics there is served by a process that serves nothing else, so a scrape
answers while the target is saturated, which is when the lab's bursts happen.
*/}}
{{- define "concurrency-lab.prometheusConfig" -}}
global:
  scrape_interval: {{ .Values.prometheus.scrapeInterval }}
  # A busy target answers /metrics late (that is what the lab shows); one interval is the most.
  scrape_timeout: {{ .Values.prometheus.scrapeInterval }}
scrape_configs:
  - job_name: lab-targets
    metrics_path: /metrics
    static_configs:
      {{- range concat (include "concurrency-lab.deployedTargets" $ | fromYamlArray) (include "concurrency-lab.appServers" . | fromJsonArray) }}
      - targets:
          - {{ printf "%s:%v" (include "concurrency-lab.targetName" (dict "root" $ "target" .)) $.Values.targetDefaults.metricsPort | quote }}
        labels:
          target: {{ .name | quote }}
          measure: {{ include "concurrency-lab.measured" . | quote }}
      {{- end }}
{{- end }}

{{/* In-cluster URL of Prometheus's Service (Grafana's datasource, the tester's cross-check). */}}
{{- define "concurrency-lab.prometheusURL" -}}
{{- printf "http://%s:9090" (include "concurrency-lab.componentName" (dict "root" . "component" "prometheus")) }}
{{- end }}

{{/* Grafana provisioning files: the Prometheus datasource and the dashboard folder. */}}
{{- define "concurrency-lab.grafanaProvisioning" -}}
datasources.yaml: |
  apiVersion: 1
  datasources:
    - name: Prometheus
      uid: prometheus
      type: prometheus
      access: proxy
      url: {{ include "concurrency-lab.prometheusURL" . }}
      isDefault: true
      editable: false
      jsonData:
        # Grafana's smallest step and the base of $__rate_interval: the scrape interval.
        timeInterval: {{ .Values.prometheus.scrapeInterval }}
dashboards.yaml: |
  apiVersion: 1
  providers:
    - name: concurrency-lab
      type: file
      disableDeletion: true
      allowUiUpdates: false
      options:
        path: /etc/grafana/dashboards
{{- end }}

{{/*
The app's servers (.Values.app), as a JSON list of target entries: one per configuration of the
app's interface when app.enabled, named app-<configuration>, running the app `team` from the
app's image with LAB_APP and LAB_APP_PATHS, on the configuration's LAB_SERVER (else its
interface's default server). The targets template renders them like any target (component
`app`), and Prometheus scrapes them. Use: include "concurrency-lab.appServers" $ | fromJsonArray
*/}}
{{- define "concurrency-lab.appServers" -}}
{{- $app := .Values.app }}
{{- $servers := list }}
{{- if $app.enabled }}
{{- if not (and $app.module (has $app.interface (list "asgi" "wsgi"))) }}
{{- fail "app.enabled needs app.module (LAB_APP) and app.interface (asgi or wsgi)" }}
{{- end }}
{{- range $app.configurations }}
{{- if eq .interface $app.interface }}
{{- $env := dict "LAB_APP" $app.module "LAB_APP_PATHS" (join "," ($app.paths | default list)) }}
{{- $env = merge $env (.env | default dict) }}
{{- $serverName := get $env "LAB_SERVER" | default (ternary "uvicorn" "gunicorn" (eq $app.interface "asgi")) }}
{{- $server := dict "name" (printf "app-%s" .name) "server" $serverName "app" "team" "image" $app.image "env" (omit $env "LAB_SERVER") "component" "app" }}
{{- with .resources }}
{{- $_ := set $server "resources" . }}
{{- end }}
{{- $servers = append $servers $server }}
{{- end }}
{{- end }}
{{- end }}
{{- toJson $servers }}
{{- end }}
