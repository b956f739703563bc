/*
 * lapi_dispatch.c - the MPE dispatcher, handle queues, progress, waits,
 * LAPI_Probe and LAPI_Msgpoll.
 *
 * Transports post work items to the target handle's queue.  Items run
 * in MPE context only, under the handle lock:
 *  - interrupt mode (default): on the dispatcher thread, one per process,
 *    started by the first LAPI_Init.  It polls the transports, drains
 *    every interrupt-mode handle (and every CPE task's handle, whatever
 *    its mode) in turn, polls a little longer when there is nothing to do
 *    and then sleeps on the doorbell, so an idle process uses no CPU.
 *  - polling mode (LAPI_Senv(INTERRUPT_SET, 0)): on an application
 *    thread that polls (LAPI_Probe, LAPI_Msgpoll, LAPI_Waitcntr,
 *    LAPI_Fence, ...).  A thread that only sends never runs a handler.
 * A handler may call LAPI, including calls that wait: a wait on the
 * dispatcher thread keeps dispatching every interrupt-mode handle (and
 * the handle waited on), and a thread that holds a handle's lock while
 * it waits (a handler of that handle, or a program inside LAPI_Util's
 * mutex_lock) runs that handle's work itself, since nobody else can.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "am/lapi_am.h"

/* Items one drain runs before it lets other handles have a turn. */
#define DRAIN_BATCH 64
/* Longest sleep of a counter waiter between two looks: a safety net for
 * a counter whose _wait word the program overwrote (memset, a struct
 * copy) while a thread slept on it, so no increment would wake it. */
#define WAIT_SLICE_MS LAPI_CNTR_SLICE_MS

/* initial-exec: read on every poll of a tight loop, where the default
 * model's __tls_get_addr call showed in profiles. */
static __thread int on_dispatcher __attribute__((tls_model("initial-exec")));
/* The handle an application thread waits on in lapi_wait_tight: while it
 * polls the network for it, it runs that handle's work itself. */
static __thread const struct lapi_hndl *tight_for
    __attribute__((tls_model("initial-exec")));
static __thread int handler_depth __attribute__((tls_model("initial-exec")));

static struct {
  pthread_t thread;
  int running; /* under the table lock of lapi_handle.c */
  int stop;    /* atomic */
} mpe;

int lapi_dispatch_on_thread(void)
{
  return on_dispatcher;
}

int lapi_dispatch_in_handler(void)
{
  return handler_depth;
}

/* -------------------------------------------------------------- queue */

void lapi_am_post(struct lapi_hndl *h, struct lapi_item *it)
{
  it->next = NULL;
  pthread_mutex_lock(&h->qlock);
  if (h->qtail)
    h->qtail->next = it;
  else
    h->qhead = it;
  h->qtail = it;
  pthread_mutex_unlock(&h->qlock);
  __atomic_add_fetch(&h->pending, 1, __ATOMIC_SEQ_CST);
  if (lapi_hndl_mpe_served(h)) {
    /* A thread polling for h runs it (lapi_wait_tight); it rings when it
     * stops with work left, so between the two of us one does. */
    if (__atomic_load_n(&h->tight_waiters, __ATOMIC_SEQ_CST) == 0)
      lapi_bell_ring();
  } else
    lapi_bell_ring_waiters(); /* the dispatcher does not run h's work */
}

static int has_room(void *arg)
{
  struct lapi_hndl *h = arg;
  return __atomic_load_n(&h->pending, __ATOMIC_SEQ_CST) <
             LAPI_AM_QUEUE_MAX / 2 ||
         lapi_may_dispatch(h);
}

void lapi_am_throttle(struct lapi_hndl *h)
{
  if (__atomic_load_n(&h->pending, __ATOMIC_RELAXED) < LAPI_AM_QUEUE_MAX ||
      lapi_may_dispatch(h))
    return;
  /* Each drain releases the handle lock, which rings the doorbell. */
  lapi_wait_until(h, has_room, h, NULL);
}

static struct lapi_item *pop(struct lapi_hndl *h)
{
  pthread_mutex_lock(&h->qlock);
  struct lapi_item *it = h->qhead;
  if (it) {
    h->qhead = it->next;
    if (h->qhead == NULL)
      h->qtail = NULL;
  }
  pthread_mutex_unlock(&h->qlock);
  if (it)
    __atomic_sub_fetch(&h->pending, 1, __ATOMIC_SEQ_CST);
  return it;
}

void lapi_dispatch_cancel_from(struct lapi_hndl *h, int src)
{
  struct lapi_item *gone = NULL, **gone_end = &gone, **pp;
  int n = 0;
  pthread_mutex_lock(&h->qlock);
  h->qtail = NULL;
  for (pp = &h->qhead; *pp;) {
    struct lapi_item *it = *pp;
    if (it->src == src && it->cancel) {
      *pp = it->next;
      it->next = NULL;
      *gone_end = it; /* keep queue order */
      gone_end = &it->next;
      n++;
    } else {
      h->qtail = it;
      pp = &it->next;
    }
  }
  pthread_mutex_unlock(&h->qlock);
  __atomic_sub_fetch(&h->pending, n, __ATOMIC_SEQ_CST);
  while (gone) {
    struct lapi_item *next = gone->next;
    gone->cancel(gone);
    gone = next;
  }
  if (n)
    lapi_tp_drained(h);
}

/* ----------------------------------------------------------- running */

void lapi_tp_drained(struct lapi_hndl *h)
{
  for (unsigned t = 0; t < lapi_tp_draining_count; t++)
    lapi_tp_draining[t]->drained(h);
}

static int dispatchable(const struct lapi_hndl *h)
{
  return __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == LAPI_H_ACTIVE;
}

/* Run up to max items of h if its lock is free (or ours). */
static int drain(struct lapi_hndl *h, int max)
{
  if (__atomic_load_n(&h->pending, __ATOMIC_SEQ_CST) == 0)
    return 0;
  if (!lapi_rlock_trylock(&h->lock))
    return 0;
  int n = 0;
  struct lapi_item *it;
  while (n < max && dispatchable(h) && (it = pop(h)) != NULL) {
    handler_depth++;
    int ctx = lapi_ctx_enter(h); /* LAPI calls of a handler mean h's task */
    it->run(it);
    lapi_ctx_leave(ctx);
    handler_depth--;
    n++;
  }
  lapi_rlock_unlock(&h->lock);
  if (n) {
    lapi_tp_drained(h);
    lapi_hndl_notify(h);
  }
  return n;
}

int lapi_dispatch_run_now(struct lapi_hndl *h, struct lapi_item *it)
{
  /* Queued work goes first (pending counts it; an item being queued
   * right now may be overtaken: LAPI orders no messages). */
  if (!dispatchable(h) || __atomic_load_n(&h->pending, __ATOMIC_ACQUIRE) ||
      !lapi_rlock_trylock(&h->lock))
    return 0;
  handler_depth++;
  int ctx = lapi_ctx_enter(h);
  it->run(it);
  lapi_ctx_leave(ctx);
  handler_depth--;
  lapi_rlock_unlock(&h->lock);
  lapi_tp_drained(h);
  lapi_hndl_notify(h);
  return 1;
}

/* The dispatcher's round: every interrupt-mode handle once. */
static int round_interrupt(void)
{
  int n = 0;
  unsigned limit = lapi_hndl_limit();
  for (unsigned i = 0; i < limit; i++) {
    struct lapi_hndl *h = lapi_hndl_slot(i);
    if (dispatchable(h) && lapi_hndl_mpe_served(h))
      n += drain(h, DRAIN_BATCH);
  }
  return n;
}

/* Could a drain of h by this thread run something right now? */
static int has_work(const struct lapi_hndl *h)
{
  return dispatchable(h) &&
         __atomic_load_n(&h->pending, __ATOMIC_SEQ_CST) > 0 &&
         lapi_rlock_available(&h->lock);
}

/* Polling mode, the dispatcher itself, or a thread that holds h's lock
 * (a handler of h, or a program inside LAPI_Util's mutex_lock): nobody
 * else can run h's work while it waits, so it must.  And a thread that
 * polls the network for h in lapi_wait_tight (a process task's handle):
 * it is an MPE thread too, and running what it reads saves the
 * dispatcher's wake-up, a thread switch, per message. */
int lapi_may_dispatch(const struct lapi_hndl *h)
{
  return on_dispatcher || !lapi_hndl_mpe_served(h) || tight_for == h ||
         lapi_rlock_mine(&h->lock);
}

/* Work of o behind its held lock: the release must wake the idle
 * dispatcher (armed before this), so say so and look again. */
static int has_work_or_want(struct lapi_hndl *o)
{
  if (has_work(o))
    return 1;
  if (!dispatchable(o) || __atomic_load_n(&o->pending, __ATOMIC_SEQ_CST) == 0)
    return 0;
  lapi_rlock_want(&o->lock);
  return has_work(o);
}

/* Work this thread should do instead of sleeping. */
static int work_for_me(const struct lapi_hndl *h)
{
  if (on_dispatcher) {
    unsigned limit = lapi_hndl_limit();
    for (unsigned i = 0; i < limit; i++) {
      struct lapi_hndl *o = lapi_hndl_slot(i);
      if (lapi_hndl_mpe_served(o) && has_work_or_want(o))
        return 1;
    }
  }
  return h && lapi_may_dispatch(h) && has_work(h);
}

int lapi_progress(struct lapi_hndl *h)
{
  int n = 0;
  if (h)
    for (unsigned t = 0; t < lapi_tp_count; t++)
      n += lapi_tp_all[t]->progress(h);
  if (on_dispatcher)
    n += round_interrupt();
  if (h && lapi_may_dispatch(h))
    n += drain(h, DRAIN_BATCH);
  return n;
}

void lapi_hndl_notify(struct lapi_hndl *h)
{
  if (__atomic_load_n(&h->evt_sleepers, __ATOMIC_SEQ_CST) == 0)
    return;
  __atomic_add_fetch(&h->evt, 1, __ATOMIC_SEQ_CST);
  lapi_futex_wake(&h->evt, INT_MAX);
}

/* A CPE task cannot run its handle's work: it sleeps on the handle's own
 * word, so the doorbell (rung by every post) never wakes a crowd of tasks,
 * and each wake-up reaches only the tasks that wait on that handle. */
static void wait_evt(struct lapi_hndl *h, int (*done)(void *), void *arg)
{
  __atomic_add_fetch(&h->evt_sleepers, 1, __ATOMIC_SEQ_CST);
  for (;;) {
    int seq = __atomic_load_n(&h->evt, __ATOMIC_SEQ_CST);
    if (done(arg))
      break;
    lapi_futex_wait(&h->evt, seq, WAIT_SLICE_MS);
  }
  __atomic_sub_fetch(&h->evt_sleepers, 1, __ATOMIC_SEQ_CST);
}

/* The tight wait's clock reads: about one per TIGHT_CLOCK_NS of turns,
 * at most one per TIGHT_CLOCK_STEP_MAX turns. */
#define TIGHT_CLOCK_NS 1000
#define TIGHT_CLOCK_STEP_MAX 32

static int64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* An application thread of a process task that waits for the network:
 * poll it in a tight loop for LAPI_POLL_US before anything sleeps, so
 * that an answer costs no wake-up of the progress thread and none of
 * ours.  It runs h's work too, in either mode (lapi_may_dispatch); once
 * it stops polling, in interrupt mode the dispatcher runs it.  1 if
 * done. */
int lapi_wait_tight(struct lapi_hndl *h, int (*done)(void *), void *arg)
{
  int us = lapi_tight_us(h && !lapi_hndl_mpe_served(h));
  if (us == 0 || h == NULL || on_dispatcher || h->cpe >= 0 ||
      lapi_tp_tight(h, LAPI_TIGHT_START) == 0)
    return 0;
  int64_t start = mono_ns(), now = start, seen = start;
  int64_t until = start + (int64_t)us * 1000;
  int ok = 0, turned = 0, moved = 0;
  const struct lapi_hndl *outer = tight_for; /* a wait in a handler */
  tight_for = h;
  /* Only a handle the dispatcher serves needs the count (lapi_am_post
   * skips its doorbell for it); in polling mode posts ring the waiters
   * anyway, and the locked add and sub would be one more locked
   * instruction on a ping-pong's path, after the answer came.  Decided
   * once, so a mode switch during the wait takes back what it added. */
  const int counted = lapi_hndl_mpe_served(h);
  if (counted)
    __atomic_add_fetch(&h->tight_waiters, 1, __ATOMIC_SEQ_CST);
  unsigned step = 1, left = 1;
  for (;;) {
    if (done(arg)) {
      ok = 1;
      break;
    }
    /* lapi_progress, cut to what a tight turn needs: the networks (the
     * other transports' progress is the dispatcher's), the condition as
     * soon as they brought something (a directly delivered message: the
     * answer's path), then h's queued work. */
    int n = lapi_tp_tight_progress(h);
    if (n > 0 && done(arg)) { /* the common end: what we waited for came */
      ok = 1;
      break;
    }
    /* drain() looks at pending first too: peeked here, an idle turn
     * (what an arrival waits for) skips the call.  tight_for == h: we
     * may dispatch h's work (lapi_may_dispatch). */
    if (__atomic_load_n(&h->pending, __ATOMIC_SEQ_CST))
      n += drain(h, DRAIN_BATCH);
    if (n > 0) {
      if (done(arg)) {
        ok = 1;
        break;
      }
      /* Traffic flows: the window counts from the last arrival (at the
       * next clock read: `now` is as old as the last idle turn), so a
       * stream longer than it is not handed to the sleepers halfway.  An
       * idle wait still stops after us. */
      moved = 1;
      /* again, if a handler's own wait ended it */
      lapi_tp_tight(h, LAPI_TIGHT_START);
      continue;
    }
    /* The clock is read about every TIGHT_CLOCK_NS, not every turn: a
     * read costs as much as a poll of shared memory (65 ns in a VM), and
     * lengthens the turn an arrival waits for.  A poll over tcp is a
     * system call: there the clock is read at every turn again, or 16 of
     * them would stretch the 10 us pause to 20 us and more. */
    if (--left == 0) {
      now = mono_ns();
      if (moved) {
        moved = 0;
        until = now + (int64_t)us * 1000;
      } else if (now >= until) {
        break;
      }
      if (now - seen < TIGHT_CLOCK_NS / 2 && step < TIGHT_CLOCK_STEP_MAX)
        step *= 2;
      else if (now - seen > TIGHT_CLOCK_NS * 2 && step > 1)
        step /= 2;
      seen = now;
      left = step;
    }
    turned = lapi_tight_relax(now - start);
  }
  tight_for = outer;
  /* Posts skipped the doorbell while we polled: what we leave behind is
   * the dispatcher's work now, or, if h went to polling mode meanwhile,
   * that of a thread asleep in a wait on h, which only the bell wakes. */
  if (counted &&
      __atomic_sub_fetch(&h->tight_waiters, 1, __ATOMIC_SEQ_CST) == 0 &&
      __atomic_load_n(&h->pending, __ATOMIC_SEQ_CST) > 0)
    lapi_bell_ring();
  if (ok)
    lapi_tight_ended(turned);
  /* Polling mode: the caller is back in LAPI soon (a ping-pong, a loop
   * of waits), so the transport may keep the registration for a while;
   * a wait that gave up goes to sleep and needs the progress thread
   * woken by every arrival again. */
  lapi_tp_tight(h, !ok                          ? LAPI_TIGHT_SLEEP
                  : !lapi_hndl_mpe_served(h) ? LAPI_TIGHT_PAUSE
                                             : LAPI_TIGHT_STOP);
  return ok || done(arg);
}

void lapi_wait_until(struct lapi_hndl *h, int (*done)(void *), void *arg,
                     int *mark)
{
  if (lapi_wait_tight(h, done, arg))
    return;
  struct lapi_spin sp;
  lapi_spin_start(&sp);
  for (;;) {
    if (done(arg)) {
      lapi_spin_end(&sp);
      return;
    }
    if (lapi_progress(h) > 0)
      continue;
    if (!lapi_spin_relax(&sp))
      break;
  }
  lapi_spin_end(&sp);
  if (h && h->cpe >= 0 && mark == NULL && !lapi_may_dispatch(h)) {
    wait_evt(h, done, arg);
    return;
  }
  struct lapi_cntr_sleeper sl;
  if (mark)
    lapi_cntr_sleeper_add(&sl, mark, LAPI_CNTR_WAIT_BELL);
  for (;;) {
    unsigned seq = lapi_bell_arm();
    if (done(arg)) {
      lapi_bell_disarm();
      break;
    }
    if (work_for_me(h)) {
      lapi_bell_disarm();
      lapi_progress(h);
      continue;
    }
    lapi_bell_sleep(seq, mark ? WAIT_SLICE_MS : -1);
  }
  if (mark)
    lapi_cntr_sleeper_remove(&sl);
}

/* -------------------------------------------------------- the thread */

/* Every transport once, for the whole process (h NULL: see tp.h). */
static int poll_transports(void)
{
  int n = 0;
  for (unsigned t = 0; t < lapi_tp_count; t++)
    n += lapi_tp_all[t]->progress(NULL);
  return n;
}

/* One look at everything the dispatcher serves. */
static int mpe_poll(void)
{
  return poll_transports() + round_interrupt();
}

/* Before sleeping, poll for a while: a request that comes within the
 * window is noticed at once instead of after a futex wake-up. */
static int mpe_spin_window(void)
{
  int spins = lapi_mpe_spins();
  for (int i = 0; i < spins; i++) {
    if (__atomic_load_n(&mpe.stop, __ATOMIC_RELAXED))
      return 0;
    lapi_mpe_relax();
    if (mpe_poll() > 0)
      return 1;
  }
  return 0;
}

static void *mpe_main(void *arg)
{
  (void)arg;
  on_dispatcher = 1;
  pthread_setname_np(pthread_self(), "lapi-mpe");
  LAPI_LOG(LAPI_LOG_INFO, "dispatcher started");
  while (!__atomic_load_n(&mpe.stop, __ATOMIC_SEQ_CST)) {
    if (mpe_poll() > 0 || mpe_spin_window())
      continue;
    unsigned seq = lapi_bell_arm_idle();
    /* Armed: a request pushed from now on rings; one pushed before is
     * found by this last poll. */
    if (__atomic_load_n(&mpe.stop, __ATOMIC_SEQ_CST) || work_for_me(NULL) ||
        poll_transports() > 0) {
      lapi_bell_disarm_idle();
      continue;
    }
    lapi_bell_sleep_idle(seq);
  }
  LAPI_LOG(LAPI_LOG_INFO, "dispatcher stopped");
  return NULL;
}

int lapi_dispatch_start(void)
{
  if (mpe.running)
    return LAPI_SUCCESS;
  __atomic_store_n(&mpe.stop, 0, __ATOMIC_SEQ_CST);
  /* Signals stay with the application's threads. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&mpe.thread, NULL, mpe_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0)
    return rc == EAGAIN ? LAPI_ERR_MEMORY_EXHAUSTED : LAPI_ERR_UNKNOWN;
  mpe.running = 1;
  return LAPI_SUCCESS;
}

void lapi_dispatch_stop(void)
{
  /* Called from a handler on the dispatcher: it stays, asleep. */
  if (!mpe.running || on_dispatcher)
    return;
  __atomic_store_n(&mpe.stop, 1, __ATOMIC_SEQ_CST);
  lapi_bell_ring();
  pthread_join(mpe.thread, NULL);
  mpe.running = 0;
}

/* ------------------------------------------------------ Probe, Msgpoll */

int PLAPI_Probe(lapi_handle_t hndl)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,
                     "handle %u is not initialised or already terminated",
                     hndl);
  lapi_progress(h);
  return LAPI_SUCCESS;
}

int PLAPI_Msgpoll(lapi_handle_t hndl, uint cnt, lapi_msg_info_t *info)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  if (h == NULL)
    return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,
                     "handle %u is not initialised or already terminated",
                     hndl);
  if (info == NULL)
    return LAPI_FAIL(LAPI_ERR_MSG_INFO_NULL,
                     "info is NULL: pass a lapi_msg_info_t to fill");
  memset(info, 0, sizeof *info);
  unsigned long sends = __atomic_load_n(&h->sends_done, __ATOMIC_ACQUIRE);
  unsigned long recvs = __atomic_load_n(&h->recvs_done, __ATOMIC_ACQUIRE);
  for (uint i = 0; i < cnt; i++) {
    if (lapi_may_dispatch(h) &&
        __atomic_load_n(&h->pending, __ATOMIC_SEQ_CST) &&
        !lapi_rlock_available(&h->lock))
      info->status |= LAPI_POLLING_NET;
    if (lapi_progress(h) == 0 && !lapi_may_dispatch(h))
      sched_yield(); /* the dispatcher does the work: let it run */
    if (__atomic_load_n(&h->sends_done, __ATOMIC_ACQUIRE) != sends)
      info->status |= LAPI_SEND_COMPLETE;
    if (__atomic_load_n(&h->recvs_done, __ATOMIC_ACQUIRE) != recvs)
      info->status |= LAPI_RECV_COMPLETE;
    if (info->status & (LAPI_SEND_COMPLETE | LAPI_RECV_COMPLETE))
      break;
  }
  return LAPI_SUCCESS;
}

int LAPI_Probe(lapi_handle_t hndl) __attribute__((weak, alias("PLAPI_Probe")));
int LAPI_Msgpoll(lapi_handle_t hndl, uint cnt, lapi_msg_info_t *info)
    __attribute__((weak, alias("PLAPI_Msgpoll")));
