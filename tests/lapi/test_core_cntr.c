/*
 * test_core_cntr.c - counters: Setcntr/Getcntr, Waitcntr's subtraction
 * and cur value, several waiting threads, a waiter released by Setcntr,
 * Nopoll_wait, Setcntr_wstatus with a purge, the error codes, and a
 * counter whose memory held garbage before Setcntr or was overwritten
 * while a thread slept on it.
 */
#include <string.h>
#include <unistd.h>

#include "core_util.h"

Test(core_cntr, set_get_wait_subtracts)
{
  lapi_handle_t h = core_init();
  lapi_cntr_t c;
  cr_assert_eq(LAPI_Setcntr(h, &c, 7), LAPI_SUCCESS);
  cr_assert_eq(core_cntr(h, &c), 7);
  int cur = -1;
  cr_assert_eq(LAPI_Waitcntr(h, &c, 5, &cur), LAPI_SUCCESS);
  cr_assert_eq(cur, 2, "Waitcntr subtracts val and reports the rest");
  cr_assert_eq(core_cntr(h, &c), 2);
  cr_assert_eq(LAPI_Waitcntr(h, &c, 2, NULL), LAPI_SUCCESS);
  cr_assert_eq(core_cntr(h, &c), 0);
  cr_assert_eq(LAPI_Waitcntr(h, &c, 0, &cur), LAPI_SUCCESS);
  cr_assert_eq(cur, 0, "val 0 returns at once");
  cr_assert_eq(LAPI_Setcntr(h, &c, -3), LAPI_SUCCESS);
  cr_assert_eq(core_cntr(h, &c), -3);
  LAPI_Term(h);
}

Test(core_cntr, error_codes_and_no_side_effects)
{
  lapi_handle_t h = core_init();
  lapi_cntr_t c = {0};
  int v = 99;
  cr_assert_eq(LAPI_Setcntr(h, NULL, 1), LAPI_ERR_CNTR_NULL);
  cr_assert_eq(LAPI_Getcntr(h, NULL, &v), LAPI_ERR_CNTR_NULL);
  cr_assert_eq(LAPI_Getcntr(h, &c, NULL), LAPI_ERR_RET_PTR_NULL);
  cr_assert_eq(LAPI_Waitcntr(h, NULL, 1, &v), LAPI_ERR_CNTR_NULL);
  cr_assert_eq(LAPI_Nopoll_wait(h, NULL, 1, &v), LAPI_ERR_CNTR_NULL);
  cr_assert_eq(LAPI_Waitcntr(h, &c, -1, &v), LAPI_ERR_CNTR_VAL);
  cr_assert_eq(v, 99, "a failed wait writes nothing");
  cr_assert_eq(LAPI_Setcntr(5, &c, 1), LAPI_ERR_HNDL_INVALID);
  cr_assert_eq(c.cntr, 0);
  cr_assert_eq(LAPI_Waitcntr(5, &c, 0, &v), LAPI_ERR_HNDL_INVALID);
  uint dest[1] = {0};
  int st[1] = {123};
  cr_assert_eq(LAPI_Setcntr_wstatus(h, NULL, 1, dest, st), LAPI_ERR_CNTR_NULL);
  cr_assert_eq(LAPI_Setcntr_wstatus(h, &c, -1, dest, st), LAPI_ERR_CNTR_VAL);
  cr_assert_eq(LAPI_Setcntr_wstatus(h, &c, 1, NULL, st), LAPI_ERR_NULL_LIST);
  cr_assert_eq(LAPI_Setcntr_wstatus(h, &c, 1, dest, NULL),
               LAPI_ERR_RET_PTR_NULL);
  uint bad[1] = {1};
  cr_assert_eq(LAPI_Setcntr_wstatus(h, &c, 1, bad, st), LAPI_ERR_TASK_NUM);
  cr_assert_eq(st[0], 123, "refused calls leave dest_status alone");
  LAPI_Term(h);
}

struct waiter {
  lapi_handle_t h;
  lapi_cntr_t *c;
  int val;
  int nopoll;
};

static void *wait_thread(void *arg)
{
  struct waiter *w = arg;
  int rc = w->nopoll ? LAPI_Nopoll_wait(w->h, w->c, w->val, NULL)
                     : LAPI_Waitcntr(w->h, w->c, w->val, NULL);
  CORE_CHECK(rc == LAPI_SUCCESS);
  return NULL;
}

/* Four threads each take 2 from one counter; 8 increments by Put
 * completions release all of them and leave 0. */
Test(core_cntr, several_waiters_share_a_counter)
{
  lapi_handle_t h = core_init();
  lapi_cntr_t c;
  LAPI_Setcntr(h, &c, 0);
  pthread_t th[4];
  struct waiter w = {h, &c, 2, 0};
  for (int i = 0; i < 4; i++)
    pthread_create(&th[i], NULL, wait_thread, &w);
  usleep(20000);
  char src = 'x', dst;
  for (int i = 0; i < 8; i++)
    cr_assert_eq(LAPI_Put(h, 0, 1, &dst, &src, &c, NULL, NULL),
                 LAPI_SUCCESS);
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  cr_assert_eq(core_cntr(h, &c), 0);
  CORE_ASSERT_NO_FAILURE();
  LAPI_Term(h);
}

Test(core_cntr, setcntr_releases_a_sleeping_waiter)
{
  for (int nopoll = 0; nopoll < 2; nopoll++) {
    lapi_handle_t h = core_init_mode(nopoll);
    lapi_cntr_t c;
    LAPI_Setcntr(h, &c, 0);
    pthread_t th;
    struct waiter w = {h, &c, 3, nopoll};
    pthread_create(&th, NULL, wait_thread, &w);
    usleep(50000); /* it is asleep by now (not required for the test) */
    cr_assert_eq(LAPI_Setcntr(h, &c, 5), LAPI_SUCCESS);
    pthread_join(th, NULL);
    cr_assert_eq(core_cntr(h, &c), 2);
    LAPI_Term(h);
  }
  CORE_ASSERT_NO_FAILURE();
}

/* A counter on the stack holds garbage until LAPI_Setcntr sets it: a run
 * of ofi_waiter_runs had 0x7fff in _wait (the upper half of a stack
 * address), a sleeper's +1 made it 0x8000, whose low byte says nobody
 * sleeps, and no increment ever woke the waiter (each wait lasted its
 * 250 ms slice).  Setcntr must start the word at 0, and a sleeper on a
 * word the program overwrote after that must count itself exactly. */
Test(core_cntr, setcntr_clears_garbage_in_the_wait_word)
{
  static const unsigned garbage[] = {0x7fffu, 0xffu, 0xffff0000u,
                                     0xffffffffu, 0x7fffffffu};
  for (int intr = 0; intr < 2; intr++) {
    lapi_handle_t h = core_init_mode(intr);
    for (unsigned g = 0; g < sizeof garbage / sizeof garbage[0]; g++) {
      lapi_cntr_t c;
      memset(&c, 0xa5, sizeof c);
      c._wait = (int)garbage[g];
      cr_assert_eq(LAPI_Setcntr(h, &c, 0), LAPI_SUCCESS);
      cr_assert_eq(c._wait, 0, "Setcntr left _wait at %#x (was %#x)",
                   (unsigned)c._wait, garbage[g]);
      c._wait = (int)garbage[g];
      uint dest[1] = {0};
      int st[1];
      cr_assert_eq(LAPI_Setcntr_wstatus(h, &c, 1, dest, st), LAPI_SUCCESS);
      cr_assert_eq(c._wait, 0, "Setcntr_wstatus left _wait at %#x",
                   (unsigned)c._wait);

      /* Overwritten again, nobody asleep: the first sleeper sets it. */
      c._wait = (int)garbage[g];
      pthread_t th;
      struct waiter w = {h, &c, 1, 0};
      pthread_create(&th, NULL, wait_thread, &w);
      int seen = (int)garbage[g];
      for (int i = 0; i < 20000 && seen == (int)garbage[g]; i++) {
        usleep(500); /* until the waiter counts itself in (it spins first) */
        seen = __atomic_load_n(&c._wait, __ATOMIC_SEQ_CST);
      }
      /* 1: a plain sleeper; 0x10000: one that sleeps on the doorbell */
      cr_assert(seen == 1 || seen == 0x10000,
                "a sleeper made _wait %#x from %#x (mode %d)", (unsigned)seen,
                garbage[g], intr);
      char src = 'x', dst;
      cr_assert_eq(LAPI_Put(h, 0, 1, &dst, &src, &c, NULL, NULL),
                   LAPI_SUCCESS);
      pthread_join(th, NULL);
      cr_assert_eq(core_cntr(h, &c), 0);
      cr_assert_eq(c._wait, 0, "the last sleeper left _wait at %#x",
                   (unsigned)c._wait);
      LAPI_Setcntr(h, &c, 0); /* ends the status record */
    }
    LAPI_Term(h);
  }
  CORE_ASSERT_NO_FAILURE();
}

/* A word the program overwrote while a thread slept on it (a memset, a
 * struct copy) is repaired when the last sleeper leaves: it clears the
 * word instead of taking its count off the garbage. */
Test(core_cntr, last_sleeper_clears_an_overwritten_wait_word)
{
  for (int intr = 0; intr < 2; intr++) {
    lapi_handle_t h = core_init_mode(intr);
    lapi_cntr_t c;
    cr_assert_eq(LAPI_Setcntr(h, &c, 0), LAPI_SUCCESS);
    pthread_t th;
    struct waiter w = {h, &c, 1, 0};
    pthread_create(&th, NULL, wait_thread, &w);
    for (int i = 0;
         i < 20000 && __atomic_load_n(&c._wait, __ATOMIC_SEQ_CST) == 0; i++)
      usleep(500); /* until the waiter counts itself in */
    cr_assert_neq(c._wait, 0, "the waiter never slept (mode %d)", intr);
    /* garbage that still wakes both kinds of sleeper */
    __atomic_store_n(&c._wait, 0x7fff00ff, __ATOMIC_SEQ_CST);
    char src = 'x', dst;
    cr_assert_eq(LAPI_Put(h, 0, 1, &dst, &src, &c, NULL, NULL),
                 LAPI_SUCCESS);
    pthread_join(th, NULL);
    cr_assert_eq(c._wait, 0, "the last sleeper left _wait at %#x (mode %d)",
                 (unsigned)c._wait, intr);
    LAPI_Term(h);
  }
  CORE_ASSERT_NO_FAILURE();
}

static void *dummy_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)h, (void)uhdr, (void)uhdr_len, (void)msg_len;
  *c = NULL;
  *ui = NULL;
  return NULL;
}

Test(core_cntr, wstatus_records_received_and_purged)
{
  lapi_handle_t h = core_init();
  lapi_cntr_t c;
  uint dest[2] = {0, 0};
  int st[2] = {-1, -1};
  LAPI_Setcntr(h, &c, 9);
  cr_assert_eq(LAPI_Setcntr_wstatus(h, &c, 2, dest, st), LAPI_SUCCESS);
  cr_assert_eq(core_cntr(h, &c), 0, "Setcntr_wstatus sets the counter to 0");
  cr_assert_eq(st[0], LAPI_MSG_INITIAL);
  /* A completion from task 0 marks its entries received. */
  cr_assert_eq(LAPI_Amsend(h, 0, (void *)dummy_hh, NULL, 0, NULL, 0, NULL,
                           NULL, &c), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Nopoll_wait(h, &c, 1, NULL), LAPI_SUCCESS);
  cr_assert_eq(st[0], LAPI_MSG_RECVD);
  cr_assert_eq(st[1], LAPI_MSG_RECVD);

  /* A purge answers for a task that never replied, and wakes the wait. */
  lapi_cntr_t d;
  int st2[1] = {-1};
  LAPI_Setcntr(h, &d, 0);
  cr_assert_eq(LAPI_Setcntr_wstatus(h, &d, 1, dest, st2), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Purge_totask(h, 0), LAPI_SUCCESS);
  cr_assert_eq(LAPI_Waitcntr(h, &d, 1, NULL), LAPI_SUCCESS);
  cr_assert_eq(st2[0], LAPI_MSG_PURGED);

  /* A destination purged already is INVALID from the start. */
  lapi_cntr_t e;
  int st3[1] = {-1};
  LAPI_Setcntr(h, &e, 0);
  cr_assert_eq(LAPI_Setcntr_wstatus(h, &e, 1, dest, st3), LAPI_SUCCESS);
  cr_assert_eq(st3[0], LAPI_MSG_INVALID);
  LAPI_Setcntr(h, &e, 0); /* ends the record */
  cr_assert_eq(LAPI_Resume_totask(h, 0), LAPI_SUCCESS);
  LAPI_Term(h);
}
