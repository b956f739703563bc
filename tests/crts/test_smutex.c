/*
 * test_smutex.c - CPE locks: mutual exclusion within every group instance
 * (a non-atomic read-modify-write of the instance's counter, with a yield
 * inside the critical section, must lose no update), aliases sharing one
 * lock, partial meshes, and the refusals (MPE, double lock, foreign unlock).
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdlib.h>

#include "crts_test_util.h"

#define ITERS 60

struct kind {
  const char *name;
  int (*lock)(void), (*unlock)(void);          /* even CPEs */
  int (*lock_odd)(void), (*unlock_odd)(void);  /* odd CPEs (alias) or NULL */
  int (*key)(int tid);
};

static int key_2spe(int t) { return t / 2; }
static int key_cluster(int t) { return (t / 16) * 4 + (t % 8) / 2; }
static int key_2spc(int t) { return key_cluster(t) / 2; }
static int key_row(int t) { return t / 8; }
static int key_col(int t) { return t % 8; }
static int key_16(int t) { return t / 16; }
static int key_32(int t) { return t / 32; }
static int key_all(int t) { (void)t; return 0; }

static const struct kind kinds[] = {
  {"2spe", CRTS_smutex_lock_2spe, CRTS_smutex_unlock_2spe, NULL, NULL,
   key_2spe},
  {"1spc", CRTS_smutex_lock_1spc, CRTS_smutex_unlock_1spc, NULL, NULL,
   key_cluster},
  {"8spe+row", CRTS_smutex_lock_8spe, CRTS_smutex_unlock_8spe,
   CRTS_smutex_lock_row, CRTS_smutex_unlock_row, key_row},
  {"col", CRTS_smutex_lock_col, CRTS_smutex_unlock_col, NULL, NULL, key_col},
  {"2spc", CRTS_smutex_lock_2spc, CRTS_smutex_unlock_2spc, NULL, NULL,
   key_2spc},
  {"16spe+4spc", CRTS_smutex_lock_16spe, CRTS_smutex_unlock_16spe,
   CRTS_smutex_lock_4spc, CRTS_smutex_unlock_4spc, key_16},
  {"32spe+8spc", CRTS_smutex_lock_32spe, CRTS_smutex_unlock_32spe,
   CRTS_smutex_lock_8spc, CRTS_smutex_unlock_8spc, key_32},
  {"array", CRTS_smutex_lock_array, CRTS_smutex_unlock_array, NULL, NULL,
   key_all},
  {"node", CRTS_smutex_lock_node, CRTS_smutex_unlock_node, NULL, NULL,
   key_all},
};
#define NKINDS ((int)(sizeof kinds / sizeof kinds[0]))

static int counter[64];

static void count_up(void *arg)
{
  const struct kind *k = arg;
  int me = CRTS_tid;
  int odd = (me & 1) && k->lock_odd;
  int (*lock)(void) = odd ? k->lock_odd : k->lock;
  int (*unlock)(void) = odd ? k->unlock_odd : k->unlock;
  int *c = &counter[k->key(me)];
  for (int i = 0; i < ITERS; i++) {
    CPE_CHECK(lock() == 0);
    int v = *c;
    if ((i + me) % 3 == 0)
      sched_yield(); /* let another member run inside the section */
    *c = v + 1;
    CPE_CHECK(unlock() == 0);
  }
}

static void run_kinds(int ncpes)
{
  for (int i = 0; i < NKINDS; i++) {
    const struct kind *k = &kinds[i];
    for (int t = 0; t < 64; t++)
      counter[t] = 0;
    crts_test_run(count_up, (void *)k);
    CRTS_ASSERT_NO_CPE_FAILURE();
    int expect[64] = {0};
    for (int t = 0; t < ncpes; t++)
      expect[k->key(t)] += ITERS;
    for (int t = 0; t < 64; t++)
      cr_assert_eq(counter[t], expect[t], "%s: instance %d counted %d, not %d",
                   k->name, t, counter[t], expect[t]);
  }
}

Test(smutex, every_lock_excludes_its_group, .timeout = 120)
{
  setenv("CRTS_NUM_CPES", "64", 1);
  run_kinds(64);
}

Test(smutex, partial_mesh, .timeout = 60)
{
  setenv("CRTS_NUM_CPES", "12", 1);
  run_kinds(12);
}

/* Locks work for created threads too: two CPEs of one row. */
static void created_count(void *arg)
{
  (void)arg;
  for (int i = 0; i < ITERS; i++) {
    CPE_CHECK(CRTS_smutex_lock_row() == 0);
    int v = counter[0];
    sched_yield();
    counter[0] = v + 1;
    CPE_CHECK(CRTS_smutex_unlock_row() == 0);
  }
}

Test(smutex, created_threads, .timeout = 30)
{
  setenv("CRTS_NUM_CPES", "8", 1);
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_athread_create(1, (void (*)(void))created_count, NULL), 0);
  cr_assert_eq(CRTS_athread_create(5, (void (*)(void))created_count, NULL), 0);
  cr_assert_eq(CRTS_athread_wait(1), 0);
  cr_assert_eq(CRTS_athread_wait(5), 0);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert_eq(counter[0], 2 * ITERS);
}

static void misuse(void *arg)
{
  (void)arg;
  int me = CRTS_tid;
  CPE_CHECK(CRTS_smutex_unlock_col() != 0); /* not locked */
  if (me == 0) {
    CPE_CHECK(CRTS_smutex_lock_row() == 0);
    CPE_CHECK(CRTS_smutex_lock_row() != 0); /* not recursive */
  }
  CRTS_ssync_row();
  if (me == 1)
    CPE_CHECK(CRTS_smutex_unlock_row() != 0); /* held by CPE 0 */
  CRTS_ssync_row();
  if (me == 0)
    CPE_CHECK(CRTS_smutex_unlock_row() == 0);
  CRTS_ssync_row();
  /* Still usable after the refusals. */
  CPE_CHECK(CRTS_smutex_lock_row() == 0);
  counter[me] = 1;
  CPE_CHECK(CRTS_smutex_unlock_row() == 0);
}

Test(smutex, misuse_fails_without_harm, .timeout = 30)
{
  setenv("CRTS_NUM_CPES", "8", 1);
  crts_test_run(misuse, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  for (int t = 0; t < 8; t++)
    cr_assert_eq(counter[t], 1);
  /* The MPE has no CPE locks. */
  cr_assert_neq(CRTS_smutex_lock_array(), 0);
  cr_assert_neq(CRTS_smutex_unlock_array(), 0);
  cr_assert_neq(CRTS_smutex_lock_node(), 0);
  cr_assert_neq(CRTS_smutex_unlock_node(), 0);
}
