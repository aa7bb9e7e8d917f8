/*
 * The fake NVML's state file (format: fake-nvml.c), read whole on every call so a test can rewrite it
 * between two polls. Each call gets its own copy: the event wait runs on a libuv pool thread while the
 * other calls run on the main thread, and nothing here is shared between them.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-nvml.h"

/* The whole file, NUL-terminated; NULL when FAKE_NVML_STATE is unset or names no file (the defaults). */
char *fake_state_read(void) {
  const char *path = getenv("FAKE_NVML_STATE");
  if (!path || !*path) return NULL;
  FILE *f = fopen(path, "re");
  if (!f) return NULL;
  size_t cap = 4096, len = 0, n;
  char *buf = malloc(cap);
  while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (len + 1 == cap) {
      cap *= 2;
      char *grown = realloc(buf, cap);
      if (!grown) free(buf);
      buf = grown;
    }
  }
  fclose(f);
  if (buf) buf[len] = '\0';
  return buf;
}

/* The value of the last line "<key> <value>" (so a later line overrides an earlier one), or NULL. */
const char *fake_state_value(const char *state, const char *key) {
  const char *found = NULL;
  size_t klen = strlen(key);
  for (const char *line = state; line && *line;) {
    while (*line == ' ' || *line == '\t') line++;
    if (strncmp(line, key, klen) == 0 && (line[klen] == ' ' || line[klen] == '\t')) {
      const char *v = line + klen;
      while (*v == ' ' || *v == '\t') v++;
      found = v;
    }
    const char *nl = strchr(line, '\n');
    line = nl ? nl + 1 : NULL;
  }
  return found;
}

int fake_state_has(const char *state, const char *key) { return fake_state_value(state, key) != NULL; }

/* Up to max numbers in C syntax (decimal, or hex with 0x) from a value, never past its line's end. */
int fake_state_nums(const char *value, unsigned long long *out, int max) {
  char line[256], *p = line, *end;
  size_t n = value ? strcspn(value, "\n") : 0;
  if (n >= sizeof line) n = sizeof line - 1;
  memcpy(line, value ? value : "", n);
  line[n] = '\0';
  int got = 0;
  while (got < max) {
    unsigned long long v = strtoull(p, &end, 0);
    if (end == p) break;
    out[got++] = v;
    p = end;
  }
  return got;
}

unsigned long long fake_state_num(const char *state, const char *key, unsigned long long dflt) {
  unsigned long long v;
  return fake_state_nums(fake_state_value(state, key), &v, 1) == 1 ? v : dflt;
}

const char *fake_gpu_value(const char *state, unsigned index, const char *suffix) {
  char key[160];
  snprintf(key, sizeof key, "gpu%u.%s", index, suffix);
  return fake_state_value(state, key);
}

unsigned long long fake_gpu_num(const char *state, unsigned index, const char *suffix,
                                unsigned long long dflt) {
  unsigned long long v;
  return fake_state_nums(fake_gpu_value(state, index, suffix), &v, 1) == 1 ? v : dflt;
}
