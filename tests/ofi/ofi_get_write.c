/*
 * ofi_get_write.c - a Get written by its target with RMA writes
 * (OFI_GET_WRITE without cross-memory attach: tcp;ofi_rxm).
 *
 * Task 1 gets contiguous buffers of task 0: one at a time (4 KiB, the
 * largest answered eagerly over tcp; one byte more; 8 KiB, 20 KiB,
 * 64 KiB, 1 MiB) and then a window of 16 of 64 KiB in flight.  Each
 * must arrive intact, move task 1's org_cntr and task 0's tgt_cntr
 * once, and the transport's counts must show the path: task 0 posted
 * an RMA write for every get beyond 4 KiB and none for the 4 KiB one,
 * task 1 read nothing (the old path is an RTS answered by the origin's
 * reads).  Run with LAPI_OFI_MAX_READ below the big sizes so that a get
 * takes several writes.
 *
 * With LAPI_OFI_TEST_WRITE_FAULT=N (every Nth RMA write completes as
 * failed) it checks the failure instead: two 128 KiB Gets, each of
 * which fails: task 1's error handler hears LAPI_ERR_RECV_INCOMP once
 * per get, neither org_cntr nor tgt_cntr moves, and a Put afterwards
 * still works (nothing hangs).
 * White box (lapi_static): where the provider gives no RMA writes, or
 * CMA writes instead, it exits 77 (skipped); but tcp;ofi_rxm with RMA
 * must give them (a failure, not a skip, when they are off).
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define BIG (1u << 20)
#define EAGER_MAX ((unsigned)OFI_GET_EAGER_WRITTEN)
#define WIN 16
#define WIN_LEN 65536u

static int recv_incomp; /* atomic: LAPI_ERR_RECV_INCOMP heard */
static unsigned char src[BIG], dst[BIG];
static unsigned char wsrc[WIN][WIN_LEN], wdst[WIN][WIN_LEN];
static lapi_cntr_t tgt_cntr;

static void on_error(lapi_handle_t *h, int *code, lapi_err_t *type,
                     int *task, int *src_task)
{
  (void)h;
  (void)task;
  (void)src_task;
  if (*code == LAPI_ERR_RECV_INCOMP && *type == GET_ERR)
    __atomic_add_fetch(&recv_incomp, 1, __ATOMIC_SEQ_CST);
}

static void counts(uint64_t *writes, uint64_t *reads, size_t *max_read)
{
  pthread_mutex_lock(&ofi.lock);
  *writes = ofi.st.rma_writes;
  *reads = ofi.st.reads;
  *max_read = ofi.max_read;
  pthread_mutex_unlock(&ofi.lock);
}

/* One Get of len bytes of task 0's src into dst at task 1, checked. */
static void get_one(void **srcs, void **cntrs, size_t len, uint32_t seed,
                    int *expect_tgt)
{
  if (ot.me == 0)
    ot_fill(src, len, seed);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1) {
    memset(dst, 0, len);
    lapi_cntr_t org;
    LAPI_Setcntr(ot.h, &org, 0);
    OT_OK(LAPI_Get(ot.h, 0, len, srcs[0], dst, cntrs[0], &org));
    OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
    size_t bad = ot_verify(dst, len, seed);
    OT_CHECK(bad == len, "get of %zu B: byte %zu wrong", len, bad);
  }
  (*expect_tgt)++;
  OT_OK(LAPI_Gfence(ot.h));
}

static void works(void **srcs, void **cntrs)
{
  int expect = 0;
  pthread_mutex_lock(&ofi.lock);
  size_t get_eager = ofi.get_eager_limit;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(get_eager == EAGER_MAX, "gets answered eagerly up to %zu B, "
           "want %u", get_eager, EAGER_MAX);
  /* the eager one: no write; every larger one: written (get_one ends
   * in a Gfence that task 1 reaches once its data is in) */
  uint64_t w0, w1, r;
  size_t mr;
  counts(&w0, &r, &mr);
  get_one(srcs, cntrs, EAGER_MAX, 4, &expect);
  counts(&w1, &r, &mr);
  if (ot.me == 0)
    OT_CHECK(w1 == w0, "a get of %u B was written (%llu RMA writes)",
             EAGER_MAX, (unsigned long long)(w1 - w0));
  int eager = expect;
  get_one(srcs, cntrs, EAGER_MAX + 1, 5, &expect);
  get_one(srcs, cntrs, 2 * EAGER_MAX, 6, &expect);
  get_one(srcs, cntrs, 20480, 1, &expect);
  get_one(srcs, cntrs, WIN_LEN, 2, &expect);
  get_one(srcs, cntrs, BIG, 3, &expect);
  void **wsrcs = ot_addrs(wsrc);
  if (ot.me == 0)
    for (int k = 0; k < WIN; k++)
      ot_fill(wsrc[k], WIN_LEN, 10u + (uint32_t)k);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1) {
    lapi_cntr_t org;
    LAPI_Setcntr(ot.h, &org, 0);
    unsigned char(*rw)[WIN_LEN] = wsrcs[0];
    for (int k = 0; k < WIN; k++)
      OT_OK(LAPI_Get(ot.h, 0, WIN_LEN, rw[k], wdst[k], cntrs[0], &org));
    OT_OK(LAPI_Waitcntr(ot.h, &org, WIN, NULL));
    for (int k = 0; k < WIN; k++) {
      size_t bad = ot_verify(wdst[k], WIN_LEN, 10u + (uint32_t)k);
      OT_CHECK(bad == WIN_LEN, "windowed get %d: byte %zu wrong", k, bad);
    }
  }
  expect += WIN;
  OT_OK(LAPI_Gfence(ot.h));
  free(wsrcs);
  uint64_t writes, reads;
  size_t max_read;
  counts(&writes, &reads, &max_read);
  if (ot.me == 0) {
    int v = ot_cntr(&tgt_cntr);
    OT_CHECK(v == expect, "tgt_cntr %d, want %d", v, expect);
    /* 1 MiB takes BIG / LAPI_OFI_MAX_READ writes by itself (16 at the
     * 64 KiB ctest sets; 1 when the program runs without it) */
    uint64_t big = (BIG + max_read - 1) / max_read;
    OT_CHECK(writes >= (uint64_t)(expect - eager) + big - 1,
             "the target posted %llu RMA writes for %d gets (%zu B each "
             "at most)", (unsigned long long)writes, expect, max_read);
  } else {
    OT_CHECK(writes == 0, "the origin posted %llu RMA writes",
             (unsigned long long)writes);
    OT_CHECK(reads == 0, "the origin read %llu times: the gets took the "
             "RTS path", (unsigned long long)reads);
  }
}

static void fails(void **srcs, void **cntrs)
{
  for (int k = 0; k < 2; k++) {
    OT_OK(LAPI_Gfence(ot.h));
    if (ot.me != 1)
      continue;
    lapi_cntr_t org;
    LAPI_Setcntr(ot.h, &org, 0);
    OT_OK(LAPI_Get(ot.h, 0, 2 * WIN_LEN, srcs[0], dst, cntrs[0], &org));
    int heard = ot_await_count(&recv_incomp, k + 1, 5);
    OT_CHECK(heard == k + 1,
             "LAPI_ERR_RECV_INCOMP heard %d times after get %d", heard, k);
    int v = ot_cntr(&org);
    OT_CHECK(v == 0, "org_cntr %d after a failed get", v);
  }
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    int v = ot_cntr(&tgt_cntr);
    OT_CHECK(v == 0, "tgt_cntr %d after failed gets", v);
  }
  /* The connection still works. */
  void **dsts = ot_addrs(dst);
  if (ot.me == 0) {
    ot_fill(src, WIN_LEN, 7);
    lapi_cntr_t org;
    LAPI_Setcntr(ot.h, &org, 0);
    OT_OK(LAPI_Put(ot.h, 1, WIN_LEN, dsts[1], src, NULL, &org, NULL));
    OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
  }
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1) {
    size_t bad = ot_verify(dst, WIN_LEN, 7);
    OT_CHECK(bad == WIN_LEN, "put after failed gets: byte %zu wrong", bad);
  }
  free(dsts);
}

int main(void)
{
  ot_init(on_error, 100);
  pthread_mutex_lock(&ofi.lock);
  int on = ofi.rma_write && !ofi.cma && ofi.get_write_ok;
  /* tcp;ofi_rxm gives RMA writes ordered before later sends: without
   * them there, the capability check is broken, and a skip would hide
   * it (the test could never fail). */
  int owed = strstr(ofi.prov, "ofi_rxm") && ofi.has_rma && !ofi.cma &&
             ofi.get_write_ok;
  long fault = ofi.write_fault;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(on || !owed, "%s gives no RMA writes for gets (FI_WRITE, "
           "FI_REMOTE_WRITE and FI_ORDER_SAW expected)", ofi.prov);
  if (!on || ot.n != 2) {
    if (ot.me == 0)
      printf("ofi_get_write: no RMA writes for gets here (or not 2 "
             "tasks): SKIP\n");
    return ot_finish("ofi_get_write") == 0 ? 77 : 1;
  }
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **srcs = ot_addrs(src);
  void **cntrs = ot_addrs(&tgt_cntr);
  if (fault > 0)
    fails(srcs, cntrs);
  else
    works(srcs, cntrs);
  free(srcs);
  free(cntrs);
  return ot_finish("ofi_get_write");
}
