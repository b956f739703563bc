/*
 * crts_stress.c - a plain (non-Criterion) stress run of the whole emulator.
 *
 * Criterion cannot start under ThreadSanitizer, so this program is what the
 * TSan build runs: many spawns mixing barriers, locks, DMA, RMA reply words
 * and a reduction, each step checked.  It is also an ordinary ctest.
 * Usage: crts_stress [rounds]
 */
#include <crts.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS 256

static int main_src[CRTS_MAX_SPE_NUM][WORDS];
static int main_dst[CRTS_MAX_SPE_NUM][WORDS];
static _Atomic int failures;
static long locked_counter;
static int round_no;

static __thread_local int ldm_buf[WORDS];
static __thread_local int ring_in[WORDS];
static __thread_local crts_rply_t dma_rply;
static __thread_local crts_rply_t ring_rply;

static void fail(const char *what)
{
  if (atomic_fetch_add(&failures, 1) < 5)
    fprintf(stderr, "crts_stress: CPE %d round %d: %s\n", CRTS_tid, round_no,
            what);
}

static void cpe_round(void *arg)
{
  int n = *(int *)arg;
  int me = CRTS_tid;
  int next = (me + 1) % n;
  int prev = (me + n - 1) % n;

  dma_rply = 0;
  ring_rply = 0;
  CRTS_ssync_array();

  /* DMA in, transform, RMA to the next CPE, DMA out. */
  if (CRTS_dma_iget(ldm_buf, main_src[me], sizeof ldm_buf, &dma_rply) != 0)
    fail("dma_iget");
  CRTS_dma_wait_value(&dma_rply, 1);
  for (int i = 0; i < WORDS; i++)
    ldm_buf[i] += round_no;
  if (CRTS_rma_put(ldm_buf, sizeof ldm_buf, next, ring_in, &ring_rply) != 0)
    fail("rma_put");
  CRTS_rma_wait_value(&ring_rply, 1);
  if (CRTS_dma_put(main_dst[me], ring_in, sizeof ring_in) != 0)
    fail("dma_put");
  for (int i = 0; i < WORDS; i++)
    if (ring_in[i] != prev * WORDS + i + round_no) {
      fail("ring data");
      break;
    }

  CRTS_smutex_lock_array();
  long v = locked_counter;
  locked_counter = v + 1;
  CRTS_smutex_unlock_array();

  int one = 1, sum = 0;
  static __thread_local int redu_buf[4];
  if (CRTS_scoll_redurt(&one, &sum, 1, CRTS_int, OP_add, redu_buf, 4) != 0 ||
      sum != n)
    fail("redurt");
  CRTS_ssync_array();
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 200;
  if (CRTS_init() != 0)
    return 1;
  int n = CRTS_athread_get_max_threads();
  for (int c = 0; c < n; c++)
    for (int i = 0; i < WORDS; i++)
      main_src[c][i] = c * WORDS + i;
  for (round_no = 0; round_no < rounds; round_no++) {
    if (CRTS_athread_spawn((void (*)(void))cpe_round, &n) != 0 ||
        CRTS_athread_join() != 0) {
      fprintf(stderr, "crts_stress: spawn/join failed\n");
      return 1;
    }
    if (locked_counter != (long)n * (round_no + 1)) {
      fprintf(stderr, "crts_stress: smutex lost an update\n");
      return 1;
    }
  }
  int bad = atomic_load(&failures);
  printf("crts_stress: %d rounds on %d CPEs: %s\n", rounds, n,
         bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
