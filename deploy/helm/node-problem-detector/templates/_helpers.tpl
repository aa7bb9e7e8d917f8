{{/* The chart's name (app.kubernetes.io/name): also the Prometheus job label of the alerts. */}}
{{- define "npd.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Object names: the release name, unless it lacks the chart name (then "<release>-<name>"). */}}
{{- define "npd.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "npd.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Selects the agent's pods (DaemonSet selector, Service selector). */}}
{{- define "npd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "npd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Helm's bookkeeping labels, on every object. */}}
{{- define "npd.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* Labels of the objects deploy/base renders (kustomize adds component: agent to those). */}}
{{- define "npd.labels" -}}
{{ include "npd.selectorLabels" . }}
app.kubernetes.io/component: agent
{{ include "npd.helmLabels" . }}
{{- end }}

{{/* Labels of the objects of the kustomize components (metrics, taint), which carry only the name. */}}
{{- define "npd.componentLabels" -}}
{{ include "npd.selectorLabels" . }}
{{ include "npd.helmLabels" . }}
{{- end }}

{{- define "npd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "npd.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* repository:tag, or repository@digest when a digest is given (it wins over the tag). */}}
{{- define "npd.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
A ConfigMap name with a content hash, as kustomize's configMapGenerator makes them: a rules change
gives a new name and so rolls the DaemonSet at maxUnavailable instead of reaching every node at once
through the agent's config reload. Call with (list $ "suffix" $data).
*/}}
{{- define "npd.hashedName" -}}
{{- $root := index . 0 }}
{{- printf "%s-%s-%s" (include "npd.fullname" $root) (index . 1) (toJson (index . 2) | sha256sum | trunc 10) }}
{{- end }}

{{/* The data of the rules ConfigMap: every shipped rules file (files/rules, synced from rules/). */}}
{{- define "npd.rulesData" -}}
{{- $data := dict }}
{{- range $path, $bytes := .Files.Glob "files/rules/*.yaml" }}
{{- $_ := set $data (base $path) ($.Files.Get $path) }}
{{- end }}
{{- toYaml $data }}
{{- end }}

{{/* The data of the config ConfigMap: the deployment's monitor configs plus customMonitors. */}}
{{- define "npd.configData" -}}
{{- $data := dict }}
{{- range $path, $bytes := .Files.Glob "files/config/*.yaml" }}
{{- $_ := set $data (base $path) ($.Files.Get $path) }}
{{- end }}
{{- range $file, $body := .Values.customMonitors }}
{{- if or (hasKey $data $file) ($.Files.Get (printf "files/rules/%s" $file)) }}
{{- fail (printf "customMonitors.%s: a shipped file in /config has that name; choose another" $file) }}
{{- end }}
{{- $_ := set $data $file (ternary $body (toPrettyJson $body) (kindIs "string" $body)) }}
{{- end }}
{{- toYaml $data }}
{{- end }}

{{/* One --config.*=/config/a,/config/b arg (a YAML list item) per non-empty list of monitors.*. */}}
{{- define "npd.monitorArgs" -}}
{{- $m := .Values.monitors }}
{{- $args := list }}
{{- range (list (list "system-log-monitor" $m.systemLog) (list "custom-plugin-monitor" $m.customPlugin) (list "system-stats-monitor" $m.systemStats) (list "probe-monitor" $m.probe)) }}
{{- $paths := list }}
{{- range (index . 1) }}
{{- $paths = append $paths (ternary . (printf "/config/%s" .) (hasPrefix "/" .)) }}
{{- end }}
{{- if $paths }}
{{- $args = append $args (printf "--config.%s=%s" (index . 0) (join "," $paths)) }}
{{- end }}
{{- end }}
{{- if $args }}
{{- toYaml $args }}
{{- end }}
{{- end }}

{{/* The container's securityContext for the privilege variant (values: privileged). */}}
{{- define "npd.containerSecurityContext" -}}
{{- if .Values.privileged }}
# The runtime's device cgroup admits the host's /dev/kmsg only for a privileged container. Privileged
# also means every capability and no seccomp or AppArmor confinement; the root file system and every
# host mount stay read-only. Needs the Pod Security level "privileged" in the namespace.
privileged: true
runAsUser: 0
runAsGroup: 0
runAsNonRoot: false
readOnlyRootFilesystem: true
{{- else }}
# uid 0 for file ownership only (journal and /var/log files are root-owned, 0640/0600); without
# capabilities it cannot read past permissions, ptrace, or write anything.
runAsUser: 0
runAsGroup: 0
runAsNonRoot: false
privileged: false
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
  # /dev/kmsg with kernel.dmesg_restrict=1.
  add: [SYSLOG]
seccompProfile:
  type: RuntimeDefault
{{- end }}
{{- end }}
