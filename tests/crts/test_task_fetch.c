/*
 * test_task_fetch.c - CRTS_task_fetch / CRTS_task_quit in one process: the
 * order of tasks, the mid file and its sidecar, restarts, quit, bad input,
 * and (with fake job services standing in for other processes) blocks
 * taken elsewhere, a quit elsewhere and a job that cannot be reached.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crts_job.h"
#include "crts_test_util.h"

static char dir[64];
static char mid[128];

static void setup(void)
{
  snprintf(dir, sizeof dir, "/tmp/crts_task_XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(mid, sizeof mid, "%s/mid.dat", dir);
}

static void teardown(void)
{
  char cmd[160];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(task, .init = setup, .fini = teardown);

/* The mid file's bytes as a string ("" if missing). */
static const char *mid_bytes(const char *file)
{
  static char buf[4096];
  buf[0] = '\0';
  FILE *f = fopen(file, "r");
  if (!f)
    return buf;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static void write_file(const char *file, const char *bytes)
{
  FILE *f = fopen(file, "w");
  cr_assert_not_null(f);
  fputs(bytes, f);
  fclose(f);
}

static void expect_all_in_order(long n, long block)
{
  long i, want = 0;
  while ((i = CRTS_task_fetch(mid, n, block)) >= 0) {
    cr_assert_eq(i, want, "block %ld: got task %ld, expected %ld", block, i,
                 want);
    want++;
  }
  cr_assert_eq(i, -1);
  cr_assert_eq(want, n, "block %ld: %ld tasks of %ld", block, want, n);
  long nb = (n + block - 1) / block;
  char all[256];
  memset(all, '1', (size_t)nb);
  all[nb] = '\0';
  cr_assert_str_eq(mid_bytes(mid), all);
}

Test(task, every_task_once_in_order_block_1)
{
  expect_all_in_order(20, 1);
}

Test(task, every_task_once_in_order_block_3)
{
  expect_all_in_order(20, 3);
}

Test(task, every_task_once_in_order_block_7)
{
  expect_all_in_order(20, 7);
}

Test(task, block_larger_than_task_num)
{
  expect_all_in_order(5, 7);
}

Test(task, sidecar_records_the_loop)
{
  expect_all_in_order(20, 7);
  char info[160];
  snprintf(info, sizeof info, "%s.info", mid);
  cr_assert_str_eq(mid_bytes(info), "crts-mid 1\ntask_num 20\nblock_size 7\n");
}

/* A block is marked when its process fetches the next one, not before. */
Test(task, block_marked_at_the_next_fetch)
{
  cr_assert_eq(CRTS_task_fetch(mid, 10, 3), 0);
  cr_assert_str_eq(mid_bytes(mid), "0000");
  cr_assert_eq(CRTS_task_fetch(mid, 10, 3), 1);
  cr_assert_eq(CRTS_task_fetch(mid, 10, 3), 2);
  cr_assert_str_eq(mid_bytes(mid), "0000");
  cr_assert_eq(CRTS_task_fetch(mid, 10, 3), 3);
  cr_assert_str_eq(mid_bytes(mid), "1000");
  for (long want = 4; want < 10; want++)
    cr_assert_eq(CRTS_task_fetch(mid, 10, 3), want);
  cr_assert_str_eq(mid_bytes(mid), "1110");
  cr_assert_eq(CRTS_task_fetch(mid, 10, 3), -1);
  cr_assert_str_eq(mid_bytes(mid), "1111");
}

/* A restart runs only the blocks whose byte is not '1'. */
Test(task, restart_skips_finished_blocks)
{
  /* 20 tasks in blocks of 3: 7 blocks, the last one of 2 tasks */
  write_file(mid, "1010100");
  long expect[] = {3, 4, 5, 9, 10, 11, 15, 16, 17, 18, 19};
  size_t n = 0;
  long i;
  while ((i = CRTS_task_fetch(mid, 20, 3)) >= 0) {
    cr_assert_lt(n, sizeof expect / sizeof expect[0], "extra task %ld", i);
    cr_assert_eq(i, expect[n], "task %zu is %ld, expected %ld", n, i,
                 expect[n]);
    n++;
  }
  cr_assert_eq(i, -1);
  cr_assert_eq(n, sizeof expect / sizeof expect[0]);
  cr_assert_str_eq(mid_bytes(mid), "1111111");
}

Test(task, restart_of_a_finished_loop_runs_nothing)
{
  expect_all_in_order(20, 3);
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), -1);
}

Test(task, last_short_block_is_skipped_when_finished)
{
  write_file(mid, "0001"); /* 10 tasks in blocks of 3: block 3 is task 9 */
  long i, want = 0;
  while ((i = CRTS_task_fetch(mid, 10, 3)) >= 0)
    cr_assert_eq(i, want++);
  cr_assert_eq(want, 9);
}

Test(task, restart_over_many_words_of_the_bitmap)
{
  /* 300 blocks of 1; every block but 5, 64, 65, 200 and 299 finished. */
  char bytes[301];
  memset(bytes, '1', 300);
  bytes[300] = '\0';
  bytes[5] = bytes[64] = bytes[65] = bytes[200] = bytes[299] = '0';
  write_file(mid, bytes);
  long expect[] = {5, 64, 65, 200, 299};
  size_t n = 0;
  long i;
  while ((i = CRTS_task_fetch(mid, 300, 1)) >= 0) {
    cr_assert_lt(n, 5u);
    cr_assert_eq(i, expect[n++]);
  }
  cr_assert_eq(n, 5u);
}

Test(task, a_file_of_another_loop_is_refused)
{
  write_file(mid, "10101"); /* 5 bytes; 20 tasks in blocks of 3 need 7 */
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), -3);
  cr_assert_str_eq(mid_bytes(mid), "10101");
  /* The sidecar catches a loop with the same block count. */
  unlink(mid);
  expect_all_in_order(20, 3);
  unlink(mid);
  cr_assert_eq(CRTS_task_fetch(mid, 21, 3), -3);
  cr_assert_str_eq(mid_bytes(mid), "");
}

Test(task, empty_file_is_created)
{
  write_file(mid, "");
  expect_all_in_order(8, 2);
}

Test(task, unwritable_file_fails)
{
  char bad[160];
  snprintf(bad, sizeof bad, "%s/no/such/dir/mid", dir);
  cr_assert_eq(CRTS_task_fetch(bad, 10, 1), -3);
}

Test(task, bad_input)
{
  cr_assert_eq(CRTS_task_fetch(NULL, 10, 1), -2);
  cr_assert_eq(CRTS_task_fetch("", 10, 1), -2);
  cr_assert_eq(CRTS_task_fetch(mid, 0, 1), -2);
  cr_assert_eq(CRTS_task_fetch(mid, -5, 1), -2);
  cr_assert_eq(CRTS_task_fetch(mid, 10, 0), -2);
  cr_assert_eq(CRTS_task_fetch(mid, 10, -1), -2);
  cr_assert_eq(CRTS_task_fetch(mid, 1L << 50, 1), -2);
  cr_assert_eq(access(mid, F_OK), -1, "a bad call created the mid file");
  /* Nothing was started: the first good call begins at task 0. */
  expect_all_in_order(4, 1);
}

Test(task, other_arguments_during_a_loop)
{
  cr_assert_eq(CRTS_task_fetch(mid, 10, 2), 0);
  char other[160];
  snprintf(other, sizeof other, "%s/other", dir);
  cr_assert_eq(CRTS_task_fetch(other, 10, 2), -2);
  cr_assert_eq(CRTS_task_fetch(mid, 11, 2), -2);
  cr_assert_eq(CRTS_task_fetch(mid, 10, 3), -2);
  cr_assert_eq(access(other, F_OK), -1);
  /* The running loop is unharmed. */
  for (long want = 1; want < 10; want++)
    cr_assert_eq(CRTS_task_fetch(mid, 10, 2), want);
  cr_assert_eq(CRTS_task_fetch(mid, 10, 2), -1);
}

Test(task, loops_one_after_another)
{
  char second[160];
  snprintf(second, sizeof second, "%s/second", dir);
  expect_all_in_order(9, 2);
  long i, want = 0;
  while ((i = CRTS_task_fetch(second, 6, 4)) >= 0)
    cr_assert_eq(i, want++);
  cr_assert_eq(want, 6);
  cr_assert_str_eq(mid_bytes(second), "11");
}

Test(task, quit_ends_the_loop_and_marks_everything)
{
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), 0);
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), 1);
  cr_assert_eq(CRTS_task_quit(), 0);
  cr_assert_str_eq(mid_bytes(mid), "1111111");
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), -1);
  /* A restart finds nothing to do. */
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), -1);
}

Test(task, quit_after_the_loop_ended)
{
  write_file(mid, "0000");
  cr_assert_eq(CRTS_task_fetch(mid, 4, 1), 0);
  cr_assert_eq(CRTS_task_fetch(mid, 4, 1), 1);
  cr_assert_eq(CRTS_task_quit(), 0);
  cr_assert_eq(CRTS_task_fetch(mid, 4, 1), -1);
  cr_assert_eq(CRTS_task_quit(), 0);
  cr_assert_str_eq(mid_bytes(mid), "1111");
}

Test(task, quit_without_a_loop)
{
  cr_assert_neq(CRTS_task_quit(), 0);
}

static _Atomic long cpe_result = 1;

static void fetch_on_cpe(void *arg)
{
  if (CRTS_tid == 0) {
    cpe_result = CRTS_task_fetch(arg, 10, 1);
    CPE_CHECK(CRTS_task_quit() != 0);
  }
}

Test(task, cpe_calls_are_refused)
{
  setenv("CRTS_NUM_CPES", "2", 1);
  crts_test_run(fetch_on_cpe, mid);
  CRTS_ASSERT_NO_CPE_FAILURE();
  cr_assert_eq(cpe_result, -2);
  cr_assert_eq(access(mid, F_OK), -1);
}

/* ---- fake job services: this process is rank 1 of 3 */

static long fake_counter;
static int fake_barriers, fake_fail_barrier, fake_fail_fetch;

static int fake_join(int *rank, int *size)
{
  *rank = 1;
  *size = 3;
  return 0;
}

static long fake_fetch_add(int id, long add)
{
  cr_assert_eq(id, CRTS_JOB_COUNTER_TASK);
  if (fake_fail_fetch)
    return -1;
  long was = fake_counter;
  fake_counter += add;
  return was;
}

static int fake_barrier(void)
{
  return ++fake_barriers == fake_fail_barrier ? -1 : 0;
}

static const struct crts_job_services fake = {
  .name = "the test's fake job",
  .join = fake_join,
  .fetch_add = fake_fetch_add,
  .barrier = fake_barrier,
};

/* As rank 1, the mid file is not created before barrier B: rank 0 does. */
Test(task, other_processes_take_blocks)
{
  crts_job_services_set(&fake);
  fake_counter = 1000; /* left by earlier loops: the loop starts from here */
  write_file(mid, "0100000"); /* 20 tasks in blocks of 3 */
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), 0);  /* fetch 0: block 0 */
  cr_assert_eq(fake_barriers, 3);
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), 1);
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), 2);
  fake_counter += 2; /* others took fetches 1, 2: blocks 2 and 3 */
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), 12); /* fetch 3: block 4 */
  cr_assert_str_eq(mid_bytes(mid), "1100000");
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), 13);
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), 14);
  fake_counter += 1; /* fetch 4: block 5 elsewhere */
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), 18); /* fetch 5: block 6 */
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), 19);
  cr_assert_eq(CRTS_task_fetch(mid, 20, 3), -1);  /* fetch 6: none left */
  cr_assert_str_eq(mid_bytes(mid), "1100101");
  cr_assert_eq(fake_counter, 1007);
  cr_assert_eq(fake_barriers, 3);
}

Test(task, quit_elsewhere_stops_the_next_fetch)
{
  crts_job_services_set(&fake);
  cr_assert_eq(CRTS_task_fetch(mid, 20, 2), 0);
  fake_counter += CRTS_JOB_TASK_QUIT_MARK; /* another process quit */
  /* The block in hand is finished; the next fetch sees the quit. */
  cr_assert_eq(CRTS_task_fetch(mid, 20, 2), 1);
  cr_assert_eq(CRTS_task_fetch(mid, 20, 2), -1);
  cr_assert_eq(mid_bytes(mid)[0], '1');
  /* The next loop starts after the mark and hands out work again. */
  char second[160];
  snprintf(second, sizeof second, "%s/second", dir);
  cr_assert_eq(CRTS_task_fetch(second, 4, 1), 0);
}

Test(task, quit_tells_the_job)
{
  crts_job_services_set(&fake);
  cr_assert_eq(CRTS_task_fetch(mid, 20, 2), 0);
  long before = fake_counter;
  cr_assert_eq(CRTS_task_quit(), 0);
  cr_assert_eq(fake_counter - before, CRTS_JOB_TASK_QUIT_MARK);
  cr_assert_eq(CRTS_task_fetch(mid, 20, 2), -1);
}

Test(task, a_failed_barrier_ends_the_start)
{
  crts_job_services_set(&fake);
  for (int which = 1; which <= 3; which++) {
    fake_barriers = 0;
    fake_fail_barrier = which;
    cr_assert_eq(CRTS_task_fetch(mid, 10, 1), -4, "barrier %d", which);
  }
  /* The job works again: a loop can start. */
  fake_fail_barrier = 0;
  cr_assert_eq(CRTS_task_fetch(mid, 10, 1), 0);
}

Test(task, a_failed_fetch_ends_the_loop)
{
  crts_job_services_set(&fake);
  cr_assert_eq(CRTS_task_fetch(mid, 10, 1), 0);
  fake_fail_fetch = 1;
  cr_assert_eq(CRTS_task_fetch(mid, 10, 1), -4);
  cr_assert_eq(mid_bytes(mid)[0], '1'); /* block 0 was finished */
  fake_fail_fetch = 0;
  cr_assert_eq(CRTS_task_fetch(mid, 10, 1), 1); /* a new loop: block 1 */
}

/* A launcher started several processes but no services can be loaded. */
Test(task, launcher_without_services_is_refused)
{
  setenv("LAPIRUN_SIZE", "3", 1);
  setenv("CRTS_JOB_LIB", "/nonexistent/liblapi.so.0", 1);
  cr_assert_eq(CRTS_task_fetch(mid, 10, 1), -4);
  cr_assert_eq(access(mid, F_OK), -1);
}

Test(task, launcher_of_one_process_runs_alone)
{
  setenv("LAPIRUN_SIZE", "1", 1);
  setenv("CRTS_JOB_LIB", "/nonexistent/liblapi.so.0", 1);
  expect_all_in_order(5, 2);
}

/* Processes started by hand share a node but no task counter. */
Test(task, node_of_several_without_a_launcher_is_refused)
{
  setenv("CRTS_JOB_KEY", "taskfetch-test", 1);
  setenv("CRTS_NODE_CGS", "3", 1);
  cr_assert_eq(CRTS_task_fetch(mid, 10, 1), -4);
  cr_assert_eq(access(mid, F_OK), -1);
  /* A job of 3 (the fake services) holds them. */
  crts_job_services_set(&fake);
  write_file(mid, "0000000000");
  cr_assert_eq(CRTS_task_fetch(mid, 10, 1), 0);
}

/* A launcher of 4 whose processes the services do not connect. */
Test(task, services_smaller_than_the_launched_job_are_refused)
{
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  crts_job_services_set(&fake); /* a job of 3 */
  write_file(mid, "0000000000");
  cr_assert_eq(CRTS_task_fetch(mid, 10, 1), -4);
  cr_assert_eq(fake_barriers, 0);
  setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
  cr_assert_eq(CRTS_task_fetch(mid, 10, 1), 0);
}
