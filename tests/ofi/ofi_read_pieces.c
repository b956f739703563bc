/*
 * ofi_read_pieces.c - the bytes of one RMA read (LAPI_OFI_MAX_READ) and
 * its default per provider (ofi_fabric.c, read_defaults).
 *
 * Where a read is a request and a response over the provider's messages
 * (tcp) the default is 1 MiB, elsewhere 4 MiB; a value in the
 * environment wins.  The test is told the size it expects (argv[1], in
 * bytes).  Task 0 puts TOTAL bytes (4 MiB and a tail) into task 1 with
 * LAPI_Put; task 1 checks its transport's setting, the reads it made
 * (TOTAL over the expected size, rounded up) and every byte.  White box
 * (lapi_static); run with LAPI_OFI_CMA=0 on shm (CMA counts calls, not
 * reads).  Skipped (77) without RMA or when not 2 tasks.
 *
 * With "polled" as argv[2] (run with a long LAPI_POLL_US, so task 1
 * polls in LAPI_Waitcntr throughout), task 1 also checks that the reads
 * it issued while it polled left the progress thread asleep
 * (ofi_kick_unpolled: its pass does the work a wake-up was for).
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define TOTAL (((size_t)4 << 20) + 1000)

static unsigned char src[TOTAL];
static unsigned char dst[TOTAL];
static lapi_cntr_t tgt_cntr;

static uint64_t reads_now(uint64_t *spared)
{
  pthread_mutex_lock(&ofi.lock);
  uint64_t n = ofi.st.reads;
  *spared = ofi.st.kicks_spared;
  pthread_mutex_unlock(&ofi.lock);
  return n;
}

int main(int argc, char **argv)
{
  size_t want = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : 0;
  int polled = argc > 2 && strcmp(argv[2], "polled") == 0;
  ot_init(NULL, 60);
  pthread_mutex_lock(&ofi.lock);
  int usable = ofi.has_rma && !ofi.cma && TOTAL > ofi.eager_limit;
  size_t max_read = ofi.max_read;
  pthread_mutex_unlock(&ofi.lock);
  if (!usable || ot.n != 2 || want == 0) {
    if (ot.me == 0)
      printf("ofi_read_pieces: needs 2 tasks, RMA reads without CMA and "
             "the expected size as argument: SKIP\n");
    return ot_finish("ofi_read_pieces") == 0 ? 77 : 1;
  }
  OT_CHECK(max_read == want, "LAPI_OFI_MAX_READ is %zu, want %zu", max_read,
           want);
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **dsts = ot_addrs(dst);
  void **cntrs = ot_addrs(&tgt_cntr);
  uint64_t spared_before, spared;
  uint64_t before = reads_now(&spared_before);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    for (size_t k = 0; k < TOTAL; k++)
      src[k] = ot_byte(7, k);
    lapi_cntr_t org;
    LAPI_Setcntr(ot.h, &org, 0);
    OT_OK(LAPI_Put(ot.h, 1, TOTAL, dsts[1], src, cntrs[1], &org, NULL));
    OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
  } else {
    OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
    uint64_t reads = reads_now(&spared) - before;
    uint64_t expect = (TOTAL + want - 1) / want;
    OT_CHECK(reads == expect, "%llu reads for %zu bytes, want %llu",
             (unsigned long long)reads, TOTAL, (unsigned long long)expect);
    OT_CHECK(!polled || spared > spared_before,
             "no read issued while this task polled spared the progress "
             "thread its wake-up");
    for (size_t k = 0; k < TOTAL; k++)
      if (dst[k] != ot_byte(7, k)) {
        OT_CHECK(0, "byte %zu wrong", k);
        break;
      }
  }
  OT_OK(LAPI_Gfence(ot.h));
  free(dsts);
  free(cntrs);
  return ot_finish("ofi_read_pieces");
}
