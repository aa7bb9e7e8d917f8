/*
 * Shared by the fake NVML's files (fake-nvml.c documents the state and event formats). Types and layouts
 * are NVML's (NVIDIA/go-nvml gen/nvml/nvml.h, NVML API 13, as ../shared/reference/gpu.md section 2.2
 * lists them); the static asserts pin every offset the binding reads, so a wrong layout here fails the
 * build rather than a test.
 */
#ifndef FAKE_NVML_H
#define FAKE_NVML_H

#include <stddef.h>

typedef int nvmlReturn_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_CORRUPTED_INFOROM 14
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25

#define FAKE_MAX_GPUS 64
#define FAKE_MAX_LINKS 36 /* NVML_NVLINK_MAX_LINKS */

/* A device handle points at one of these; the index is the handle's position in the array. */
struct fake_gpu {
  unsigned index;
};
typedef struct fake_gpu *nvmlDevice_t;
typedef struct fake_event_set *nvmlEventSet_t;

typedef struct {
  char busIdLegacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;
  unsigned pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t");
_Static_assert(offsetof(nvmlPciInfo_t, pciDeviceId) == 28, "pciDeviceId");
_Static_assert(offsetof(nvmlPciInfo_t, busId) == 36, "busId");

typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
} nvmlEventData_t;
_Static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t");
_Static_assert(offsetof(nvmlEventData_t, computeInstanceId) == 28, "computeInstanceId");

typedef union {
  double dVal;
  int siVal;
  unsigned uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct {
  unsigned fieldId;
  unsigned scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t");
_Static_assert(offsetof(nvmlFieldValue_t, valueType) == 24, "valueType");
_Static_assert(offsetof(nvmlFieldValue_t, value) == 32, "value");

typedef struct {
  unsigned version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;
  unsigned healthMask;
  unsigned char healthSummary;
} nvmlGpuFabricInfoV_t;
_Static_assert(sizeof(nvmlGpuFabricInfoV_t) == 40, "nvmlGpuFabricInfoV_t");
_Static_assert(offsetof(nvmlGpuFabricInfoV_t, status) == 20, "status");
_Static_assert(offsetof(nvmlGpuFabricInfoV_t, state) == 28, "state");
_Static_assert(offsetof(nvmlGpuFabricInfoV_t, healthMask) == 32, "healthMask");
_Static_assert(offsetof(nvmlGpuFabricInfoV_t, healthSummary) == 36, "healthSummary");
#define FAKE_FABRIC_INFO_V3 0x03000028u

/* fake-state.c: the state file, re-read on every call. */
char *fake_state_read(void);
const char *fake_state_value(const char *state, const char *key);
int fake_state_nums(const char *value, unsigned long long *out, int max);
unsigned long long fake_state_num(const char *state, const char *key, unsigned long long dflt);
int fake_state_has(const char *state, const char *key);
const char *fake_gpu_value(const char *state, unsigned index, const char *suffix);
unsigned long long fake_gpu_num(const char *state, unsigned index, const char *suffix,
                                unsigned long long dflt);

/* fake-nvml.c: the checks every call makes first. */
extern struct fake_gpu fake_gpus[FAKE_MAX_GPUS];
nvmlReturn_t fake_begin(const char *fn, char **state);
nvmlReturn_t fake_device_begin(const char *fn, nvmlDevice_t device, char **state, unsigned *index);
unsigned fake_count(const char *state);

#endif
