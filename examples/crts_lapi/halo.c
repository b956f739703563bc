/*
 * halo.c - a Jacobi stencil whose grid is split over the CPE tasks of one
 * or more core groups; every task keeps its block in LDM and trades halo
 * rows with its neighbours through LAPI_Put.
 *
 * Build and run:  make   then   ./build/examples/crts_lapi_halo
 *   (one core group: its 64 CPEs are 64 LAPI tasks)
 * Two core groups of 16 tasks each:
 *   CRTS_NUM_CPES=16 ./build/bin/lapirun -n 2 -c 16 ./build/examples/crts_lapi_halo
 * Outside this tree:  cc halo.c -llapi -lcrts -lpthread -o halo
 *
 * The MPE (main) spawns the CPEs; every CPE calls LAPI_Init and becomes
 * task  cg * tasks_per_cg + CRTS_tid  (CPE-task mode).  The grid has
 * ROWS rows per task and COLS columns; task t owns global rows
 * t*ROWS .. t*ROWS+ROWS-1, held in LDM (__thread_local) with room for a
 * halo row above and below.  One step:
 *   1. put my first row into the previous task's lower halo and my last
 *      row into the next task's upper halo (LAPI_Put, tgt_cntr on them);
 *   2. wait until my own halos of this step have arrived (my counters) and
 *      my puts have read my edge rows (org_cntr: LAPI reads the origin
 *      buffer after LAPI_Put returned);
 *   3. new value = average of the four neighbours (0 outside the grid).
 * Halos are double-buffered by step parity: a neighbour cannot run two
 * steps ahead, since each step waits for the other's rows, so it never
 * overwrites a halo that is still being read.
 *
 * Between tasks of the same core group the puts go through the CRTS
 * transport: the core group's MPE moves LDM to LDM by RMA.  Between core
 * groups they go over libfabric.  At the end every task copies its block to
 * main memory (CRTS_dma_put) and the MPE compares its core group's rows
 * with a serial computation of the same grid: PASS or FAIL.
 */
#include <crts.h>
#include <lapi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 8   /* rows per task */
#define COLS 64  /* columns */
#define STEPS 30

/* A task's LDM: its block with a halo row above (0) and below (ROWS+1),
 * the halos of the two step parities, and a counter per side that the
 * neighbour on that side bumps with each halo it puts.  (One counter for
 * both sides would be wrong: the next task may already send its row of
 * step s+1 before the previous task's row of step s arrived, and two
 * arrivals from one side would look like one from each.) */
static __thread_local double block[ROWS + 2][COLS];
static __thread_local double next_block[ROWS][COLS];
static __thread_local double halo[2][2][COLS]; /* [parity][above/below] */
static __thread_local lapi_cntr_t above_cntr, below_cntr, sent_cntr;

/* Filled in by the tasks for the MPE. */
static double *result;     /* [tasks of this CG][ROWS][COLS] */
static int first_task = -1, cg_tasks, all_tasks;
static int failed;         /* a LAPI call failed on some task */

static double initial(int row, int col)
{
  return (double)((row * 7 + col * 3) % 17) - 8.0;
}

static int check(int rc, const char *what)
{
  if (rc != LAPI_SUCCESS) {
    char msg[LAPI_MAX_ERR_STRING];
    LAPI_Msg_string(rc, msg);
    fprintf(stderr, "halo: %s failed: %s\n", what, msg);
    __atomic_store_n(&failed, 1, __ATOMIC_SEQ_CST);
  }
  return rc;
}

/* New interior from block (with its halo rows) into next_block. */
static void relax(void)
{
  for (int i = 1; i <= ROWS; i++)
    for (int j = 0; j < COLS; j++) {
      double left = j > 0 ? block[i][j - 1] : 0.0;
      double right = j < COLS - 1 ? block[i][j + 1] : 0.0;
      next_block[i - 1][j] =
          0.25 * (block[i - 1][j] + block[i + 1][j] + left + right);
    }
  memcpy(&block[1][0], next_block, sizeof next_block);
}

static void task(void *arg)
{
  (void)arg;
  lapi_handle_t h;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  if (check(LAPI_Init(&h, &info), "LAPI_Init") != LAPI_SUCCESS)
    return; /* e.g. more CPEs spawned than lapirun -c asked for */
  int me, n, shm;
  LAPI_Qenv(h, TASK_ID, &me);
  LAPI_Qenv(h, NUM_TASKS, &n);
  LAPI_Qenv(h, QUERY_SHM_NUM_TASKS, &shm);
  if (CRTS_tid == 0) { /* one task per core group tells the MPE */
    first_task = me;
    cg_tasks = shm;
    all_tasks = n;
  }

  for (int i = 0; i < ROWS; i++)
    for (int j = 0; j < COLS; j++)
      block[i + 1][j] = initial(me * ROWS + i, j);
  memset(halo, 0, sizeof halo);
  LAPI_Setcntr(h, &above_cntr, 0);
  LAPI_Setcntr(h, &below_cntr, 0);
  LAPI_Setcntr(h, &sent_cntr, 0);
  /* Where every task's halos and counters are (collective calls); the
   * tables live in main memory, which is large. */
  void **halo_at = malloc((size_t)n * sizeof *halo_at);
  void **above_at = malloc((size_t)n * sizeof *above_at);
  void **below_at = malloc((size_t)n * sizeof *below_at);
  check(LAPI_Address_init(h, halo, halo_at), "LAPI_Address_init");
  check(LAPI_Address_init(h, &above_cntr, above_at), "LAPI_Address_init");
  check(LAPI_Address_init(h, &below_cntr, below_at), "LAPI_Address_init");

  int expect = (me > 0) + (me < n - 1);
  for (int s = 0; s < STEPS; s++) {
    int p = s % 2;
    /* 1. my edge rows into the neighbours' halos of this parity */
    if (me > 0) {
      double (*theirs)[2][COLS] = halo_at[me - 1];
      check(LAPI_Put(h, (uint)(me - 1), sizeof block[1], theirs[p][1],
                     block[1], below_at[me - 1], &sent_cntr, NULL),
            "LAPI_Put");
    }
    if (me < n - 1) {
      double (*theirs)[2][COLS] = halo_at[me + 1];
      check(LAPI_Put(h, (uint)(me + 1), sizeof block[ROWS], theirs[p][0],
                     block[ROWS], above_at[me + 1], &sent_cntr, NULL),
            "LAPI_Put");
    }
    /* 2. my own halos of this step; and my edge rows may change again only
     * once the puts have read them (org_cntr) */
    if (me > 0)
      check(LAPI_Waitcntr(h, &above_cntr, 1, NULL), "LAPI_Waitcntr");
    if (me < n - 1)
      check(LAPI_Waitcntr(h, &below_cntr, 1, NULL), "LAPI_Waitcntr");
    check(LAPI_Waitcntr(h, &sent_cntr, expect, NULL), "LAPI_Waitcntr");
    memcpy(block[0], halo[p][0], sizeof block[0]);
    memcpy(block[ROWS + 1], halo[p][1], sizeof block[0]);
    /* 3. one Jacobi step */
    relax();
  }
  /* Hand the block to the MPE through main memory (a DMA from LDM). */
  int local = me - first_task;
  CRTS_dma_put(result + (size_t)local * ROWS * COLS, &block[1][0],
               (int)sizeof next_block);
  check(LAPI_Gfence(h), "LAPI_Gfence");
  check(LAPI_Term(h), "LAPI_Term");
  free(halo_at);
  free(above_at);
  free(below_at);
}

/* The same grid, computed serially by the MPE. */
static double *serial(int tasks)
{
  int rows = tasks * ROWS;
  double *u = calloc((size_t)(rows + 2) * COLS, sizeof *u);
  double *v = calloc((size_t)rows * COLS, sizeof *v);
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < COLS; j++)
      u[(size_t)(i + 1) * COLS + j] = initial(i, j);
  for (int s = 0; s < STEPS; s++) {
    for (int i = 1; i <= rows; i++)
      for (int j = 0; j < COLS; j++) {
        const double *r = u + (size_t)i * COLS;
        double left = j > 0 ? r[j - 1] : 0.0;
        double right = j < COLS - 1 ? r[j + 1] : 0.0;
        v[(size_t)(i - 1) * COLS + j] =
            0.25 * (r[j - COLS] + r[j + COLS] + left + right);
      }
    memcpy(u + COLS, v, (size_t)rows * COLS * sizeof *u);
  }
  free(v);
  return u;
}

int main(void)
{
  if (CRTS_init() != 0)
    return 1;
  result = calloc(64 * ROWS * COLS, sizeof *result);
  CRTS_athread_spawn((void (*)(void))task, NULL);
  CRTS_athread_join();
  if (failed || first_task < 0) {
    printf("halo: FAIL (a LAPI call failed)\n");
    return 1;
  }
  double *want = serial(all_tasks);
  double worst = 0;
  for (int i = 0; i < cg_tasks * ROWS; i++)
    for (int j = 0; j < COLS; j++) {
      double d = fabs(result[(size_t)i * COLS + j] -
                      want[(size_t)(first_task * ROWS + i + 1) * COLS + j]);
      if (d > worst)
        worst = d;
    }
  int ok = worst < 1e-12;
  printf("halo: tasks %d..%d of %d, %d x %d grid, %d steps, max error %g: "
         "%s\n", first_task, first_task + cg_tasks - 1, all_tasks,
         all_tasks * ROWS, COLS, STEPS, worst, ok ? "PASS" : "FAIL");
  free(want);
  free(result);
  return ok ? 0 : 1;
}
