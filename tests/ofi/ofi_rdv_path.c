/*
 * ofi_rdv_path.c - which rendezvous path a vector takes on shm with
 * cross-memory attach, by the default LAPI_RDV_MIN_BLOCK.
 *
 * The kernel pins each remote piece of a process_vm_readv on its own, so
 * pieces under OFI_CMA_MIN_BLOCK (16 KiB) go packed, by stage reference
 * (ofi_packref.c), and larger ones are read by CMA (ofi_cma.c).  Task 0
 * puts four vectors into task 1 with LAPI_Putv, each 1 MiB, 16 bytes past
 * a page as malloc'd buffers are: STRIDED in 4 KiB and in 16 KiB blocks at
 * a pitch of twice the block, IOVECTOR in 4 KiB and in 32 KiB pieces.
 * After each, task 1's transport counts must show the path (a packed
 * transfer with chunks unpacked from the stage arena and no CMA read, or
 * a transfer read by CMA), and every byte and gap is checked.  White box
 * (lapi_static): where CMA cannot work it exits 77 (skipped).
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define TOTAL ((size_t)1 << 20)
#define OFF 16 /* off a page, as the bench's malloc'd buffers */
#define SPAN (2 * TOTAL + 2 * 4096)
#define MAXP 256

static unsigned char src[SPAN] __attribute__((aligned(4096)));
static unsigned char dst[SPAN] __attribute__((aligned(4096)));
static lapi_cntr_t tgt_cntr;

struct shape {
  const char *name;
  int strided;
  size_t piece;
  int packed; /* expected path */
};

static const struct shape shapes[] = {
  {"STRIDED 4 KiB", 1, 4096, 1},
  {"STRIDED 16 KiB", 1, 16384, 0},
  {"IOVECTOR 4 KiB", 0, 4096, 1},
  {"IOVECTOR 32 KiB", 0, 32768, 0},
};

/* The vector of TOTAL bytes in pieces one every 2 * piece from base. */
static void build(lapi_vec_t *v, void **info, ulong *len, unsigned char *base,
                  const struct shape *s)
{
  uint n = (uint)(TOTAL / s->piece);
  v->num_vecs = n;
  v->info = info;
  if (s->strided) {
    v->vec_type = LAPI_GEN_STRIDED_XFER;
    info[0] = base;
    info[1] = (void *)(uintptr_t)s->piece;
    info[2] = (void *)(uintptr_t)(2 * s->piece);
    v->len = NULL;
    return;
  }
  v->vec_type = LAPI_GEN_IOVECTOR;
  for (uint i = 0; i < n; i++) {
    info[i] = base + (size_t)i * 2 * s->piece;
    len[i] = s->piece;
  }
  v->len = len;
}

struct counts {
  uint64_t pull, rma, cma_reads, ref_chunks;
};

static struct counts counts_now(void)
{
  pthread_mutex_lock(&ofi.lock);
  struct counts c = {ofi.st.pull, ofi.st.rma, ofi.st.cma_reads,
                     ofi.st.ref_chunks};
  pthread_mutex_unlock(&ofi.lock);
  return c;
}

/* Task 1: the pieces hold the stream of round r, the gaps are untouched. */
static void check_landed(const struct shape *s, int r)
{
  size_t n = TOTAL / s->piece, bad = 0;
  for (size_t i = 0; i < n && bad < 3; i++) {
    const unsigned char *p = dst + OFF + i * 2 * s->piece;
    for (size_t k = 0; k < s->piece; k++)
      if (p[k] != ot_byte((uint32_t)r, i * s->piece + k) ||
          p[s->piece + k] != 0xEE) {
        OT_CHECK(0, "%s: piece %zu wrong at byte %zu", s->name, i, k);
        bad++;
        break;
      }
  }
}

int main(void)
{
  unsetenv("LAPI_RDV_MIN_BLOCK"); /* the default is what is tested */
  ot_init(NULL, 60);
  pthread_mutex_lock(&ofi.lock);
  int on = ofi.cma;
  pthread_mutex_unlock(&ofi.lock);
  if (!on || ot.n != 2) {
    if (ot.me == 0)
      printf("ofi_rdv_path: cross-memory attach is not usable here (or "
             "not 2 tasks): SKIP\n");
    return ot_finish("ofi_rdv_path") == 0 ? 77 : 1;
  }
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **dsts = ot_addrs(dst);
  void **cntrs = ot_addrs(&tgt_cntr);
  static void *o_info[MAXP], *t_info[MAXP];
  static ulong o_len[MAXP], t_len[MAXP];
  for (int r = 0; r < (int)(sizeof shapes / sizeof shapes[0]); r++) {
    const struct shape *s = &shapes[r];
    memset(dst, 0xEE, sizeof dst);
    struct counts before = counts_now();
    OT_OK(LAPI_Gfence(ot.h));
    if (ot.me == 0) {
      lapi_vec_t ov, tv;
      build(&ov, o_info, o_len, src + OFF, s);
      build(&tv, t_info, t_len, (unsigned char *)dsts[1] + OFF, s);
      for (size_t i = 0; i < TOTAL / s->piece; i++)
        for (size_t k = 0; k < s->piece; k++)
          src[OFF + i * 2 * s->piece + k] =
              ot_byte((uint32_t)r, i * s->piece + k);
      lapi_cntr_t org;
      LAPI_Setcntr(ot.h, &org, 0);
      OT_OK(LAPI_Putv(ot.h, 1, &tv, &ov, cntrs[1], &org, NULL));
      OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
    } else {
      OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
      struct counts after = counts_now();
      check_landed(s, r);
      uint64_t pulls = after.pull - before.pull;
      uint64_t rmas = after.rma - before.rma;
      uint64_t cma = after.cma_reads - before.cma_reads;
      uint64_t refs = after.ref_chunks - before.ref_chunks;
      if (s->packed)
        OT_CHECK(pulls == 1 && rmas == 0 && cma == 0 && refs > 0,
                 "%s: %llu packed, %llu read (%llu CMA calls), %llu chunks "
                 "by reference: want packed by reference", s->name,
                 (unsigned long long)pulls, (unsigned long long)rmas,
                 (unsigned long long)cma, (unsigned long long)refs);
      else
        OT_CHECK(pulls == 0 && rmas == 1 && cma > 0,
                 "%s: %llu packed, %llu read (%llu CMA calls): want read "
                 "by CMA", s->name, (unsigned long long)pulls,
                 (unsigned long long)rmas, (unsigned long long)cma);
    }
    OT_OK(LAPI_Gfence(ot.h));
  }
  free(dsts);
  free(cntrs);
  return ot_finish("ofi_rdv_path");
}
