/*
 * test_rma_errors.c - every RMA misuse returns non-zero and touches nothing.
 *
 * A table of argument faults is applied to every RMA operation it concerns;
 * after each faulty call the destinations and reply words of every CPE (and
 * the main-memory decoys) must still hold what they held before.  A control
 * run of each operation with the unmodified arguments shows that the
 * checked bytes are the ones a successful call does change.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "crts_cg.h"
#include "crts_test_util.h"

#define W 16 /* ints per buffer */
#define SENTINEL 0x5a5a5a5a
#define NCPES 16 /* the group of these tests: CPE 20 is not in it */

static __thread_local int src[W];
static __thread_local int dst[W];
static __thread_local crts_rply_t l_rply;
static __thread_local crts_rply_t r_rply;

static int main_mem[W];      /* decoys in main memory */
static crts_rply_t main_rply;

static struct crts_barrier test_bar;
static void sync_all(void)
{
  crts_barrier_wait(&test_bar, (uint32_t)crts_cg.group_size, 0);
}

/* ------------------------------------------------------ the operations */

enum op {
  PUT, IPUT, GET, IGET, BCAST, IBCAST, ROW_BCAST, ROW_IBCAST, ROW_MCAST,
  ROW_IMCAST, COL_BCAST, COL_IBCAST, COL_MCAST, COL_IMCAST, NOPS
};

static const char *const op_name[NOPS] = {
  "put", "iput", "get", "iget", "bcast", "ibcast", "row_bcast", "row_ibcast",
  "row_mcast", "row_imcast", "col_bcast", "col_ibcast", "col_mcast",
  "col_imcast",
};

static int has_tid(enum op op) { return op <= IGET; }
static int has_l_rply(enum op op)
{
  return op == IPUT || op == IGET || op == IBCAST || op == ROW_IBCAST ||
         op == ROW_IMCAST || op == COL_IBCAST || op == COL_IMCAST;
}

/*
 * Arguments by side: l_addr is the caller's buffer (the source of a put or
 * broadcast, the destination of a get), r_addr the remote one.
 */
struct args {
  void *l_addr;
  crts_rply_t *l_rply;
  int len;
  int r_tid;
  void *r_addr;
  crts_rply_t *r_rply;
};

static struct args defaults(enum op op)
{
  struct args a = { .l_addr = src, .l_rply = &l_rply, .len = sizeof src,
                    .r_tid = 1, .r_addr = dst, .r_rply = &r_rply };
  if (op == GET || op == IGET) {
    a.l_addr = dst;
    a.r_addr = src;
  }
  return a;
}

static int issue(enum op op, const struct args *a)
{
  unsigned char mask = 0x03;
  switch (op) {
  case PUT: return CRTS_rma_put(a->l_addr, a->len, a->r_tid, a->r_addr,
                                a->r_rply);
  case IPUT: return CRTS_rma_iput(a->l_addr, a->l_rply, a->len, a->r_tid,
                                  a->r_addr, a->r_rply);
  case GET: return CRTS_rma_get(a->l_addr, a->len, a->r_tid, a->r_addr,
                                a->r_rply);
  case IGET: return CRTS_rma_iget(a->l_addr, a->l_rply, a->len, a->r_tid,
                                  a->r_addr, a->r_rply);
  case BCAST: return CRTS_rma_bcast(a->r_addr, a->l_addr, a->len, a->r_rply);
  case IBCAST: return CRTS_rma_ibcast(a->r_addr, a->l_addr, a->l_rply, a->len,
                                      a->r_rply);
  case ROW_BCAST: return CRTS_rma_row_bcast(a->r_addr, a->l_addr, a->len,
                                            a->r_rply);
  case ROW_IBCAST: return CRTS_rma_row_ibcast(a->r_addr, a->l_addr, a->len,
                                              a->l_rply, a->r_rply);
  case ROW_MCAST: return CRTS_rma_row_mcast(a->r_addr, a->l_addr, a->len,
                                            mask, a->r_rply);
  case ROW_IMCAST: return CRTS_rma_row_imcast(a->r_addr, a->l_addr, a->len,
                                              a->l_rply, mask, a->r_rply);
  case COL_BCAST: return CRTS_rma_col_bcast(a->r_addr, a->l_addr, a->len,
                                            a->r_rply);
  case COL_IBCAST: return CRTS_rma_col_ibcast(a->r_addr, a->l_addr, a->len,
                                              a->l_rply, a->r_rply);
  case COL_MCAST: return CRTS_rma_col_mcast(a->r_addr, a->l_addr, a->len,
                                            mask, a->r_rply);
  case COL_IMCAST: return CRTS_rma_col_imcast(a->r_addr, a->l_addr, a->len,
                                              a->l_rply, mask, a->r_rply);
  case NOPS: break;
  }
  return 0;
}

/* ------------------------------------------------------------ the faults */

enum need { ANY, TID, LRPLY };

struct fault {
  const char *name;
  enum need need;
  void (*apply)(struct args *a);
};

static void misaligned_l_addr(struct args *a)
{
  a->l_addr = (char *)a->l_addr + 2;
}
static void misaligned_r_addr(struct args *a)
{
  a->r_addr = (char *)a->r_addr + 1;
}
static void odd_len(struct args *a) { a->len = 6; }
static void negative_len(struct args *a) { a->len = -4; }
static void tid_minus_one(struct args *a) { a->r_tid = -1; }
static void tid_64(struct args *a) { a->r_tid = 64; }
static void tid_not_in_group(struct args *a) { a->r_tid = 20; }
static void remote_past_heap(struct args *a)
{
  a->r_addr = crts_cg.cpe[1].heap_limit - 16; /* runs into the guard page */
}
static void remote_past_slice(struct args *a)
{
  a->r_addr = crts_cg.cpe[1].ldm + CRTS_MAX_LDM_SIZE - 16;
}
static void local_past_heap(struct args *a)
{
  a->l_addr = crts_self->heap_limit - 16;
}
static void l_addr_main_memory(struct args *a) { a->l_addr = main_mem; }
static void r_addr_main_memory(struct args *a) { a->r_addr = main_mem; }
static void l_addr_null(struct args *a) { a->l_addr = NULL; }
static void l_addr_other_cpe(struct args *a)
{
  a->l_addr = crts_ldm_translate(a->l_addr, 2);
}
static void r_rply_main_memory(struct args *a) { a->r_rply = &main_rply; }
static void r_rply_misaligned(struct args *a)
{
  a->r_rply = (crts_rply_t *)((char *)a->r_rply + 2);
}
static void r_rply_in_guard(struct args *a)
{
  a->r_rply = (crts_rply_t *)crts_cg.cpe[1].heap_limit;
}
static void l_rply_main_memory(struct args *a) { a->l_rply = &main_rply; }
static void l_rply_other_cpe(struct args *a)
{
  a->l_rply = crts_ldm_translate((void *)&l_rply, 3);
}
static void l_rply_misaligned(struct args *a)
{
  a->l_rply = (crts_rply_t *)((char *)&l_rply + 1);
}

static const struct fault faults[] = {
  { "misaligned l_addr", ANY, misaligned_l_addr },
  { "misaligned r_addr", ANY, misaligned_r_addr },
  { "len not a multiple of 4", ANY, odd_len },
  { "negative len", ANY, negative_len },
  { "r_tid -1", TID, tid_minus_one },
  { "r_tid 64", TID, tid_64 },
  { "r_tid not in the group", TID, tid_not_in_group },
  { "remote range into a guard page", ANY, remote_past_heap },
  { "remote range past the slice", ANY, remote_past_slice },
  { "local range into a guard page", ANY, local_past_heap },
  { "l_addr in main memory", ANY, l_addr_main_memory },
  { "r_addr in main memory", ANY, r_addr_main_memory },
  { "l_addr NULL", ANY, l_addr_null },
  { "l_addr in another CPE's LDM", ANY, l_addr_other_cpe },
  { "r_rply in main memory", ANY, r_rply_main_memory },
  { "r_rply misaligned", ANY, r_rply_misaligned },
  { "r_rply in a guard page", ANY, r_rply_in_guard },
  { "l_rply in main memory", LRPLY, l_rply_main_memory },
  { "l_rply in another CPE's LDM", LRPLY, l_rply_other_cpe },
  { "l_rply misaligned", LRPLY, l_rply_misaligned },
};
#define NFAULTS ((int)(sizeof faults / sizeof faults[0]))

/* ------------------------------------------------------ state checking */

/* Put every CPE's buffers (and the decoys) back to the known state. */
static void reset_all(void)
{
  for (int t = 0; t < crts_cg.group_size; t++) {
    int *d = crts_ldm_translate(dst, t), *s = crts_ldm_translate(src, t);
    for (int i = 0; i < W; i++) {
      d[i] = SENTINEL;
      s[i] = t * 1000 + i;
    }
    *(crts_rply_t *)crts_ldm_translate((void *)&l_rply, t) = 0;
    *(crts_rply_t *)crts_ldm_translate((void *)&r_rply, t) = 0;
  }
  for (int i = 0; i < W; i++)
    main_mem[i] = SENTINEL;
  main_rply = 0;
}

/* 1 if nothing changed since reset_all(). */
static int all_untouched(void)
{
  for (int t = 0; t < crts_cg.group_size; t++) {
    const int *d = crts_ldm_translate(dst, t);
    const int *s = crts_ldm_translate(src, t);
    for (int i = 0; i < W; i++)
      if (d[i] != SENTINEL || s[i] != t * 1000 + i)
        return 0;
    if (*(crts_rply_t *)crts_ldm_translate((void *)&l_rply, t) != 0 ||
        *(crts_rply_t *)crts_ldm_translate((void *)&r_rply, t) != 0)
      return 0;
  }
  for (int i = 0; i < W; i++)
    if (main_mem[i] != SENTINEL)
      return 0;
  return main_rply == 0;
}

static _Atomic int calls_checked;

/* CPE 0 runs the table while the others wait at the final barrier. */
static void run_table(void *arg)
{
  (void)arg;
  sync_all();
  if (CRTS_tid == 0) {
    for (int op = 0; op < NOPS; op++) {
      reset_all();
      struct args ok = defaults(op);
      if (issue(op, &ok) != 0 || all_untouched())
        crts_test_fail("control %s: valid call failed or changed nothing",
                       op_name[op]);
      for (int f = 0; f < NFAULTS; f++) {
        if ((faults[f].need == TID && !has_tid(op)) ||
            (faults[f].need == LRPLY && !has_l_rply(op)))
          continue;
        reset_all();
        struct args a = defaults(op);
        faults[f].apply(&a);
        if (issue(op, &a) == 0)
          crts_test_fail("%s with %s returned 0", op_name[op],
                         faults[f].name);
        if (!all_untouched())
          crts_test_fail("%s with %s touched memory", op_name[op],
                         faults[f].name);
        atomic_fetch_add(&calls_checked, 1);
      }
    }
  }
  sync_all();
}

Test(rma_errors, every_fault_of_every_operation)
{
  setenv("CRTS_NUM_CPES", "16", 1);
  crts_test_run(run_table, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  /* 14 ops x 14 common faults + 4 p2p x 3 tid faults + 7 x 3 l_rply ones */
  cr_assert_eq(calls_checked, 14 * 14 + 4 * 3 + 7 * 3);
}

/* ------------------------------------------------------- wait_value */

static void bad_waits(void *arg)
{
  (void)arg;
  if (CRTS_tid != 0)
    return;
  r_rply = 0;
  CPE_CHECK(CRTS_rma_wait_value(NULL, 1) != 0);
  CPE_CHECK(CRTS_rma_wait_value((crts_rply_t *)((char *)&r_rply + 2), 1) !=
            0);
  CPE_CHECK(CRTS_rma_wait_value(&main_rply, 1) != 0);
  CPE_CHECK(CRTS_rma_wait_value(crts_ldm_translate((void *)&r_rply, 1), 1) !=
            0);
  CPE_CHECK(CRTS_rma_wait_value(&r_rply, -1) != 0);
  CPE_CHECK(CRTS_rma_wait_value(&r_rply, 0) == 0);
}

Test(rma_errors, wait_value_rejects_bad_words_without_waiting)
{
  crts_test_run(bad_waits, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ------------------------------------------------------- collectives */

static void bad_collectives(void *arg)
{
  (void)arg;
  int me = CRTS_tid;
  for (int i = 0; i < W; i++) {
    dst[i] = SENTINEL;
    src[i] = me * 1000 + i;
  }
  sync_all();
  /* Roots disagree: everybody fails, nothing moves. */
  CPE_CHECK(CRTS_rma_bcast_coll(dst, src, sizeof dst, me == 3 ? 1 : 0) != 0);
  CPE_CHECK(dst[0] == SENTINEL && dst[W - 1] == SENTINEL);
  /* A root outside the scope. */
  CPE_CHECK(CRTS_rma_bcast_coll(dst, src, sizeof dst, 64) != 0);
  CPE_CHECK(CRTS_rma_row_bcast_coll(dst, src, sizeof dst, 8) != 0);
  CPE_CHECK(CRTS_rma_col_bcast_coll(dst, src, sizeof dst, -1) != 0);
  /* The root's src in main memory: nobody receives. */
  CPE_CHECK(CRTS_rma_bcast_coll(dst, me == 2 ? (void *)main_mem : src,
                                sizeof dst, 2) != 0);
  CPE_CHECK(dst[0] == SENTINEL);
  /* A root not in the group (CPE 20 of a 16-CPE group). */
  CPE_CHECK(CRTS_rma_bcast_coll(dst, src, sizeof dst, 20) != 0);
  CPE_CHECK(dst[0] == SENTINEL);
  /* One receiver's bad dst or len fails it alone; the rest receive. */
  int bad = me == 5 || me == 6;
  void *d = me == 5 ? (void *)((char *)dst + 2) : (void *)dst;
  int len = me == 6 ? 32 : (int)sizeof dst;
  int rc = CRTS_rma_bcast_coll(d, src, len, 9);
  CPE_CHECK(bad ? rc != 0 : rc == 0);
  if (bad)
    CPE_CHECK(dst[0] == SENTINEL && dst[W - 1] == SENTINEL);
  else
    CPE_CHECK(dst[0] == 9000 && dst[W - 1] == 9000 + W - 1);
  /* Column 0's root row 1 is fine, the others still work afterwards. */
  CPE_CHECK(CRTS_rma_col_bcast_coll(dst, src, sizeof dst, 1) == 0);
  CPE_CHECK(dst[0] == (8 + CRTS_cid) * 1000);
}

Test(rma_errors, collective_faults)
{
  setenv("CRTS_NUM_CPES", "16", 1);
  crts_test_run(bad_collectives, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ------------------------------------------------------------- sldm */

static void bad_sldm(void *arg)
{
  (void)arg;
  int me = CRTS_tid;
  for (int i = 0; i < W; i++) {
    dst[i] = SENTINEL;
    src[i] = me * 1000 + i;
  }
  sync_all();
  /* Another cluster's LDM (CPE tid ^ 4 is two clusters away). */
  CPE_CHECK(CRTS_sldm_get(crts_ldm_translate(dst, me ^ 4), src, 64) != 0);
  CPE_CHECK(CRTS_sldm_get(dst, crts_ldm_translate(src, me ^ 16), 64) != 0);
  CPE_CHECK(CRTS_sldm_get(dst, main_mem, 64) != 0);
  CPE_CHECK(CRTS_sldm_get(dst, src, 6) != 0);
  CPE_CHECK(CRTS_sldm_get((char *)dst + 2, src, 8) != 0);
  sync_all();
  const int *far = crts_ldm_translate(dst, me ^ 4);
  CPE_CHECK(dst[0] == SENTINEL && dst[W - 1] == SENTINEL);
  CPE_CHECK(far[0] == SENTINEL);
  sync_all(); /* CPE me ^ 4 may overwrite its dst below */
  /* One member failing does not stall the others of its cluster. */
  int rc = CRTS_sldm_get(dst, me % 4 == 0 ? (void *)main_mem : src, 64);
  CPE_CHECK(me % 4 == 0 ? rc != 0 : rc == 0);
  CPE_CHECK(me % 4 == 0 ? dst[0] == SENTINEL : dst[0] == me * 1000);
}

Test(rma_errors, sldm_faults)
{
  crts_test_run(bad_sldm, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ---------------------------------------------------- wrong callers */

Test(rma_errors, every_call_fails_on_the_mpe)
{
  cr_assert_eq(CRTS_init(), 0);
  int buf[W], other[W];
  crts_rply_t rp = 0;
  for (int i = 0; i < W; i++)
    buf[i] = other[i] = SENTINEL;
  int len = sizeof buf;
  cr_assert_neq(CRTS_rma_get(buf, len, 1, other, &rp), 0);
  cr_assert_neq(CRTS_rma_iget(buf, &rp, len, 1, other, &rp), 0);
  cr_assert_neq(CRTS_rma_put(buf, len, 1, other, &rp), 0);
  cr_assert_neq(CRTS_rma_iput(buf, &rp, len, 1, other, &rp), 0);
  cr_assert_neq(CRTS_rma_bcast(buf, other, len, &rp), 0);
  cr_assert_neq(CRTS_rma_ibcast(buf, other, &rp, len, &rp), 0);
  cr_assert_neq(CRTS_rma_bcast_coll(buf, other, len, 0), 0);
  cr_assert_neq(CRTS_rma_row_bcast(buf, other, len, &rp), 0);
  cr_assert_neq(CRTS_rma_row_ibcast(buf, other, len, &rp, &rp), 0);
  cr_assert_neq(CRTS_rma_row_bcast_coll(buf, other, len, 0), 0);
  cr_assert_neq(CRTS_rma_row_mcast(buf, other, len, 0xff, &rp), 0);
  cr_assert_neq(CRTS_rma_row_imcast(buf, other, len, &rp, 0xff, &rp), 0);
  cr_assert_neq(CRTS_rma_col_bcast(buf, other, len, &rp), 0);
  cr_assert_neq(CRTS_rma_col_ibcast(buf, other, len, &rp, &rp), 0);
  cr_assert_neq(CRTS_rma_col_bcast_coll(buf, other, len, 0), 0);
  cr_assert_neq(CRTS_rma_col_mcast(buf, other, len, 0xff, &rp), 0);
  cr_assert_neq(CRTS_rma_col_imcast(buf, other, len, &rp, 0xff, &rp), 0);
  cr_assert_neq(CRTS_sldm_get(buf, other, len), 0);
  cr_assert_neq(CRTS_rma_wait_value(&rp, 0), 0);
  cr_assert_neq(CRTS_rma_barrier(), 0);
  cr_assert_neq(CRTS_rma_all_barrier(), 0);
  for (int i = 0; i < W; i++)
    cr_assert(buf[i] == SENTINEL && other[i] == SENTINEL);
  cr_assert_eq(rp, 0);
}

static _Atomic int created_rc = 12345;

static void created_thread(void *arg)
{
  (void)arg;
  atomic_store(&created_rc, CRTS_rma_put(src, 16, 1, dst, NULL));
}

Test(rma_errors, a_created_thread_has_no_group_to_address)
{
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_athread_create(0, (void (*)(void))created_thread, NULL),
               0);
  cr_assert_eq(CRTS_athread_wait(0), 0);
  cr_assert_neq(atomic_load(&created_rc), 0);
  cr_assert_neq(atomic_load(&created_rc), 12345);
}
