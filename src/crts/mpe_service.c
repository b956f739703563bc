/*
 * mpe_service.c - the emulated MPE's service thread: a FIFO of jobs.
 *
 * Posters append to a locked list and bump a futex word; the service thread
 * takes jobs from the head and runs them one at a time, so jobs run in the
 * order they were posted.  When the list is empty the thread polls briefly,
 * then sleeps; a poster issues a wake-up only when it has gone to sleep.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "crts_cg.h"
#include "crts_mpe_service.h"

static struct {
  pthread_mutex_t start_lock;    /* serialises the lazy start */
  _Atomic int running;
  struct crts_lock lock;         /* protects head and tail */
  struct crts_mpe_job *head, *tail;
  _Atomic uint32_t posted;       /* bumped by every post: the sleep word */
  _Atomic uint32_t sleeping;     /* the service thread sleeps on posted */
} svc = { .start_lock = PTHREAD_MUTEX_INITIALIZER };

static __thread int svc_is_self;
/* Wait slot of callers that are not CPEs (CPEs use their own). */
static __thread struct crts_waiter svc_caller_slot;

static struct crts_mpe_job *take_job(void)
{
  crts_lock_acquire(&svc.lock, 0);
  struct crts_mpe_job *job = svc.head;
  if (job) {
    svc.head = job->next;
    if (!svc.head)
      svc.tail = NULL;
  }
  crts_lock_release(&svc.lock, 0);
  return job;
}

/* Sleep until a post after `seen`: poll first, then the futex. */
static void wait_for_post(uint32_t seen)
{
  int limit = crts_spin_limit();
  for (int i = 0; i < limit; i++) {
    if (atomic_load_explicit(&svc.posted, memory_order_acquire) != seen)
      return;
    crts_cpu_relax();
  }
  /* Announce the sleep before the last look: pairs with post()'s bump. */
  atomic_store(&svc.sleeping, 1);
  while (atomic_load(&svc.posted) == seen)
    crts_futex_wait(&svc.posted, seen, 0);
  atomic_store(&svc.sleeping, 0);
}

static void *service_main(void *arg)
{
  (void)arg;
  svc_is_self = 1;
  for (;;) {
    uint32_t seen = atomic_load(&svc.posted);
    struct crts_mpe_job *job = take_job();
    if (!job) {
      wait_for_post(seen);
      continue;
    }
    /* Read before run(): a posted-only job may be gone afterwards. */
    struct crts_waiter *slot = job->waiter_slot;
    job->run(job);
    if (slot)
      crts_word_add_notify(&job->done, 1, slot);
  }
  return NULL;
}

int crts_mpe_service_start(const char *call)
{
  if (atomic_load_explicit(&svc.running, memory_order_acquire))
    return 0;
  pthread_mutex_lock(&svc.start_lock);
  int rc = 0;
  if (!atomic_load(&svc.running)) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* The service never takes process signals meant for the program. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    int err = pthread_create(&t, &attr, service_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (err != 0) {
      crts_report(call, "cannot start the MPE service thread: %s",
                  strerror(err));
      rc = -1;
    } else {
      pthread_setname_np(t, "crts-mpe");
      atomic_store_explicit(&svc.running, 1, memory_order_release);
    }
  }
  pthread_mutex_unlock(&svc.start_lock);
  return rc;
}

int crts_mpe_service_running(void)
{
  return atomic_load_explicit(&svc.running, memory_order_acquire);
}

int crts_mpe_service_is_self(void) { return svc_is_self; }

static void enqueue(struct crts_mpe_job *job)
{
  job->next = NULL;
  crts_lock_acquire(&svc.lock, 0);
  if (svc.tail)
    svc.tail->next = job;
  else
    svc.head = job;
  svc.tail = job;
  crts_lock_release(&svc.lock, 0);
  atomic_fetch_add(&svc.posted, 1);
  if (atomic_load(&svc.sleeping))
    crts_futex_wake(&svc.posted, 1, 0);
}

void crts_mpe_service_post(struct crts_mpe_job *job)
{
  job->waiter_slot = NULL;
  enqueue(job);
}

void crts_mpe_service_call(struct crts_mpe_job *job)
{
  struct crts_waiter *slot =
      crts_self ? &crts_self->waiting_on : &svc_caller_slot;
  job->done = 0;
  job->waiter_slot = slot;
  enqueue(job);
  crts_word_wait_ge(&job->done, 1, slot);
}
