/*
 * The fake NVML's health calls: memory (ECC, remapped rows, retired pages), clocks, links, fabric,
 * InfoROM and field values. Keys and defaults: fake-nvml.c; defaults are the H200 of
 * ../shared/fixtures/gpu-h200/nvml.json.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-nvml.h"

#define EXPORT __attribute__((visibility("default")))

/* Reads n numbers of gpuN.<suffix> into out (left as the defaults the caller put there when absent). */
static void gpu_nums(const char *state, unsigned i, const char *suffix, unsigned long long *out, int n) {
  unsigned long long got[8];
  int have = fake_state_nums(fake_gpu_value(state, i, suffix), got, n);
  if (have == n) memcpy(out, got, sizeof(unsigned long long) * (size_t)n);
}

EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, int *current, int *pending) {
  char *state;
  unsigned i;
  unsigned long long mode[2] = {1, 1};
  nvmlReturn_t r = fake_device_begin("nvmlDeviceGetEccMode", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  gpu_nums(state, i, "ecc.mode", mode, 2);
  *current = (int)mode[0];
  *pending = (int)mode[1];
  free(state);
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int errorType, int counterType,
                                                unsigned long long *count) {
  static const char *const keys[2][2] = {{"ecc.corrected.volatile", "ecc.corrected.aggregate"},
                                         {"ecc.uncorrected.volatile", "ecc.uncorrected.aggregate"}};
  char *state;
  unsigned i;
  if (errorType < 0 || errorType > 1 || counterType < 0 || counterType > 1) return NVML_ERROR_INVALID_ARGUMENT;
  nvmlReturn_t r = fake_device_begin("nvmlDeviceGetTotalEccErrors", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  *count = fake_gpu_num(state, i, keys[errorType][counterType], 0);
  free(state);
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned *corrRows, unsigned *uncRows,
                                              unsigned *isPending, unsigned *failureOccurred) {
  char *state;
  unsigned i;
  unsigned long long rows[4] = {0, 0, 0, 0};
  nvmlReturn_t r = fake_device_begin("nvmlDeviceGetRemappedRows", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  gpu_nums(state, i, "remap", rows, 4);
  *corrRows = (unsigned)rows[0];
  *uncRows = (unsigned)rows[1];
  *isPending = (unsigned)rows[2];
  *failureOccurred = (unsigned)rows[3];
  free(state);
  return NVML_SUCCESS;
}

/* As NVML: *pageCount in is the buffer's size; too small answers INSUFFICIENT_SIZE with the count. */
EXPORT nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, int cause, unsigned *pageCount,
                                              unsigned long long *addresses) {
  char *state;
  unsigned i;
  if (cause < 0 || cause > 1 || !pageCount) return NVML_ERROR_INVALID_ARGUMENT;
  nvmlReturn_t r = fake_device_begin("nvmlDeviceGetRetiredPages", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  const char *key = cause == 0 ? "retired.sbe" : "retired.dbe";
  unsigned long long n = fake_gpu_num(state, i, key, 0);
  r = fake_gpu_value(state, i, key) ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
  free(state);
  if (r != NVML_SUCCESS) return r;
  if (*pageCount < n) r = NVML_ERROR_INSUFFICIENT_SIZE;
  for (unsigned k = 0; r == NVML_SUCCESS && addresses && k < n; k++) addresses[k] = 0x1000ull * (k + 1);
  *pageCount = (unsigned)n;
  return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, int *isPending) {
  char *state;
  unsigned i;
  nvmlReturn_t r = fake_device_begin("nvmlDeviceGetRetiredPagesPendingStatus", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  r = fake_gpu_value(state, i, "retired.pending") ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
  *isPending = (int)fake_gpu_num(state, i, "retired.pending", 0);
  free(state);
  return r;
}

/* One unsigned value of a device, as the several one-number getters below answer. */
static nvmlReturn_t gpu_uint(const char *fn, nvmlDevice_t device, const char *suffix, int which,
                             unsigned long long dflt, unsigned long long *out) {
  char *state;
  unsigned i;
  unsigned long long v[2] = {dflt, dflt};
  nvmlReturn_t r = fake_device_begin(fn, device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  gpu_nums(state, i, suffix, v, which + 1);
  *out = v[which];
  free(state);
  return NVML_SUCCESS;
}

#define UINT_GETTER(fn, suffix, which, dflt)                                                              \
  EXPORT nvmlReturn_t fn(nvmlDevice_t device, unsigned *value) {                                          \
    unsigned long long v;                                                                                 \
    nvmlReturn_t r = gpu_uint(#fn, device, suffix, which, dflt, &v);                                      \
    if (r == NVML_SUCCESS) *value = (unsigned)v;                                                          \
    return r;                                                                                             \
  }
UINT_GETTER(nvmlDeviceGetCurrPcieLinkWidth, "pcie.width", 0, 16)
UINT_GETTER(nvmlDeviceGetMaxPcieLinkWidth, "pcie.width", 1, 16)
UINT_GETTER(nvmlDeviceGetCurrPcieLinkGeneration, "pcie.gen", 0, 5)
UINT_GETTER(nvmlDeviceGetMaxPcieLinkGeneration, "pcie.gen", 1, 5)
UINT_GETTER(nvmlDeviceGetPcieReplayCounter, "pcie.replay", 0, 2)

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons) {
  return gpu_uint("nvmlDeviceGetCurrentClocksEventReasons", device, "clocks", 0, 0x1, reasons);
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned link, int *isActive) {
  char *state, key[32];
  unsigned i;
  if (link >= FAKE_MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  nvmlReturn_t r = fake_device_begin("nvmlDeviceGetNvLinkState", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  snprintf(key, sizeof key, "nvlink.%u", link);
  if (fake_gpu_value(state, i, key)) *isActive = (int)fake_gpu_num(state, i, key, 0);
  else if (link < fake_gpu_num(state, i, "nvlinks", 0)) *isActive = 1;
  else r = NVML_ERROR_NOT_SUPPORTED;
  free(state);
  return r;
}

/* clusterUuid and cliqueId get marker bytes the binding must not read as the fields beside them. */
EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *info) {
  char *state;
  unsigned i;
  unsigned long long f[4];
  if (!info || info->version != FAKE_FABRIC_INFO_V3) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  nvmlReturn_t r = fake_device_begin("nvmlDeviceGetGpuFabricInfoV", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  if (fake_state_nums(fake_gpu_value(state, i, "fabric"), f, 4) != 4) r = NVML_ERROR_NOT_SUPPORTED;
  free(state);
  if (r != NVML_SUCCESS) return r;
  memset(info->clusterUuid, 0xAB, sizeof info->clusterUuid);
  info->cliqueId = 0xC11C;
  info->state = (unsigned char)f[0];
  info->status = (nvmlReturn_t)f[1];
  info->healthMask = (unsigned)f[2];
  info->healthSummary = (unsigned char)f[3];
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceValidateInforom(nvmlDevice_t device) {
  char *state;
  unsigned i;
  nvmlReturn_t r = fake_device_begin("nvmlDeviceValidateInforom", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  r = fake_gpu_num(state, i, "inforom.valid", 1) ? NVML_SUCCESS : NVML_ERROR_CORRUPTED_INFOROM;
  free(state);
  return r;
}
