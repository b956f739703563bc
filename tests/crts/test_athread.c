/*
 * test_athread.c - CRTS_init, the CPE pool, spawn/join/create/wait/end/halt
 * and the CPE ids.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "crts_test_util.h"

static _Atomic int ran[CRTS_MAX_SPE_NUM];
static _Atomic int total;

static void count_me(void *arg)
{
  atomic_fetch_add(&ran[CRTS_tid], 1);
  atomic_fetch_add(&total, *(int *)arg);
}

Test(athread, spawn_runs_every_cpe_once)
{
  int add = 3;
  crts_test_run(count_me, &add);
  cr_assert_eq(CRTS_athread_get_max_threads(), 64);
  for (int i = 0; i < 64; i++)
    cr_assert_eq(ran[i], 1, "CPE %d ran %d times", i, ran[i]);
  cr_assert_eq(total, 64 * 3);
}

Test(athread, pool_is_reused_across_spawns)
{
  int add = 1;
  for (int round = 0; round < 50; round++)
    crts_test_run(count_me, &add);
  cr_assert_eq(total, 50 * 64);
  for (int i = 0; i < 64; i++)
    cr_assert_eq(ran[i], 50);
}

static void check_ids(void *arg)
{
  (void)arg;
  int tid = CRTS_tid;
  CPE_CHECK(tid >= 0 && tid < 64);
  CPE_CHECK(CRTS_rid == tid / 8);
  CPE_CHECK(CRTS_cid == tid % 8);
  CPE_CHECK(CRTS_row_size == 8 && CRTS_col_size == 8);
  CPE_CHECK(CRTS_cgn == 0);
  CPE_CHECK(CRTS_spcn == (tid / 16) * 4 + (tid % 8) / 2);
  CPE_CHECK(CRTS_spc_tid == CRTS_spcn * 4 + (CRTS_rid % 2) * 2 + tid % 2);
  CPE_CHECK(CRTS_smng_get_tid() == tid);
  CPE_CHECK(CRTS_smng_get_rid() == CRTS_rid);
  CPE_CHECK(CRTS_smng_get_cid() == CRTS_cid);
  CPE_CHECK(CRTS_smng_get_cgn() == 0);
  CPE_CHECK(CRTS_smng_get_spcn() == CRTS_spcn);
  CPE_CHECK(CRTS_smng_get_spc_tid() == CRTS_spc_tid);
  atomic_fetch_add(&ran[CRTS_spc_tid], 1);
}

Test(athread, ids_match_the_mesh)
{
  crts_test_run(check_ids, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  for (int i = 0; i < 64; i++)
    cr_assert_eq(ran[i], 1, "spc_tid %d taken %d times", i, ran[i]);
  cr_assert_eq(CRTS_tid, -1, "the MPE has no CPE id");
  cr_assert_eq(CRTS_smng_get_tid(), -1);
}

static _Atomic int gate;

static void wait_gate(void *arg)
{
  (void)arg;
  while (!atomic_load(&gate))
    ;
}

Test(athread, spawn_while_running_or_unjoined_fails)
{
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_athread_spawn((void (*)(void))wait_gate, NULL), 0);
  cr_assert_eq(CRTS_athread_spawn((void (*)(void))wait_gate, NULL), 1);
  atomic_store(&gate, 1);
  /* Let the group finish without joining it. */
  while (CRTS_athread_spawn((void (*)(void))wait_gate, NULL) == 1)
    ;
  cr_assert_eq(CRTS_athread_spawn((void (*)(void))wait_gate, NULL), 2);
  cr_assert_eq(CRTS_athread_join(), 0);
  cr_assert_eq(CRTS_athread_join(), -1, "nothing left to join");
}

Test(athread, calls_before_init_fail)
{
  cr_assert_eq(CRTS_athread_spawn((void (*)(void))wait_gate, NULL), -1);
  cr_assert_eq(CRTS_athread_get_max_threads(), -1);
  cr_assert_eq(CRTS_athread_create(0, (void (*)(void))wait_gate, NULL), -1);
}

Test(athread, bad_arguments_fail)
{
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_athread_spawn(NULL, NULL), -1);
  cr_assert_eq(CRTS_athread_create(64, (void (*)(void))wait_gate, NULL), -1);
  cr_assert_eq(CRTS_athread_create(-1, (void (*)(void))wait_gate, NULL), -1);
  cr_assert_eq(CRTS_athread_create(3, NULL, NULL), -1);
  cr_assert_eq(CRTS_athread_wait(3), -1, "nothing to wait for");
  cr_assert_eq(CRTS_athread_wait(99), -1);
}

static void one(void *arg)
{
  atomic_fetch_add(&ran[CRTS_tid], 1);
  atomic_fetch_add(&total, (int)(long)arg);
}

Test(athread, create_wait_end)
{
  cr_assert_eq(CRTS_init(), 0);
  atomic_store(&gate, 0);
  cr_assert_eq(CRTS_athread_create(5, (void (*)(void))wait_gate, NULL), 0);
  cr_assert_eq(CRTS_athread_create(5, (void (*)(void))one, NULL), 1);
  cr_assert_eq(CRTS_athread_spawn((void (*)(void))one, NULL), 1,
               "a created thread blocks the group");
  atomic_store(&gate, 1);
  while (CRTS_athread_create(5, (void (*)(void))one, NULL) == 1)
    ;
  cr_assert_eq(CRTS_athread_create(5, (void (*)(void))one, NULL), 2);
  cr_assert_eq(CRTS_athread_wait(5), 0);
  cr_assert_eq(CRTS_athread_create(7, (void (*)(void))one, (void *)7L), 0);
  cr_assert_eq(CRTS_athread_wait(7), 0);
  cr_assert_eq(ran[7], 1);
  cr_assert_eq(total, 7);
  cr_assert_eq(CRTS_athread_end(7), 0);
  cr_assert_eq(CRTS_athread_get_max_threads(), 63);
  cr_assert_eq(CRTS_athread_create(7, (void (*)(void))one, NULL), -1);
  crts_test_run(one, (void *)1L);
  cr_assert_eq(ran[7], 1, "an ended CPE takes no part in a spawn");
  cr_assert_eq(total, 7 + 63);
}

Test(athread, halt_releases_the_group)
{
  cr_assert_eq(CRTS_init(), 0);
  cr_assert_eq(CRTS_athread_halt(), 0);
  cr_assert_eq(CRTS_athread_get_max_threads(), 0);
  cr_assert_eq(CRTS_athread_spawn((void (*)(void))one, NULL), -1);
}

static void fewer(void *arg)
{
  (void)arg;
  atomic_fetch_add(&ran[CRTS_tid], 1);
  CPE_CHECK(CRTS_tid < 12);
  CPE_CHECK(CRTS_row_size == (CRTS_rid == 1 ? 4 : 8));
  CPE_CHECK(CRTS_col_size == (CRTS_cid < 4 ? 2 : 1));
}

Test(athread, num_cpes_setting_lowers_the_group)
{
  setenv("CRTS_NUM_CPES", "12", 1);
  crts_test_run(fewer, NULL);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert_eq(CRTS_athread_get_max_threads(), 12);
  for (int i = 0; i < 64; i++)
    cr_assert_eq(ran[i], i < 12);
}

Test(athread, old_api_twins_behave_like_crts_calls)
{
  cr_assert_eq(athread_init(), 0);
  cr_assert_eq(athread_get_max_threads(), 64);
  cr_assert_eq(athread_spawn((void (*)(void))one, (void *)1L), 0);
  cr_assert_eq(athread_join(), 0);
  cr_assert_eq(total, 64);
  cr_assert_eq(athread_spawn_noflush((void (*)(void))one, (void *)1L), 0);
  cr_assert_eq(athread_join(), 0);
  cr_assert_eq(CRTS_athread_spawn_noflush((void (*)(void))one, (void *)1L), 0);
  cr_assert_eq(CRTS_athread_join(), 0);
  cr_assert_eq(total, 3 * 64);
  for (int i = 0; i < 64; i++)
    cr_assert_eq(ran[i], 3);
  cr_assert_eq(athread_create(9, (void (*)(void))one, (void *)5L), 0);
  cr_assert_eq(athread_wait(9), 0);
  cr_assert_eq(ran[9], 4);
  cr_assert_eq(athread_end(9), 0);
  cr_assert_eq(athread_get_max_threads(), 63);
  cr_assert_eq(athread_halt(), 0);
  cr_assert_eq(athread_get_max_threads(), 0);
}
