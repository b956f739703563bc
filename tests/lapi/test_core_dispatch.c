/*
 * test_core_dispatch.c - where handlers run and how waits make progress:
 * the dispatcher thread in interrupt mode, only a polling thread in
 * polling mode (never a thread that merely sends), waits and fences
 * inside completion handlers, a mode switch with work queued, LAPI_Probe,
 * LAPI_Msgpoll, LAPI_Util's lock excluding handlers, several handles.
 */
#include <errno.h>
#include <unistd.h>

#include "core_util.h"

static pthread_t main_thread;
static pthread_t sender_thread;
static int hh_on_main, hh_on_sender, ch_on_main, ch_on_sender;
static int handled;

static void note(int *on_main, int *on_sender)
{
  if (pthread_equal(pthread_self(), main_thread))
    __atomic_add_fetch(on_main, 1, __ATOMIC_SEQ_CST);
  if (pthread_equal(pthread_self(), sender_thread))
    __atomic_add_fetch(on_sender, 1, __ATOMIC_SEQ_CST);
}

static void where_ch(lapi_handle_t *h, void *p)
{
  (void)h;
  (void)p;
  note(&ch_on_main, &ch_on_sender);
  __atomic_add_fetch(&handled, 1, __ATOMIC_SEQ_CST);
}

static void *where_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)h, (void)uhdr, (void)uhdr_len, (void)msg_len;
  note(&hh_on_main, &hh_on_sender);
  *c = where_ch;
  *ui = NULL;
  return NULL;
}

Test(core_dispatch, interrupt_mode_runs_handlers_on_the_dispatcher)
{
  main_thread = pthread_self();
  lapi_handle_t h = core_init();
  lapi_cntr_t c = {0};
  for (int i = 0; i < 50; i++)
    cr_assert_eq(LAPI_Amsend(h, 0, (void *)where_hh, NULL, 0, NULL, 0, NULL,
                             NULL, &c), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h, &c, 50, NULL), LAPI_SUCCESS);
  cr_assert_eq(handled, 50);
  cr_assert_eq(hh_on_main + ch_on_main, 0,
               "interrupt mode: no handler on the application thread");
  LAPI_Term(h);
}

struct sender {
  lapi_handle_t h;
  lapi_cntr_t *c;
  int n;
};

static void *send_thread(void *arg)
{
  struct sender *s = arg;
  for (int i = 0; i < s->n; i++)
    CORE_CHECK(LAPI_Amsend(s->h, 0, (void *)where_hh, NULL, 0, NULL, 0, NULL,
                           NULL, s->c) == LAPI_SUCCESS);
  return NULL;
}

/* Polling mode: a thread that only sends never runs a handler; the one
 * that waits does. */
Test(core_dispatch, polling_mode_runs_handlers_on_the_poller_only)
{
  main_thread = pthread_self();
  lapi_handle_t h = core_init_mode(0);
  lapi_cntr_t c = {0};
  struct sender s = {h, &c, 200};
  pthread_create(&sender_thread, NULL, send_thread, &s);
  cr_assert_eq(LAPI_Waitcntr(h, &c, 200, NULL), LAPI_SUCCESS);
  pthread_join(sender_thread, NULL);
  cr_assert_eq(handled, 200);
  cr_assert_eq(hh_on_sender + ch_on_sender, 0);
  cr_assert_eq(hh_on_main, 200);
  cr_assert_eq(ch_on_main, 200);
  CORE_ASSERT_NO_FAILURE();
  LAPI_Term(h);
}

Test(core_dispatch, polling_mode_nothing_runs_without_a_poll)
{
  main_thread = pthread_self();
  lapi_handle_t h = core_init_mode(0);
  lapi_cntr_t c = {0};
  LAPI_Amsend(h, 0, (void *)where_hh, NULL, 0, NULL, 0, NULL, NULL, &c);
  usleep(50000);
  cr_assert_eq(handled, 0, "no one polled: the handler must not have run");
  cr_assert_eq(LAPI_Probe(h), LAPI_SUCCESS);
  cr_assert_eq(handled, 1, "LAPI_Probe runs the queued message");
  cr_assert_eq(core_cntr(h, &c), 1);
  LAPI_Term(h);
}

Test(core_dispatch, switching_to_interrupt_mode_runs_queued_work)
{
  lapi_handle_t h = core_init_mode(0);
  lapi_cntr_t c = {0};
  for (int i = 0; i < 5; i++)
    LAPI_Amsend(h, 0, (void *)where_hh, NULL, 0, NULL, 0, NULL, NULL, &c);
  cr_assert_eq(LAPI_Senv(h, INTERRUPT_SET, 1), LAPI_SUCCESS);
  /* Nopoll_wait: only the dispatcher can make these complete. */
  cr_assert_eq(LAPI_Nopoll_wait(h, &c, 5, NULL), LAPI_SUCCESS);
  cr_assert_eq(handled, 5);
  LAPI_Term(h);
}

/* A completion handler that sends to itself and waits, then fences: the
 * wait on the dispatcher keeps dispatching instead of deadlocking. */
static lapi_cntr_t inner_cntr;
static int inner_done, outer_done;

static void inner_ch(lapi_handle_t *h, void *p)
{
  (void)h;
  (void)p;
  inner_done++;
}

static void *inner_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)h, (void)uhdr, (void)uhdr_len, (void)msg_len;
  *c = inner_ch;
  *ui = NULL;
  return NULL;
}

static void outer_ch(lapi_handle_t *hp, void *p)
{
  (void)p;
  lapi_handle_t h = *hp;
  for (int i = 0; i < 3; i++)
    CORE_CHECK(LAPI_Amsend(h, 0, (void *)inner_hh, NULL, 0, NULL, 0,
                           &inner_cntr, NULL, NULL) == LAPI_SUCCESS);
  int cur = -1;
  CORE_CHECK(LAPI_Waitcntr(h, &inner_cntr, 3, &cur) == LAPI_SUCCESS);
  CORE_CHECK(cur == 0);
  CORE_CHECK(inner_done == 3);
  CORE_CHECK(LAPI_Amsend(h, 0, (void *)inner_hh, NULL, 0, NULL, 0, NULL,
                         NULL, NULL) == LAPI_SUCCESS);
  CORE_CHECK(LAPI_Fence(h) == LAPI_SUCCESS);
  outer_done = 1;
}

static void *outer_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)h, (void)uhdr, (void)uhdr_len, (void)msg_len;
  *c = outer_ch;
  *ui = NULL;
  return NULL;
}

static void nested_wait(int interrupt)
{
  lapi_handle_t h = core_init_mode(interrupt);
  lapi_cntr_t c = {0};
  LAPI_Setcntr(h, &inner_cntr, 0);
  cr_assert_eq(LAPI_Amsend(h, 0, (void *)outer_hh, NULL, 0, NULL, 0, &c,
                           NULL, NULL), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h, &c, 1, NULL), LAPI_SUCCESS);
  cr_assert_eq(outer_done, 1);
  cr_assert_eq(LAPI_Term(h), LAPI_SUCCESS);
  CORE_ASSERT_NO_FAILURE();
}

Test(core_dispatch, wait_inside_a_completion_handler_interrupt)
{
  nested_wait(1);
}

Test(core_dispatch, wait_inside_a_completion_handler_polling)
{
  nested_wait(0);
}

Test(core_dispatch, msgpoll_reports_completion)
{
  lapi_handle_t h = core_init_mode(0);
  lapi_msg_info_t info;
  memset(&info, 0xff, sizeof info);
  cr_assert_eq(LAPI_Msgpoll(h, 10, NULL), LAPI_ERR_MSG_INFO_NULL);
  cr_assert_eq(LAPI_Msgpoll(h, 10, &info), LAPI_SUCCESS);
  cr_assert_eq(info.status, 0, "nothing happened");
  lapi_cntr_t c = {0};
  LAPI_Amsend(h, 0, (void *)where_hh, NULL, 0, NULL, 0, NULL, NULL, &c);
  cr_assert_eq(LAPI_Msgpoll(h, 10, &info), LAPI_SUCCESS);
  cr_assert(info.status & LAPI_RECV_COMPLETE);
  cr_assert(info.status & LAPI_SEND_COMPLETE);
  cr_assert_eq(core_cntr(h, &c), 1);
  cr_assert_eq(LAPI_Msgpoll(LAPI_VOID_HANDLE, 1, &info),
               LAPI_ERR_HNDL_INVALID);
  LAPI_Term(h);
}

/* While the program holds the handle lock (LAPI_Util), no handler of the
 * handle runs; cond_wait releases it. */
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static lapi_thread_func_t tf;
static int flag;

static void signal_ch(lapi_handle_t *hp, void *p)
{
  (void)p;
  CORE_CHECK(tf.mutex_lock(*hp) == 0); /* recursive: we already hold it */
  flag = 1;
  tf.cond_signal(*hp, &cond);
  CORE_CHECK(tf.mutex_unlock(*hp) == 0);
}

static void *signal_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)h, (void)uhdr, (void)uhdr_len, (void)msg_len;
  *c = signal_ch;
  *ui = NULL;
  return NULL;
}

Test(core_dispatch, util_thread_functions_exclude_handlers)
{
  lapi_handle_t h = core_init();
  lapi_util_t u;
  memset(&u, 0, sizeof u);
  cr_assert_eq(LAPI_Util(h, NULL), LAPI_ERR_UTIL_CMD);
  u.Util_type = LAPI_REGISTER_DGSP;
  cr_assert_eq(LAPI_Util(h, &u), LAPI_ERR_UTIL_CMD);
  u.Util_type = LAPI_GET_THREAD_FUNC;
  cr_assert_eq(LAPI_Util(h, &u), LAPI_SUCCESS);
  tf = u.ThreadFunc;
  cr_assert_not_null(tf.cond_timedwait);

  pthread_t owner;
  cr_assert_eq(tf.mutex_getowner(h, &owner), 0);
  cr_assert(pthread_equal(owner, LAPI_NULL_THREAD_ID));
  cr_assert_eq(tf.mutex_lock(h), 0);
  cr_assert_eq(tf.mutex_getowner(h, &owner), 0);
  cr_assert(pthread_equal(owner, pthread_self()));
  LAPI_Amsend(h, 0, (void *)signal_hh, NULL, 0, NULL, 0, NULL, NULL, NULL);
  usleep(50000);
  cr_assert_eq(flag, 0, "a handler ran while the program held the lock");
  while (!flag)
    cr_assert_eq(tf.cond_wait(h, &cond), 0);
  cr_assert_eq(tf.mutex_unlock(h), 0);
  cr_assert_eq(tf.mutex_unlock(h), EPERM, "not held any more");
  cr_assert_eq(tf.mutex_lock(LAPI_VOID_HANDLE), EINVAL);
  LAPI_Term(h);
  CORE_ASSERT_NO_FAILURE();
}

/* Handle k's messages reach handle k's handler table and counters. */
static int seen_by[3];

static void *by_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                   ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)uhdr, (void)uhdr_len, (void)msg_len;
  seen_by[*h]++;
  *c = NULL;
  *ui = NULL;
  return NULL;
}

static void *other_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)h, (void)uhdr, (void)uhdr_len, (void)msg_len;
  CORE_CHECK(!"the index of another handle's table was used");
  *c = NULL;
  *ui = NULL;
  return NULL;
}

Test(core_dispatch, handles_are_independent_instances)
{
  lapi_handle_t h[3] = {core_init(), core_init_mode(0), core_init()};
  lapi_cntr_t c[3];
  for (int i = 0; i < 3; i++) {
    LAPI_Setcntr(h[i], &c[i], 0);
    /* Index 5 means a different handler on each handle. */
    cr_assert_eq(LAPI_Addr_set(h[i], i == 1 ? (void *)by_hh
                                            : (void *)other_hh, 5),
                 LAPI_SUCCESS);
    cr_assert_eq(LAPI_Addr_set(h[i], (void *)by_hh, 6), LAPI_SUCCESS);
  }
  cr_assert_eq(LAPI_Amsend(h[1], 0, (void *)5, NULL, 0, NULL, 0, &c[1],
                           NULL, NULL), LAPI_SUCCESS);
  for (int i = 0; i < 3; i++)
    cr_assert_eq(LAPI_Amsend(h[i], 0, (void *)6, NULL, 0, NULL, 0, &c[i],
                             NULL, NULL), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h[1], &c[1], 2, NULL), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h[0], &c[0], 1, NULL), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h[2], &c[2], 1, NULL), LAPI_SUCCESS);
  cr_assert_eq(seen_by[0], 1);
  cr_assert_eq(seen_by[1], 2);
  cr_assert_eq(seen_by[2], 1);
  for (int i = 0; i < 3; i++)
    LAPI_Term(h[i]);
  CORE_ASSERT_NO_FAILURE();
}

/* LAPI_Term drains: queued messages of a polling handle run first. */
Test(core_dispatch, term_drains_queued_messages)
{
  lapi_handle_t h = core_init_mode(0);
  for (int i = 0; i < 10; i++)
    LAPI_Amsend(h, 0, (void *)where_hh, NULL, 0, NULL, 0, NULL, NULL, NULL);
  cr_assert_eq(LAPI_Term(h), LAPI_SUCCESS);
  cr_assert_eq(handled, 10);
}
