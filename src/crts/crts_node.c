/*
 * crts_node.c - attach to the node state (see crts_node.h).
 *
 * Processes of one job start together, so creating the shared object must
 * be race-free: the first shm_open(O_CREAT | O_EXCL) wins and sizes the
 * object (ftruncate zero-fills it: every barrier and lock starts free),
 * writes the header and sets `ready`; the others wait, with a bounded
 * timeout, until the object has its size and `ready` is set.  `users`
 * counts attached processes; the last to leave swaps it to CLOSED and
 * unlinks the name, and a latecomer that finds a CLOSED object retries
 * until it can create a fresh one.
 */
#include "crts_node.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crts_cg.h"

#define CRTS_NODE_MAGIC 0x4e4f4445u /* "NODE" */
#define USERS_CLOSED 0x80000000u
/* How long a process waits for another one to finish creating the object. */
#define ATTACH_TIMEOUT_MS 10000

static pthread_once_t node_once = PTHREAD_ONCE_INIT;
static struct crts_node node;
static _Atomic int node_ok;
static char node_error[320];
static struct crts_node_state private_state;
static char shm_name[NAME_MAX + 1];
static _Atomic int detached;
static int cgn_marked; /* this process set its bit in cgn_seen */
/* Name of the call that triggered the attach, for its reports. */
static __thread const char *attach_call;

static void set_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void set_error(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(node_error, sizeof node_error, fmt, ap);
  va_end(ap);
}

static void sleep_1ms(void)
{
  struct timespec ts = {0, 1000 * 1000};
  nanosleep(&ts, NULL);
}

/* Wait until the object behind fd holds a whole state; 0 or -1. */
static int wait_size(int fd, int *waited_ms)
{
  struct stat sb;
  for (;;) {
    if (fstat(fd, &sb) != 0)
      return -1;
    if ((size_t)sb.st_size >= sizeof(struct crts_node_state))
      return 0;
    if (++*waited_ms > ATTACH_TIMEOUT_MS)
      return -1;
    sleep_1ms();
  }
}

static int wait_ready(struct crts_node_state *st, int *waited_ms)
{
  while (atomic_load_explicit(&st->ready, memory_order_acquire) !=
         CRTS_NODE_MAGIC) {
    if (++*waited_ms > ATTACH_TIMEOUT_MS)
      return -1;
    sleep_1ms();
  }
  return 0;
}

/* Count this process in, unless the last user is removing the object. */
static int join_users(struct crts_node_state *st)
{
  uint32_t u = atomic_load(&st->users);
  while (!(u & USERS_CLOSED))
    if (atomic_compare_exchange_weak(&st->users, &u, u + 1))
      return 1;
  return 0;
}

static struct crts_node_state *shared_attach(const char *key, uint32_t cgs)
{
  size_t len = sizeof(struct crts_node_state);
  int waited = 0;
  for (;;) {
    int fd = shm_open(shm_name, O_RDWR | O_CREAT | O_EXCL, 0600);
    int creator = fd >= 0;
    if (!creator && errno == EEXIST)
      fd = shm_open(shm_name, O_RDWR, 0);
    if (fd < 0) {
      if (errno == ENOENT && ++waited <= ATTACH_TIMEOUT_MS) {
        sleep_1ms(); /* removed between the two opens: create it anew */
        continue;
      }
      set_error("CRTS_JOB_KEY=%s: cannot open shared memory %s: %s", key,
                shm_name, strerror(errno));
      return NULL;
    }
    if (creator && ftruncate(fd, (off_t)len) != 0) {
      set_error("CRTS_JOB_KEY=%s: cannot size shared memory %s: %s", key,
                shm_name, strerror(errno));
      shm_unlink(shm_name);
      close(fd);
      return NULL;
    }
    if (wait_size(fd, &waited) != 0) {
      set_error("CRTS_JOB_KEY=%s: %s was never sized by its creator (a "
                "crashed job?); remove /dev/shm%s or use another key", key,
                shm_name, shm_name);
      close(fd);
      return NULL;
    }
    struct crts_node_state *st =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int map_errno = errno;
    close(fd);
    if (st == MAP_FAILED) {
      set_error("CRTS_JOB_KEY=%s: cannot map %s: %s", key, shm_name,
                strerror(map_errno));
      if (creator)
        shm_unlink(shm_name);
      return NULL;
    }
    if (creator) {
      st->layout = (uint32_t)len;
      st->cgs = cgs;
      atomic_store_explicit(&st->ready, CRTS_NODE_MAGIC, memory_order_release);
    } else if (wait_ready(st, &waited) != 0) {
      set_error("CRTS_JOB_KEY=%s: %s was never initialised by its creator (a "
                "crashed job?); remove /dev/shm%s or use another key", key,
                shm_name, shm_name);
      munmap(st, len);
      return NULL;
    }
    if (st->layout != len || st->cgs != cgs) {
      set_error("CRTS_JOB_KEY=%s: %s belongs to a job with CRTS_NODE_CGS=%u "
                "(this process: %u)%s; give every process of the job the same "
                "settings, or use another key", key, shm_name, st->cgs, cgs,
                st->layout != len ? " built from another libcrts" : "");
      munmap(st, len);
      return NULL;
    }
    if (join_users(st))
      return st;
    /* The last user is removing this object: wait for a fresh one. */
    munmap(st, len);
    if (++waited > ATTACH_TIMEOUT_MS) {
      set_error("CRTS_JOB_KEY=%s: %s stays closed; remove /dev/shm%s", key,
                shm_name, shm_name);
      return NULL;
    }
    sleep_1ms();
  }
}

static void node_init(void)
{
  const char *call = attach_call ? attach_call : "CRTS node";
  long cgs = crts_env_size("CRTS_NODE_CGS", 1);
  if (cgs < 1 || cgs > CRTS_NODE_MAX_CGS) {
    set_error("CRTS_NODE_CGS=%ld is outside 1..%d: set it to the number of "
              "core groups (processes) of this job on this host", cgs,
              CRTS_NODE_MAX_CGS);
    return;
  }
  const char *key = getenv("CRTS_JOB_KEY");
  if (!key || !*key) {
    if (cgs > 1)
      crts_report(call, "CRTS_NODE_CGS=%ld but CRTS_JOB_KEY is not set: this "
                  "process is a node of one core group; set CRTS_JOB_KEY "
                  "(the same name in every process of the job)", cgs);
    node.st = &private_state;
    node.cgs = 1;
    node.shared = 0;
    atomic_store(&node_ok, 1);
    return;
  }
  if (strchr(key, '/') || strlen(key) > NAME_MAX - 6) {
    set_error("CRTS_JOB_KEY=%s: the key must have no '/' and at most %d "
              "characters", key, NAME_MAX - 6);
    return;
  }
  snprintf(shm_name, sizeof shm_name, "/crts-%s", key);
  struct crts_node_state *st = shared_attach(key, (uint32_t)cgs);
  if (!st)
    return;
  int cgn = crts_cg.cgn;
  if (cgn < 0 || cgn >= cgs)
    crts_report(call, "CRTS_CGN=%d is outside 0..%ld (CRTS_NODE_CGS=%ld): "
                "number the core groups of the job 0..%ld", cgn, cgs - 1, cgs,
                cgs - 1);
  else if (atomic_fetch_or(&st->cgn_seen, (uint64_t)1 << cgn) &
           ((uint64_t)1 << cgn))
    crts_report(call, "another process of job %s also has CRTS_CGN=%d: give "
                "each core group its own number", key, cgn);
  else
    cgn_marked = 1;
  node.st = st;
  node.cgs = (uint32_t)cgs;
  node.shared = 1;
  atomic_store(&node_ok, 1);
  atexit(crts_node_detach);
}

const struct crts_node *crts_node_get(const char *call)
{
  if (!crts_check_init(call))
    return NULL;
  attach_call = call;
  pthread_once(&node_once, node_init);
  if (!atomic_load(&node_ok)) {
    crts_report(call, "%s", node_error);
    return NULL;
  }
  return &node;
}

uint64_t crts_node_whoami(void)
{
  uint64_t who = crts_self ? (uint64_t)crts_self->tid : 0xff;
  return ((uint64_t)getpid() << 8) | who;
}

void crts_node_detach(void)
{
  if (!atomic_load(&node_ok) || !node.shared ||
      atomic_exchange(&detached, 1))
    return;
  struct crts_node_state *st = node.st;
  if (cgn_marked)
    atomic_fetch_and(&st->cgn_seen, ~((uint64_t)1 << crts_cg.cgn));
  uint32_t u = atomic_load(&st->users);
  for (;;) {
    if (u == 1) {
      if (atomic_compare_exchange_weak(&st->users, &u, USERS_CLOSED)) {
        shm_unlink(shm_name);
        return;
      }
    } else if (atomic_compare_exchange_weak(&st->users, &u, u - 1)) {
      return;
    }
  }
}
