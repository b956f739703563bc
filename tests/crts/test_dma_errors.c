/*
 * test_dma_errors.c - every DMA misuse fails (non-zero) and touches
 * nothing: misaligned addresses and lengths, negative lengths, bad
 * bsize/stride, NULL, LDM where main memory is required and the reverse,
 * another CPE's LDM as the local side, reply words outside the caller's
 * LDM, collectives with bad arguments, and calls made on the MPE.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crts_cg.h"
#include "crts_test_util.h"

#define BYTES 256
#define SENTINEL 0xA5

enum op {
  GET, GET_STRIDE, IGET, IGET_STRIDE, PUT, PUT_STRIDE, IPUT, IPUT_STRIDE,
  IBCAST, IBCAST_STRIDE, ROW_IBCAST, ROW_IBCAST_STRIDE, COL_IBCAST,
  COL_IBCAST_STRIDE, WAIT
};

/* Where an address argument points; the role (dst/src) picks the buffer. */
enum where {
  LDM,          /* the caller's LDM buffer for this role */
  LDM_MIS,      /* the same, 2 bytes in */
  LDM_PEER,     /* the same LDM location on the other CPE */
  LDM_END,      /* 8 bytes before the end of the caller's heap area */
  MEM,          /* a main-memory buffer for this role */
  MEM_MIS,      /* the same, 2 bytes in */
  MEM_TO_ARENA, /* main memory just below the LDM: the span runs into it */
  NUL
};
enum rwhere { R_OWN, R_NUL, R_MIS, R_MEM, R_PEER };

struct err_case {
  const char *name;
  enum op op;
  enum where dst, src;
  int len, bsize, stride;
  enum rwhere rply;
  int value; /* for WAIT */
};

static const struct err_case cases[] = {
  { "get: dst misaligned", GET, LDM_MIS, MEM, 16, 0, 0, R_OWN, 0 },
  { "get: src misaligned", GET, LDM, MEM_MIS, 16, 0, 0, R_OWN, 0 },
  { "get: len 6", GET, LDM, MEM, 6, 0, 0, R_OWN, 0 },
  { "get: len -4", GET, LDM, MEM, -4, 0, 0, R_OWN, 0 },
  { "get: dst NULL", GET, NUL, MEM, 16, 0, 0, R_OWN, 0 },
  { "get: src NULL", GET, LDM, NUL, 16, 0, 0, R_OWN, 0 },
  { "get: dst in main memory", GET, MEM, MEM, 16, 0, 0, R_OWN, 0 },
  { "get: src in LDM", GET, LDM, LDM, 16, 0, 0, R_OWN, 0 },
  { "get: dst in another CPE's LDM", GET, LDM_PEER, MEM, 16, 0, 0, R_OWN, 0 },
  { "get: dst runs past the heap", GET, LDM_END, MEM, 64, 0, 0, R_OWN, 0 },
  { "get: src runs into the LDM", GET, LDM, MEM_TO_ARENA, 128, 0, 0, R_OWN,
    0 },
  { "get_stride: bsize 0", GET_STRIDE, LDM, MEM, 16, 0, 4, R_OWN, 0 },
  { "get_stride: bsize -4", GET_STRIDE, LDM, MEM, 16, -4, 4, R_OWN, 0 },
  { "get_stride: bsize 6", GET_STRIDE, LDM, MEM, 16, 6, 4, R_OWN, 0 },
  { "get_stride: stride 6", GET_STRIDE, LDM, MEM, 16, 4, 6, R_OWN, 0 },
  { "get_stride: stride -4", GET_STRIDE, LDM, MEM, 16, 4, -4, R_OWN, 0 },
  { "get_stride: len 10", GET_STRIDE, LDM, MEM, 10, 4, 4, R_OWN, 0 },
  { "get_stride: strided span runs into the LDM", GET_STRIDE, LDM,
    MEM_TO_ARENA, 32, 4, 60, R_OWN, 0 },
  { "iget: rply NULL", IGET, LDM, MEM, 16, 0, 0, R_NUL, 0 },
  { "iget: rply misaligned", IGET, LDM, MEM, 16, 0, 0, R_MIS, 0 },
  { "iget: rply in main memory", IGET, LDM, MEM, 16, 0, 0, R_MEM, 0 },
  { "iget: rply in another CPE's LDM", IGET, LDM, MEM, 16, 0, 0, R_PEER, 0 },
  { "iget: len 10", IGET, LDM, MEM, 10, 0, 0, R_OWN, 0 },
  { "iget: src in LDM", IGET, LDM, LDM, 16, 0, 0, R_OWN, 0 },
  { "iget_stride: bsize 0", IGET_STRIDE, LDM, MEM, 16, 0, 8, R_OWN, 0 },
  { "iget_stride: rply in main memory", IGET_STRIDE, LDM, MEM, 16, 4, 4,
    R_MEM, 0 },
  { "put: dst misaligned", PUT, MEM_MIS, LDM, 16, 0, 0, R_OWN, 0 },
  { "put: src misaligned", PUT, MEM, LDM_MIS, 16, 0, 0, R_OWN, 0 },
  { "put: len 2", PUT, MEM, LDM, 2, 0, 0, R_OWN, 0 },
  { "put: len -8", PUT, MEM, LDM, -8, 0, 0, R_OWN, 0 },
  { "put: dst NULL", PUT, NUL, LDM, 16, 0, 0, R_OWN, 0 },
  { "put: src NULL", PUT, MEM, NUL, 16, 0, 0, R_OWN, 0 },
  { "put: dst in LDM", PUT, LDM, LDM, 16, 0, 0, R_OWN, 0 },
  { "put: src in main memory", PUT, MEM, MEM, 16, 0, 0, R_OWN, 0 },
  { "put: src in another CPE's LDM", PUT, MEM, LDM_PEER, 16, 0, 0, R_OWN, 0 },
  { "put_stride: stride 2", PUT_STRIDE, MEM, LDM, 16, 4, 2, R_OWN, 0 },
  { "put_stride: bsize 0", PUT_STRIDE, MEM, LDM, 16, 0, 4, R_OWN, 0 },
  { "put_stride: dst in LDM", PUT_STRIDE, LDM, LDM, 16, 4, 4, R_OWN, 0 },
  { "iput: rply NULL", IPUT, MEM, LDM, 16, 0, 0, R_NUL, 0 },
  { "iput: rply in main memory", IPUT, MEM, LDM, 16, 0, 0, R_MEM, 0 },
  { "iput: dst in another CPE's LDM", IPUT, LDM_PEER, LDM, 16, 0, 0, R_OWN,
    0 },
  { "iput_stride: rply in another CPE's LDM", IPUT_STRIDE, MEM, LDM, 16, 4,
    4, R_PEER, 0 },
  { "iput_stride: len -4", IPUT_STRIDE, MEM, LDM, -4, 4, 4, R_OWN, 0 },
  { "ibcast: dst in main memory", IBCAST, MEM, MEM, 16, 0, 0, R_OWN, 0 },
  { "ibcast: src in LDM", IBCAST, LDM, LDM, 16, 0, 0, R_OWN, 0 },
  { "ibcast: rply NULL", IBCAST, LDM, MEM, 16, 0, 0, R_NUL, 0 },
  { "ibcast: rply in main memory", IBCAST, LDM, MEM, 16, 0, 0, R_MEM, 0 },
  { "ibcast: len 6", IBCAST, LDM, MEM, 6, 0, 0, R_OWN, 0 },
  { "ibcast: dst in another CPE's LDM", IBCAST, LDM_PEER, MEM, 16, 0, 0,
    R_OWN, 0 },
  { "ibcast: dst misaligned", IBCAST, LDM_MIS, MEM, 16, 0, 0, R_OWN, 0 },
  { "ibcast_stride: bsize 0", IBCAST_STRIDE, LDM, MEM, 16, 0, 4, R_OWN, 0 },
  { "ibcast_stride: src misaligned", IBCAST_STRIDE, LDM, MEM_MIS, 16, 4, 4,
    R_OWN, 0 },
  { "row_ibcast: dst misaligned", ROW_IBCAST, LDM_MIS, MEM, 16, 0, 0, R_OWN,
    0 },
  { "row_ibcast: rply in another CPE's LDM", ROW_IBCAST, LDM, MEM, 16, 0, 0,
    R_PEER, 0 },
  { "row_ibcast: src NULL", ROW_IBCAST, LDM, NUL, 16, 0, 0, R_OWN, 0 },
  { "row_ibcast_stride: stride -8", ROW_IBCAST_STRIDE, LDM, MEM, 16, 4, -8,
    R_OWN, 0 },
  { "col_ibcast: src NULL", COL_IBCAST, LDM, NUL, 16, 0, 0, R_OWN, 0 },
  { "col_ibcast: len -4", COL_IBCAST, LDM, MEM, -4, 0, 0, R_OWN, 0 },
  { "col_ibcast: rply misaligned", COL_IBCAST, LDM, MEM, 16, 0, 0, R_MIS,
    0 },
  { "col_ibcast_stride: stride 6", COL_IBCAST_STRIDE, LDM, MEM, 16, 4, 6,
    R_OWN, 0 },
  { "col_ibcast_stride: dst in main memory", COL_IBCAST_STRIDE, MEM, MEM, 16,
    4, 4, R_OWN, 0 },
  { "wait_value: rply NULL", WAIT, LDM, MEM, 0, 0, 0, R_NUL, 1 },
  { "wait_value: rply misaligned", WAIT, LDM, MEM, 0, 0, 0, R_MIS, 1 },
  { "wait_value: rply in main memory", WAIT, LDM, MEM, 0, 0, 0, R_MEM, 1 },
  { "wait_value: rply in another CPE's LDM", WAIT, LDM, MEM, 0, 0, 0, R_PEER,
    1 },
  { "wait_value: value -1", WAIT, LDM, MEM, 0, 0, 0, R_OWN, -1 },
};
#define NCASES (sizeof cases / sizeof cases[0])

/* Buffers of each role; main memory is per CPE. */
static __thread_local uint32_t ldm_dst[BYTES / 4 + 1];
static __thread_local uint32_t ldm_src[BYTES / 4 + 1];
static __thread_local uint32_t rply_pair[2];
static uint32_t mem_dst[2][BYTES / 4 + 1];
static uint32_t mem_src[2][BYTES / 4 + 1];
static uint32_t mem_rply[2][2];

static void *where(enum where w, int is_dst)
{
  int t = CRTS_tid;
  char *ldm = (char *)(is_dst ? ldm_dst : ldm_src);
  char *mem = (char *)(is_dst ? mem_dst[t] : mem_src[t]);
  switch (w) {
  case LDM: return ldm;
  case LDM_MIS: return ldm + 2;
  case LDM_PEER: return crts_ldm_translate(ldm, 1 - t);
  case LDM_END: return crts_self->heap_limit - 8;
  case MEM: return mem;
  case MEM_MIS: return mem + 2;
  case MEM_TO_ARENA: return crts_cg.arena - 64;
  case NUL: return NULL;
  }
  return NULL;
}

static crts_rply_t *rply_at(enum rwhere r)
{
  switch (r) {
  case R_OWN: return (crts_rply_t *)&rply_pair[0];
  case R_NUL: return NULL;
  case R_MIS: return (crts_rply_t *)((char *)rply_pair + 2);
  case R_MEM: return (crts_rply_t *)&mem_rply[CRTS_tid][0];
  case R_PEER: return crts_ldm_translate((void *)rply_pair, 1 - CRTS_tid);
  }
  return NULL;
}

static int issue(const struct err_case *c)
{
  void *d = where(c->dst, 1), *s = where(c->src, 0);
  crts_rply_t *r = rply_at(c->rply);
  int n = c->len, b = c->bsize, st = c->stride;
  switch (c->op) {
  case GET: return CRTS_dma_get(d, s, n);
  case GET_STRIDE: return CRTS_dma_get_stride(d, s, n, b, st);
  case IGET: return CRTS_dma_iget(d, s, n, r);
  case IGET_STRIDE: return CRTS_dma_iget_stride(d, s, n, b, st, r);
  case PUT: return CRTS_dma_put(d, s, n);
  case PUT_STRIDE: return CRTS_dma_put_stride(d, s, n, b, st);
  case IPUT: return CRTS_dma_iput(d, s, n, r);
  case IPUT_STRIDE: return CRTS_dma_iput_stride(d, s, n, b, st, r);
  case IBCAST: return CRTS_dma_ibcast(d, s, n, r);
  case IBCAST_STRIDE: return CRTS_dma_ibcast_stride(d, s, n, b, st, r);
  case ROW_IBCAST: return CRTS_dma_row_ibcast(d, s, n, r);
  case ROW_IBCAST_STRIDE: return CRTS_dma_row_ibcast_stride(d, s, n, b, st, r);
  case COL_IBCAST: return CRTS_dma_col_ibcast(d, s, n, r);
  case COL_IBCAST_STRIDE: return CRTS_dma_col_ibcast_stride(d, s, n, b, st, r);
  case WAIT: return CRTS_dma_wait_value(r, c->value);
  }
  return 0;
}

static int all_bytes(const void *p, size_t n, unsigned char v)
{
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i] != v)
      return 0;
  return 1;
}

/* Reset every byte a wrong call could write, in the caller's and peer's. */
static void arm(int t)
{
  memset(ldm_dst, SENTINEL, sizeof ldm_dst);
  memset(mem_dst[t], SENTINEL, sizeof mem_dst[t]);
  for (int i = 0; i < BYTES / 4 + 1; i++)
    ldm_src[i] = mem_src[t][i] = 0x01020304u * (uint32_t)(i + 1);
  rply_pair[0] = rply_pair[1] = 0;
  mem_rply[t][0] = mem_rply[t][1] = 0;
}

/* 1 if nothing a call of CPE t may write was written. */
static int untouched(int t)
{
  int peer = 1 - t;
  const uint32_t *peer_dst = crts_ldm_translate(ldm_dst, peer);
  const uint32_t *peer_rply = crts_ldm_translate(rply_pair, peer);
  return all_bytes(ldm_dst, sizeof ldm_dst, SENTINEL) &&
         all_bytes(mem_dst[t], sizeof mem_dst[t], SENTINEL) &&
         all_bytes(peer_dst, sizeof ldm_dst, SENTINEL) &&
         rply_pair[0] == 0 && rply_pair[1] == 0 && peer_rply[0] == 0 &&
         peer_rply[1] == 0 && mem_rply[t][0] == 0 && mem_rply[t][1] == 0;
}

static struct crts_barrier tbar;
static void sync2(void) { crts_barrier_wait(&tbar, 2, 0); }

/* CPE 0 runs the table while CPE 1 waits with armed buffers. */
static void run_table(void *arg)
{
  (void)arg;
  int t = CRTS_tid;
  arm(t);
  sync2();
  if (t == 0) {
    for (size_t k = 0; k < NCASES; k++) {
      const struct err_case *c = &cases[k];
      arm(t);
      char end_before[8];
      memcpy(end_before, crts_self->heap_limit - 8, 8);
      int rc = issue(c);
      if (rc == 0)
        crts_test_fail("%s: returned 0", c->name);
      if (!untouched(t) ||
          memcmp(end_before, crts_self->heap_limit - 8, 8) != 0)
        crts_test_fail("%s: touched memory", c->name);
    }
  }
  sync2();
  CPE_CHECK(untouched(t));
}

Test(dma_errors, every_misuse_fails_and_touches_nothing)
{
  setenv("CRTS_NUM_CPES", "2", 1);
  setenv("CRTS_VERBOSE", "0", 1);
  crts_test_run(run_table, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ------------------------------------------------------- collectives */

static void collectives(void *arg)
{
  (void)arg;
  int t = CRTS_tid;
  char *d = (char *)ldm_dst;
  uint32_t *m = mem_src[t];
  arm(t);
  sync2();
  /* Both CPEs pass the same kind of bad argument: both fail. */
  CPE_CHECK(CRTS_dma_bcast_coll(d + 2, m, 16) != 0);
  CPE_CHECK(CRTS_dma_bcast_stride_coll(d, m, -4, 4, 4) != 0);
  CPE_CHECK(CRTS_dma_row_bcast_coll(d, ldm_src, 16) != 0);
  CPE_CHECK(CRTS_dma_row_bcast_stride_coll(d, m, 16, 0, 4) != 0);
  CPE_CHECK(CRTS_dma_col_bcast_coll(d, NULL, 16) != 0);
  CPE_CHECK(CRTS_dma_col_bcast_stride_coll(mem_dst[t], m, 16, 4, 4) != 0);
  CPE_CHECK(CRTS_memcpy_sldm(d, m, 16, 5) != 0);
  CPE_CHECK(CRTS_memcpy_sldm(mem_dst[t], mem_src[t], 16, LDM_TO_MEM) != 0);
  sync2();
  CPE_CHECK(untouched(t));
  sync2();
  /* One bad caller: a broadcast fails only for it ... */
  int rc = CRTS_dma_bcast_coll(d, m, t == 0 ? 6 : 16);
  CPE_CHECK(t == 0 ? rc != 0 : rc == 0);
  rc = CRTS_dma_row_bcast_stride_coll(d, m, 16, 4, t == 0 ? 3 : 4);
  CPE_CHECK(t == 0 ? rc != 0 : rc == 0);
  CPE_CHECK(t == 0 ? all_bytes(d, sizeof ldm_dst, SENTINEL)
                   : ldm_dst[0] == m[0] && ldm_dst[1] == m[2] &&
                         ldm_dst[2] == m[4] && ldm_dst[3] == m[6]);
  sync2();
  arm(t);
  sync2();
  /* ... but fails a shared-LDM copy for the whole cluster. */
  CPE_CHECK(CRTS_memcpy_sldm(t == 1 ? d + 2 : d, m, 16, MEM_TO_LDM) != 0);
  CPE_CHECK(CRTS_memcpy_sldm(mem_dst[0], t == 1 ? NULL : (void *)d, 16,
                             LDM_TO_MEM) != 0);
  sync2();
  CPE_CHECK(untouched(t));
}

Test(dma_errors, collectives_with_bad_arguments_fail_without_hanging)
{
  setenv("CRTS_NUM_CPES", "2", 1);
  setenv("CRTS_VERBOSE", "0", 1);
  crts_test_run(collectives, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ---------------------------------------------------------- the MPE */

Test(dma_errors, every_call_fails_on_the_mpe)
{
  setenv("CRTS_VERBOSE", "0", 1);
  cr_assert_eq(CRTS_init(), 0);
  static uint32_t a[64], b[64];
  crts_rply_t r = 0;
  memset(a, SENTINEL, sizeof a);
  memset(b, SENTINEL, sizeof b);
  int rcs[] = {
    CRTS_dma_get(a, b, 16),
    CRTS_dma_get_stride(a, b, 16, 4, 4),
    CRTS_dma_iget(a, b, 16, &r),
    CRTS_dma_iget_stride(a, b, 16, 4, 4, &r),
    CRTS_dma_put(a, b, 16),
    CRTS_dma_put_stride(a, b, 16, 4, 4),
    CRTS_dma_iput(a, b, 16, &r),
    CRTS_dma_iput_stride(a, b, 16, 4, 4, &r),
    CRTS_dma_ibcast(a, b, 16, &r),
    CRTS_dma_ibcast_stride(a, b, 16, 4, 4, &r),
    CRTS_dma_bcast_coll(a, b, 16),
    CRTS_dma_bcast_stride_coll(a, b, 16, 4, 4),
    CRTS_dma_row_ibcast(a, b, 16, &r),
    CRTS_dma_row_ibcast_stride(a, b, 16, 4, 4, &r),
    CRTS_dma_row_bcast_coll(a, b, 16),
    CRTS_dma_row_bcast_stride_coll(a, b, 16, 4, 4),
    CRTS_dma_col_ibcast(a, b, 16, &r),
    CRTS_dma_col_ibcast_stride(a, b, 16, 4, 4, &r),
    CRTS_dma_col_bcast_coll(a, b, 16),
    CRTS_dma_col_bcast_stride_coll(a, b, 16, 4, 4),
    CRTS_memcpy_sldm(a, b, 16, MEM_TO_LDM),
    CRTS_memcpy_sldm(a, b, 16, LDM_TO_MEM),
    CRTS_dma_wait_value(&r, 0),
    CRTS_dma_barrier(),
    CRTS_dma_all_barrier(),
  };
  for (size_t i = 0; i < sizeof rcs / sizeof rcs[0]; i++)
    cr_assert_neq(rcs[i], 0, "call %zu succeeded on the MPE", i);
  cr_assert_eq(r, 0);
  cr_assert(all_bytes(a, sizeof a, SENTINEL) && all_bytes(b, sizeof b, SENTINEL));
}
