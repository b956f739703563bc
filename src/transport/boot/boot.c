/*
 * boot.c - choose the bootstrap source and keep the process-wide one.
 *
 * lapi_boot_get() joins the job once per process, whichever thread asks
 * first (pthread_once), with the timeout of LAPI_TIMEOUT; the job is left
 * (BYE to lapirun) at exit, so a CG that ends normally is never taken
 * for a dead one.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include "transport/boot/boot_impl.h"

void lapi_boot_say(const char *fmt, ...)
{
  char line[768];
  int off = snprintf(line, sizeof line, "lapi boot: ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + off, sizeof line - (size_t)off - 1, fmt, ap);
  va_end(ap);
  size_t n = strlen(line);
  line[n++] = '\n';
  /* One write: lines of several CGs never interleave mid-line. */
  ssize_t w = write(STDERR_FILENO, line, n);
  (void)w;
}

/* A launcher that started this process as one of several, seen in its
 * environment (srun sets SLURM_STEP_NUM_TASKS only in a job step, not in
 * a batch script); 0 when none says so. */
static long launched_as_one_of(const char **who)
{
  static const char *const sizes[] = {
    "SLURM_STEP_NUM_TASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
  };
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    const char *s = getenv(sizes[i]);
    long n = s ? strtol(s, NULL, 10) : 0;
    if (n > 1) {
      *who = sizes[i];
      return n;
    }
  }
  return 0;
}

int lapi_boot_init(struct lapi_boot *b, int timeout_s)
{
  memset(b, 0, sizeof *b);
  if (timeout_s < 1)
    timeout_s = 1;
  if (getenv("PMIX_RANK") != NULL) {
#ifdef OPENLAPI_HAVE_PMIX
    return lapi_boot_pmix_init(b, timeout_s);
#else
    if (getenv("LAPIRUN_ADDR") == NULL)
      lapi_boot_say("pmix: this process was started by a PMIx launcher "
                    "but openlapi was built without PMIx (install "
                    "libpmix-dev and rebuild, or start the job with "
                    "lapirun): running as a job of one CG");
#endif
  }
  if (getenv("LAPIRUN_ADDR") != NULL)
    return lapi_boot_lapirun_init(b, timeout_s);
  /* Several processes that each took themselves for the whole job would
   * run as many jobs of one CG, every one task 0: refuse instead. */
  const char *who = NULL;
  long n = launched_as_one_of(&who);
  if (n > 1 && getenv("PMIX_RANK") == NULL) {
    lapi_boot_say("%s=%ld: a launcher started this process as one of %ld, "
                  "but not through PMIx, so it cannot reach the others: "
                  "start the job with srun --mpi=pmix (Slurm), Open MPI's "
                  "mpirun, or lapirun", who, n, n);
    return -1;
  }
  return lapi_boot_single_init(b);
}

static struct lapi_boot the_boot;
static struct lapi_boot *the_boot_ok;
static int the_timeout;
static pid_t the_pid;
static pthread_once_t boot_once = PTHREAD_ONCE_INIT;
static pthread_once_t timeout_once = PTHREAD_ONCE_INIT;

static void timeout_read(void)
{
  const char *s = getenv("LAPI_TIMEOUT");
  the_timeout = LAPI_BOOT_TIMEOUT_DEFAULT;
  if (s == NULL || *s == '\0')
    return;
  char *end;
  long v = strtol(s, &end, 10);
  if (*end != '\0' || v < 1 || v > LAPI_BOOT_TIMEOUT_MAX) {
    lapi_boot_say("LAPI_TIMEOUT=\"%s\" is not a number of seconds in "
                  "1..%d: using %d", s, LAPI_BOOT_TIMEOUT_MAX,
                  LAPI_BOOT_TIMEOUT_DEFAULT);
    return;
  }
  the_timeout = (int)v;
}

int lapi_boot_timeout(void)
{
  pthread_once(&timeout_once, timeout_read);
  return the_timeout;
}

/* Leave the job at exit, but not from a forked child of the CG. */
static void boot_atexit(void)
{
  if (the_boot_ok && getpid() == the_pid)
    the_boot_ok->fini(the_boot_ok);
}

static void boot_join(void)
{
  if (lapi_boot_init(&the_boot, lapi_boot_timeout()) != 0)
    return;
  the_pid = getpid();
  the_boot_ok = &the_boot;
  atexit(boot_atexit);
}

struct lapi_boot *lapi_boot_get(void)
{
  pthread_once(&boot_once, boot_join);
  return the_boot_ok;
}
