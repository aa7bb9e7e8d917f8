/*
 * A fake libnvidia-ml.so.1 for the tests: a real shared object exporting NVML's symbols with NVML's
 * signatures (NVIDIA/go-nvml gen/nvml/nvml.h, NVML API 13; ../shared/reference/gpu.md section 2), built by
 * build.ts with gcc and loaded through the production binding (src/host/nvml/binding.ts). Only the calls
 * the binding makes are exported, so any other symbol is missing, as on an old driver.
 *
 * STATE: the file named by FAKE_NVML_STATE, re-read on every call (write it whole and rename it into
 * place; state.ts does). One "<key> <value>" a line, '#' lines ignored, the last line of a key wins.
 * Without the variable or the file, every key has its default: one healthy NVIDIA H200 as measured in
 * ../shared/fixtures/gpu-h200/nvml.json. Numbers are C numbers (decimal, or hex with 0x).
 *   count N                            nvmlDeviceGetCount_v2 (default 1; at most 64)
 *   init CODE                          nvmlInit_v2 answers CODE (e.g. 999: Unknown Error)
 *   driver TEXT                        nvmlSystemGetDriverVersion (default 580.159.04)
 *   ret.all CODE                       every call but nvmlErrorString answers CODE
 *   ret.<symbol> CODE                  that call answers CODE (e.g. ret.nvmlEventSetCreate 999)
 *   gpuN.lost 1                        every call for GPU N answers GPU_IS_LOST, and so does an event
 *                                      wait on a set it is registered in
 *   gpuN.ret.<symbol> CODE             that call for GPU N answers CODE (e.g. 3: NOT_SUPPORTED)
 *   gpuN.uuid TEXT                     default GPU-9571ff8c-5bff-8cfd-14bc-40686eeaa1f3 for GPU 0,
 *                                      GPU-00000000-0000-0000-0000-<N as 12 hex digits> for the others
 *   gpuN.name TEXT                     default NVIDIA H200
 *   gpuN.busId TEXT                    default 00000000:00:<06+N in hex>.0; domain, bus and device of
 *                                      nvmlPciInfo_t are parsed from it
 *   gpuN.pciDeviceId N                 default 0x233510de (590680286)
 *   gpuN.pciSubSystemId N              default 0
 *   gpuN.ecc.mode CURRENT PENDING      nvmlDeviceGetEccMode (default 1 1)
 *   gpuN.ecc.<corrected|uncorrected>.<volatile|aggregate> N   nvmlDeviceGetTotalEccErrors (default 0)
 *   gpuN.remap CORR UNC PENDING FAILURE                        nvmlDeviceGetRemappedRows (default 0 0 0 0)
 *   gpuN.retired.<sbe|dbe> N           nvmlDeviceGetRetiredPages' count (default NOT_SUPPORTED, Hopper)
 *   gpuN.retired.pending 0|1           nvmlDeviceGetRetiredPagesPendingStatus (default NOT_SUPPORTED)
 *   gpuN.clocks BITS                   nvmlDeviceGetCurrentClocksEventReasons (default 0x1, idle)
 *   gpuN.pcie.width CURRENT MAX        default 16 16
 *   gpuN.pcie.gen CURRENT MAX          default 5 5
 *   gpuN.pcie.replay N                 nvmlDeviceGetPcieReplayCounter (default 2)
 *   gpuN.nvlinks N                     links 0..N-1 answer active (default 0: every link NOT_SUPPORTED,
 *                                      a PCIe H200); links from N up to 35 answer NOT_SUPPORTED
 *   gpuN.nvlink.L 0|1                  link L's state, whatever gpuN.nvlinks says
 *   gpuN.fabric STATE STATUS MASK SUMMARY   nvmlDeviceGetGpuFabricInfoV (default NOT_SUPPORTED, assumed
 *                                      for a PCIe H200 without NVSwitch: nvml.json's read of it failed)
 *   gpuN.inforom.valid 0               nvmlDeviceValidateInforom answers CORRUPTED_INFOROM (default 1)
 *   gpuN.field.ID VALUE [TYPE [RET]]   nvmlDeviceGetFieldValues: the value (nvmlValueType_t TYPE, default
 *                                      3 = unsigned long long; 0 = double) and the field's own return
 *                                      (default 0); a field neither scripted nor a default answers its
 *                                      own NOT_SUPPORTED. Defaults: 1 (ECC current) 1, 3 and 4 (volatile
 *                                      SBE/DBE) 0, 94 (PCIe replays) 2, 142-145 (remapped rows) 0, 230
 *                                      (GPU recovery action) 0 = NONE as TYPE 1 (assumed: nvml.json
 *                                      has no answer for field 230)
 *   gpuN.field.ID.SCOPE ...            the same for one scope id (an NVLink link)
 *   gpuN.events BITS                   nvmlDeviceGetSupportedEventTypes (default 0xff9f)
 *
 * EVENTS: the file named by FAKE_NVML_EVENTS, one event a line (each ending with a newline; a line without
 * one is still being written), each event set reading it from its first line, in order, as
 * nvmlEventSetWait_v2 is called (fake-events.c):
 *   <index> <typeHex> <data> [<gpuInstanceId> <computeInstanceId>]   (instance ids default 0xFFFFFFFF)
 *   ret <code>                         that wait answers <code> instead
 * An event is delivered only when its GPU is registered in the set for its type, as NVML does; an index
 * of -1 gives a NULL device and is always delivered. The wait sleeps in 2 ms steps until its timeout for
 * a new line and answers TIMEOUT (10) when none came.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-nvml.h"

struct fake_gpu fake_gpus[FAKE_MAX_GPUS];
static int initialized; /* nvmlInit_v2 minus nvmlShutdown; main thread only */

#define EXPORT __attribute__((visibility("default")))

/* nvmlErrorString's texts as NVIDIA's DCGM copies them (dcgmlib nvml_error_strings.h). */
EXPORT const char *nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
  case 0: return "Success";
  case 1: return "Uninitialized";
  case 2: return "Invalid Argument";
  case 3: return "Not Supported";
  case 4: return "Insufficient Permissions";
  case 5: return "Already Initialized";
  case 6: return "Not Found";
  case 7: return "Insufficient Size";
  case 8: return "Insufficient External Power";
  case 9: return "Driver Not Loaded";
  case 10: return "Timeout";
  case 11: return "Interrupt Request Issue";
  case 12: return "NVML Shared Library Not Found";
  case 13: return "Function Not Found";
  case 14: return "Corrupted infoROM";
  case 15: return "GPU is lost";
  case 16: return "GPU requires reset";
  case 17: return "GPU access blocked by the operating system";
  case 18: return "Driver/library version mismatch";
  case 19: return "In use by another client";
  case 20: return "Insufficient Memory";
  default: return "Unknown Error";
  }
}

/* The scripted answer of a call (ret.all, ret.<fn>), else UNINITIALIZED before nvmlInit_v2. */
nvmlReturn_t fake_begin(const char *fn, char **state) {
  char key[128];
  *state = fake_state_read();
  snprintf(key, sizeof key, "ret.%s", fn);
  nvmlReturn_t r = (nvmlReturn_t)fake_state_num(*state, "ret.all", 0);
  if (r == NVML_SUCCESS) r = (nvmlReturn_t)fake_state_num(*state, key, 0);
  if (r == NVML_SUCCESS && !__atomic_load_n(&initialized, __ATOMIC_SEQ_CST)) r = NVML_ERROR_UNINITIALIZED;
  if (r != NVML_SUCCESS) free(*state);
  return r;
}

unsigned fake_count(const char *state) {
  unsigned long long n = fake_state_num(state, "count", 1);
  return n > FAKE_MAX_GPUS ? FAKE_MAX_GPUS : (unsigned)n;
}

/* fake_begin, then a handle this library gave out, a GPU not lost, and gpuN.ret.<fn>. */
nvmlReturn_t fake_device_begin(const char *fn, nvmlDevice_t device, char **state, unsigned *index) {
  nvmlReturn_t r = fake_begin(fn, state);
  if (r != NVML_SUCCESS) return r;
  if (device < fake_gpus || device >= fake_gpus + FAKE_MAX_GPUS) {
    r = NVML_ERROR_INVALID_ARGUMENT;
  } else {
    char suffix[128];
    *index = (unsigned)(device - fake_gpus);
    snprintf(suffix, sizeof suffix, "ret.%s", fn);
    if (fake_gpu_num(*state, *index, "lost", 0)) r = NVML_ERROR_GPU_IS_LOST;
    else r = (nvmlReturn_t)fake_gpu_num(*state, *index, suffix, 0);
  }
  if (r != NVML_SUCCESS) free(*state);
  return r;
}

EXPORT nvmlReturn_t nvmlInit_v2(void) {
  char *state = fake_state_read();
  nvmlReturn_t r = (nvmlReturn_t)fake_state_num(state, "ret.all", 0);
  if (r == NVML_SUCCESS) r = (nvmlReturn_t)fake_state_num(state, "ret.nvmlInit_v2", 0);
  if (r == NVML_SUCCESS) r = (nvmlReturn_t)fake_state_num(state, "init", 0);
  free(state);
  if (r == NVML_SUCCESS) __atomic_add_fetch(&initialized, 1, __ATOMIC_SEQ_CST);
  return r;
}

EXPORT nvmlReturn_t nvmlShutdown(void) {
  char *state;
  nvmlReturn_t r = fake_begin("nvmlShutdown", &state);
  if (r != NVML_SUCCESS) return r;
  free(state);
  __atomic_sub_fetch(&initialized, 1, __ATOMIC_SEQ_CST);
  return NVML_SUCCESS;
}

/* Copies a state value (to its line's end, trailing blanks cut) or the default into a caller's buffer. */
static nvmlReturn_t copy_text(const char *value, const char *dflt, char *out, unsigned length) {
  const char *src = value ? value : dflt;
  size_t n = strcspn(src, "\n");
  while (n > 0 && (src[n - 1] == ' ' || src[n - 1] == '\t' || src[n - 1] == '\r')) n--;
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (n + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  memcpy(out, src, n);
  out[n] = '\0';
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned length) {
  char *state;
  nvmlReturn_t r = fake_begin("nvmlSystemGetDriverVersion", &state);
  if (r != NVML_SUCCESS) return r;
  r = copy_text(fake_state_value(state, "driver"), "580.159.04", version, length);
  free(state);
  return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *deviceCount) {
  char *state;
  nvmlReturn_t r = fake_begin("nvmlDeviceGetCount_v2", &state);
  if (r != NVML_SUCCESS) return r;
  *deviceCount = fake_count(state);
  free(state);
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *device) {
  char *state;
  unsigned checked;
  nvmlReturn_t r = fake_begin("nvmlDeviceGetHandleByIndex_v2", &state);
  if (r != NVML_SUCCESS) return r;
  unsigned count = fake_count(state);
  free(state);
  if (index >= count) return NVML_ERROR_INVALID_ARGUMENT;
  fake_gpus[index].index = index;
  r = fake_device_begin("nvmlDeviceGetHandleByIndex_v2", &fake_gpus[index], &state, &checked);
  if (r != NVML_SUCCESS) return r;
  free(state);
  *device = &fake_gpus[index];
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned length) {
  char *state, dflt[48];
  unsigned i;
  nvmlReturn_t r = fake_device_begin("nvmlDeviceGetUUID", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  if (i == 0) snprintf(dflt, sizeof dflt, "GPU-9571ff8c-5bff-8cfd-14bc-40686eeaa1f3");
  else snprintf(dflt, sizeof dflt, "GPU-00000000-0000-0000-0000-%012x", i);
  r = copy_text(fake_gpu_value(state, i, "uuid"), dflt, uuid, length);
  free(state);
  return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned length) {
  char *state;
  unsigned i;
  nvmlReturn_t r = fake_device_begin("nvmlDeviceGetName", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  r = copy_text(fake_gpu_value(state, i, "name"), "NVIDIA H200", name, length);
  free(state);
  return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) {
  char *state, dflt[32];
  unsigned i, fn = 0;
  nvmlReturn_t r = fake_device_begin("nvmlDeviceGetPciInfo_v3", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  memset(pci, 0, sizeof *pci);
  snprintf(dflt, sizeof dflt, "%08X:%02X:%02X.0", 0u, 0u, 6 + i);
  copy_text(fake_gpu_value(state, i, "busId"), dflt, pci->busId, sizeof pci->busId);
  sscanf(pci->busId, "%x:%x:%x.%x", &pci->domain, &pci->bus, &pci->device, &fn);
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.%X", pci->domain & 0xffff,
           pci->bus & 0xff, pci->device & 0xff, fn & 0xf);
  pci->pciDeviceId = (unsigned)fake_gpu_num(state, i, "pciDeviceId", 0x233510de);
  pci->pciSubSystemId = (unsigned)fake_gpu_num(state, i, "pciSubSystemId", 0);
  free(state);
  return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *types) {
  char *state;
  unsigned i;
  nvmlReturn_t r = fake_device_begin("nvmlDeviceGetSupportedEventTypes", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  *types = fake_gpu_num(state, i, "events", 0xff9f);
  free(state);
  return NVML_SUCCESS;
}
