/*
 * test_mpe_sync.c - MPE <-> CPE barriers (CRTS_sync_master_spe/_array),
 * locks on a user word (CRTS_mutex_lock/trylock/unlock) and the refusals
 * that must return at once.  Node-scope calls are in test_node.c.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "crts_test_util.h"

#define ROUNDS 100

static int box[64];   /* MPE -> CPE value of the round */
static int reply[64]; /* CPE -> MPE answer of the round */
static int mpe_value;

/* ------------------------------------------------------------ master_spe */

static void spe_side(void *arg)
{
  (void)arg;
  int me = CRTS_tid;
  for (int r = 1; r <= ROUNDS; r++) {
    CRTS_ssync_master_spe();
    CPE_CHECK(box[me] == r);
    if (me % 3 == 0)
      sched_yield();
    reply[me] = r;
    CRTS_ssync_master_spe();
  }
}

Test(mpe_sync, master_spe_pairs_mpe_with_each_cpe, .timeout = 60)
{
  setenv("CRTS_NUM_CPES", "16", 1);
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_athread_spawn((void (*)(void))spe_side, NULL), 0);
  for (int r = 1; r <= ROUNDS; r++) {
    /* Visit the CPEs in a different order each round. */
    for (int i = 0; i < 16; i++) {
      int t = (i * 5 + r) % 16;
      box[t] = r;
      CRTS_sync_master_spe(t);
      CRTS_sync_master_spe(t);
      cr_assert_eq(reply[t], r, "round %d: CPE %d replied %d", r, t,
                   reply[t]);
    }
  }
  cr_assert_eq(CRTS_athread_join(), 0);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* A created thread pairs with the MPE the same way. */
Test(mpe_sync, master_spe_with_created_thread, .timeout = 30)
{
  setenv("CRTS_NUM_CPES", "8", 1);
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_athread_create(6, (void (*)(void))spe_side, NULL), 0);
  for (int r = 1; r <= ROUNDS; r++) {
    box[6] = r;
    CRTS_sync_master_spe(6);
    CRTS_sync_master_spe(6);
    cr_assert_eq(reply[6], r);
  }
  cr_assert_eq(CRTS_athread_wait(6), 0);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

/* ---------------------------------------------------------- master_array */

static void array_side(void *arg)
{
  (void)arg;
  int me = CRTS_tid;
  for (int r = 1; r <= ROUNDS; r++) {
    if ((me + r) % 4 == 0)
      sched_yield();
    reply[me] = r;
    CRTS_ssync_master_array();
    CPE_CHECK(mpe_value == r);
    CRTS_ssync_master_array();
  }
}

static void master_array_rounds(int ncpes, uint64_t present)
{
  cr_assert_eq(CRTS_athread_spawn((void (*)(void))array_side, NULL), 0);
  for (int r = 1; r <= ROUNDS; r++) {
    mpe_value = r;
    CRTS_sync_master_array();
    for (int t = 0; t < ncpes; t++)
      if ((present >> t) & 1)
        cr_assert_eq(reply[t], r, "round %d: CPE %d at %d", r, t, reply[t]);
    CRTS_sync_master_array();
  }
  cr_assert_eq(CRTS_athread_join(), 0);
  CRTS_ASSERT_NO_CPE_FAILURE();
}

Test(mpe_sync, master_array_full_mesh, .timeout = 60)
{
  setenv("CRTS_NUM_CPES", "64", 1);
  cr_assert_eq(CRTS_init(), 0);
  master_array_rounds(64, ~(uint64_t)0);
}

Test(mpe_sync, master_array_counts_only_the_group, .timeout = 60)
{
  setenv("CRTS_NUM_CPES", "12", 1);
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_athread_end(3), 0);
  master_array_rounds(12, 0xfff & ~(uint64_t)8);
  /* The same barrier serves the next spawn. */
  master_array_rounds(12, 0xfff & ~(uint64_t)8);
}

/* ------------------------------------------------------------- refusals */

static void quick(void *arg)
{
  (void)arg;
  CRTS_sync_master_spe(0);   /* from a CPE: refused */
  CRTS_sync_master_array();  /* from a CPE: refused */
  CRTS_sync_node();          /* from a CPE: refused */
}

Test(mpe_sync, calls_without_partner_return_at_once, .timeout = 30)
{
  setenv("CRTS_NUM_CPES", "4", 1);
  CRTS_sync_master_spe(0);   /* before CRTS_init */
  CRTS_sync_master_array();
  cr_assert_eq(CRTS_init(), 0);
  CRTS_sync_master_spe(-1);
  CRTS_sync_master_spe(4);   /* outside CRTS_NUM_CPES */
  CRTS_sync_master_spe(64);
  CRTS_sync_master_spe(2);   /* CPE 2 runs nothing */
  CRTS_sync_master_array();  /* no group */
  crts_test_run(quick, NULL);
  CRTS_sync_master_array();  /* group joined */
}

/* ---------------------------------------------------------- user locks */

static int64_t user_lock __attribute__((aligned(8)));
static int shared_count;

static void lock_count(void *arg)
{
  (void)arg;
  for (int i = 0; i < 40; i++) {
    CPE_CHECK(CRTS_mutex_lock(&user_lock) == 0);
    int v = shared_count;
    if ((i + CRTS_tid) % 3 == 0)
      sched_yield();
    shared_count = v + 1;
    CPE_CHECK(CRTS_mutex_unlock(&user_lock) == 0);
  }
}

Test(mpe_sync, user_lock_excludes, .timeout = 60)
{
  setenv("CRTS_NUM_CPES", "32", 1);
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_athread_spawn((void (*)(void))lock_count, NULL), 0);
  /* The MPE takes part too. */
  for (int i = 0; i < 40; i++) {
    cr_assert_eq(CRTS_mutex_lock(&user_lock), 0);
    int v = shared_count;
    sched_yield();
    shared_count = v + 1;
    cr_assert_eq(CRTS_mutex_unlock(&user_lock), 0);
  }
  cr_assert_eq(CRTS_athread_join(), 0);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert_eq(shared_count, 33 * 40);
  cr_assert_eq(user_lock, 0, "an unlocked lock reads 0");
}

Test(mpe_sync, user_lock_word_states)
{
  static int64_t w[2] __attribute__((aligned(8)));
  /* Only the low 32 bits are the lock: the high bits are left alone. */
  w[0] = (int64_t)0x1234567800000000;
  cr_assert_eq(CRTS_mutex_trylock(&w[0]), 0);
  cr_assert_eq((uint64_t)w[0] >> 32, 0x12345678u);
  cr_assert_neq((uint32_t)w[0], 0, "a held lock is non-zero");
  cr_assert_eq(CRTS_mutex_trylock(&w[0]), 1, "busy");
  cr_assert_eq(CRTS_mutex_unlock(&w[0]), 0);
  cr_assert_eq(w[0], (int64_t)0x1234567800000000);
  cr_assert_eq(CRTS_mutex_lock(&w[0]), 0);
  cr_assert_eq(CRTS_mutex_trylock(&w[0]), 1);
  cr_assert_eq(CRTS_mutex_unlock(&w[0]), 0);
  cr_assert_neq(CRTS_mutex_unlock(&w[0]), 0, "not locked");
  cr_assert_eq(w[0], (int64_t)0x1234567800000000);

  /* Bad words fail and are not touched. */
  cr_assert_eq(CRTS_mutex_trylock(NULL), -1);
  cr_assert_neq(CRTS_mutex_lock(NULL), 0);
  cr_assert_neq(CRTS_mutex_unlock(NULL), 0);
  volatile int64_t *odd = (volatile int64_t *)((char *)&w[0] + 4);
  cr_assert_eq(CRTS_mutex_trylock(odd), -1);
  cr_assert_neq(CRTS_mutex_lock(odd), 0);
  cr_assert_neq(CRTS_mutex_unlock(odd), 0);
  w[1] = 7; /* not a lock state */
  cr_assert_eq(CRTS_mutex_trylock(&w[1]), -1);
  cr_assert_neq(CRTS_mutex_lock(&w[1]), 0);
  cr_assert_eq(w[1], 7);
  cr_assert_eq(w[0], (int64_t)0x1234567800000000);
}
