/*
 * ofi_ref_trust.c - a sink reads a stage reference only from its
 * sender's own stage arena (ofi_packref.c: ofi_ref_trusted, names_arena;
 * issue 4 item 6: nothing from the wire is trusted for an address).
 *
 * A DATA by reference names a pid and an fd; the sink opens that file
 * through /proc and unpacks from it.  Task 0 runs with
 * LAPI_OFI_TEST_FOREIGN_REF=KIND (ofi_fault.c): before every real
 * reference it sends a forged one, the same chunk, offset and length,
 * naming a decoy instead, a memfd of the arena's size full of 0xd5
 * bytes: KIND 1 one named like an arena and held by a child of task 0
 * (another pid), KIND 2 one of task 0's own (its pid, another fd).  The
 * very first reference task 1 sees is a forged one.  Task 0 puts ROUNDS
 * STRIDED 1 MiB vectors in 4 KiB blocks (the packed path by reference on
 * shm) into task 1, which checks every byte and gap, that every forged
 * reference was dropped as such (class OFI_BAD_REF), that chunks still
 * came by reference and that references stayed on.  A sink that trusted
 * the pid or the fd would have unpacked the decoy's bytes.  White box
 * (lapi_static): where the stage arena cannot be mapped (ptrace rules,
 * as for CMA) it exits 77.
 */
#include "ofi_test.h"
#include "ofi_stride4k.h"

#include "transport/ofi/ofi.h"

#define ROUNDS 8

static unsigned char src[STRIDE4K_SPAN] __attribute__((aligned(4096)));
static unsigned char dst[STRIDE4K_SPAN] __attribute__((aligned(4096)));
static lapi_cntr_t tgt_cntr;

int main(void)
{
  ot_init(NULL, 60);
  if (ot.n != 2 || !ofi.pack_ref) {
    if (ot.me == 0)
      printf("ofi_ref_trust: no stage references (not shm, or not 2 "
             "tasks): SKIP\n");
    return ot_finish("ofi_ref_trust") == 0 ? 77 : 1;
  }
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  memset(dst, STRIDE4K_GAP, sizeof dst);
  void **dsts = ot_addrs(dst);
  void **cntrs = ot_addrs(&tgt_cntr);
  for (int round = 0; round < ROUNDS; round++) {
    if (ot.me == 0)
      stride4k_fill(src, (uint32_t)round);
    OT_OK(LAPI_Gfence(ot.h));
    if (ot.me == 0) {
      stride4k_putv(src, dsts[1], cntrs[1], 1);
    } else {
      char what[64];
      snprintf(what, sizeof what, "round %d (the decoy's bytes are 0xd5)",
               round);
      OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
      stride4k_check(dst, (uint32_t)round, what);
    }
    OT_OK(LAPI_Gfence(ot.h));
  }
  /* Forged copies travel before the real references they copy, so all
   * arrived by now; the sums are job-wide (task 0 injects, 1 drops). */
  uint64_t inj[OFI_BAD_N], drop[OFI_BAD_N];
  ofi_fault_counts(inj, drop);
  pthread_mutex_lock(&ofi.lock);
  uint64_t refs = ofi.st.ref_chunks;
  int refused = ot.me == 1 && ofi.peers[0].ref_off;
  pthread_mutex_unlock(&ofi.lock);
  uint64_t forged = ot_job_sum(inj[OFI_BAD_REF]);
  uint64_t dropped = ot_job_sum(drop[OFI_BAD_REF]);
  uint64_t landed = ot_job_sum(refs);
  int skip = (int)ot_job_sum((uint64_t)(landed == 0 && refused));
  if (skip) {
    if (ot.me == 0)
      printf("ofi_ref_trust: the peer's stage arena cannot be mapped "
             "here: SKIP\n");
  } else if (ot.me == 1) {
    printf("ofi_ref_trust: %llu chunks by reference, %llu forged "
           "references sent, %llu dropped\n", (unsigned long long)landed,
           (unsigned long long)forged, (unsigned long long)dropped);
    OT_CHECK(landed > 0, "no chunk came by reference");
    OT_CHECK(forged > 0, "the hook forged no reference "
             "(LAPI_OFI_TEST_FOREIGN_REF set?)");
    OT_CHECK(dropped == forged, "%llu forged references, %llu dropped as "
             "naming another process", (unsigned long long)forged,
             (unsigned long long)dropped);
    OT_CHECK(!refused, "references from task 0 were turned off: a forged "
             "one must be dropped, not end them");
  }
  free(dsts);
  free(cntrs);
  int rc = ot_finish("ofi_ref_trust");
  return skip && rc == 0 ? 77 : rc;
}
