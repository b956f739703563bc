/*
 * boot_single.c - a job of one core group: no launcher, nothing to ask.
 *
 * The collectives are copies, the counters live in this process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/boot/boot_impl.h"
#include "transport/boot/boot_proto.h"

static long single_counters[BOOT_COUNTERS];

static int single_allgather(struct lapi_boot *b, const void *mine, size_t len,
                            void *all)
{
  (void)b;
  if (len)
    memmove(all, mine, len);
  return 0;
}

static int single_barrier(struct lapi_boot *b)
{
  (void)b;
  return 0;
}

static long single_fetch_add(struct lapi_boot *b, int id, long add)
{
  (void)b;
  if (id < 0 || id >= BOOT_COUNTERS) {
    lapi_boot_say("singleton: counter id %d is not 0..%d", id,
                  BOOT_COUNTERS - 1);
    return -1;
  }
  return __atomic_fetch_add(&single_counters[id], add, __ATOMIC_SEQ_CST);
}

static void single_fini(struct lapi_boot *b)
{
  (void)b;
}

int lapi_boot_single_init(struct lapi_boot *b)
{
  b->kind = "singleton";
  b->rank = 0;
  b->size = 1;
  b->tasks_per_cg = 1;
  b->local_rank = 0;
  b->local_size = 1;
  /* The node scope's key if the user gave one, else unique to us. */
  const char *key = getenv("CRTS_JOB_KEY");
  if (key && *key)
    snprintf(b->job_key, sizeof b->job_key, "%s", key);
  else
    snprintf(b->job_key, sizeof b->job_key, "single-%ld", (long)getpid());
  b->allgather = single_allgather;
  b->barrier = single_barrier;
  b->fetch_add = single_fetch_add;
  b->fini = single_fini;
  b->impl = NULL;
  return 0;
}
