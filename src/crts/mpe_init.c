/*
 * mpe_init.c - CRTS_init: read the settings, map the LDM, start the CPEs.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>

#include "crts_cg.h"

struct crts_cg crts_cg = {
  .mpe_lock = PTHREAD_MUTEX_INITIALIZER,
  .verbose = 1,
};

long crts_env_size(const char *name, long fallback)
{
  const char *s = getenv(name);
  if (!s || !*s)
    return fallback;
  char *end;
  long v = strtol(s, &end, 10); /* "08" is eight, not bad octal */
  switch (toupper((unsigned char)*end)) {
  case 'K': v *= 1024; end++; break;
  case 'M': v *= 1024 * 1024; end++; break;
  default: break;
  }
  if (*end != '\0' || v < 0) {
    crts_report("CRTS_init", "%s=%s is not a size; using %ld", name, s,
                fallback);
    return fallback;
  }
  return v;
}

/* Smallest CPE stack reserve: glibc's thread start and a libc call or two. */
#define CRTS_MIN_STACK (8 * 1024)

static void read_settings(void)
{
  crts_cg.verbose = (int)crts_env_size("CRTS_VERBOSE", 1);
  long n = crts_env_size("CRTS_NUM_CPES", CRTS_MAX_SPE_NUM);
  if (n < 1 || n > CRTS_MAX_SPE_NUM) {
    crts_report("CRTS_init", "CRTS_NUM_CPES=%ld is outside 1..64; using 64",
                n);
    n = CRTS_MAX_SPE_NUM;
  }
  crts_cg.ncpes = (int)n;
  crts_cg.stack_size = (size_t)crts_env_size("CRTS_LDM_STACK_SIZE", 32 * 1024);
  if (crts_cg.stack_size < CRTS_MIN_STACK) {
    crts_report("CRTS_init", "CRTS_LDM_STACK_SIZE=%zu is below the %d bytes a "
                "CPE thread needs to start; using %d", crts_cg.stack_size,
                CRTS_MIN_STACK, CRTS_MIN_STACK);
    crts_cg.stack_size = CRTS_MIN_STACK;
  }
  long cache = crts_env_size("CRTS_SCACHE_SIZE", 32768);
  if (cache != 0 && cache != 32768 && cache != 131072) {
    crts_report("CRTS_init", "CRTS_SCACHE_SIZE=%ld: the CPE cache is 0, 32768 "
                "or 131072 bytes; using 32768", cache);
    cache = 32768;
  }
  crts_cg.scache_size = cache;
  crts_cg.cgn = (int)crts_env_size("CRTS_CGN", 0);
}

int CRTS_init(void)
{
  pthread_mutex_lock(&crts_cg.mpe_lock);
  int rc = 0;
  if (atomic_load(&crts_cg.initialized))
    goto out;
  read_settings();
  if (crts_ldm_arena_init() != 0 || crts_pool_start() != 0) {
    rc = -1;
    goto out;
  }
  atomic_store_explicit(&crts_cg.initialized, 1, memory_order_release);
out:
  pthread_mutex_unlock(&crts_cg.mpe_lock);
  return rc;
}

int athread_init(void) { return CRTS_init(); }
