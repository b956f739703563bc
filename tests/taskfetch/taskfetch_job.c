/*
 * taskfetch_job.c - one core group of a CRTS_task_fetch job, started by
 * lapirun; tests/taskfetch/run.sh checks what all of them did.
 *
 *   taskfetch_job OUTDIR MID TASK_NUM BLOCK CGS [QUIT_ID]
 *
 * Runs two loops one after the other: TASK_NUM tasks in blocks of BLOCK
 * over the mid file MID, then TASK_NUM / 2 + 1 tasks in blocks of
 * BLOCK + 1 over MID.2.  Every task id this CG gets is written to
 * OUTDIR/ids.<rank> as "L1 <id>" or "L2 <id>".  With QUIT_ID, the CG that
 * gets that task of the first loop calls CRTS_task_quit.  Checks here:
 * the job has CGS processes (the services reached every CG), each loop
 * ends with -1, and right after a quit the quitter's next fetch is -1.
 * Exit status 0, or 1 after printing FAIL.
 */
#include <crts.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "crts_job.h"

static int fail(int rank, const char *what, long value)
{
  printf("FAIL: CG %d: %s (%ld)\n", rank, what, value);
  return 1;
}

static int run_loop(FILE *out, int rank, const char *tag, char *mid,
                    long task_num, long block, long quit_id)
{
  long i;
  while ((i = CRTS_task_fetch(mid, task_num, block)) >= 0) {
    if (i >= task_num)
      return fail(rank, "task id out of range", i);
    fprintf(out, "%s %ld\n", tag, i);
    usleep(200); /* some work, so the CGs take turns */
    if (i == quit_id) {
      if (CRTS_task_quit() != 0)
        return fail(rank, "CRTS_task_quit failed", i);
      long next = CRTS_task_fetch(mid, task_num, block);
      if (next != -1)
        return fail(rank, "the fetch after CRTS_task_quit returned", next);
      fprintf(out, "quit %ld\n", i);
      return 0;
    }
  }
  if (i != -1)
    return fail(rank, "the loop ended with", i);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc < 6 || argc > 7) {
    fprintf(stderr, "usage: %s OUTDIR MID TASK_NUM BLOCK CGS [QUIT_ID]\n",
            argv[0]);
    return 2;
  }
  const char *outdir = argv[1];
  char *mid = argv[2];
  long task_num = atol(argv[3]), block = atol(argv[4]);
  int cgs = atoi(argv[5]);
  long quit_id = argc > 6 ? atol(argv[6]) : -1;

  /* The services CRTS_task_fetch will use must span the whole job. */
  const struct crts_job_services *svc = crts_job_services("taskfetch_job");
  int rank = -1, size = 0;
  if (!svc || svc->join(&rank, &size) != 0)
    return fail(rank, "no job services", 0);
  if (size != cgs)
    return fail(rank, "the job services see a job of another size", size);

  char path[4096];
  snprintf(path, sizeof path, "%s/ids.%d", outdir, rank);
  FILE *out = fopen(path, "w");
  if (!out)
    return fail(rank, "cannot write the ids file", 0);
  char mid2[4096];
  snprintf(mid2, sizeof mid2, "%s.2", mid);
  int bad = run_loop(out, rank, "L1", mid, task_num, block, quit_id);
  if (!bad)
    bad = run_loop(out, rank, "L2", mid2, task_num / 2 + 1, block + 1, -1);
  if (fclose(out) != 0)
    bad = fail(rank, "cannot write the ids file", 0);
  if (!bad)
    printf("PASS: CG %d of %d\n", rank, size);
  return bad;
}
