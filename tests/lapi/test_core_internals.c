/*
 * test_core_internals.c - unit tests of the core's internal pieces: the
 * recursive handle lock, the doorbell, the transport selector and its
 * stubs, the job view, queue cancellation, and the receive API driven by
 * hand (as a future transport would).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core_util.h"

#include "am/lapi_am.h"

Test(core_internals, rlock_recursion_and_ownership)
{
  struct lapi_rlock l;
  lapi_rlock_init(&l);
  pthread_t tid;
  cr_assert(lapi_rlock_available(&l));
  cr_assert_eq(lapi_rlock_owner(&l, &tid), 0);
  lapi_rlock_lock(&l);
  cr_assert(lapi_rlock_trylock(&l), "recursive trylock");
  lapi_rlock_lock(&l);
  cr_assert_eq(l.depth, 3);
  cr_assert(lapi_rlock_mine(&l));
  cr_assert_eq(lapi_rlock_owner(&l, &tid), 1);
  cr_assert(pthread_equal(tid, pthread_self()));
  lapi_rlock_unlock(&l);
  lapi_rlock_unlock(&l);
  cr_assert(lapi_rlock_mine(&l), "still held at depth 1");
  lapi_rlock_unlock(&l);
  cr_assert_not(lapi_rlock_mine(&l));
  cr_assert(lapi_rlock_available(&l));
}

static struct lapi_rlock shared_lock;

static void *try_other(void *arg)
{
  (void)arg;
  intptr_t got = lapi_rlock_trylock(&shared_lock);
  if (got)
    lapi_rlock_unlock(&shared_lock);
  return (void *)got;
}

Test(core_internals, rlock_excludes_other_threads_and_cond_wait_releases)
{
  lapi_rlock_init(&shared_lock);
  lapi_rlock_lock(&shared_lock);
  lapi_rlock_lock(&shared_lock);
  pthread_t t;
  void *got;
  pthread_create(&t, NULL, try_other, NULL);
  pthread_join(t, &got);
  cr_assert_null(got, "another thread took a held lock");

  /* A timed wait at depth 2 releases the lock fully, then restores it. */
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += 10 * 1000 * 1000;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  cr_assert_eq(lapi_rlock_cond_wait(&shared_lock, &c, &ts), ETIMEDOUT);
  cr_assert_eq(shared_lock.depth, 2);
  cr_assert(lapi_rlock_mine(&shared_lock));
  lapi_rlock_unlock(&shared_lock);
  lapi_rlock_unlock(&shared_lock);
  pthread_create(&t, NULL, try_other, NULL);
  pthread_join(t, &got);
  cr_assert_not_null(got, "the lock was not released");
  cr_assert_eq(lapi_rlock_cond_wait(&shared_lock, &c, NULL), EPERM);
}

static void *ring_later(void *arg)
{
  (void)arg;
  usleep(20000);
  lapi_bell_ring();
  return NULL;
}

Test(core_internals, doorbell_wakes_a_sleeper)
{
  unsigned seq = lapi_bell_arm();
  pthread_t t;
  pthread_create(&t, NULL, ring_later, NULL);
  lapi_bell_sleep(seq, -1); /* returns only when rung */
  pthread_join(t, NULL);
  /* Ringing with no sleeper is a no-op; an armed-then-rung sleep does
   * not block at all. */
  lapi_bell_ring();
  seq = lapi_bell_arm();
  pthread_create(&t, NULL, ring_later, NULL);
  pthread_join(t, NULL);
  lapi_bell_sleep(seq, -1);
}

Test(core_internals, selector_and_stubs)
{
  const struct lapi_job *j = lapi_job();
  cr_assert_eq(j->task_id, 0);
  cr_assert_eq(j->num_tasks, 1);
  cr_assert_eq(j->cg_tasks, 1);
  lapi_handle_t hv = core_init();
  struct lapi_hndl *h = lapi_hndl_get(hv);
  cr_assert_not_null(h);
  cr_assert_eq(lapi_tp_select(h, 0), &lapi_tp_self);
  const struct lapi_tp_ops *none = lapi_tp_select(h, 5);
  cr_assert_neq(none, &lapi_tp_self);
  cr_assert_not_null(none->am_send, "a missing op is a stub, never NULL");
  struct lapi_tp_am am;
  memset(&am, 0, sizeof am);
  struct lapi_tp_rma rma;
  memset(&rma, 0, sizeof rma);
  struct lapi_tp_rmw rmw;
  memset(&rmw, 0, sizeof rmw);
  cr_assert_eq(none->am_send(h, &am), LAPI_ERR_NO_CONNECTIVITY);
  cr_assert_eq(none->put(h, &rma), LAPI_ERR_NO_CONNECTIVITY);
  cr_assert_eq(none->get(h, &rma), LAPI_ERR_NO_CONNECTIVITY);
  cr_assert_eq(none->rmw(h, &rmw), LAPI_ERR_NO_CONNECTIVITY);
  cr_assert_eq(none->progress(h), 0);
  struct lapi_tp_caps caps;
  lapi_tp_self.caps(&caps);
  cr_assert(caps.strided && caps.atomics && caps.max_pkt > 0);
  cr_assert_geq(lapi_tp_count, 1);
  cr_assert_eq(lapi_tp_all[0], &lapi_tp_self);
  /* The small-message path's subsets name exactly the transports with a
   * network (a tight op) and those with a drained op. */
  unsigned nets = 0, drains = 0;
  for (unsigned t = 0; t < lapi_tp_count; t++) {
    const struct lapi_tp_ops *tp = lapi_tp_all[t];
    int in_net = 0, in_drain = 0;
    for (unsigned k = 0; k < lapi_tp_net_count; k++)
      in_net |= lapi_tp_net[k] == tp;
    for (unsigned k = 0; k < lapi_tp_draining_count; k++)
      in_drain |= lapi_tp_draining[k] == tp;
    cr_assert_eq(in_net, tp->tight != lapi_tp_no_tight, "%s", tp->name);
    cr_assert_eq(in_drain, tp->drained != NULL, "%s", tp->name);
    nets += (unsigned)in_net;
    drains += (unsigned)in_drain;
  }
  cr_assert_eq(nets, lapi_tp_net_count);
  cr_assert_eq(drains, lapi_tp_draining_count);
  cr_assert_null(lapi_hndl_get(hv + 1));
  LAPI_Term(hv);
  cr_assert_null(lapi_hndl_get(hv));
}

/* Items posted by hand: run in order by a poll, or cancelled by origin. */
struct test_item {
  struct lapi_item it;
  int id;
  int *log;
  int *n;
};

static void item_run(struct lapi_item *it)
{
  struct test_item *t = (struct test_item *)it;
  t->log[(*t->n)++] = t->id;
}

static void item_cancel(struct lapi_item *it)
{
  struct test_item *t = (struct test_item *)it;
  t->log[(*t->n)++] = -t->id;
}

Test(core_internals, queue_runs_in_order_and_cancels_by_origin)
{
  lapi_handle_t hv = core_init_mode(0);
  struct lapi_hndl *h = lapi_hndl_get(hv);
  int log[8], n = 0;
  struct test_item items[4];
  for (int i = 0; i < 4; i++) {
    items[i] = (struct test_item){{NULL, item_run, item_cancel, i % 2 ? 3 : 0},
                                  i + 1, log, &n};
    lapi_am_post(h, &items[i].it);
  }
  cr_assert_eq(h->pending, 4);
  lapi_dispatch_cancel_from(h, 3); /* items 2 and 4 */
  cr_assert_eq(n, 2);
  cr_assert_eq(log[0], -2);
  cr_assert_eq(log[1], -4);
  cr_assert_eq(h->pending, 2);
  cr_assert_eq(LAPI_Probe(hv), LAPI_SUCCESS);
  cr_assert_eq(n, 4);
  cr_assert_eq(log[2], 1);
  cr_assert_eq(log[3], 3);
  cr_assert_eq(h->pending, 0);
  cr_assert_null(h->qhead);
  cr_assert_null(h->qtail);
  LAPI_Term(hv);
}

/* The receive API as a transport drives it: header, data, completion. */
static char dest[32];
static int completions;

static void api_ch(lapi_handle_t *h, void *p)
{
  (void)h;
  CORE_CHECK(p == dest);
  completions++;
}

static void *api_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                    ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)h, (void)uhdr, (void)uhdr_len;
  CORE_CHECK(((lapi_return_info_t *)msg_len)->src == 3);
  *c = api_ch;
  *ui = dest;
  return dest;
}

Test(core_internals, receive_api_by_hand)
{
  lapi_handle_t hv = core_init();
  struct lapi_hndl *h = lapi_hndl_get(hv);
  lapi_cntr_t t = {0};
  char payload[8] = "payload";
  struct lapi_am_msg m = {
    .h = h, .src = 3, .hdr_hdl = (uint64_t)(uintptr_t)api_hh,
    .msg_len = 8, .tgt_cntr = (uint64_t)(uintptr_t)&t,
  };
  struct lapi_am_dest d;
  lapi_am_recv_header(&m, &d);
  cr_assert_eq(d.action, LAPI_AM_DELIVER);
  cr_assert_eq(d.buf, dest);
  cr_assert_eq(d.bytes, 8);
  memcpy(d.buf, payload, d.bytes);
  lapi_am_recv_complete(&m, &d);
  cr_assert_eq(completions, 1);
  cr_assert_eq(t.cntr, 1);
  cr_assert_str_eq(dest, "payload");

  /* Index 0 is the NULL handler: FAILED, reported, error code kept. */
  m.hdr_hdl = 0;
  lapi_am_recv_header(&m, &d);
  cr_assert_eq(d.action, LAPI_AM_FAILED);
  cr_assert_eq(d.error, LAPI_ERR_HDR_HNDLR_NULL);
  LAPI_Term(hv);
  CORE_ASSERT_NO_FAILURE();
}

/* A tight waiter yields from the start once 2 waits in a row ended
 * right after a yield that gave the CPU to somebody for a turn (the peer
 * on our CPU), pauses again after a wait without one, and tries a paused
 * wait every 32 (lapi_wait.c).  The state machine alone: no clock. */
Test(core_internals, tight_wait_yields_first_while_the_peer_shares_the_cpu)
{
  cr_assert_eq(lapi_tight_yields_first(), 0);
  lapi_tight_ended(1);
  cr_assert_eq(lapi_tight_yields_first(), 0, "one turn is not enough");
  lapi_tight_ended(0);
  lapi_tight_ended(1);
  cr_assert_eq(lapi_tight_yields_first(), 0, "two, but not in a row");
  lapi_tight_ended(1);
  cr_assert_eq(lapi_tight_yields_first(), 1);
  lapi_tight_ended(0);
  cr_assert_eq(lapi_tight_yields_first(), 0, "a wait without a turn");
  lapi_tight_ended(1);
  lapi_tight_ended(1);
  for (int i = 1; i < 32; i++) {
    lapi_tight_ended(1);
    cr_assert_eq(lapi_tight_yields_first(), 1, "wait %d", i);
  }
  lapi_tight_ended(1);
  cr_assert_eq(lapi_tight_yields_first(), 0, "the 32nd: a paused probe");
  lapi_tight_ended(1);
  cr_assert_eq(lapi_tight_yields_first(), 1, "the probe ended by a turn");
  for (int i = 0; i < 32; i++)
    lapi_tight_ended(1);
  cr_assert_eq(lapi_tight_yields_first(), 0);
  lapi_tight_ended(0);
  lapi_tight_ended(1);
  cr_assert_eq(lapi_tight_yields_first(), 0,
               "the probe's answer came while pausing: two turns again");
  lapi_tight_ended(1);
  cr_assert_eq(lapi_tight_yields_first(), 1);
}

Test(core_internals, log_levels)
{
  setenv("LAPI_DEBUG", "3", 1);
  cr_assert_eq(lapi_log_level(), 3);
  cr_assert_eq(LAPI_FAIL(LAPI_ERR_TGT, "test line %d", 1), LAPI_ERR_TGT);
}

/* Flow control: a plain sender in interrupt mode never lets more than
 * LAPI_AM_QUEUE_MAX messages wait; in polling mode it is never held. */
static int slow_first;

static void *slow_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                     ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)h, (void)uhdr, (void)uhdr_len, (void)msg_len;
  if (slow_first++ == 0)
    usleep(50000); /* let the queue fill up behind this one */
  *c = NULL;
  *ui = NULL;
  return NULL;
}

Test(core_internals, throttle_bounds_the_queue_in_interrupt_mode)
{
  const int n = 3 * LAPI_AM_QUEUE_MAX;
  lapi_handle_t hv = core_init();
  struct lapi_hndl *h = lapi_hndl_get(hv);
  lapi_cntr_t c = {0};
  int peak = 0;
  for (int i = 0; i < n; i++) {
    cr_assert_eq(LAPI_Amsend(hv, 0, (void *)slow_hh, NULL, 0, NULL, 0, NULL,
                             NULL, &c), LAPI_SUCCESS);
    int p = __atomic_load_n(&h->pending, __ATOMIC_SEQ_CST);
    if (p > peak)
      peak = p;
  }
  cr_assert_leq(peak, LAPI_AM_QUEUE_MAX + 1, "peak %d", peak);
  cr_assert_eq(LAPI_Waitcntr(hv, &c, n, NULL), LAPI_SUCCESS);
  LAPI_Term(hv);

  hv = core_init_mode(0);
  h = lapi_hndl_get(hv);
  for (int i = 0; i < n; i++)
    LAPI_Amsend(hv, 0, (void *)slow_hh, NULL, 0, NULL, 0, NULL, NULL, &c);
  cr_assert_eq(h->pending, n, "polling mode: a sender is never held");
  cr_assert_eq(LAPI_Waitcntr(hv, &c, n, NULL), LAPI_SUCCESS);
  LAPI_Term(hv);
}
