/*
 * The fake NVML's event sets: registration and nvmlEventSetWait_v2 over the FAKE_NVML_EVENTS file
 * (format: fake-nvml.c). The wait runs on a libuv pool thread while the main thread registers and polls,
 * so a set's registrations and read position are behind its mutex. Sets come from a fixed pool and are
 * never returned to the allocator, so a set freed during a wait is not a use after free.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake-nvml.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_SETS 64

struct fake_event_set {
  int in_use;
  unsigned consumed; /* events file lines already answered */
  unsigned long long masks[FAKE_MAX_GPUS];
};

struct entry {
  int is_ret;
  nvmlReturn_t code;
  long index;
  unsigned long long type, data, gpuInstanceId, computeInstanceId;
};

static struct fake_event_set sets[MAX_SETS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int valid_set(nvmlEventSet_t set) {
  return set >= sets && set < sets + MAX_SETS && __atomic_load_n(&set->in_use, __ATOMIC_SEQ_CST);
}

static void parse_entry(const char *line, struct entry *e) {
  char *end;
  memset(e, 0, sizeof *e);
  e->gpuInstanceId = e->computeInstanceId = 0xFFFFFFFFull;
  if (strncmp(line, "ret", 3) == 0) {
    e->is_ret = 1;
    e->code = (nvmlReturn_t)strtol(line + 3, NULL, 0);
    return;
  }
  e->index = strtol(line, &end, 0);
  e->type = strtoull(end, &end, 16);
  e->data = strtoull(end, &end, 0);
  if (sscanf(end, "%lli %lli", (long long *)&e->gpuInstanceId, (long long *)&e->computeInstanceId) != 2)
    e->gpuInstanceId = e->computeInstanceId = 0xFFFFFFFFull;
}

/* The n-th event line (blank and '#' lines skipped) of FAKE_NVML_EVENTS, if written yet. */
static int read_entry(unsigned n, struct entry *e) {
  const char *path = getenv("FAKE_NVML_EVENTS");
  char line[256];
  int found = 0;
  FILE *f = path && *path ? fopen(path, "re") : NULL;
  if (!f) return 0;
  for (unsigned seen = 0; !found && fgets(line, sizeof line, f);) {
    const char *p = line + strspn(line, " \t");
    if (*p == '\0' || *p == '\n' || *p == '#') continue;
    if (!strchr(p, '\n')) break; /* a line still being written: every event line ends with a newline */
    if (seen++ == n) {
      parse_entry(p, e);
      found = 1;
    }
  }
  fclose(f);
  return found;
}

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
  char *state;
  nvmlReturn_t r = fake_begin("nvmlEventSetCreate", &state);
  if (r != NVML_SUCCESS) return r;
  free(state);
  r = NVML_ERROR_INSUFFICIENT_SIZE;
  pthread_mutex_lock(&lock);
  for (int k = 0; k < MAX_SETS && r != NVML_SUCCESS; k++) {
    if (sets[k].in_use) continue;
    memset(&sets[k], 0, sizeof sets[k]);
    sets[k].in_use = 1;
    *set = &sets[k];
    r = NVML_SUCCESS;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  char *state;
  nvmlReturn_t r = fake_begin("nvmlEventSetFree", &state);
  if (r != NVML_SUCCESS) return r;
  free(state);
  if (!valid_set(set)) return NVML_ERROR_INVALID_ARGUMENT;
  __atomic_store_n(&set->in_use, 0, __ATOMIC_SEQ_CST);
  return NVML_SUCCESS;
}

/* As NVML: only types the GPU supports (gpuN.events) can be registered. */
EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types, nvmlEventSet_t set) {
  char *state;
  unsigned i;
  nvmlReturn_t r = fake_device_begin("nvmlDeviceRegisterEvents", device, &state, &i);
  if (r != NVML_SUCCESS) return r;
  unsigned long long supported = fake_gpu_num(state, i, "events", 0xff9f);
  free(state);
  if (!valid_set(set)) return NVML_ERROR_INVALID_ARGUMENT;
  if (types & ~supported) return NVML_ERROR_NOT_SUPPORTED;
  pthread_mutex_lock(&lock);
  set->masks[i] |= types;
  pthread_mutex_unlock(&lock);
  return NVML_SUCCESS;
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* GPU_IS_LOST when a GPU registered in the set is scripted lost; the other ret.* answers as any call. */
static nvmlReturn_t wait_check(nvmlEventSet_t set) {
  char *state;
  nvmlReturn_t r = fake_begin("nvmlEventSetWait_v2", &state);
  if (r != NVML_SUCCESS) return r;
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < FAKE_MAX_GPUS && r == NVML_SUCCESS; i++)
    if (set->masks[i] && fake_gpu_num(state, i, "lost", 0)) r = NVML_ERROR_GPU_IS_LOST;
  pthread_mutex_unlock(&lock);
  free(state);
  return r;
}

/* The next scripted event this set delivers: 1 and *e, 0 when none is written yet. */
static int next_event(nvmlEventSet_t set, struct entry *e) {
  for (;;) {
    pthread_mutex_lock(&lock);
    int got = read_entry(set->consumed, e);
    if (got) set->consumed++;
    unsigned long long mask = got && e->index >= 0 && e->index < FAKE_MAX_GPUS ? set->masks[e->index] : 0;
    pthread_mutex_unlock(&lock);
    if (!got) return 0;
    if (e->is_ret || e->index < 0 || (mask & e->type)) return 1;
  }
}

EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned timeoutms) {
  const long long deadline = now_ms() + timeoutms;
  const struct timespec step = {0, 2000000};
  struct entry e;
  if (!valid_set(set) || !data) return NVML_ERROR_INVALID_ARGUMENT;
  for (;;) {
    nvmlReturn_t r = wait_check(set);
    if (r != NVML_SUCCESS) return r;
    if (next_event(set, &e)) break;
    if (now_ms() >= deadline) return NVML_ERROR_TIMEOUT;
    nanosleep(&step, NULL);
  }
  if (e.is_ret) return e.code;
  data->device = e.index >= 0 && e.index < FAKE_MAX_GPUS ? &fake_gpus[e.index] : NULL;
  data->eventType = e.type;
  data->eventData = e.data;
  data->gpuInstanceId = (unsigned)e.gpuInstanceId;
  data->computeInstanceId = (unsigned)e.computeInstanceId;
  return NVML_SUCCESS;
}
