/*
 * ofi_ref_window.c - how many PULLs by stage reference a sink keeps out
 * (ofi_sink.c, issue: LAPI_OFI_PULL_WINDOW and LAPI_OFI_REF_BUDGET).
 *
 * A transfer the CG moves alone keeps its whole window out, so that the
 * source packs the next chunks while we unpack; once the sinks together
 * have LAPI_OFI_REF_BUDGET PULLs out, each transfer keeps to one (a
 * stream overlaps among its transfers, and every extra PULL holds one of
 * the source's stages).  Task 0 puts a STRIDED 1 MiB in 4 KiB blocks (16
 * bytes past a page, the packed path by reference) into task 1 alone,
 * then NSTREAM of them at once, then one alone again (nothing of the
 * stream may stay counted).  Task 1 checks the most PULLs it had in
 * flight: the window for the lone one, at most budget + NSTREAM - 1 for
 * the stream (the window each, as before the budget, would be up to 8 x
 * NSTREAM), that every chunk of a lone transfer came by reference (its
 * window fits the stages a transfer may hold), and every byte and gap.
 * White box (lapi_static): where the stage arena cannot be mapped
 * (ptrace rules, as for CMA) it exits 77.
 */
#include <inttypes.h>

#include "ofi_test.h"
#include "ofi_stride4k.h"

#include "transport/ofi/ofi.h"

#define NSTREAM 24

static unsigned char src[STRIDE4K_SPAN] __attribute__((aligned(4096)));
static unsigned char dst[STRIDE4K_SPAN] __attribute__((aligned(4096)));
static lapi_cntr_t tgt_cntr;

/* The most PULLs in flight since the last call, and chunks by reference
 * and peers refused so far (task 1, the sink). */
static long peak_since(uint64_t *refs, uint64_t *refused)
{
  pthread_mutex_lock(&ofi.lock);
  long peak = ofi.st.pulls_peak;
  ofi.st.pulls_peak = ofi.pulls_out;
  *refs = ofi.st.ref_chunks;
  *refused = 0;
  for (uint k = 0; k < ofi.ntasks; k++)
    *refused += ofi.peers[k].ref_off != 0;
  pthread_mutex_unlock(&ofi.lock);
  return peak;
}

int main(void)
{
  ot_init(NULL, 60);
  if (ot.n != 2 || !ofi.pack_ref) {
    if (ot.me == 0)
      printf("ofi_ref_window: no stage references (not shm, or not 2 "
             "tasks): SKIP\n");
    return ot_finish("ofi_ref_window") == 0 ? 77 : 1;
  }
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  memset(dst, STRIDE4K_GAP, sizeof dst);
  stride4k_fill(src, 7);
  void **dsts = ot_addrs(dst);
  void **cntrs = ot_addrs(&tgt_cntr);
  long window = ofi.pull_window, budget = ofi.ref_budget;
  int skip = 0;
  for (int round = 0; round < 3 && !skip; round++) {
    int n = round == 1 ? NSTREAM : 1;
    uint64_t refs0, refs, refused;
    if (ot.me == 1)
      peak_since(&refs0, &refused);
    OT_OK(LAPI_Gfence(ot.h));
    if (ot.me == 0) {
      stride4k_putv(src, dsts[1], cntrs[1], n);
    } else {
      OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, n, NULL));
      long peak = peak_since(&refs, &refused);
      if (refs == refs0 && refused > 0) {
        printf("ofi_ref_window: the peer's stage arena cannot be mapped "
               "here: SKIP\n");
        skip = 1;
      } else if (n == 1) {
        long want = window < budget ? window : budget;
        OT_CHECK(peak == want, "a lone transfer had %ld PULLs out at "
                 "most: want its window, %ld", peak, want);
        uint64_t chunks = (STRIDE4K_TOTAL + ofi.chunk - 1) / ofi.chunk;
        OT_CHECK(refs - refs0 == chunks, "a lone transfer had %"
                 PRIu64 " of its %" PRIu64 " chunks by reference (the "
                 "source ran out of stages?)", refs - refs0, chunks);
      } else {
        /* Extra PULLs go out only under the budget; first ones always
         * do, so the budget's and one more per other transfer. */
        long most = budget + n - 1;
        OT_CHECK(peak <= most, "%d transfers at once had %ld PULLs out: "
                 "want at most %ld (budget %ld)", n, peak, most, budget);
      }
      OT_CHECK(skip || refs > refs0, "no chunk came by reference");
      stride4k_check(dst, 7, n == 1 ? "lone" : "stream");
      pthread_mutex_lock(&ofi.lock);
      long left = ofi.pulls_out;
      pthread_mutex_unlock(&ofi.lock);
      OT_CHECK(left == 0, "%ld PULLs still counted after round %d", left,
               round);
    }
    skip = (int)ot_job_sum((uint64_t)skip);
    OT_OK(LAPI_Gfence(ot.h));
  }
  free(dsts);
  free(cntrs);
  int rc = ot_finish("ofi_ref_window");
  return skip && rc == 0 ? 77 : rc;
}
