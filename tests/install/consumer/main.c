/*
 * main.c - a user program built against an installed libcrts.
 *
 * Spawns on every CPE and checks what only a working runtime gives: each
 * CPE's ids, an LDM heap block, and a __thread_local variable that lies in
 * the same 256 KiB LDM slice as that heap.  Exits 0 when all agree.
 */
#include <crts.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS 1024

struct result {
  int tid;
  int sum_ok;   /* the LDM block held what the CPE wrote */
  int in_slice; /* the __thread_local lies in the heap's slice */
};

static struct result results[CRTS_MAX_SPE_NUM];
static __thread_local int ldm_marker;

static void work(void *arg)
{
  struct result *r = &((struct result *)arg)[CRTS_tid];
  int *block = CRTS_pldm_malloc(WORDS * sizeof *block);
  if (!block)
    return;
  long sum = 0;
  for (int i = 0; i < WORDS; i++)
    block[i] = CRTS_tid * WORDS + i;
  for (int i = 0; i < WORDS; i++)
    sum += block[i];
  long want = (long)CRTS_tid * WORDS * WORDS + (long)WORDS * (WORDS - 1) / 2;
  /* The heap starts at the slice base; the static LDM data sits above it. */
  uintptr_t base = (uintptr_t)block, mark = (uintptr_t)&ldm_marker;
  ldm_marker = CRTS_tid;
  r->in_slice = mark > base && mark - base < CRTS_MAX_LDM_SIZE;
  r->sum_ok = sum == want;
  r->tid = CRTS_tid;
  CRTS_pldm_free(block, WORDS * sizeof *block);
}

int main(void)
{
  if (CRTS_init() != 0)
    return 1;
  int n = CRTS_athread_get_max_threads();
  const char *env = getenv("CRTS_NUM_CPES");
  int want_n = env ? atoi(env) : CRTS_MAX_SPE_NUM;
  if (n != want_n) {
    fprintf(stderr, "consumer: %d CPEs, expected %d\n", n, want_n);
    return 1;
  }
  memset(results, 0xff, sizeof results);
  if (CRTS_athread_spawn((void (*)(void))work, results) != 0 ||
      CRTS_athread_join() != 0) {
    fprintf(stderr, "consumer: spawn/join failed\n");
    return 1;
  }
  int bad = 0;
  for (int i = 0; i < n; i++) {
    if (results[i].tid != i || results[i].sum_ok != 1 ||
        results[i].in_slice != 1) {
      fprintf(stderr, "consumer: CPE %d: tid %d sum_ok %d in_slice %d\n", i,
              results[i].tid, results[i].sum_ok, results[i].in_slice);
      bad++;
    }
  }
  if (bad)
    return 1;
  printf("consumer: %d CPEs ok\n", n);
  return 0;
}
