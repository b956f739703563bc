/*
 * boot_lapirun.c - the bootstrap of a CG started by tools/lapirun.
 *
 * lapirun gives each CG its place in the environment (LAPIRUN_ADDR,
 * LAPIRUN_RANK, LAPIRUN_SIZE, LAPIRUN_TASKS_PER_CG, LAPIRUN_LOCAL_RANK,
 * LAPIRUN_LOCAL_SIZE, LAPIRUN_JOB_KEY; docs/LAPIRUN.md) and serves the
 * exchange at LAPIRUN_ADDR, which the CG joins as a member
 * (boot_member.c: collectives bounded by the timeout).  A CG that dies is
 * reported by the server at once (its connection closes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/boot/boot_impl.h"

struct lapirun_boot {
  struct boot_member *member;
  struct boot_counters cnt;
};

/* An integer setting of lapirun: 0, or -1 after a message. */
static int env_int(const char *name, int dflt, int lo, int hi, int *out)
{
  const char *s = getenv(name);
  if (s == NULL || *s == '\0') {
    if (dflt < lo) {
      lapi_boot_say("lapirun: %s is not set, but LAPIRUN_ADDR is: start "
                    "the program with lapirun, or unset LAPIRUN_ADDR for a "
                    "job of one CG", name);
      return -1;
    }
    *out = dflt;
    return 0;
  }
  char *end;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < lo || v > hi) {
    lapi_boot_say("lapirun: %s=\"%s\" is not an integer in %d..%d", name, s,
                  lo, hi);
    return -1;
  }
  *out = (int)v;
  return 0;
}

static int lr_gather(struct lapi_boot *b, const void *mine, size_t len,
                     void *all)
{
  struct lapirun_boot *l = b->impl;
  return boot_member_gather(l->member, mine, len, all);
}

static int lr_barrier(struct lapi_boot *b)
{
  return lr_gather(b, NULL, 0, NULL);
}

static long lr_fetch_add(struct lapi_boot *b, int id, long add)
{
  struct lapirun_boot *l = b->impl;
  return boot_counters_fetch_add(&l->cnt, id, add);
}

static void lr_set_active(struct lapi_boot *b, int on)
{
  struct lapirun_boot *l = b->impl;
  boot_member_set_active(l->member, on);
}

static int lr_leave_barrier(struct lapi_boot *b)
{
  struct lapirun_boot *l = b->impl;
  return boot_member_leave_barrier(l->member);
}

static int lr_gone(struct lapi_boot *b, int *ranks, int max)
{
  struct lapirun_boot *l = b->impl;
  return boot_member_gone(l->member, ranks, max);
}

static void lr_fini(struct lapi_boot *b)
{
  struct lapirun_boot *l = b->impl;
  boot_member_leave(l->member);
  boot_counters_close(&l->cnt);
}

int lapi_boot_lapirun_init(struct lapi_boot *b, int timeout_s)
{
  const char *addr = getenv("LAPIRUN_ADDR");
  int rank, size, tpc, lrank, lsize;
  if (env_int("LAPIRUN_SIZE", -1, 1, BOOT_MAX_SIZE, &size) < 0 ||
      env_int("LAPIRUN_RANK", -1, 0, size - 1, &rank) < 0 ||
      env_int("LAPIRUN_TASKS_PER_CG", 1, 1, 64, &tpc) < 0 ||
      env_int("LAPIRUN_LOCAL_SIZE", size, 1, size, &lsize) < 0 ||
      env_int("LAPIRUN_LOCAL_RANK", rank < lsize ? rank : 0, 0, lsize - 1,
              &lrank) < 0)
    return -1;
  const char *key = getenv("LAPIRUN_JOB_KEY");
  if (key == NULL || *key == '\0' || strlen(key) > BOOT_KEY_MAX ||
      strchr(key, '/')) {
    lapi_boot_say("lapirun: LAPIRUN_JOB_KEY must be set to the job's name "
                  "(1..%d characters, no '/'): start the program with "
                  "lapirun", BOOT_KEY_MAX);
    return -1;
  }
  struct lapirun_boot *l = calloc(1, sizeof *l);
  if (l == NULL) {
    lapi_boot_say("lapirun: out of memory");
    return -1;
  }
  l->member = boot_member_join("lapirun", "lapirun", addr, rank, size, key,
                               timeout_s);
  if (l->member == NULL) {
    free(l);
    return -1;
  }
  boot_counters_setup(&l->cnt, "lapirun", addr, key, timeout_s);

  b->kind = "lapirun";
  b->rank = rank;
  b->size = size;
  b->tasks_per_cg = tpc;
  b->local_rank = lrank;
  b->local_size = lsize;
  snprintf(b->job_key, sizeof b->job_key, "%s", key);
  b->allgather = lr_gather;
  b->barrier = lr_barrier;
  b->fetch_add = lr_fetch_add;
  b->set_active = lr_set_active;
  b->leave_barrier = lr_leave_barrier;
  b->gone = lr_gone;
  b->fini = lr_fini;
  b->impl = l;
  return 0;
}
