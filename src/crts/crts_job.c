/*
 * crts_job.c - which job services libcrts uses (see crts_job.h).
 *
 * The registered table wins.  Without one, a process a launcher started
 * as one of several must not run alone: it would count tasks by itself and
 * repeat every other process's work.  Such a process loads liblapi once
 * (its constructor registers the bootstrap's services); if that fails the
 * job-wide calls report and fail instead of silently going wrong.
 */
#include "crts_job.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crts_cg.h"

/* The library that provides the services when nobody registered them. */
#define CRTS_JOB_LIB_DEFAULT "liblapi.so.0"

static _Atomic(const struct crts_job_services *) registered;

void crts_job_services_set(const struct crts_job_services *services)
{
  atomic_store_explicit(&registered, services, memory_order_release);
}

/* ---- the one-process job */

static _Atomic long alone_counter[CRTS_JOB_COUNTERS];

static int alone_join(int *rank, int *size)
{
  *rank = 0;
  *size = 1;
  return 0;
}

static long alone_fetch_add(int id, long add)
{
  if (id < 0 || id >= CRTS_JOB_COUNTERS)
    return -1;
  return atomic_fetch_add(&alone_counter[id], add);
}

static int alone_barrier(void)
{
  return 0;
}

const struct crts_job_services crts_job_alone = {
  .name = "this process alone",
  .join = alone_join,
  .fetch_add = alone_fetch_add,
  .barrier = alone_barrier,
};

/* ---- a launcher without registered services */

/* A positive integer setting, or 0 when unset or not a number. */
static long env_count(const char *name)
{
  const char *s = getenv(name);
  if (!s || !*s)
    return 0;
  char *end;
  long v = strtol(s, &end, 10);
  return *end == '\0' && v > 0 ? v : 0;
}

/*
 * How many processes the launcher that started us says the job has: 1 for
 * none, 0 when a launcher is present but gives no size.
 */
static long launcher_size(const char **who)
{
  static const char *const sizes[] = {
    "LAPIRUN_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
    "SLURM_STEP_NUM_TASKS", /* srun's, in a job step only */
  };
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    long n = env_count(sizes[i]);
    if (n > 0) {
      *who = sizes[i];
      return n;
    }
  }
  if (getenv("PMIX_RANK")) {
    *who = "PMIX_RANK";
    return 0;
  }
  *who = NULL;
  return 1;
}

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[PATH_MAX + 256];

static int try_open(const char *path)
{
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (h)
    return 0; /* kept open for the life of the process */
  snprintf(load_error, sizeof load_error, "%s", dlerror());
  return -1;
}

/* Load the provider: CRTS_JOB_LIB, else next to libcrts, else by name. */
static void load_provider(void)
{
  const char *lib = getenv("CRTS_JOB_LIB");
  if (lib && *lib) {
    try_open(lib);
    return;
  }
  Dl_info info;
  if (dladdr((void *)crts_job_services_set, &info) && info.dli_fname) {
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash) {
      char path[PATH_MAX];
      int n = snprintf(path, sizeof path, "%.*s/%s",
                       (int)(slash - info.dli_fname), info.dli_fname,
                       CRTS_JOB_LIB_DEFAULT);
      if (n > 0 && (size_t)n < sizeof path && try_open(path) == 0)
        return;
    }
  }
  try_open(CRTS_JOB_LIB_DEFAULT);
}

const struct crts_job_services *crts_job_services(const char *call)
{
  const struct crts_job_services *s =
      atomic_load_explicit(&registered, memory_order_acquire);
  if (s)
    return s;
  const char *who;
  long size = launcher_size(&who);
  if (size == 1)
    return &crts_job_alone;
  pthread_once(&load_once, load_provider);
  s = atomic_load_explicit(&registered, memory_order_acquire);
  if (s)
    return s;
  if (size == 0) {
    /* A launcher of unknown size: most likely one process; say so. */
    crts_report(call, "started by a launcher (%s is set) but no job services "
                "are registered, so this process counts tasks alone; link "
                "the program with liblapi (-llapi) to share them with the "
                "job (%s)", who, load_error);
    return &crts_job_alone;
  }
  crts_report(call, "this process is one of %ld of a job (%s) but no job "
              "services are registered and liblapi could not be loaded (%s): "
              "link the program with liblapi (-llapi; with the static "
              "liblapi.a add -Wl,-u,lapi_boot_crts_register), or set "
              "CRTS_JOB_LIB to the path of liblapi.so", size, who,
              load_error);
  return NULL;
}

int crts_job_size_ok(const char *call, const struct crts_job_services *svc,
                     int size)
{
  const char *who;
  long launched = launcher_size(&who);
  if (launched > size) {
    crts_report(call, "a launcher started this process as one of %ld (%s), "
                "but %s sees a job of %d, so the processes would not share "
                "their tasks: start the job with lapirun, or build openlapi "
                "with PMIx for PMIx launchers", launched, who, svc->name,
                size);
    return 0;
  }
  const char *key = getenv("CRTS_JOB_KEY");
  long node_cgs = key && *key ? env_count("CRTS_NODE_CGS") : 0;
  if (node_cgs <= size)
    return 1;
  crts_report(call, "CRTS_JOB_KEY=%s and CRTS_NODE_CGS=%ld make this host "
              "run %ld processes of one job, but %s sees a job of %d: "
              "start the job with lapirun so that the processes share one "
              "task counter", key, node_cgs, node_cgs, svc->name, size);
  return 0;
}
