/*
 * mpe_athread.c - the CPE thread pool and the athread create/spawn API.
 *
 * Pool threads are started once by CRTS_init and reused by every create and
 * spawn.  An idle CPE sleeps on the shared doorbell with its own futex
 * bitset bit, so a spawn wakes the whole array with one system call and a
 * create wakes (at most) the CPE it names.
 */

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crts_cg.h"

static _Atomic uint32_t pool_ready;

static uint32_t cpe_bit(int tid) { return 1u << (tid & 31); }

static void doorbell_ring(uint32_t bits)
{
  atomic_fetch_add(&crts_cg.doorbell, 1);
  syscall(SYS_futex, (uint32_t *)&crts_cg.doorbell, FUTEX_WAKE_BITSET_PRIVATE,
          INT_MAX, NULL, NULL, bits);
}

static void doorbell_sleep(int tid, uint32_t seen)
{
  syscall(SYS_futex, (uint32_t *)&crts_cg.doorbell, FUTEX_WAIT_BITSET_PRIVATE,
          seen, NULL, NULL, cpe_bit(tid));
}

/* Measure the TLS at the top of the slice and fence the heap off the stack. */
static int slice_layout(struct crts_cpe *cpe)
{
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char *top = cpe->ldm + CRTS_MAX_LDM_SIZE;
  char *frame = __builtin_frame_address(0);
  /* Everything above this frame is glibc's TCB, static TLS and start frame. */
  cpe->static_ldm = (size_t)(top - frame);
  size_t reserved = cpe->static_ldm + crts_cg.stack_size + page;
  if (reserved + page > CRTS_MAX_LDM_SIZE) {
    if (cpe->tid == 0) /* every CPE measures the same; say it once */
      crts_report("CRTS_init", "static LDM data (%zu bytes) plus the stack "
                  "reserve CRTS_LDM_STACK_SIZE=%zu leave no LDM heap",
                  cpe->static_ldm, crts_cg.stack_size);
    return -1;
  }
  char *guard = top - reserved;
  guard = (char *)((uintptr_t)guard & ~(uintptr_t)(page - 1));
  if (mprotect(guard, page, PROT_NONE) != 0)
    return -1;
  cpe->heap_limit = guard;
  cpe->stack_lo = guard + page;
  crts_ldm_heap_reset(cpe);
  return 0;
}

static void run_work(struct crts_cpe *cpe)
{
  if (!cpe->in_group)
    crts_ldm_heap_reset(cpe);
  cpe->fn(cpe->arg);
  cpe->fn = NULL;
  if (cpe->in_group) {
    if (cpe->flush_on_exit)
      crts_scache_exit_flush();
    atomic_store_explicit(&cpe->state, CRTS_CPE_IDLE, memory_order_release);
    if (atomic_fetch_sub(&crts_cg.group_running, 1) == 1)
      crts_futex_wake(&crts_cg.group_running, 1, 0);
  } else {
    atomic_store_explicit(&cpe->state, CRTS_CPE_DONE, memory_order_release);
    crts_futex_wake(&cpe->state, INT_MAX, 0);
  }
}

static void *cpe_main(void *p)
{
  struct crts_cpe *cpe = p;
  crts_ids_set(cpe);
  int ok = slice_layout(cpe) == 0;
  atomic_store(&cpe->quit, !ok);
  atomic_fetch_add(&pool_ready, 1);
  crts_futex_wake(&pool_ready, 1, 0);
  if (!ok)
    return NULL;
  for (;;) {
    uint32_t bell = atomic_load(&crts_cg.doorbell);
    int limit = crts_spin_limit();
    for (int i = 0; i <= limit; i++) {
      uint32_t st = atomic_load_explicit(&cpe->state, memory_order_acquire);
      if (st == CRTS_CPE_RUNNING && cpe->fn)
        break;
      if (atomic_load(&cpe->quit))
        return NULL;
      if (i == limit) {
        doorbell_sleep(cpe->tid, bell);
        bell = atomic_load(&crts_cg.doorbell);
        i = -1; /* sleep again unless work arrived */
        continue;
      }
      crts_cpu_relax();
    }
    run_work(cpe);
  }
}

int crts_pool_start(void)
{
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int started = 0;
  for (int i = 0; i < crts_cg.ncpes; i++) {
    struct crts_cpe *cpe = &crts_cg.cpe[i];
    cpe->tid = i;
    pthread_attr_setstack(&attr, cpe->ldm, CRTS_MAX_LDM_SIZE);
    int rc = pthread_create(&cpe->thread, &attr, cpe_main, cpe);
    if (rc != 0) {
      crts_report("CRTS_init", "cannot start CPE %d: %s%s", i, strerror(rc),
                  rc == EINVAL ? " (static __thread_local data larger than "
                                 "the 256 KiB LDM?)" : "");
      break;
    }
    cpe->thread_started = 1;
    started++;
  }
  pthread_attr_destroy(&attr);
  uint32_t seen;
  while ((seen = atomic_load(&pool_ready)) < (uint32_t)started)
    crts_futex_wait(&pool_ready, seen, 0);
  int failed = started < crts_cg.ncpes;
  for (int i = 0; i < started; i++)
    failed |= atomic_load(&crts_cg.cpe[i].quit);
  if (failed) {
    for (int i = 0; i < started; i++)
      atomic_store(&crts_cg.cpe[i].quit, 1);
    doorbell_ring(FUTEX_BITSET_MATCH_ANY);
    for (int i = 0; i < started; i++)
      pthread_join(crts_cg.cpe[i].thread, NULL);
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------- single CPEs */

static int check_id(const char *call, int id)
{
  if (id < 0 || id >= crts_cg.ncpes) {
    crts_report(call, "CPE id %d is outside 0..%d", id, crts_cg.ncpes - 1);
    return 0;
  }
  return 1;
}

int CRTS_athread_create(int id, void (*fp)(void), void *arg)
{
  const char *call = "CRTS_athread_create";
  if (!crts_check_init(call) || !check_id(call, id))
    return -1;
  if (!fp) {
    crts_report(call, "fp is NULL");
    return -1;
  }
  struct crts_cpe *cpe = &crts_cg.cpe[id];
  pthread_mutex_lock(&crts_cg.mpe_lock);
  uint32_t st = atomic_load(&cpe->state);
  int rc = 0;
  if (st == CRTS_CPE_RUNNING)
    rc = 1;
  else if (st == CRTS_CPE_DONE)
    rc = 2;
  else if (st == CRTS_CPE_ENDED)
    rc = -1;
  if (rc == 0) {
    cpe->fn = (void (*)(void *))fp;
    cpe->arg = arg;
    cpe->in_group = 0;
    cpe->flush_on_exit = 0;
    atomic_store_explicit(&cpe->state, CRTS_CPE_RUNNING, memory_order_release);
    doorbell_ring(cpe_bit(id));
  } else {
    crts_report(call, "CPE %d %s", id,
                rc == 1 ? "is running another thread"
                : rc == 2 ? "finished a thread that was not waited for "
                            "(call CRTS_athread_wait)"
                          : "was shut down by athread_end/halt");
  }
  pthread_mutex_unlock(&crts_cg.mpe_lock);
  return rc;
}

int athread_create(int id, void (*fp)(void), void *arg)
{
  return CRTS_athread_create(id, fp, arg);
}

int CRTS_athread_wait(int id)
{
  const char *call = "CRTS_athread_wait";
  if (!crts_check_init(call) || !check_id(call, id))
    return -1;
  struct crts_cpe *cpe = &crts_cg.cpe[id];
  if (cpe->in_group && atomic_load(&cpe->state) == CRTS_CPE_RUNNING) {
    crts_report(call, "CPE %d runs a spawned group: use CRTS_athread_join", id);
    return -1;
  }
  uint32_t st;
  while ((st = atomic_load(&cpe->state)) == CRTS_CPE_RUNNING)
    crts_wait_change(&cpe->state, st, 0);
  if (st != CRTS_CPE_DONE) {
    crts_report(call, "CPE %d has no finished thread to wait for", id);
    return -1;
  }
  atomic_store(&cpe->state, CRTS_CPE_IDLE);
  return 0;
}

int athread_wait(int id) { return CRTS_athread_wait(id); }

/* Stop CPE id's pool thread for good; the caller holds mpe_lock. */
static void end_cpe(struct crts_cpe *cpe)
{
  atomic_store(&cpe->state, CRTS_CPE_ENDED);
  atomic_store(&cpe->quit, 1);
  doorbell_ring(cpe_bit(cpe->tid));
  if (cpe->thread_started) {
    pthread_join(cpe->thread, NULL);
    cpe->thread_started = 0;
  }
}

int CRTS_athread_end(int id)
{
  const char *call = "CRTS_athread_end";
  if (!crts_check_init(call) || !check_id(call, id))
    return -1;
  struct crts_cpe *cpe = &crts_cg.cpe[id];
  pthread_mutex_lock(&crts_cg.mpe_lock);
  uint32_t st = atomic_load(&cpe->state);
  int rc = 0;
  if (st == CRTS_CPE_RUNNING || st == CRTS_CPE_DONE) {
    crts_report(call, "CPE %d still %s", id,
                st == CRTS_CPE_RUNNING ? "runs a thread"
                                       : "has a thread to wait for");
    rc = 1;
  } else if (st == CRTS_CPE_IDLE) {
    end_cpe(cpe);
  }
  pthread_mutex_unlock(&crts_cg.mpe_lock);
  return rc;
}

int athread_end(int id) { return CRTS_athread_end(id); }

/* ---------------------------------------------------------------- group */

static int spawn_group(const char *call, void (*fp)(void), void *arg,
                       int flush)
{
  if (!crts_check_init(call))
    return -1;
  if (!fp) {
    crts_report(call, "fp is NULL");
    return -1;
  }
  pthread_mutex_lock(&crts_cg.mpe_lock);
  int rc = 0;
  if (crts_cg.halted) {
    crts_report(call, "the CPE group was released by CRTS_athread_halt");
    rc = -1;
  } else if (crts_cg.group_active) {
    rc = atomic_load(&crts_cg.group_running) ? 1 : 2;
    crts_report(call, "%s", rc == 1 ? "the CPE group is still running"
                                    : "the previous group finished but was "
                                      "not joined (call CRTS_athread_join)");
  }
  uint64_t mask = 0;
  int size = 0;
  for (int i = 0; rc == 0 && i < crts_cg.ncpes; i++) {
    uint32_t st = atomic_load(&crts_cg.cpe[i].state);
    if (st == CRTS_CPE_RUNNING || st == CRTS_CPE_DONE) {
      rc = st == CRTS_CPE_RUNNING ? 1 : 2;
      crts_report(call, "CPE %d %s", i,
                  rc == 1 ? "runs a thread started by CRTS_athread_create"
                          : "has a created thread that was not waited for");
    } else if (st == CRTS_CPE_IDLE) {
      mask |= (uint64_t)1 << i;
      size++;
    }
  }
  if (rc == 0 && size == 0) {
    crts_report(call, "no CPE is available (all were ended)");
    rc = -1;
  }
  if (rc == 0) {
    crts_cg.group_mask = mask;
    crts_cg.group_size = size;
    crts_cg.group_active = 1;
    atomic_store(&crts_cg.group_running, (uint32_t)size);
    for (int i = 0; i < crts_cg.ncpes; i++) {
      struct crts_cpe *cpe = &crts_cg.cpe[i];
      if (!((mask >> i) & 1u))
        continue;
      cpe->fn = (void (*)(void *))fp;
      cpe->arg = arg;
      cpe->in_group = 1;
      cpe->flush_on_exit = flush;
      crts_ldm_heap_reset(cpe);
      atomic_store_explicit(&cpe->state, CRTS_CPE_RUNNING,
                            memory_order_release);
    }
    doorbell_ring(FUTEX_BITSET_MATCH_ANY);
  }
  pthread_mutex_unlock(&crts_cg.mpe_lock);
  return rc;
}

int CRTS_athread_spawn(void (*fp)(void), void *arg)
{
  return spawn_group("CRTS_athread_spawn", fp, arg, 1);
}

int athread_spawn(void (*fp)(void), void *arg)
{
  return spawn_group("athread_spawn", fp, arg, 1);
}

int CRTS_athread_spawn_noflush(void (*fp)(void), void *arg)
{
  return spawn_group("CRTS_athread_spawn_noflush", fp, arg, 0);
}

int athread_spawn_noflush(void (*fp)(void), void *arg)
{
  return spawn_group("athread_spawn_noflush", fp, arg, 0);
}

int CRTS_athread_join(void)
{
  const char *call = "CRTS_athread_join";
  if (!crts_check_init(call))
    return -1;
  pthread_mutex_lock(&crts_cg.mpe_lock);
  int active = crts_cg.group_active;
  pthread_mutex_unlock(&crts_cg.mpe_lock);
  if (!active) {
    crts_report(call, "no spawned group to join");
    return -1;
  }
  uint32_t left;
  while ((left = atomic_load(&crts_cg.group_running)) != 0)
    crts_wait_change(&crts_cg.group_running, left, 0);
  pthread_mutex_lock(&crts_cg.mpe_lock);
  crts_cg.group_active = 0;
  pthread_mutex_unlock(&crts_cg.mpe_lock);
  return 0;
}

int athread_join(void) { return CRTS_athread_join(); }

int CRTS_athread_halt(void)
{
  const char *call = "CRTS_athread_halt";
  if (!crts_check_init(call))
    return -1;
  pthread_mutex_lock(&crts_cg.mpe_lock);
  int rc = 0;
  if (crts_cg.halted) {
    rc = 0;
  } else if (crts_cg.group_active && atomic_load(&crts_cg.group_running)) {
    crts_report(call, "the CPE group is still running: join it first");
    rc = 1;
  } else {
    for (int i = 0; i < crts_cg.ncpes; i++)
      if (atomic_load(&crts_cg.cpe[i].state) == CRTS_CPE_RUNNING)
        rc = 1;
    if (rc)
      crts_report(call, "a created CPE thread is still running");
  }
  if (rc == 0 && !crts_cg.halted) {
    for (int i = 0; i < crts_cg.ncpes; i++)
      if (atomic_load(&crts_cg.cpe[i].state) != CRTS_CPE_ENDED)
        end_cpe(&crts_cg.cpe[i]);
    crts_cg.group_active = 0;
    crts_cg.halted = 1;
  }
  pthread_mutex_unlock(&crts_cg.mpe_lock);
  return rc;
}

int athread_halt(void) { return CRTS_athread_halt(); }

int CRTS_athread_get_max_threads(void)
{
  if (!atomic_load(&crts_cg.initialized)) {
    crts_report("CRTS_athread_get_max_threads",
                "the runtime is not initialised: call CRTS_init() first");
    return -1;
  }
  int n = 0;
  for (int i = 0; i < crts_cg.ncpes; i++)
    n += atomic_load(&crts_cg.cpe[i].state) != CRTS_CPE_ENDED;
  return n;
}

int athread_get_max_threads(void) { return CRTS_athread_get_max_threads(); }
