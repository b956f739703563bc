/*
 * test_cpe_errors.c - bad input between CPE tasks, and the rules of
 * CPE-task mode.
 *
 * The job has 8 tasks (CRTS_NUM_CPES=8): the LDM slices of CPEs 8..63
 * exist in the arena but belong to no task.  An LDM address of such a CPE,
 * an address in a guard area, or a transfer that does not fit in the LDM
 * it touches is refused with a LAPI code before anything moves: the
 * target bytes, the counters and the engine statistics stay as they were.
 * A header handler that returns such a buffer sends the message to the
 * error handler (on the MPE) and only org_cntr moves.
 */
#include "cpe_test_util.h"

#include <sched.h>

#include "crts/crts_cg.h" /* the slices of CPEs that are not tasks */

static __thread_local _Alignas(64) unsigned char lbuf[1024];
static __thread_local lapi_cntr_t org_c, cmpl_c, tgt_c;
static __thread_local void *tab[64];

static struct {
  int err_calls, err_code, err_task, err_src;
  void *bad_buf; /* what the header handler returns */
  ulong bad_len;
} S;

static void on_error(lapi_handle_t *hndl, int *code, lapi_err_t *type,
                     int *task, int *src)
{
  ct_on_mpe();
  (void)hndl;
  CT_CHECK_EQ(*type, AM_ERR);
  S.err_code = *code;
  S.err_task = *task;
  S.err_src = *src;
  __atomic_add_fetch(&S.err_calls, 1, __ATOMIC_SEQ_CST);
}

static void *bad_header(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                        ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  ct_on_mpe();
  (void)hndl;
  (void)uhdr;
  (void)uhdr_len;
  (void)msg_len;
  *comp_h = NULL;
  *uinfo = NULL;
  return S.bad_buf;
}

/* Nothing moved: the engines' counters are where they were. */
static void same_stats(const struct crts_engine_stats *a, const char *what)
{
  struct crts_engine_stats b;
  crts_engine_stats_mpe(&b);
  for (int k = 0; k < CRTS_STAT_KINDS; k++)
    if (a->ops[k] != b.ops[k])
      ct_fail("%s: the engines moved data (%s)", what,
              crts_engine_kind_name((enum crts_stat_kind)k));
}

#define REFUSED(call, code)                                                  \
  do {                                                                       \
    struct crts_engine_stats ct_s_;                                          \
    crts_engine_stats_mpe(&ct_s_);                                           \
    CT_CHECK_EQ((call), (code));                                             \
    same_stats(&ct_s_, #call);                                               \
  } while (0)

static void bad_input(struct ct_task *t)
{
  char *slice20 = crts_cg.cpe[20].ldm + 256; /* CPE 20 is no task */
  char *guard = crts_cg.cpe[3].ldm + CRTS_MAX_LDM_SIZE + 64;
  char *heap_end = crts_cg.cpe[1].heap_limit - 16;
  char *mem = malloc(400 * 1024);
  memset(mem, 0x5a, 400 * 1024);
  ct_fill(lbuf, sizeof lbuf, 7);
  lapi_handle_t h = t->h;

  /* Contiguous put and get. */
  REFUSED(LAPI_Put(h, 1, 64, slice20, lbuf, NULL, &org_c, NULL),
          LAPI_ERR_TGT_ADDR_NULL);
  REFUSED(LAPI_Put(h, 1, 64, lbuf, slice20, NULL, &org_c, NULL),
          LAPI_ERR_ORG_ADDR_NULL);
  REFUSED(LAPI_Put(h, 1, 64, guard, lbuf, NULL, &org_c, NULL),
          LAPI_ERR_TGT_ADDR_NULL);
  REFUSED(LAPI_Get(h, 1, 64, slice20, lbuf, NULL, &org_c),
          LAPI_ERR_TGT_ADDR_NULL);
  REFUSED(LAPI_Get(h, 1, 64, mem, guard, NULL, &org_c),
          LAPI_ERR_ORG_ADDR_NULL);
  /* Larger than an LDM slice into LDM, and past the end of the heap. */
  REFUSED(LAPI_Put(h, 1, 300 * 1024, lbuf, mem, NULL, &org_c, NULL),
          LAPI_ERR_DATA_LEN);
  REFUSED(LAPI_Put(h, 1, 64, heap_end, mem, NULL, &org_c, NULL),
          LAPI_ERR_DATA_LEN);
  REFUSED(LAPI_Get(h, 1, 300 * 1024, mem, lbuf, NULL, &org_c),
          LAPI_ERR_DATA_LEN);
  /* A target counter that no task owns. */
  REFUSED(LAPI_Put(h, 1, 64, mem, lbuf, (lapi_cntr_t *)slice20, &org_c,
                   NULL), LAPI_ERR_TGT_ADDR_NULL);

  /* Vectors. */
  void *si[2] = {lbuf, lbuf + 128};
  ulong sl[2] = {64, 64};
  void *bi[2] = {mem, slice20};
  ulong bl[2] = {64, 64};
  lapi_vec_t good = {LAPI_GEN_IOVECTOR, 2, si, sl};
  lapi_vec_t bad = {LAPI_GEN_IOVECTOR, 2, bi, bl};
  REFUSED(LAPI_Putv(h, 1, &bad, &good, NULL, &org_c, NULL),
          LAPI_ERR_TGT_VEC_ADDR);
  REFUSED(LAPI_Putv(h, 1, &good, &bad, NULL, &org_c, NULL),
          LAPI_ERR_ORG_VEC_ADDR);
  REFUSED(LAPI_Getv(h, 1, &bad, &good, NULL, &org_c),
          LAPI_ERR_TGT_VEC_ADDR);
  void *li[2] = {heap_end, mem};
  lapi_vec_t longv = {LAPI_GEN_IOVECTOR, 2, li, sl};
  REFUSED(LAPI_Putv(h, 1, &longv, &good, NULL, &org_c, NULL),
          LAPI_ERR_TGT_VEC_LEN);
  void *gi[3] = {heap_end, (void *)(uintptr_t)8, (void *)(uintptr_t)16};
  void *oi[3] = {lbuf, (void *)(uintptr_t)8, (void *)(uintptr_t)8};
  lapi_vec_t gs = {LAPI_GEN_STRIDED_XFER, 4, gi, NULL};
  lapi_vec_t os = {LAPI_GEN_STRIDED_XFER, 4, oi, NULL};
  REFUSED(LAPI_Putv(h, 1, &gs, &os, NULL, &org_c, NULL),
          LAPI_ERR_TGT_EXTENT);
  REFUSED(LAPI_Amsendv(h, 1, (void *)bad_header, NULL, 0, &bad, NULL,
                       &org_c, NULL), LAPI_ERR_ORG_VEC_ADDR);

  /* Active message data and read-modify-write variables. */
  REFUSED(LAPI_Amsend(h, 1, (void *)bad_header, NULL, 0, slice20, 16, NULL,
                      &org_c, NULL), LAPI_ERR_ORG_ADDR_NULL);
  int one = 1;
  REFUSED(LAPI_Rmw(h, FETCH_AND_ADD, 1, (int *)slice20, &one, NULL, &org_c),
          LAPI_ERR_TGT_ADDR_NULL);
  REFUSED(LAPI_Rmw(h, FETCH_AND_ADD, 1, (int *)(mem + 2), &one, NULL,
                   &org_c), LAPI_ERR_TGT_VAR_NULL);

  /* The LAPI core's own checks still come first. */
  REFUSED(LAPI_Put(h + 5, 1, 64, lbuf, lbuf, NULL, NULL, NULL),
          LAPI_ERR_HNDL_INVALID);
  REFUSED(LAPI_Put(h, 99, 64, lbuf, lbuf, NULL, NULL, NULL), LAPI_ERR_TGT);
  REFUSED(LAPI_Put(h, 1, 64, NULL, lbuf, NULL, NULL, NULL),
          LAPI_ERR_TGT_ADDR_NULL);

  /* Nothing was written anywhere, no counter moved. */
  for (int i = 0; i < 400 * 1024; i++)
    if ((unsigned char)mem[i] != 0x5a) {
      ct_fail("byte %d of main memory was written", i);
      break;
    }
  int v = -1;
  CT_OK(LAPI_Getcntr(h, &org_c, &v));
  CT_CHECK_EQ(v, 0);

  /* A header handler that returns memory of no task, or too little. */
  static const struct { int off; ulong len; int code; } cases[] = {
    {0, 64, LAPI_ERR_TGT_ADDR_NULL},
    {1, 64, LAPI_ERR_DATA_LEN},
  };
  for (int c = 0; c < 2; c++) {
    S.bad_buf = cases[c].off ? (void *)heap_end : (void *)slice20;
    S.err_calls = 0;
    ct_zero(t, &org_c);
    ct_zero(t, &cmpl_c);
    CT_OK(LAPI_Amsend(h, 1, (void *)bad_header, NULL, 0, lbuf,
                      cases[c].len, tab[1], &org_c, &cmpl_c));
    ct_wait(t, &org_c, 1); /* after the error handler ran */
    CT_CHECK_EQ(S.err_code, cases[c].code);
    CT_CHECK_EQ(S.err_task, 1);
    CT_CHECK_EQ(S.err_src, 0);
    CT_OK(LAPI_Fence(h));
    CT_OK(LAPI_Getcntr(h, &cmpl_c, &v));
    CT_CHECK_EQ(v, 0); /* dropped: no completion */
  }
  free(mem);
}

static void errors_task(void *arg)
{
  (void)arg;
  struct ct_task t;
  ct_open_err(&t, on_error);
  ct_zero(&t, &org_c);
  ct_zero(&t, &cmpl_c);
  ct_zero(&t, &tgt_c);
  CT_OK(LAPI_Address_init(t.h, &tgt_c, tab));
  if (t.me == 0)
    bad_input(&t);
  CT_OK(LAPI_Gfence(t.h));
  if (t.me == 1) {
    int v = -1;
    CT_OK(LAPI_Getcntr(t.h, &tgt_c, &v));
    CT_CHECK_EQ(v, 0); /* the dropped messages did not count */
  }
  ct_close(&t);
}

Test(cpe_errors, refused_before_anything_moves, .timeout = CT_TIMEOUT)
{
  ct_run(8, errors_task, NULL);
  CT_ASSERT_NO_FAILURE();
}

/* ------------------------------------------------ the rules of the mode */

static int mpe_rc = -1;
static int created_rc = 0;

static void hold_handles(void *arg)
{
  (void)arg;
  struct ct_task t;
  ct_open(&t);
  CT_OK(LAPI_Gfence(t.h));
  if (t.me == 0) {
    /* The MPE is no task while CPE tasks live (the test thread tries). */
    __atomic_store_n(&mpe_rc, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&mpe_rc, __ATOMIC_SEQ_CST) == 1)
      sched_yield();
  }
  CT_OK(LAPI_Gfence(t.h));
  ct_close(&t);
}

static void created(void *arg)
{
  (void)arg;
  lapi_handle_t h;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  created_rc = LAPI_Init(&h, &info);
}

Test(cpe_errors, one_mode_at_a_time, .timeout = CT_TIMEOUT)
{
  setenv("CRTS_NUM_CPES", "4", 1);
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_athread_spawn((void (*)(void))hold_handles, NULL), 0);
  while (__atomic_load_n(&mpe_rc, __ATOMIC_SEQ_CST) != 1)
    sched_yield();
  lapi_handle_t h;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  int rc = LAPI_Init(&h, &info);
  __atomic_store_n(&mpe_rc, 2, __ATOMIC_SEQ_CST);
  cr_assert_eq(rc, LAPI_ERR_SHM_SETUP, "LAPI_Init on the MPE: %d", rc);
  cr_assert_eq(CRTS_athread_join(), 0);
  CT_ASSERT_NO_FAILURE();

  /* A CPE started alone (CRTS_athread_create) is no task. */
  cr_assert_eq(CRTS_athread_create(2, (void (*)(void))created, NULL), 0);
  cr_assert_eq(CRTS_athread_wait(2), 0);
  cr_assert_eq(created_rc, LAPI_ERR_SHM_SETUP);

  /* Every CPE handle is gone: the process may be a task itself now. */
  cr_assert_eq(LAPI_Init(&h, &info), LAPI_SUCCESS);
  int me = -1, n = -1;
  cr_assert_eq(LAPI_Qenv(h, TASK_ID, &me), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Qenv(h, NUM_TASKS, &n), LAPI_SUCCESS);
  cr_assert(me == 0 && n == 1);
  cr_assert_eq(LAPI_Term(h), LAPI_SUCCESS);
}
