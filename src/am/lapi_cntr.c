/*
 * lapi_cntr.c - LAPI counters: Setcntr, Getcntr, Waitcntr, Nopoll_wait,
 * Setcntr_wstatus, and the increment every completion goes through.
 *
 * lapi_cntr_t {cntr, _wait, _impl}:
 *   cntr   the value; increments are atomic, LAPI_Waitcntr subtracts with
 *          a compare-and-swap, so several threads may wait on one counter.
 *   _wait  who sleeps on it: +1 per thread sleeping on the counter's own
 *          futex, +0x10000 per thread sleeping on the doorbell (one that
 *          dispatches while it waits).  An increment makes a system call
 *          only when _wait says someone sleeps.  LAPI_Setcntr keeps _wait
 *          while threads sleep on the counter (it counts them) and wakes
 *          them, so setting a counter can release a waiter; otherwise
 *          it sets _wait to 0 (see "who sleeps on what").
 *   _impl  NULL, or the LAPI_Setcntr_wstatus record of the counter;
 *          LAPI_Setcntr clears it.
 *
 * LAPI_Waitcntr / LAPI_Nopoll_wait between processes: once a transport
 * declared a task gone (h->faults > 0), a wait whose counter has not
 * reached its value TIMEOUT seconds (LAPI_Qenv TIMEOUT) after it began
 * returns LAPI_ERR_TIMEOUT instead of waiting for completions that will
 * never come.  Without a fault a wait has no time limit.
 *
 * LAPI_Setcntr_wstatus (IBM semantics): the counter becomes 0 and the
 * third argument is the number of destinations in dest; dest_status[i]
 * starts as LAPI_MSG_INITIAL (LAPI_MSG_INVALID if dest[i] is already
 * purged) and becomes LAPI_MSG_RECVD when a completion from dest[i]
 * increments the counter, LAPI_MSG_PURGED / LAPI_MSG_PURGED_RCVD when
 * LAPI_Purge_totask(dest[i]) runs (a purge also increments the counter,
 * so a waiter for num_dest answers is released).  The record ends when a
 * wait on the counter returns.
 */
#include <limits.h>
#include <time.h>

#include "am/lapi_am.h"

#define WSTATUS_MAX 64

struct wstatus {
  lapi_cntr_t *cntr;      /* NULL: free slot */
  struct lapi_hndl *h;
  const uint *dest;
  int *status;
  int n;
};

static struct wstatus ws_tab[WSTATUS_MAX];
static pthread_mutex_t ws_lock = PTHREAD_MUTEX_INITIALIZER;

/* The record c->_impl names, if it really is one of ours for c. */
static struct wstatus *ws_of(lapi_cntr_t *c)
{
  void *impl = __atomic_load_n(&c->_impl, __ATOMIC_ACQUIRE);
  if (impl == NULL)
    return NULL;
  uintptr_t p = (uintptr_t)impl, lo = (uintptr_t)ws_tab;
  if (p < lo || p >= (uintptr_t)(ws_tab + WSTATUS_MAX) ||
      (p - lo) % sizeof(struct wstatus) != 0)
    return NULL;
  struct wstatus *w = impl;
  return w->cntr == c ? w : NULL;
}

static void ws_note(lapi_cntr_t *c, int src)
{
  pthread_mutex_lock(&ws_lock);
  struct wstatus *w = ws_of(c);
  if (w)
    for (int i = 0; i < w->n; i++)
      if ((int)w->dest[i] == src && w->status[i] == LAPI_MSG_INITIAL)
        w->status[i] = LAPI_MSG_RECVD;
  pthread_mutex_unlock(&ws_lock);
}

/* A wait on c returned: its record is over. */
static void ws_done(lapi_cntr_t *c)
{
  if (__atomic_load_n(&c->_impl, __ATOMIC_ACQUIRE) == NULL)
    return;
  pthread_mutex_lock(&ws_lock);
  struct wstatus *w = ws_of(c);
  if (w)
    w->cntr = NULL;
  __atomic_store_n(&c->_impl, NULL, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&ws_lock);
}

static void cntr_wake(lapi_cntr_t *c)
{
  int w = __atomic_load_n(&c->_wait, __ATOMIC_SEQ_CST);
  /* Plain sleepers look at every change; sleeping CPE tasks only when
   * the value they wait for is reached. */
  if ((w & 0xff) ||
      ((w & 0xff00) &&
       lapi_cpe_cntr_due(c, __atomic_load_n(&c->cntr, __ATOMIC_SEQ_CST))))
    lapi_futex_wake((int *)&c->cntr, INT_MAX);
  if (w & ~0xffff)
    lapi_bell_ring_waiters();
}

void lapi_cntr_bump(lapi_cntr_t *c, int src)
{
  lapi_cntr_add(c, src, 1);
}

void lapi_cntr_add(lapi_cntr_t *c, int src, int n)
{
  /* Statuses first: a waiter that sees the new value sees them too.  A
   * note marks src's status, so one serves all n. */
  if (__atomic_load_n(&c->_impl, __ATOMIC_ACQUIRE))
    ws_note(c, src);
  __atomic_add_fetch(&c->cntr, n, __ATOMIC_SEQ_CST);
  cntr_wake(c);
}

void lapi_wstatus_purge(struct lapi_hndl *h, uint dest)
{
  lapi_cntr_t *wake[WSTATUS_MAX];
  int nwake = 0;
  pthread_mutex_lock(&ws_lock);
  for (int k = 0; k < WSTATUS_MAX; k++) {
    struct wstatus *w = &ws_tab[k];
    if (w->cntr == NULL || w->h != h)
      continue;
    int answered = 0;
    for (int i = 0; i < w->n; i++) {
      if (w->dest[i] != dest)
        continue;
      if (w->status[i] == LAPI_MSG_INITIAL) {
        w->status[i] = LAPI_MSG_PURGED;
        answered = 1;
      } else if (w->status[i] == LAPI_MSG_RECVD) {
        w->status[i] = LAPI_MSG_PURGED_RCVD;
      }
    }
    if (answered)
      wake[nwake++] = w->cntr;
  }
  pthread_mutex_unlock(&ws_lock);
  for (int k = 0; k < nwake; k++) {
    __atomic_add_fetch(&wake[k]->cntr, 1, __ATOMIC_SEQ_CST);
    cntr_wake(wake[k]);
  }
}

void lapi_wstatus_drop_handle(struct lapi_hndl *h)
{
  pthread_mutex_lock(&ws_lock);
  for (int k = 0; k < WSTATUS_MAX; k++)
    if (ws_tab[k].cntr && ws_tab[k].h == h)
      ws_tab[k].cntr = NULL; /* the counter itself may be long gone */
  pthread_mutex_unlock(&ws_lock);
}

/* ------------------------------------------------- who sleeps on what */

/*
 * A counter lives in the program's memory, often on its stack, and
 * LAPI_Setcntr is what initialises it: its _wait word held whatever was
 * there before.  A run of ofi_waiter_runs found 0x7fff in it (the upper
 * half of a stack address): a sleeper's +1 made it 0x8000, whose low
 * byte says that nobody sleeps, so no increment woke the waiter and
 * every wait of the run lasted its whole 250 ms slice.  LAPI_Setcntr
 * cannot tell such garbage from the count of a thread that sleeps on
 * the counter now (which it must keep: setting a counter releases its
 * waiters), so every thread that counts itself in a _wait word is listed
 * here, by a record on its stack.  A word nobody is listed for has no
 * sleeper: LAPI_Setcntr clears it, the first sleeper sets it instead of
 * adding to it, and the last one out clears it.  Only sleepers (after
 * their spin, before a system call) and the Setcntr calls on a word not
 * at 0 take the lock; increments read the word as before.
 */
static struct lapi_cntr_sleeper *sleepers; /* under sleepers_lock */
static pthread_mutex_t sleepers_lock = PTHREAD_MUTEX_INITIALIZER;

static int word_listed(const int *word)
{
  for (const struct lapi_cntr_sleeper *s = sleepers; s; s = s->next)
    if (s->word == word)
      return 1;
  return 0;
}

void lapi_cntr_sleeper_add(struct lapi_cntr_sleeper *s, int *word, int how)
{
  s->word = word;
  s->how = how;
  pthread_mutex_lock(&sleepers_lock);
  if (word_listed(word))
    __atomic_add_fetch(word, how, __ATOMIC_SEQ_CST);
  else
    __atomic_store_n(word, how, __ATOMIC_SEQ_CST);
  s->next = sleepers;
  sleepers = s;
  pthread_mutex_unlock(&sleepers_lock);
}

void lapi_cntr_sleeper_remove(struct lapi_cntr_sleeper *s)
{
  pthread_mutex_lock(&sleepers_lock);
  struct lapi_cntr_sleeper **pp = &sleepers;
  while (*pp && *pp != s)
    pp = &(*pp)->next;
  if (*pp)
    *pp = s->next;
  if (word_listed(s->word))
    __atomic_sub_fetch(s->word, s->how, __ATOMIC_SEQ_CST);
  else
    __atomic_store_n(s->word, 0, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&sleepers_lock);
}

/* LAPI_Setcntr(_wstatus): a _wait word without sleepers starts at 0. */
static void wait_word_init(lapi_cntr_t *c)
{
  /* A word at 0 has nothing to clear: no lock (a process-wide one)
   * on the Setcntr of every message, which all CPE tasks share. */
  if (__atomic_load_n(&c->_wait, __ATOMIC_SEQ_CST) == 0)
    return;
  pthread_mutex_lock(&sleepers_lock);
  if (!word_listed(&c->_wait))
    __atomic_store_n(&c->_wait, 0, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&sleepers_lock);
}

/* ------------------------------------------------------------- waiting */

struct take {
  lapi_cntr_t *c;
  int val;
  int left;
  struct lapi_hndl *h;
  int64_t start_ms;
  int gave_up; /* a peer is gone and TIMEOUT passed: LAPI_ERR_TIMEOUT */
};

static int64_t now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* cntr >= val: subtract val atomically, remember what is left.  Once a
 * transport declared a peer of h gone (h->faults), a counter that has
 * not reached val after TIMEOUT seconds of waiting may never reach it:
 * the wait ends with gave_up set instead of hanging. */
static int take(void *arg)
{
  struct take *t = arg;
  int v = __atomic_load_n(&t->c->cntr, __ATOMIC_SEQ_CST);
  while (v >= t->val) {
    if (__atomic_compare_exchange_n(&t->c->cntr, &v, v - t->val, 0,
                                    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
      t->left = v - t->val;
      return 1;
    }
  }
  if (t->h && __atomic_load_n(&t->h->faults, __ATOMIC_SEQ_CST) > 0 &&
      now_ms() - t->start_ms >=
          1000L * __atomic_load_n(&t->h->timeout, __ATOMIC_RELAXED)) {
    t->gave_up = 1;
    t->left = v;
    return 1;
  }
  return 0;
}

/* A thread that does not dispatch h sleeps on the counter itself.  If
 * it may dispatch after all (the handle switched to polling mode), it
 * continues as a dispatching waiter. */
static void wait_plain(struct lapi_hndl *h, struct take *t, int progress)
{
  if (progress && lapi_wait_tight(h, take, t))
    return;
  struct lapi_spin sp;
  lapi_spin_start(&sp);
  while (lapi_spin_relax(&sp))
    if (take(t)) {
      lapi_spin_end(&sp);
      return;
    }
  lapi_spin_end(&sp);
  int *cw = &t->c->_wait;
  /* Registered before it counts as a sleeper: an incrementer that sees
   * the count sees the value it waits for. */
  int how = lapi_cpe_cntr_sleep(t->c, t->val) ? LAPI_CNTR_WAIT_CPE
                                               : LAPI_CNTR_WAIT_PLAIN;
  struct lapi_cntr_sleeper sl;
  lapi_cntr_sleeper_add(&sl, cw, how);
  int dispatch = 0;
  for (;;) {
    int v = __atomic_load_n(&t->c->cntr, __ATOMIC_SEQ_CST);
    if (take(t))
      break;
    if (progress && lapi_may_dispatch(h)) {
      dispatch = 1;
      break;
    }
    lapi_futex_wait((int *)&t->c->cntr, v, LAPI_CNTR_SLICE_MS);
  }
  lapi_cntr_sleeper_remove(&sl);
  if (how == LAPI_CNTR_WAIT_CPE)
    lapi_cpe_cntr_awake();
  if (dispatch)
    lapi_wait_until(h, take, t, cw);
}

static int cntr_wait(struct lapi_hndl *h, lapi_cntr_t *c, int val, int *cur,
                     int progress)
{
  struct take t = {c, val, 0, h, now_ms(), 0};
  if (!take(&t)) {
    if (progress && lapi_may_dispatch(h))
      lapi_wait_until(h, take, &t, &c->_wait);
    else
      wait_plain(h, &t, progress);
  }
  ws_done(c);
  if (cur)
    *cur = t.left;
  if (t.gave_up)
    return LAPI_FAIL(LAPI_ERR_TIMEOUT,
                     "the counter is at %d, short of %d, after TIMEOUT "
                     "(%d s) while a task of the job is unreachable: the "
                     "operations it waits for failed", t.left, val,
                     h->timeout);
  return LAPI_SUCCESS;
}

/* -------------------------------------------------------- public calls */

#define CHECK_HNDL(h, hv)                                                 \
  do {                                                                    \
    if ((h) == NULL)                                                      \
      return LAPI_FAIL(LAPI_ERR_HNDL_INVALID,                             \
                       "handle %u is not initialised or already "         \
                       "terminated", (hv));                               \
  } while (0)

#define CHECK_CNTR(c)                                                     \
  do {                                                                    \
    if ((c) == NULL)                                                      \
      return LAPI_FAIL(LAPI_ERR_CNTR_NULL, "the counter is NULL");        \
  } while (0)

int PLAPI_Setcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  CHECK_HNDL(h, hndl);
  CHECK_CNTR(cntr);
  ws_done(cntr);
  wait_word_init(cntr);
  __atomic_store_n(&cntr->cntr, val, __ATOMIC_SEQ_CST);
  cntr_wake(cntr);
  return LAPI_SUCCESS;
}

int PLAPI_Getcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int *val)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  CHECK_HNDL(h, hndl);
  CHECK_CNTR(cntr);
  if (val == NULL)
    return LAPI_FAIL(LAPI_ERR_RET_PTR_NULL,
                     "val is NULL: pass where to store the counter value");
  *val = __atomic_load_n(&cntr->cntr, __ATOMIC_SEQ_CST);
  return LAPI_SUCCESS;
}

int PLAPI_Waitcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val,
                   int *cur_cntr_val)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  CHECK_HNDL(h, hndl);
  CHECK_CNTR(cntr);
  if (val < 0)
    return LAPI_FAIL(LAPI_ERR_CNTR_VAL,
                     "val %d is negative: wait for a count >= 0", val);
  return cntr_wait(h, cntr, val, cur_cntr_val, 1);
}

int PLAPI_Nopoll_wait(lapi_handle_t hndl, lapi_cntr_t *cntr, int val,
                      int *cur_cntr_val)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  CHECK_HNDL(h, hndl);
  CHECK_CNTR(cntr);
  if (val < 0)
    return LAPI_FAIL(LAPI_ERR_CNTR_VAL,
                     "val %d is negative: wait for a count >= 0", val);
  /* No polling, except where nobody else could make progress: on the
   * dispatcher, or while holding the handle's lock. */
  return cntr_wait(h, cntr, val, cur_cntr_val,
                   lapi_dispatch_on_thread() || lapi_rlock_mine(&h->lock));
}

int PLAPI_Setcntr_wstatus(lapi_handle_t hndl, lapi_cntr_t *cntr, int val,
                          uint *dest, int *dest_status)
{
  struct lapi_hndl *h = lapi_hndl_get(hndl);
  CHECK_HNDL(h, hndl);
  CHECK_CNTR(cntr);
  if (val < 0)
    return LAPI_FAIL(LAPI_ERR_CNTR_VAL,
                     "num_dest %d is negative", val);
  if (val > 0 && dest == NULL)
    return LAPI_FAIL(LAPI_ERR_NULL_LIST,
                     "dest is NULL but num_dest is %d", val);
  if (val > 0 && dest_status == NULL)
    return LAPI_FAIL(LAPI_ERR_RET_PTR_NULL,
                     "dest_status is NULL but num_dest is %d", val);
  for (int i = 0; i < val; i++)
    if (dest[i] >= h->num_tasks)
      return LAPI_FAIL(LAPI_ERR_TASK_NUM,
                       "dest[%d] = %u is not a task (NUM_TASKS %u)", i,
                       dest[i], h->num_tasks);

  ws_done(cntr);
  if (val > 0) {
    pthread_mutex_lock(&ws_lock);
    struct wstatus *w = NULL;
    for (int k = 0; k < WSTATUS_MAX && !w; k++)
      if (ws_tab[k].cntr == NULL)
        w = &ws_tab[k];
    if (w == NULL) {
      pthread_mutex_unlock(&ws_lock);
      return LAPI_FAIL(LAPI_ERR_MEMORY_EXHAUSTED,
                       "%d counters already have a status list: wait on "
                       "one of them first", WSTATUS_MAX);
    }
    for (int i = 0; i < val; i++)
      dest_status[i] = lapi_hndl_purged(h, dest[i]) ? LAPI_MSG_INVALID
                                                    : LAPI_MSG_INITIAL;
    w->cntr = cntr;
    w->h = h;
    w->dest = dest;
    w->status = dest_status;
    w->n = val;
    __atomic_store_n(&cntr->_impl, w, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ws_lock);
  }
  wait_word_init(cntr);
  __atomic_store_n(&cntr->cntr, 0, __ATOMIC_SEQ_CST);
  cntr_wake(cntr);
  return LAPI_SUCCESS;
}

int LAPI_Setcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val)
    __attribute__((weak, alias("PLAPI_Setcntr")));
int LAPI_Getcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int *val)
    __attribute__((weak, alias("PLAPI_Getcntr")));
int LAPI_Waitcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val,
                  int *cur_cntr_val)
    __attribute__((weak, alias("PLAPI_Waitcntr")));
int LAPI_Nopoll_wait(lapi_handle_t hndl, lapi_cntr_t *cntr, int val,
                     int *cur_cntr_val)
    __attribute__((weak, alias("PLAPI_Nopoll_wait")));
int LAPI_Setcntr_wstatus(lapi_handle_t hndl, lapi_cntr_t *cntr, int val,
                         uint *dest, int *dest_status)
    __attribute__((weak, alias("PLAPI_Setcntr_wstatus")));
