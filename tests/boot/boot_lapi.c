/*
 * boot_lapi.c - LAPI_Init on top of the bootstrap, run under lapirun.
 *
 *   boot_lapi job          TASK_ID = LAPIRUN_RANK, NUM_TASKS = LAPIRUN_SIZE
 *                          (OMPI_COMM_WORLD_* under mpirun,
 *                          SLURM_PROCID and SLURM_NTASKS under srun),
 *                          TIMEOUT = LAPI_TIMEOUT; Gfence; Address_init
 *                          and Address_init64 tables hold every task's
 *                          value; Term.  (No messages between tasks: the
 *                          ofi transport is another part of the issue.)
 *   boot_lapi unreachable  LAPI_Init fails with LAPI_ERR_TIMEOUT
 *                          (LAPIRUN_ADDR points where nobody listens)
 *   boot_lapi noterm       task 1 exits (code 0) without LAPI_Term while
 *                          task 0 waits, with no time limit of its own,
 *                          for a counter only task 1 could move: the
 *                          launcher must end the wait (lapirun: the wait
 *                          fails, PASS; mpirun: the job is ended)
 * Prints PASS or FAIL lines; exits 0 only if every check held.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapi.h>

#include "boot_test.h"

static int qenv(lapi_handle_t h, lapi_query_t q)
{
  int v = -1;
  int rc = LAPI_Qenv(h, q, &v);
  CHECK(rc == LAPI_SUCCESS, "LAPI_Qenv(%d) returned %d", (int)q, rc);
  return v;
}

/* LAPI_Init, checked: 1 if the handle is open. */
static int started(lapi_handle_t *h)
{
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  int rc = LAPI_Init(h, &info);
  CHECK(rc == LAPI_SUCCESS, "LAPI_Init returned %d", rc);
  return rc == LAPI_SUCCESS;
}

static void job(void)
{
  lapi_handle_t h;
  if (!started(&h))
    return;
  int me = qenv(h, TASK_ID), n = qenv(h, NUM_TASKS);
  const char *er = getenv("LAPIRUN_RANK"), *es = getenv("LAPIRUN_SIZE");
  const char *et = getenv("LAPI_TIMEOUT");
  if (er == NULL && getenv("SLURM_PROCID")) { /* under srun (PMIx) */
    er = getenv("SLURM_PROCID");
    es = getenv("SLURM_NTASKS");
  } else if (er == NULL) { /* under Open MPI's mpirun (PMIx) */
    er = getenv("OMPI_COMM_WORLD_RANK");
    es = getenv("OMPI_COMM_WORLD_SIZE");
  }
  printf("task %d of %d\n", me, n);
  CHECK(er && me == atoi(er), "TASK_ID %d, LAPIRUN_RANK %s", me,
        er ? er : "-");
  CHECK(es && n == atoi(es), "NUM_TASKS %d, LAPIRUN_SIZE %s", n,
        es ? es : "-");
  CHECK(et && qenv(h, TIMEOUT) == atoi(et), "TIMEOUT %d, LAPI_TIMEOUT %s",
        qenv(h, TIMEOUT), et ? et : "-");
  CHECK(qenv(h, QUERY_SHM_NUM_TASKS) == 1, "one task per CG");
  CHECK(LAPI_Gfence(h) == LAPI_SUCCESS, "LAPI_Gfence");

  /* Every task's value (distinct per task) lands in everyone's table at
   * its task id; the tables start poisoned. */
  void **tab = malloc((size_t)n * sizeof *tab);
  lapi_long_t *tab64 = malloc((size_t)n * sizeof *tab64);
  memset(tab, 0xee, (size_t)n * sizeof *tab);
  memset(tab64, 0xee, (size_t)n * sizeof *tab64);
  int rc = LAPI_Address_init(h, (void *)(uintptr_t)(0x10000 * (me + 1) + 8),
                              tab);
  CHECK(rc == LAPI_SUCCESS, "LAPI_Address_init returned %d", rc);
  for (int t = 0; t < n; t++)
    CHECK(tab[t] == (void *)(uintptr_t)(0x10000 * (t + 1) + 8),
          "Address_init entry %d is %p", t, tab[t]);
  rc = LAPI_Address_init64(h, (lapi_long_t)1000 * me + 7, tab64);
  CHECK(rc == LAPI_SUCCESS, "LAPI_Address_init64 returned %d", rc);
  for (int t = 0; t < n; t++)
    CHECK(tab64[t] == (lapi_long_t)1000 * t + 7, "Address_init64 entry %d",
          t);
  free(tab);
  free(tab64);
  CHECK(LAPI_Gfence(h) == LAPI_SUCCESS, "second LAPI_Gfence");
  CHECK(LAPI_Term(h) == LAPI_SUCCESS, "LAPI_Term");
}

static void unreachable(void)
{
  lapi_handle_t h;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  int rc = LAPI_Init(&h, &info);
  CHECK(rc == LAPI_ERR_TIMEOUT, "LAPI_Init returned %d, not "
        "LAPI_ERR_TIMEOUT", rc);
  char msg[LAPI_MAX_ERR_STRING];
  if (LAPI_Msg_string(rc, msg) == LAPI_SUCCESS)
    printf("LAPI_Init: %s\n", msg);
  /* A second try fails the same way, at once. */
  CHECK(LAPI_Init(&h, &info) == LAPI_ERR_TIMEOUT, "second LAPI_Init");
}

static void noterm(void)
{
  lapi_handle_t h;
  if (!started(&h))
    return;
  int me = qenv(h, TASK_ID);
  CHECK(LAPI_Senv(h, TIMEOUT, 2) == LAPI_SUCCESS, "LAPI_Senv(TIMEOUT)");
  CHECK(LAPI_Gfence(h) == LAPI_SUCCESS, "LAPI_Gfence");
  if (me == 1)
    exit(0);
  lapi_cntr_t never;
  LAPI_Setcntr(h, &never, 0);
  int rc = LAPI_Waitcntr(h, &never, 1, NULL);
  CHECK(rc == LAPI_ERR_TIMEOUT, "Waitcntr returned %d", rc);
  CHECK(LAPI_Term(h) == LAPI_SUCCESS, "LAPI_Term");
}

int main(int argc, char **argv)
{
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "job") == 0)
    job();
  else if (strcmp(mode, "unreachable") == 0)
    unreachable();
  else if (strcmp(mode, "noterm") == 0)
    noterm();
  else {
    printf("FAIL: unknown mode \"%s\"\n", mode);
    return 2;
  }
  return boot_test_end(mode);
}
