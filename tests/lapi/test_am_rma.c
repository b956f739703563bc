/*
 * test_am_rma.c - one-sided calls: LAPI_Put, LAPI_Get, LAPI_Putv,
 * LAPI_Getv byte for byte with their counters; LAPI_Rmw and LAPI_Rmw64
 * with all four operations (COMPARE_AND_SWAP succeeding and failing);
 * FETCH_AND_ADD from several threads at once summing exactly; LAPI_Fence
 * and LAPI_Gfence completing everything issued without counters.
 *
 * Put/Get/Rmw address the memory of tgt = (me + 1) % n (its address from
 * LAPI_Address_init); every task checks what landed in its own memory
 * after its target counter moved or after a Gfence.  Putv/Getv target
 * this task (their target vector describes memory this task checks).
 */
#include "lapi_test_util.h"

TestSuite(am_rma, .timeout = LT_TIMEOUT);

#define BIG ((1 << 20) + 3)
#define PAD 64

static unsigned char window[PAD + BIG + PAD]; /* written by my source */
static unsigned char local[PAD + BIG + PAD];
static lapi_cntr_t recv_cntr;

static uint64_t seed_of(uint task, size_t len) { return 4000 + task * 97 + len; }

Test(am_rma, put_bytes_and_counters)
{
  struct lt_job j;
  lt_open(&j);
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  unsigned char *remote = lt_at_tgt(&j, window);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  const size_t sizes[] = {1, 7, 64, 4096, 65537, BIG};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t len = sizes[i];
    memset(window, LT_GUARD, sizeof window);
    LT_OK(LAPI_Gfence(j.h)); /* every window is clean before anyone puts */
    lt_fill(local + PAD, len, seed_of((uint)j.me, len));
    LT_OK(LAPI_Put(j.h, j.tgt, len, remote + PAD, local + PAD, tc, &org,
                   &cmpl));
    cr_assert_eq(lt_wait(&j, &org, 1), 0);
    cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
    cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
    /* my source's bytes landed in my window, nothing around them */
    long d = lt_find_diff(window + PAD, len, seed_of(j.src, len), 0);
    cr_assert_eq(d, -1, "Put of %zu bytes: byte %ld differs", len, d);
    cr_assert_eq(lt_find_nonguard(window, PAD), -1, "bytes before changed");
    cr_assert_eq(lt_find_nonguard(window + PAD + len, PAD), -1,
                 "Put of %zu bytes: bytes after changed", len);
    cr_assert_eq(lt_find_diff(local + PAD, len, seed_of((uint)j.me, len), 0),
                 -1, "the origin buffer changed");
    LT_OK(LAPI_Gfence(j.h));
  }
  lt_close(&j);
}

Test(am_rma, get_bytes_and_counters)
{
  struct lt_job j;
  lt_open(&j);
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  unsigned char *remote = lt_at_tgt(&j, window);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t org;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  const size_t sizes[] = {1, 5, 64, 4096, 65537, BIG};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t len = sizes[i];
    /* my window holds my pattern; my source reads it */
    lt_fill(window, sizeof window, seed_of((uint)j.me, len));
    memset(local, LT_GUARD, sizeof local);
    LT_OK(LAPI_Gfence(j.h));
    LT_OK(LAPI_Get(j.h, j.tgt, len, remote + PAD, local + PAD, tc, &org));
    cr_assert_eq(lt_wait(&j, &org, 1), 0);
    long d = lt_find_diff(local + PAD, len, seed_of(j.tgt, len), PAD);
    cr_assert_eq(d, -1, "Get of %zu bytes: byte %ld differs", len, d);
    cr_assert_eq(lt_find_nonguard(local, PAD), -1);
    cr_assert_eq(lt_find_nonguard(local + PAD + len, PAD), -1,
                 "Get of %zu bytes: bytes after changed", len);
    /* my target counter moves when my source's get was served */
    cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
    cr_assert_eq(lt_find_diff(window, sizeof window,
                              seed_of((uint)j.me, len), 0), -1,
                 "Get changed the memory it read");
    LT_OK(LAPI_Gfence(j.h));
  }
  lt_close(&j);
}

/* Zero bytes: the addresses may be NULL; the counters still move and
 * nothing is touched.  (Under UBSan a memmove(NULL, NULL, 0) shows up as
 * "null pointer passed as argument".) */
Test(am_rma, put_get_zero_bytes_null_addresses)
{
  struct lt_job j;
  lt_open(&j);
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  LT_OK(LAPI_Put(j.h, j.tgt, 0, NULL, NULL, tc, &org, &cmpl));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  LT_OK(LAPI_Get(j.h, j.tgt, 0, NULL, NULL, tc, &org));
  cr_assert_eq(lt_wait(&j, &org, 1), 0);
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  lt_close(&j);
}

/* Putv and Getv: one fixed layout of each type, to self. */
Test(am_rma, putv_getv_each_type)
{
  struct lt_job j;
  lt_open(&j);
  uint self = (uint)j.me;
  lapi_cntr_t tc, org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &tc, 0));
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  for (int get = 0; get < 2; get++) {
    unsigned char *srcm = get ? window : local;
    unsigned char *dstm = get ? local : window;

    /* IOVECTOR {10, 0, 33} */
    lt_fill(srcm, 256, 11);
    memset(dstm, LT_GUARD, 256);
    void *si[3] = {srcm + 100, NULL, srcm};
    void *di[3] = {dstm + 8, dstm + 40, dstm + 50};
    ulong ln[3] = {10, 0, 33};
    lapi_vec_t sv = {LAPI_GEN_IOVECTOR, 3, si, ln};
    lapi_vec_t dv = {LAPI_GEN_IOVECTOR, 3, di, ln};
    if (get)
      LT_OK(LAPI_Getv(j.h, self, &sv, &dv, &tc, &org));
    else
      LT_OK(LAPI_Putv(j.h, self, &dv, &sv, &tc, &org, &cmpl));
    cr_assert_eq(lt_wait(&j, &org, 1), 0);
    cr_assert_eq(lt_wait(&j, &tc, 1), 0);
    if (!get)
      cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
    cr_assert_eq(lt_find_diff(dstm + 8, 10, 11, 100), -1);
    cr_assert_eq(lt_find_diff(dstm + 50, 33, 11, 0), -1);
    cr_assert_eq(lt_find_nonguard(dstm, 8), -1);
    cr_assert_eq(lt_find_nonguard(dstm + 18, 32), -1);
    cr_assert_eq(lt_find_nonguard(dstm + 83, 256 - 83), -1);

    /* GENERIC {20} into {5, 10}: 15 bytes */
    memset(dstm, LT_GUARD, 256);
    void *gi[1] = {srcm + 3};
    ulong gl[1] = {20};
    void *hi[2] = {dstm + 100, dstm + 10};
    ulong hl[2] = {5, 10};
    lapi_vec_t gsv = {LAPI_GEN_GENERIC, 1, gi, gl};
    lapi_vec_t gdv = {LAPI_GEN_GENERIC, 2, hi, hl};
    if (get)
      LT_OK(LAPI_Getv(j.h, self, &gsv, &gdv, &tc, &org));
    else
      LT_OK(LAPI_Putv(j.h, self, &gdv, &gsv, &tc, &org, &cmpl));
    cr_assert_eq(lt_wait(&j, &org, 1), 0);
    cr_assert_eq(lt_wait(&j, &tc, 1), 0);
    if (!get)
      cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
    cr_assert_eq(lt_find_diff(dstm + 100, 5, 11, 3), -1);
    cr_assert_eq(lt_find_diff(dstm + 10, 10, 11, 8), -1);
    cr_assert_eq(lt_find_nonguard(dstm, 10), -1);
    cr_assert_eq(lt_find_nonguard(dstm + 20, 80), -1);
    cr_assert_eq(lt_find_nonguard(dstm + 105, 256 - 105), -1);

    /* STRIDED 3 blocks of 5: source pitch 8, destination pitch 16 */
    memset(dstm, LT_GUARD, 256);
    void *ssi[3] = {srcm + 1, (void *)(uintptr_t)5, (void *)(uintptr_t)8};
    void *sdi[3] = {dstm + 32, (void *)(uintptr_t)5, (void *)(uintptr_t)16};
    lapi_vec_t ssv = {LAPI_GEN_STRIDED_XFER, 3, ssi, NULL};
    lapi_vec_t sdv = {LAPI_GEN_STRIDED_XFER, 3, sdi, NULL};
    if (get)
      LT_OK(LAPI_Getv(j.h, self, &ssv, &sdv, &tc, &org));
    else
      LT_OK(LAPI_Putv(j.h, self, &sdv, &ssv, &tc, &org, &cmpl));
    cr_assert_eq(lt_wait(&j, &org, 1), 0);
    cr_assert_eq(lt_wait(&j, &tc, 1), 0);
    if (!get)
      cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
    for (int b = 0; b < 3; b++) {
      cr_assert_eq(lt_find_diff(dstm + 32 + 16 * b, 5, 11, 1 + 8 * (size_t)b),
                   -1, "%s strided block %d", get ? "Getv" : "Putv", b);
      cr_assert_eq(lt_find_nonguard(dstm + 37 + 16 * b, 11), -1);
    }
    cr_assert_eq(lt_find_nonguard(dstm, 32), -1);
    cr_assert_eq(lt_find_nonguard(dstm + 80, 256 - 80), -1);
    /* the source side was only read */
    cr_assert_eq(lt_find_diff(srcm, 256, 11, 0), -1);
  }
  lt_close(&j);
}

/* --------------------------------------------------------------- Rmw */

static int var32[8];
static long long var64[8];

struct rmw_case {
  RMW_ops_t op;
  long long init, in0, in1; /* in1: COMPARE_AND_SWAP's swap value */
  long long prev, after;    /* expected */
};

static void rmw_cases(int wide)
{
  const long long H = wide ? 0x100000000LL : 0; /* beyond 32 bits */
  const struct rmw_case cases[8] = {
    {FETCH_AND_ADD, 10 + H, 5, 0, 10 + H, 15 + H},
    {FETCH_AND_ADD, 100, -30 - H, 0, 100, 70 - H},
    {FETCH_AND_OR, 0x0f0 | H, 0x00f, 0, 0x0f0 | H, 0x0ff | H},
    {FETCH_AND_OR, 0x5, 0x5 | (H << 1), 0, 0x5, 0x5 | (H << 1)},
    {SWAP, 7 + H, 9, 0, 7 + H, 9},
    {SWAP, -1, 3 * H + 1, 0, -1, 3 * H + 1},
    {COMPARE_AND_SWAP, 3 + H, 3 + H, 8, TRUE, 8},       /* equal: swap */
    {COMPARE_AND_SWAP, 4 + H, 3 + H, 8, FALSE, 4 + H},  /* differ: keep */
  };
  struct lt_job j;
  lt_open(&j);
  for (int i = 0; i < 8; i++) {
    var32[i] = (int)cases[i].init;
    var64[i] = cases[i].init;
  }
  int *r32 = lt_at_tgt(&j, var32);
  long long *r64 = lt_at_tgt(&j, var64);
  lapi_cntr_t org;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  for (int i = 0; i < 8; i++) {
    const struct rmw_case *c = &cases[i];
    if (wide) {
      long long in[2] = {c->in0, c->in1}, prev = 0x5555;
      LT_OK(LAPI_Rmw64(j.h, c->op, j.tgt, &r64[i], in, &prev, &org));
      cr_assert_eq(lt_wait(&j, &org, 1), 0);
      cr_assert_eq(prev, c->prev, "Rmw64 case %d (op %d): prev %lld, "
                   "expected %lld", i, c->op, prev, c->prev);
    } else {
      int in[2] = {(int)c->in0, (int)c->in1}, prev = 0x5555;
      LT_OK(LAPI_Rmw(j.h, c->op, j.tgt, &r32[i], in, &prev, &org));
      cr_assert_eq(lt_wait(&j, &org, 1), 0);
      cr_assert_eq(prev, (int)c->prev, "Rmw case %d (op %d): prev %d, "
                   "expected %d", i, c->op, prev, (int)c->prev);
    }
  }
  LT_OK(LAPI_Gfence(j.h));
  /* my variables were changed by my source */
  for (int i = 0; i < 8; i++) {
    if (wide)
      cr_assert_eq(var64[i], cases[i].after, "Rmw64 case %d: target %lld, "
                   "expected %lld", i, var64[i], cases[i].after);
    else
      cr_assert_eq(var32[i], (int)cases[i].after, "Rmw case %d: target %d, "
                   "expected %d", i, var32[i], (int)cases[i].after);
  }
  lt_close(&j);
}

Test(am_rma, rmw_all_ops) { rmw_cases(0); }
Test(am_rma, rmw64_all_ops) { rmw_cases(1); }

/* prev_tgt_val may be NULL: the operation still happens, org_cntr moves. */
Test(am_rma, rmw_without_prev)
{
  struct lt_job j;
  lt_open(&j);
  var32[0] = 40;
  var64[0] = 40;
  int *r32 = lt_at_tgt(&j, var32);
  long long *r64 = lt_at_tgt(&j, var64);
  lapi_cntr_t org;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  int in = 2;
  long long in64 = 3;
  LT_OK(LAPI_Rmw(j.h, FETCH_AND_ADD, j.tgt, r32, &in, NULL, &org));
  LT_OK(LAPI_Rmw64(j.h, FETCH_AND_ADD, j.tgt, r64, &in64, NULL, &org));
  cr_assert_eq(lt_wait(&j, &org, 2), 0);
  LT_OK(LAPI_Gfence(j.h));
  cr_assert_eq(var32[0], 42);
  cr_assert_eq(var64[0], 43);
  /* and without any counter: Fence completes it */
  LT_OK(LAPI_Rmw(j.h, SWAP, j.tgt, r32, &in, NULL, NULL));
  LT_OK(LAPI_Gfence(j.h));
  cr_assert_eq(var32[0], 2);
  lt_close(&j);
}

#define RMW_THREADS 4
#define RMW_PER 1000

struct adder {
  struct lt_job *j;
  int *r32;
  long long *r64;
  int prev32[RMW_PER];
  long long prev64[RMW_PER];
  lapi_cntr_t org;
};

static void *add_loop(void *p)
{
  struct adder *a = p;
  int one = 1;
  long long step = 0x100000001LL; /* both halves of the word move */
  LT_CHECK_OK(LAPI_Setcntr(a->j->h, &a->org, 0));
  for (int k = 0; k < RMW_PER; k++) {
    LT_CHECK_OK(LAPI_Rmw(a->j->h, FETCH_AND_ADD, a->j->tgt, a->r32, &one,
                         &a->prev32[k], &a->org));
    LT_CHECK_OK(LAPI_Rmw64(a->j->h, FETCH_AND_ADD, a->j->tgt, a->r64, &step,
                           &a->prev64[k], &a->org));
  }
  int cur = -1;
  LT_CHECK_OK(LAPI_Waitcntr(a->j->h, &a->org, 2 * RMW_PER, &cur));
  LT_CHECK_EQ(cur, 0);
  return NULL;
}

Test(am_rma, concurrent_fetch_and_add_sums_exactly)
{
  struct lt_job j;
  lt_open(&j);
  var32[1] = 0;
  var64[1] = 0;
  int *r32 = lt_at_tgt(&j, &var32[1]);
  long long *r64 = lt_at_tgt(&j, &var64[1]);
  static struct adder a[RMW_THREADS];
  pthread_t th[RMW_THREADS];
  for (int t = 0; t < RMW_THREADS; t++) {
    a[t].j = &j, a[t].r32 = r32, a[t].r64 = r64;
    cr_assert_eq(pthread_create(&th[t], NULL, add_loop, &a[t]), 0);
  }
  for (int t = 0; t < RMW_THREADS; t++)
    pthread_join(th[t], NULL);
  LT_ASSERT_HANDLERS_OK();
  /* every previous value was seen exactly once: the adds were atomic */
  static char seen32[RMW_THREADS * RMW_PER], seen64[RMW_THREADS * RMW_PER];
  for (int t = 0; t < RMW_THREADS; t++)
    for (int k = 0; k < RMW_PER; k++) {
      int p = a[t].prev32[k];
      long long q = a[t].prev64[k];
      cr_assert(p >= 0 && p < RMW_THREADS * RMW_PER, "prev %d", p);
      cr_assert_eq(q, (long long)(q & 0xffffffff) * 0x100000001LL,
                   "prev64 %llx: torn", (unsigned long long)q);
      long long qi = q & 0xffffffff;
      cr_assert(qi >= 0 && qi < RMW_THREADS * RMW_PER);
      cr_assert_eq(seen32[p], 0, "prev %d seen twice", p);
      cr_assert_eq(seen64[qi], 0, "prev64 %lld seen twice", qi);
      seen32[p] = seen64[qi] = 1;
    }
  LT_OK(LAPI_Gfence(j.h));
  cr_assert_eq(var32[1], RMW_THREADS * RMW_PER);
  cr_assert_eq(var64[1], (long long)RMW_THREADS * RMW_PER * 0x100000001LL);
  lt_close(&j);
}

/* ------------------------------------------------------ Fence, Gfence */

static unsigned char fence_win[64][256];

static void *fence_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr_len, (void)msg_len, (void)uinfo;
  *comp_h = NULL;
  return fence_win[32 + *(uint32_t *)uhdr];
}

static void fence_run(int global)
{
  struct lt_job j;
  lt_open(&j);
  memset(fence_win, LT_GUARD, sizeof fence_win);
  unsigned char (*remote)[256] = lt_at_tgt(&j, fence_win);
  void *hh = lt_at_tgt(&j, (void *)fence_hdr);
  static unsigned char src[64][256];
  static uint32_t idx[32];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 32; i++) {
      lt_fill(src[i], 256, 700 + (uint64_t)round * 64 + (uint64_t)i * 8 +
                               (uint)j.me);
      idx[i] = (uint32_t)i;
      lt_fill(src[32 + i], 256, 900 + (uint64_t)round * 64 +
                                    (uint64_t)i * 8 + (uint)j.me);
      /* no counters at all: only the fence tells completion */
      LT_OK(LAPI_Put(j.h, j.tgt, 256, remote[i], src[i], NULL, NULL, NULL));
      LT_OK(LAPI_Amsend(j.h, j.tgt, hh, &idx[i], 4, src[32 + i], 256, NULL,
                        NULL, NULL));
    }
    if (global) {
      LT_OK(LAPI_Gfence(j.h));
    } else {
      LT_OK(LAPI_Fence(j.h));
      /* with more tasks, the others' fences must be passed too */
      if (j.tgt != (uint)j.me)
        LT_OK(LAPI_Gfence(j.h));
    }
    for (int i = 0; i < 32; i++) {
      cr_assert_eq(lt_find_diff(fence_win[i], 256, 700 + (uint64_t)round *
                                64 + (uint64_t)i * 8 + j.src, 0), -1,
                   "round %d: put %d not complete after the fence", round, i);
      cr_assert_eq(lt_find_diff(fence_win[32 + i], 256, 900 +
                                (uint64_t)round * 64 + (uint64_t)i * 8 +
                                j.src, 0), -1,
                   "round %d: Amsend %d data not in place after the fence",
                   round, i);
    }
    LT_OK(LAPI_Gfence(j.h));
  }
  lt_close(&j);
}

Test(am_rma, fence_completes_uncounted_operations) { fence_run(0); }
Test(am_rma, gfence_completes_uncounted_operations) { fence_run(1); }

/* To this task itself: LAPI_Fence alone must do, in both modes. */
static unsigned char self_sink[4096];

static void *self_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)msg_len, (void)uinfo;
  *comp_h = NULL;
  return self_sink;
}

static void fence_self(int polling)
{
  struct lt_job j;
  lt_open(&j);
  if (polling)
    LT_OK(LAPI_Senv(j.h, INTERRUPT_SET, 0));
  static unsigned char a[4096], b[4096], c[4096];
  for (int round = 0; round < 50; round++) {
    lt_fill(a, sizeof a, (uint64_t)round);
    lt_fill(c, sizeof c, (uint64_t)round + 1000);
    memset(b, LT_GUARD, sizeof b);
    memset(self_sink, LT_GUARD, sizeof self_sink);
    LT_OK(LAPI_Put(j.h, (uint)j.me, sizeof a, b, a, NULL, NULL, NULL));
    LT_OK(LAPI_Amsend(j.h, (uint)j.me, (void *)self_hdr, NULL, 0, c,
                      sizeof c, NULL, NULL, NULL));
    LT_OK(LAPI_Fence(j.h));
    cr_assert_eq(lt_find_diff(b, sizeof b, (uint64_t)round, 0), -1,
                 "round %d: the put was not complete after LAPI_Fence",
                 round);
    cr_assert_eq(lt_find_diff(self_sink, sizeof self_sink,
                              (uint64_t)round + 1000, 0), -1,
                 "round %d: the Amsend data had not landed after LAPI_Fence",
                 round);
  }
  lt_close(&j);
}

Test(am_rma, fence_to_self) { fence_self(0); }
Test(am_rma, fence_to_self_polling) { fence_self(1); }
