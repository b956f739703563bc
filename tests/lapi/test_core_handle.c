/*
 * test_core_handle.c - LAPI_Init / LAPI_Term and the handle table,
 * LAPI_Qenv / LAPI_Senv for every query, and an idle process that uses no
 * CPU.
 */
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include "core_util.h"

Test(core_handle, init_argument_rules)
{
  lapi_info_t info;
  lapi_handle_t h = 77;
  memset(&info, 0, sizeof info);
  cr_assert_eq(LAPI_Init(&h, NULL), LAPI_ERR_INFO_NULL);
  cr_assert_eq(LAPI_Init(NULL, &info), LAPI_ERR_RET_PTR_NULL);
  info.info6 = 1;
  cr_assert_eq(LAPI_Init(&h, &info), LAPI_ERR_INFO_NONZERO);
  cr_assert_eq(h, 77, "a failed LAPI_Init must not write the handle");
  info.info6 = 0;
  cr_assert_eq(LAPI_Init(&h, &info), LAPI_SUCCESS);
  cr_assert_eq(h, 0, "the first handle is slot 0");
  cr_assert_eq(LAPI_Term(h), LAPI_SUCCESS);
}

Test(core_handle, term_then_reinit_and_stale_handles)
{
  lapi_handle_t h = core_init();
  cr_assert_eq(LAPI_Term(h), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Term(h), LAPI_ERR_HNDL_INVALID);
  int v;
  cr_assert_eq(LAPI_Qenv(h, TASK_ID, &v), LAPI_ERR_HNDL_INVALID);
  lapi_cntr_t c = {0};
  cr_assert_eq(LAPI_Setcntr(h, &c, 1), LAPI_ERR_HNDL_INVALID);
  cr_assert_eq(LAPI_Probe(h), LAPI_ERR_HNDL_INVALID);
  cr_assert_eq(LAPI_Fence(h), LAPI_ERR_HNDL_INVALID);
  cr_assert_eq(LAPI_Probe(LAPI_VOID_HANDLE), LAPI_ERR_HNDL_INVALID);
  cr_assert_eq(LAPI_Probe(1000), LAPI_ERR_HNDL_INVALID);

  /* Several rounds: each instance starts clean. */
  for (int round = 0; round < 5; round++) {
    h = core_init();
    void *a = (void *)1;
    cr_assert_eq(LAPI_Addr_get(h, &a, 7), LAPI_SUCCESS);
    cr_assert_null(a, "the handler table of a new instance is empty");
    cr_assert_eq(LAPI_Addr_set(h, (void *)&round, 7), LAPI_SUCCESS);
    cr_assert_eq(LAPI_Term(h), LAPI_SUCCESS);
  }
}

Test(core_handle, table_of_128_handles)
{
  lapi_handle_t hs[128];
  for (int i = 0; i < 128; i++) {
    hs[i] = core_init();
    cr_assert_eq(hs[i], (lapi_handle_t)i);
  }
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  lapi_handle_t extra = 999;
  cr_assert_eq(LAPI_Init(&extra, &info), LAPI_ERR_ALL_HNDL_IN_USE);
  cr_assert_eq(extra, 999);
  /* Freeing one slot makes it the next one handed out. */
  cr_assert_eq(LAPI_Term(hs[40]), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Init(&extra, &info), LAPI_SUCCESS);
  cr_assert_eq(extra, 40);
  for (int i = 0; i < 128; i++)
    cr_assert_eq(LAPI_Term(hs[i]), LAPI_SUCCESS);
}

Test(core_handle, interrupt_off_flag_and_env)
{
  lapi_handle_t a = core_init_mode(0), b = core_init_mode(1);
  int v = -1;
  cr_assert_eq(LAPI_Qenv(a, INTERRUPT_SET, &v), LAPI_SUCCESS);
  cr_assert_eq(v, 0);
  cr_assert_eq(LAPI_Qenv(b, INTERRUPT_SET, &v), LAPI_SUCCESS);
  cr_assert_eq(v, 1);
  setenv("LAPI_INTERRUPT", "0", 1);
  lapi_handle_t c = core_init_mode(1);
  cr_assert_eq(LAPI_Qenv(c, INTERRUPT_SET, &v), LAPI_SUCCESS);
  cr_assert_eq(v, 0, "LAPI_INTERRUPT=0 makes polling the default");
  LAPI_Term(a);
  LAPI_Term(b);
  LAPI_Term(c);
}

Test(core_handle, every_query_answers)
{
  lapi_handle_t h = core_init();
  union {
    int i[64];
    lapi_statistics_t s;
  } buf;
  for (int q = 0; q < LAST_QUERY; q++) {
    memset(&buf, 0x5a, sizeof buf);
    cr_assert_eq(LAPI_Qenv(h, (lapi_query_t)q, buf.i), LAPI_SUCCESS,
                 "query %d", q);
    cr_assert_eq(LAPI_Qenv(h, (lapi_query_t)q, NULL), LAPI_ERR_RET_PTR_NULL,
                 "query %d with NULL", q);
  }
  int v;
  cr_assert_eq(LAPI_Qenv(h, LAST_QUERY, &v), LAPI_ERR_QUERY_TYPE);
  cr_assert_eq(LAPI_Qenv(h, (lapi_query_t)-1, &v), LAPI_ERR_QUERY_TYPE);

  struct { lapi_query_t q; int want; } fixed[] = {
    {TASK_ID, 0}, {NUM_TASKS, 1}, {MAX_UHDR_SZ, 1024},
    {MAX_DATA_SZ, INT_MAX}, {ERROR_CHK, 1}, {INTERRUPT_SET, 1},
    {LOC_ADDRTBL_SZ, 256}, {QUERY_SHM_ENABLED, 0},
    {QUERY_SHM_NUM_TASKS, 1}, {MAX_PORTS, 1}, {BUF_CP_SIZE, 0},
  };
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
    cr_assert_eq(LAPI_Qenv(h, fixed[i].q, &v), LAPI_SUCCESS);
    cr_assert_eq(v, fixed[i].want, "query %d: %d", fixed[i].q, v);
  }
  int tasks[4] = {-1, -1, -1, -1};
  cr_assert_eq(LAPI_Qenv(h, QUERY_SHM_TASKS, tasks), LAPI_SUCCESS);
  cr_assert_eq(tasks[0], 0);
  cr_assert_eq(tasks[1], -1, "only NUM_TASKS entries are written");
  int lo, hi, t;
  LAPI_Qenv(h, MIN_TIMEOUT, &lo);
  LAPI_Qenv(h, MAX_TIMEOUT, &hi);
  LAPI_Qenv(h, TIMEOUT, &t);
  cr_assert(lo >= 1 && lo <= t && t <= hi);
  LAPI_Qenv(h, MAX_PKT_SZ, &v);
  cr_assert_gt(v, 0);
  LAPI_Term(h);
}

Test(core_handle, epoch_from_info)
{
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  info.epoch_num = 17;
  lapi_handle_t h;
  cr_assert_eq(LAPI_Init(&h, &info), LAPI_SUCCESS);
  int v = 0;
  LAPI_Qenv(h, EPOCH_NUM, &v);
  cr_assert_eq(v, 17);
  LAPI_Term(h);
}

Test(core_handle, senv_settable_and_refused)
{
  lapi_handle_t h = core_init();
  int v;
  cr_assert_eq(LAPI_Senv(h, ERROR_CHK, 0), LAPI_SUCCESS);
  LAPI_Qenv(h, ERROR_CHK, &v);
  cr_assert_eq(v, 0);
  cr_assert_eq(LAPI_Senv(h, ERROR_CHK, 2), LAPI_ERR_SET_VAL);
  LAPI_Qenv(h, ERROR_CHK, &v);
  cr_assert_eq(v, 0, "a refused value changes nothing");

  cr_assert_eq(LAPI_Senv(h, TIMEOUT, 60), LAPI_SUCCESS);
  LAPI_Qenv(h, TIMEOUT, &v);
  cr_assert_eq(v, 60);
  cr_assert_eq(LAPI_Senv(h, TIMEOUT, 0), LAPI_ERR_SET_VAL);
  cr_assert_eq(LAPI_Senv(h, TIMEOUT, -5), LAPI_ERR_SET_VAL);

  cr_assert_eq(LAPI_Senv(h, ACK_THRESHOLD, 8), LAPI_SUCCESS);
  LAPI_Qenv(h, ACK_THRESHOLD, &v);
  cr_assert_eq(v, 8);
  cr_assert_eq(LAPI_Senv(h, ACK_THRESHOLD, 0), LAPI_ERR_SET_VAL);

  cr_assert_eq(LAPI_Senv(h, INTERRUPT_SET, 0), LAPI_SUCCESS);
  LAPI_Qenv(h, INTERRUPT_SET, &v);
  cr_assert_eq(v, 0);
  cr_assert_eq(LAPI_Senv(h, INTERRUPT_SET, 3), LAPI_ERR_SET_VAL);

  const lapi_query_t fixed[] = {TASK_ID, NUM_TASKS, MAX_UHDR_SZ,
                                LOC_ADDRTBL_SZ, QUERY_STATISTICS, LAST_QUERY};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    cr_assert_eq(LAPI_Senv(h, fixed[i], 1), LAPI_ERR_QUERY_TYPE);
  cr_assert_eq(LAPI_Senv(LAPI_VOID_HANDLE, TIMEOUT, 10),
               LAPI_ERR_HNDL_INVALID);
  LAPI_Term(h);
}

static double cpu_seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The dispatcher sleeps when there is nothing to do: a second of idleness
 * costs (next to) no CPU, in either mode and with several handles. */
Test(core_handle, idle_process_uses_no_cpu)
{
  lapi_handle_t a = core_init(), b = core_init_mode(0);
  usleep(100000); /* let the dispatcher settle */
  double before = cpu_seconds();
  sleep(1);
  double used = cpu_seconds() - before;
  cr_assert_lt(used, 0.05, "idle LAPI used %.3f s of CPU in 1 s", used);
  LAPI_Term(a);
  LAPI_Term(b);
}
