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

#include "transport/ofi/ofi.h"

#define TOTAL ((size_t)1 << 20)
#define BLOCK ((size_t)4096)
#define OFF 16
#define SPAN (2 * TOTAL + 2 * 4096)
#define ROUNDS 8

static unsigned char src[SPAN] __attribute__((aligned(4096)));
static unsigned char dst[SPAN] __attribute__((aligned(4096)));
static lapi_cntr_t tgt_cntr;

static void strided(lapi_vec_t *v, void **info, unsigned char *base)
{
  v->vec_type = LAPI_GEN_STRIDED_XFER;
  v->num_vecs = (uint)(TOTAL / BLOCK);
  v->info = info;
  info[0] = base;
  info[1] = (void *)(uintptr_t)BLOCK;
  info[2] = (void *)(uintptr_t)(2 * BLOCK);
  v->len = NULL;
}

static int check_landed(int round)
{
  for (size_t i = 0; i < TOTAL / BLOCK; i++) {
    const unsigned char *p = dst + OFF + i * 2 * BLOCK;
    for (size_t k = 0; k < BLOCK; k++)
      if (p[k] != ot_byte(round, i * BLOCK + k) || p[BLOCK + k] != 0xEE) {
        OT_CHECK(0, "round %d: block %zu wrong at byte %zu: 0x%02x (the "
                 "decoy's bytes are 0xd5)", round, i, k,
                 p[k] != ot_byte(round, i * BLOCK + k) ? p[k] : p[BLOCK + k]);
        return -1;
      }
  }
  return 0;
}

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
  memset(dst, 0xEE, sizeof dst);
  void **dsts = ot_addrs(dst);
  void **cntrs = ot_addrs(&tgt_cntr);
  static void *o_info[3], *t_info[3];
  for (int round = 0; round < ROUNDS; round++) {
    if (ot.me == 0)
      for (size_t i = 0; i < TOTAL / BLOCK; i++)
        for (size_t k = 0; k < BLOCK; k++)
          src[OFF + i * 2 * BLOCK + k] = ot_byte(round, i * BLOCK + k);
    OT_OK(LAPI_Gfence(ot.h));
    if (ot.me == 0) {
      lapi_vec_t ov, tv;
      strided(&ov, o_info, src + OFF);
      strided(&tv, t_info, (unsigned char *)dsts[1] + OFF);
      lapi_cntr_t org;
      LAPI_Setcntr(ot.h, &org, 0);
      OT_OK(LAPI_Putv(ot.h, 1, &tv, &ov, cntrs[1], &org, NULL));
      OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
    } else {
      OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
      check_landed(round);
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
