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
{{- /* A gpu host-path variant's NVML config (files/gpu, synced from its component; _gpu.tpl). */}}
{{- if and .Values.gpu.enabled (include "npd.gpuDriver" .) }}
{{- $file := include "npd.gpuNvmlFile" . }}
{{- $_ := set $data $file ($.Files.Get (printf "files/gpu/%s" $file)) }}
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
{{- range (list (list "systemLog" $m.systemLog) (list "customPlugin" $m.customPlugin) (list "systemStats" $m.systemStats) (list "probe" $m.probe)) }}
{{- $key := index . 0 }}
{{- $paths := list }}
{{- range (index . 1) }}
{{- $paths = append $paths (include "npd.monitorPath" (dict "ctx" $ "key" $key "name" .)) }}
{{- end }}
{{- $key = get (dict "systemLog" "system-log-monitor" "customPlugin" "custom-plugin-monitor" "systemStats" "system-stats-monitor" "probe" "probe-monitor") $key }}
{{- if $paths }}
{{- $args = append $args (printf "--config.%s=%s" $key (join "," $paths)) }}
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
# also means every capability, every host device and no seccomp or AppArmor confinement: read-only
# mounts do not confine it, and a compromised agent is root on the node (docs/install.md, "The blast
# radius"). Needs the Pod Security level "privileged" in the namespace.
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

{{/* NPD's (and the community chart's) config names with a shipped equivalent under the same reasons. */}}
{{- define "npd.npdConfigNames" -}}
kernel-monitor.json: kernel.yaml
readonly-monitor.json: readonly.yaml
docker-monitor.json: docker.yaml
systemd-monitor.json: systemd.yaml
abrt-adaptor.json: abrt.yaml
{{- end }}

{{/*
  A monitors.* entry as the path the agent reads. A name (or /config/<name>) must be a file the chart
  puts in /config: a shipped one, a customMonitors key, or an NPD name mapped to its shipped equivalent
  (NOTES says so). Anything else fails the install instead of the pod exiting 2. Other absolute paths
  are the user's own mounts and pass unchanged.
*/}}
{{- define "npd.monitorPath" -}}
{{- $ctx := .ctx }}
{{- $name := trimPrefix "/config/" .name }}
{{- $npd := include "npd.npdConfigNames" . | fromYaml }}
{{- if hasPrefix "/" $name }}
{{- $name }}
{{- else if or ($ctx.Files.Get (printf "files/rules/%s" $name)) ($ctx.Files.Get (printf "files/config/%s" $name)) (hasKey ($ctx.Values.customMonitors | default dict) $name) }}
{{- printf "/config/%s" $name }}
{{- else if hasKey $npd $name }}
{{- printf "/config/%s" (get $npd $name) }}
{{- else }}
{{- $shipped := list }}
{{- range $path, $_ := $ctx.Files.Glob "files/{rules,config}/*.yaml" }}{{ $shipped = append $shipped (base $path) }}{{ end }}
{{- fail (printf "monitors.%s: %q is not in /config: use a shipped file (%s), an NPD name with an equivalent (%s), a customMonitors key, or an absolute path you mount" .key .name (join ", " (sortAlpha $shipped)) (join ", " (keys $npd | sortAlpha))) }}
{{- end }}
{{- end }}

{{/* The monitors.* entries given by an NPD name, "<name> -> <shipped file>", for NOTES. */}}
{{- define "npd.renamedMonitors" -}}
{{- $npd := include "npd.npdConfigNames" . | fromYaml }}
{{- $out := list }}
{{- range $key, $names := .Values.monitors }}
{{- range $names }}
{{- $name := trimPrefix "/config/" . }}
{{- if and (hasKey $npd $name) (not (hasKey ($.Values.customMonitors | default dict) $name)) }}
{{- $out = append $out (printf "monitors.%s: %s -> %s" $key . (get $npd $name)) }}
{{- end }}
{{- end }}
{{- end }}
{{- join "\n" $out }}
{{- end }}

{{/*
  The community chart's value keys, mapped once onto this chart's (every template that reads them
  includes this first; the marker keeps the mapping from running twice on the shared values), and
  each recorded for the deprecation list in NOTES. Keys with no equivalent are accepted and noted.
*/}}
{{- define "npd.compat" -}}
{{- $v := .Values }}
{{- if not (hasKey $v "npdCompatNotes") }}
{{- $notes := list }}
{{- $s := $v.settings | default dict }}
{{- if $s.log_monitors }}
{{- $_ := set $v.monitors "systemLog" $s.log_monitors }}
{{- $notes = append $notes "settings.log_monitors -> monitors.systemLog" }}
{{- end }}
{{- if $s.custom_plugin_monitors }}
{{- $_ := set $v.monitors "customPlugin" $s.custom_plugin_monitors }}
{{- $notes = append $notes "settings.custom_plugin_monitors -> monitors.customPlugin" }}
{{- end }}
{{- if $s.extraArgs }}
{{- $_ := set $v "extraArgs" (concat $v.extraArgs $s.extraArgs) }}
{{- $notes = append $notes "settings.extraArgs -> extraArgs" }}
{{- end }}
{{- if $s.heartBeatPeriod }}
{{- $_ := set $v "extraArgs" (append $v.extraArgs (printf "--k8s-exporter-heartbeat-period=%s" $s.heartBeatPeriod)) }}
{{- $notes = append $notes "settings.heartBeatPeriod -> extraArgs: [--k8s-exporter-heartbeat-period=...]" }}
{{- end }}
{{- if hasKey $s "prometheus_port" }}
{{- $_ := set $v.ports "metrics" $s.prometheus_port }}
{{- $notes = append $notes "settings.prometheus_port -> ports.metrics" }}
{{- end }}
{{- if hasKey $s "prometheus_address" }}
{{- $notes = append $notes "settings.prometheus_address: ignored (the chart binds the pod IP, or the node IP with the host network)" }}
{{- end }}
{{- if hasKey $v.metrics "enabled" }}
{{- $_ := set $v.metrics.service "enabled" (or $v.metrics.service.enabled $v.metrics.enabled) }}
{{- $notes = append $notes "metrics.enabled -> metrics.service.enabled" }}
{{- end }}
{{- if $v.env }}
{{- $_ := set $v "extraEnv" (concat $v.extraEnv $v.env) }}
{{- $notes = append $notes "env -> extraEnv" }}
{{- end }}
{{- if $v.labels }}
{{- $_ := set $v "podLabels" (merge (deepCopy $v.podLabels) $v.labels) }}
{{- $notes = append $notes "labels -> podLabels" }}
{{- end }}
{{- if $v.annotations }}
{{- $_ := set $v "podAnnotations" (merge (deepCopy $v.podAnnotations) $v.annotations) }}
{{- $notes = append $notes "annotations -> podAnnotations" }}
{{- end }}
{{- if and $v.securityContext (hasKey $v.securityContext "privileged") }}
{{- $_ := set $v "privileged" $v.securityContext.privileged }}
{{- $notes = append $notes "securityContext.privileged -> privileged (the rest of the securityContext is fixed)" }}
{{- end }}
{{- if kindIs "string" $v.updateStrategy }}
{{- $_ := set $v "updateStrategy" (dict "type" $v.updateStrategy) }}
{{- $notes = append $notes "updateStrategy: <type> -> updateStrategy.type" }}
{{- end }}
{{- if hasKey $v "logDir" }}
{{- $notes = append $notes "logDir: ignored (the host's /var/log is at /host/var/log)" }}
{{- end }}
{{- if hasKey $v "hostPID" }}
{{- $notes = append $notes "hostPID: ignored (the agent needs no host PID namespace)" }}
{{- end }}
{{- $_ := set $v "npdCompatNotes" $notes }}
{{- end }}
{{- end }}
