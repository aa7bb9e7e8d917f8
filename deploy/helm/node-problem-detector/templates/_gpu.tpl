{{/*
The gpu values as deploy/components/gpu and its variants render them (docs/install.md, GPU nodes).
gpu.driverRoot names where NVML comes from: "" the NVIDIA container runtime (component gpu, or
gpu-runtime-class with gpu.runtimeClassName), a GKE driver folder (gpu-gke) or the GPU Operator's
driver container root (gpu-operator).
*/}}
{{- define "npd.gpuDriver" -}}
{{- get (dict "" "" "/home/kubernetes/bin/nvidia" "gke" "/run/nvidia/driver" "gpu-operator") (.Values.gpu.driverRoot | default "") }}
{{- end }}

{{/* The NVML monitor's config in /config: the variants' copies name the library in their mount. */}}
{{- define "npd.gpuNvmlFile" -}}
{{- with include "npd.gpuDriver" . }}{{ printf "gpu-nvml-%s.yaml" . }}{{ else }}gpu-nvml.yaml{{ end }}
{{- end }}

{{/* nodeSelector plus, with gpu on, gpu.nodeSelector (GKE selects its GPU nodes by affinity instead). */}}
{{- define "npd.nodeSelector" -}}
{{- $s := deepCopy (.Values.nodeSelector | default dict) }}
{{- if and .Values.gpu.enabled (ne (include "npd.gpuDriver" .) "gke") }}
{{- $s = merge $s (deepCopy (.Values.gpu.nodeSelector | default dict)) }}
{{- end }}
{{- toYaml $s }}
{{- end }}

{{/*
affinity plus, for GKE's driver, GKE's GPU nodes: cloud.google.com/gke-accelerator, set on every GPU
node pool (its driver installer and device plugin select the same), has a value per GPU model, so only
an Exists expression matches them all.
*/}}
{{- define "npd.affinity" -}}
{{- $a := deepCopy (.Values.affinity | default dict) }}
{{- if and .Values.gpu.enabled (eq (include "npd.gpuDriver" .) "gke") }}
{{- if $a.nodeAffinity }}
{{- fail "gpu.driverRoot /home/kubernetes/bin/nvidia selects GKE's GPU nodes by node affinity (cloud.google.com/gke-accelerator Exists): leave affinity.nodeAffinity unset" }}
{{- end }}
{{- $term := dict "matchExpressions" (list (dict "key" "cloud.google.com/gke-accelerator" "operator" "Exists")) }}
{{- $_ := set $a "nodeAffinity" (dict "requiredDuringSchedulingIgnoredDuringExecution" (dict "nodeSelectorTerms" (list $term))) }}
{{- end }}
{{- toYaml $a }}
{{- end }}

{{/* The driver folder's volume and mount, for the host-path variants. */}}
{{- define "npd.gpuDriverVolume" -}}
{{- if .Values.gpu.enabled }}
{{- $d := include "npd.gpuDriver" . }}
{{- if eq $d "gke" }}
- { name: nvidia-driver, hostPath: { path: /home/kubernetes/bin/nvidia, type: Directory } }
{{- else if eq $d "gpu-operator" }}
- { name: nvidia-driver, hostPath: { path: /run/nvidia/driver, type: DirectoryOrCreate } }
{{- end }}
{{- end }}
{{- end }}

{{- define "npd.gpuDriverMount" -}}
{{- if .Values.gpu.enabled }}
{{- $d := include "npd.gpuDriver" . }}
{{- if eq $d "gke" }}
- { name: nvidia-driver, mountPath: /usr/local/nvidia, readOnly: true, mountPropagation: HostToContainer }
{{- else if eq $d "gpu-operator" }}
- { name: nvidia-driver, mountPath: /host/run/nvidia/driver, readOnly: true, mountPropagation: HostToContainer }
{{- end }}
{{- end }}
{{- end }}
