/*
 * mpe_task.c - CRTS_task_fetch and CRTS_task_quit: dynamic task
 * distribution over every core group (process) of a job.
 *
 * A loop is the run of calls with one (file, task_num, block) until a
 * negative return.  Its first call is collective and sets it up:
 *
 *   barrier A    every process has left the previous loop, so the task
 *                counter no longer moves; read its value as this loop's base
 *   rank 0       creates or checks the mid file and its sidecar
 *   barrier B    the file exists; every process reads which blocks are
 *                finished (all read the same bytes: nobody marks yet)
 *   barrier C    from here on blocks are fetched and marked
 *
 * The job-wide counter then counts fetches: the k-th fetch after the base
 * gets the k-th unfinished block of that snapshot, so a restarted job
 * spends one fetch per unfinished block and none on finished ones.  Each
 * process keeps a cursor (k, block) that only moves forward, since its own
 * fetches return increasing values.
 *
 * A block's tasks are handed out locally; the call after the last one
 * marks the block '1' and fetches the next block.  CRTS_task_quit adds
 * CRTS_JOB_TASK_QUIT_MARK to the counter, so every later fetch of any
 * process sees a value past the mark and ends its loop; the quitting
 * process ends its own at its next call.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crts_cg.h"
#include "crts_job.h"
#include "crts_mid.h"

/* Return codes of CRTS_task_fetch (documented in crts.h). */
#define TASK_DONE -1       /* every task handed out, or the job quit */
#define TASK_EBADARG -2    /* bad arguments or a call in the wrong place */
#define TASK_EFILE -3      /* the mid file cannot be used */
#define TASK_EJOB -4       /* the other processes cannot be reached */

struct task_loop {
  int active;               /* a loop is running in this process */
  int quit;                 /* this process called CRTS_task_quit */
  int mark_failed;          /* a mark failed once (reported) */
  char *file;               /* the loop's mid file (kept after the end) */
  long task_num, block, nblocks;
  const struct crts_job_services *svc;
  int fd;
  uint64_t *done;           /* finished blocks at the start */
  long unfinished;          /* unfinished blocks at the start */
  long base;                /* counter value at the start */
  long cur_k, cur_blk;      /* cur_blk is the cur_k-th unfinished block */
  long block_now;           /* block being handed out, or -1 */
  long next, end;           /* its tasks not yet handed out: [next, end) */
};

static pthread_mutex_t task_lock = PTHREAD_MUTEX_INITIALIZER;
static struct task_loop loop = {.fd = -1, .block_now = -1};

/* End the loop in this process; the file name stays for CRTS_task_quit. */
static void loop_end(void)
{
  if (loop.fd >= 0)
    close(loop.fd);
  loop.fd = -1;
  free(loop.done);
  loop.done = NULL;
  loop.active = 0;
  loop.quit = 0;
  loop.block_now = -1;
  loop.next = loop.end = 0;
}

/* The k-th (from 0) unfinished block of the snapshot; k < unfinished. */
static long kth_unfinished(long k)
{
  long blk = loop.cur_blk, have = loop.cur_k;
  for (;;) {
    uint64_t open = ~loop.done[blk / 64] >> (blk % 64);
    long n = __builtin_popcountll(open);
    if (have + n <= k) {          /* not in this word: skip the rest of it */
      have += n;
      blk = (blk / 64 + 1) * 64;
      continue;
    }
    for (;; open >>= 1, blk++)
      if (open & 1) {
        if (have == k)
          break;
        have++;
      }
    loop.cur_blk = blk;
    loop.cur_k = k;
    return blk;
  }
}

static int job_fail(const char *call, const struct crts_job_services *svc,
                    const char *what)
{
  crts_report(call, "%s failed (%s): the loop ends in this process; "
              "check that every process of the job calls CRTS_task_fetch "
              "and is still alive", what, svc->name);
  return TASK_EJOB;
}

/* The collective start of a loop (see the file comment); 0 or < 0. */
static int loop_start(const char *call, const char *file, long task_num,
                      long block)
{
  const struct crts_job_services *svc = crts_job_services(call);
  if (!svc)
    return TASK_EJOB;
  int rank, size;
  if (svc->join(&rank, &size) != 0) {
    crts_report(call, "cannot join the job through %s", svc->name);
    return TASK_EJOB;
  }
  if (!crts_job_size_ok(call, svc, size))
    return TASK_EJOB;
  long nblocks = crts_mid_blocks(task_num, block);
  if (svc->barrier() != 0)
    return job_fail(call, svc, "the barrier at the start of the loop");
  long base = svc->fetch_add(CRTS_JOB_COUNTER_TASK, 0);
  if (base < 0)
    return job_fail(call, svc, "reading the task counter");

  char err[512] = "";
  if (rank == 0) {
    int created = crts_mid_open(file, task_num, block, 1, err, sizeof err);
    if (created >= 0)
      close(created);
  }
  if (svc->barrier() != 0)
    return job_fail(call, svc, "the barrier after creating the mid file");
  long unfinished = 0;
  uint64_t *done = NULL;
  int fd = -1;
  if (!*err) {
    fd = crts_mid_open(file, task_num, block, 0, err, sizeof err);
    if (fd >= 0) {
      done = crts_mid_snapshot(fd, nblocks, &unfinished, err, sizeof err);
      if (!done) {
        close(fd);
        fd = -1;
      }
    }
  }
  /* Every process meets here, so a failure above cannot stall the others. */
  char *name = NULL;
  int rc;
  if (svc->barrier() != 0) {
    rc = job_fail(call, svc, "the barrier after reading the mid file");
    goto fail;
  }
  if (!done) {
    crts_report(call, "%s", err);
    rc = TASK_EFILE;
    goto fail;
  }
  if (!(name = strdup(file))) {
    crts_report(call, "out of memory");
    rc = TASK_EFILE;
    goto fail;
  }
  free(loop.file);
  loop.file = name;
  loop.task_num = task_num;
  loop.block = block;
  loop.nblocks = nblocks;
  loop.svc = svc;
  loop.active = 1;
  loop.quit = 0;
  loop.mark_failed = 0;
  loop.fd = fd;
  loop.done = done;
  loop.unfinished = unfinished;
  loop.base = base;
  loop.cur_k = 0;
  loop.cur_blk = 0;
  loop.block_now = -1;
  loop.next = loop.end = 0;
  return 0;

fail:
  free(done);
  if (fd >= 0)
    close(fd);
  return rc;
}

/* Record the block just finished; a failure costs only restart work. */
static void mark_block(const char *call)
{
  if (loop.block_now < 0)
    return;
  if (crts_mid_mark(loop.fd, loop.block_now) != 0 && !loop.mark_failed) {
    loop.mark_failed = 1;
    crts_report(call, "cannot record block %ld in mid file %s (%s): the "
                "loop goes on, but a restart would run such blocks again",
                loop.block_now, loop.file, strerror(errno));
  }
  loop.block_now = -1;
}

/* Fetch the next block for this process; a task id or a return code. */
static long fetch_block(const char *call)
{
  mark_block(call);
  long v = loop.svc->fetch_add(CRTS_JOB_COUNTER_TASK, 1);
  if (v < 0) {
    int rc = job_fail(call, loop.svc, "fetching a block");
    loop_end();
    return rc;
  }
  long k = v - loop.base;
  if (k >= CRTS_JOB_TASK_QUIT_MARK || k >= loop.unfinished) {
    loop_end();
    return TASK_DONE;
  }
  long b = kth_unfinished(k);
  loop.block_now = b;
  loop.next = b * loop.block;
  loop.end = loop.next + crts_mid_block_tasks(b, loop.task_num, loop.block);
  return loop.next++;
}

long CRTS_task_fetch(char *mid_file_name, long task_num, long block_size)
{
  const char *call = "CRTS_task_fetch";
  if (crts_self) {
    crts_report(call, "must be called on the MPE, not on a CPE");
    return TASK_EBADARG;
  }
  if (!mid_file_name || !*mid_file_name) {
    crts_report(call, "the mid (checkpoint) file name is %s: give the file "
                "that records finished blocks", mid_file_name ? "empty" :
                "NULL");
    return TASK_EBADARG;
  }
  if (task_num <= 0 || block_size <= 0) {
    crts_report(call, "task_num %ld and block_size %ld must both be "
                "positive", task_num, block_size);
    return TASK_EBADARG;
  }
  if (crts_mid_blocks(task_num, block_size) >= CRTS_JOB_TASK_QUIT_MARK / 2) {
    crts_report(call, "%ld tasks in blocks of %ld make too many blocks: use "
                "a larger block_size", task_num, block_size);
    return TASK_EBADARG;
  }
  pthread_mutex_lock(&task_lock);
  long rc;
  if (loop.active &&
      (strcmp(loop.file, mid_file_name) != 0 || loop.task_num != task_num ||
       loop.block != block_size)) {
    crts_report(call, "a loop over %s (%ld tasks in blocks of %ld) is still "
                "running: call until it returns a negative value, or end it "
                "with CRTS_task_quit(), before starting another", loop.file,
                loop.task_num, loop.block);
    rc = TASK_EBADARG;
  } else if (!loop.active &&
             (rc = loop_start(call, mid_file_name, task_num, block_size))) {
    /* rc set: the loop could not start */
  } else if (loop.quit) {
    loop_end();
    rc = TASK_DONE;
  } else if (loop.next < loop.end) {
    rc = loop.next++;
  } else {
    rc = fetch_block(call);
  }
  pthread_mutex_unlock(&task_lock);
  return rc;
}

int CRTS_task_quit(void)
{
  const char *call = "CRTS_task_quit";
  if (crts_self) {
    crts_report(call, "must be called on the MPE, not on a CPE");
    return 1;
  }
  pthread_mutex_lock(&task_lock);
  int rc = 0;
  if (!loop.file) {
    crts_report(call, "no CRTS_task_fetch loop has started in this process: "
                "nothing to quit");
    rc = 1;
    goto out;
  }
  int fd = loop.fd;
  if (fd < 0)
    fd = open(loop.file, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || crts_mid_mark_all(fd, loop.nblocks) != 0) {
    crts_report(call, "cannot mark every block of mid file %s finished (%s); "
                "the other processes are still told to stop", loop.file,
                strerror(errno));
    rc = 1;
  }
  if (fd >= 0 && fd != loop.fd)
    close(fd);
  long was = loop.svc->fetch_add(CRTS_JOB_COUNTER_TASK,
                                 CRTS_JOB_TASK_QUIT_MARK);
  if (was < 0) {
    crts_report(call, "cannot tell the other processes to stop (%s failed)",
                loop.svc->name);
    rc = 1;
  }
  if (loop.active)
    loop.quit = 1;
out:
  pthread_mutex_unlock(&task_lock);
  return rc;
}
