/*
 * The fake NVML's nvmlDeviceGetFieldValues: each field's value from gpuN.field.ID[.SCOPE] (format:
 * fake-nvml.c), else an H200 default, else the field's own NOT_SUPPORTED. timestamp and latencyUsec get
 * marker values, so a binding reading the wrong offset reads them instead of the value.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-nvml.h"

#define EXPORT __attribute__((visibility("default")))
#define TYPE_UINT 1
#define TYPE_ULL 3

/* The fields nvml.json's H200 answers (ECC current, volatile SBE/DBE, PCIe replays, remapped rows,
 * recovery action), with its values. */
static int default_field(unsigned id, unsigned long long *value, int *type) {
  *type = TYPE_ULL;
  switch (id) {
  case 1: *value = 1; return 1;
  case 3: case 4: case 142: case 143: case 144: case 145: *value = 0; return 1;
  case 94: *value = 2; return 1;
  case 230: *value = 0; *type = TYPE_UINT; return 1;
  default: return 0;
  }
}

/* Stores text as nvmlValueType_t type says: 0 double, 1 uint, 2 ulong, 3 ull, 4 sll, 5 int, 6 ushort.
 * The union's other bytes get a marker, so a binding reading a narrow type too wide reads garbage. */
static void set_value(nvmlValue_t *v, int type, const char *text) {
  memset(v, 0xEE, sizeof *v);
  switch (type) {
  case 0: v->dVal = strtod(text, NULL); break;
  case 1: v->uiVal = (unsigned)strtoull(text, NULL, 0); break;
  case 2: v->ulVal = (unsigned long)strtoull(text, NULL, 0); break;
  case 4: v->sllVal = strtoll(text, NULL, 0); break;
  case 5: v->siVal = (int)strtoll(text, NULL, 0); break;
  case 6: v->usVal = (unsigned short)strtoull(text, NULL, 0); break;
  default: v->ullVal = strtoull(text, NULL, 0); break;
  }
}

static const char *field_line(const char *state, unsigned gpu, const nvmlFieldValue_t *f) {
  char suffix[64];
  snprintf(suffix, sizeof suffix, "field.%u.%u", f->fieldId, f->scopeId);
  const char *v = fake_gpu_value(state, gpu, suffix);
  if (v) return v;
  snprintf(suffix, sizeof suffix, "field.%u", f->fieldId);
  return fake_gpu_value(state, gpu, suffix);
}

static void fill_field(const char *state, unsigned gpu, nvmlFieldValue_t *f) {
  char line[256], *save = NULL, text[32];
  const char *v = field_line(state, gpu, f);
  unsigned long long dflt;
  f->timestamp = 1764872999000000LL + f->fieldId;
  f->latencyUsec = 7;
  f->nvmlReturn = NVML_SUCCESS;
  if (!v) {
    if (default_field(f->fieldId, &dflt, &f->valueType)) {
      snprintf(text, sizeof text, "%llu", dflt);
      set_value(&f->value, f->valueType, text);
    } else {
      f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
    return;
  }
  size_t n = strcspn(v, "\n");
  if (n >= sizeof line) n = sizeof line - 1;
  memcpy(line, v, n);
  line[n] = '\0';
  const char *value = strtok_r(line, " \t", &save), *type = strtok_r(NULL, " \t", &save);
  const char *ret = strtok_r(NULL, " \t", &save);
  f->valueType = type ? (int)strtol(type, NULL, 0) : TYPE_ULL;
  set_value(&f->value, f->valueType, value ? value : "0");
  if (ret) f->nvmlReturn = (nvmlReturn_t)strtol(ret, NULL, 0);
}

EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values) {
  char *state;
  unsigned i;
  if (valuesCount <= 0 || !values) return NVML_ERROR_INVALID_ARGUMENT;
  nvmlReturn_t r = fake_device_begin("nvmlDeviceGetFieldValues", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  for (int k = 0; k < valuesCount; k++) fill_field(state, i, &values[k]);
  free(state);
  return NVML_SUCCESS;
}
