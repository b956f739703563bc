/*
 * test_engine.c - the MPE side of the engines (crts_engine.h): where an
 * address lies, commands with the CPE calls' checks (refused ones move
 * nothing and count nothing), the 2-D mover's split into DMA / RMA
 * commands and MPE copies, and the statistics per kind.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crts_engine.h"
#include "crts_test_util.h"

static void noop(void *arg) { (void)arg; }

/* CRTS_init plus one spawn, so every CPE's slice has its layout. */
static void start(void)
{
  setenv("CRTS_NUM_CPES", "4", 1);
  crts_test_run(noop, NULL);
}

static char *heap(int tid) { return crts_cg.cpe[tid].ldm; }

static void snapshot(struct crts_engine_stats *s) { crts_engine_stats_mpe(s); }

/* Change of kind k since s: ops and bytes. */
static void expect(const struct crts_engine_stats *s, enum crts_stat_kind k,
                   uint64_t ops, uint64_t bytes)
{
  struct crts_engine_stats now;
  crts_engine_stats_mpe(&now);
  cr_assert_eq(now.ops[k] - s->ops[k], ops, "%s: %llu ops, expected %llu",
               crts_engine_kind_name(k),
               (unsigned long long)(now.ops[k] - s->ops[k]),
               (unsigned long long)ops);
  cr_assert_eq(now.bytes[k] - s->bytes[k], bytes,
               "%s: %llu bytes, expected %llu", crts_engine_kind_name(k),
               (unsigned long long)(now.bytes[k] - s->bytes[k]),
               (unsigned long long)bytes);
}

static void fill(void *p, size_t n, int seed)
{
  unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    b[i] = (unsigned char)(i * 7 + seed);
}

Test(engine, where_addresses_lie)
{
  start();
  char *mem = malloc(64);
  cr_assert_eq(crts_engine_where(mem, 64), CRTS_ENGINE_MEM);
  cr_assert_eq(crts_engine_where(heap(2) + 8, 64), 2);
  cr_assert_eq(crts_engine_where(heap(2) + 8, 0), 2);
  /* Past the slice, in the guard after it, across the heap's end. */
  cr_assert_eq(crts_engine_where(heap(2) + 8, 300 * 1024), CRTS_ENGINE_BAD);
  cr_assert_eq(crts_engine_where(heap(2) + CRTS_MAX_LDM_SIZE + 8, 4),
               CRTS_ENGINE_BAD);
  cr_assert_eq(crts_engine_where(crts_cg.cpe[1].heap_limit - 8, 64),
               CRTS_ENGINE_BAD);
  cr_assert_eq(crts_engine_ldm_owner(heap(3) + 100), 3);
  cr_assert_eq(crts_engine_ldm_translate(heap(3) + 100, 1), heap(1) + 100);
  cr_assert_eq(crts_engine_cpe_tid(), -1, "the test thread is the MPE");
  free(mem);
}

Test(engine, commands_are_checked_and_refused_ones_move_nothing)
{
  setenv("CRTS_VERBOSE", "0", 1); /* refusals are expected here */
  start();
  char *mem = aligned_alloc(64, 4096);
  memset(mem, 0x5a, 4096);
  memset(heap(1), 0x11, 1024);
  struct crts_engine_stats s;
  snapshot(&s);
  const struct crts_engine_cmd bad[] = {
    /* misaligned LDM side, length, main-memory side */
    {CRTS_STAT_DMA_GET, heap(1) + 2, mem, 64, 1, 64, 64},
    {CRTS_STAT_DMA_GET, heap(1), mem, 62, 1, 62, 62},
    {CRTS_STAT_DMA_PUT, mem + 1, heap(1), 64, 1, 64, 64},
    /* sides of the wrong kind */
    {CRTS_STAT_DMA_GET, mem, heap(1), 64, 1, 64, 64},
    {CRTS_STAT_DMA_PUT, heap(1), mem, 64, 1, 64, 64},
    {CRTS_STAT_RMA, heap(1), mem, 64, 1, 64, 64},
    /* a strided LDM side; a pitch below the block */
    {CRTS_STAT_DMA_GET, heap(1), mem, 16, 4, 32, 16},
    {CRTS_STAT_DMA_GET, heap(1), mem, 16, 4, 16, 8},
    /* LDM that no CPE may use */
    {CRTS_STAT_DMA_GET, crts_cg.cpe[1].heap_limit - 8, mem, 64, 1, 64, 64},
    {CRTS_STAT_MPE_COPY, heap(1) + CRTS_MAX_LDM_SIZE + 4, mem, 4, 1, 4, 4},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq(crts_engine_issue(&bad[i], "test"), -1, "command %zu", i);
  for (int k = 0; k < CRTS_STAT_KINDS; k++)
    expect(&s, (enum crts_stat_kind)k, 0, 0);
  for (int i = 0; i < 1024; i++)
    cr_assert_eq((unsigned char)heap(1)[i], 0x11, "LDM byte %d written", i);
  for (int i = 0; i < 4096; i++)
    cr_assert_eq((unsigned char)mem[i], 0x5a, "memory byte %d written", i);

  /* Good commands move their bytes and count once each. */
  fill(mem, 512, 3);
  const struct crts_engine_cmd get = {CRTS_STAT_DMA_GET, heap(1), mem, 64, 4,
                                      64, 128};
  cr_assert_eq(crts_engine_issue(&get, "test"), 0);
  for (int b = 0; b < 4; b++)
    cr_assert(memcmp(heap(1) + b * 64, mem + b * 128, 64) == 0);
  expect(&s, CRTS_STAT_DMA_GET, 1, 256);
  const struct crts_engine_cmd rma = {CRTS_STAT_RMA, heap(2), heap(1), 256, 1,
                                      256, 256};
  cr_assert_eq(crts_engine_issue(&rma, "test"), 0);
  cr_assert(memcmp(heap(2), heap(1), 256) == 0);
  expect(&s, CRTS_STAT_RMA, 1, 256);
  const struct crts_engine_cmd copy = {CRTS_STAT_MPE_COPY, mem + 1001,
                                       heap(2) + 3, 7, 1, 7, 7};
  cr_assert_eq(crts_engine_issue(&copy, "test"), 0);
  cr_assert(memcmp(mem + 1001, heap(2) + 3, 7) == 0);
  expect(&s, CRTS_STAT_MPE_COPY, 1, 7);
  free(mem);
}

Test(engine, the_mover_splits_by_the_four_byte_rule)
{
  setenv("CRTS_VERBOSE", "0", 1);
  start();
  char *mem = aligned_alloc(64, 8192);
  fill(mem, 8192, 9);
  struct crts_engine_stats s;

  /* Memory -> LDM, aligned: one DMA get. */
  snapshot(&s);
  cr_assert_eq(crts_engine_move(heap(0), 1000, mem, 1000, 1000, 1, "t"), 0);
  cr_assert(memcmp(heap(0), mem, 1000) == 0);
  expect(&s, CRTS_STAT_DMA_GET, 1, 1000);
  expect(&s, CRTS_STAT_MPE_COPY, 0, 0);

  /* A head of 3 and a tail of 2 bytes around a DMA put. */
  snapshot(&s);
  cr_assert_eq(crts_engine_move(mem + 4097, 105, heap(0) + 1, 105, 105, 1,
                                "t"), 0);
  cr_assert(memcmp(mem + 4097, heap(0) + 1, 105) == 0);
  expect(&s, CRTS_STAT_DMA_PUT, 1, 100);
  expect(&s, CRTS_STAT_MPE_COPY, 2, 5);

  /* Sides that disagree modulo 4: all by the MPE. */
  snapshot(&s);
  cr_assert_eq(crts_engine_move(heap(1) + 2, 64, heap(0) + 1, 64, 64, 1, "t"),
               0);
  cr_assert(memcmp(heap(1) + 2, heap(0) + 1, 64) == 0);
  expect(&s, CRTS_STAT_RMA, 0, 0);
  expect(&s, CRTS_STAT_MPE_COPY, 1, 64);

  /* Strided memory (pitch 96) into dense LDM: one strided DMA get. */
  snapshot(&s);
  cr_assert_eq(crts_engine_move(heap(3), 32, mem, 96, 32, 10, "t"), 0);
  for (int b = 0; b < 10; b++)
    cr_assert(memcmp(heap(3) + b * 32, mem + b * 96, 32) == 0);
  expect(&s, CRTS_STAT_DMA_GET, 1, 320);

  /* Strided LDM on both sides: one RMA per block. */
  snapshot(&s);
  cr_assert_eq(crts_engine_move(heap(2) + 512, 48, heap(3), 32, 32, 10, "t"),
               0);
  for (int b = 0; b < 10; b++)
    cr_assert(memcmp(heap(2) + 512 + b * 48, heap(3) + b * 32, 32) == 0);
  expect(&s, CRTS_STAT_RMA, 10, 320);

  /* Memory to memory: a DMA put; a bad side is refused. */
  snapshot(&s);
  cr_assert_eq(crts_engine_move(mem + 6000, 64, mem, 64, 64, 8, "t"), 0);
  cr_assert(memcmp(mem + 6000, mem, 512) == 0);
  expect(&s, CRTS_STAT_DMA_PUT, 1, 512);
  cr_assert_eq(crts_engine_move(crts_cg.cpe[1].heap_limit - 4, 64, mem, 64,
                                64, 1, "t"), -1);
  free(mem);
}

/* Commands issued by threads that have ended still count (their blocks
 * are freed at thread exit, their counts kept), also with other threads
 * issuing and ending at the same time. */
static char *thread_mem;

static void *issue_one(void *arg)
{
  int tid = (int)(intptr_t)arg;
  for (int i = 0; i < 3; i++)
    if (crts_engine_move(heap(tid) + 64 * i, 64, thread_mem, 64, 64, 1,
                         "t") != 0)
      return arg; /* counted as a failure by the joiner */
  return NULL;
}

Test(engine, counts_of_ended_threads_stay)
{
  start();
  thread_mem = aligned_alloc(64, 4096);
  fill(thread_mem, 4096, 3);
  struct crts_engine_stats s;
  snapshot(&s);
  for (int round = 0; round < 5; round++) {
    pthread_t th[4];
    for (int t = 0; t < 4; t++)
      cr_assert_eq(pthread_create(&th[t], NULL, issue_one,
                                  (void *)(intptr_t)t), 0);
    for (int t = 0; t < 4; t++) {
      void *rc = (void *)1;
      cr_assert_eq(pthread_join(th[t], &rc), 0);
      cr_assert_null(rc, "thread %d: a move failed", t);
    }
    /* 4 threads x 3 DMA gets of 64 bytes per round, all ended now. */
    expect(&s, CRTS_STAT_DMA_GET, 12u * (unsigned)(round + 1),
           12u * 64u * (unsigned)(round + 1));
  }
  /* This thread's own block stays as long as it runs. */
  cr_assert_eq(crts_engine_move(heap(0), 64, thread_mem, 64, 64, 1, "t"), 0);
  expect(&s, CRTS_STAT_DMA_GET, 61, 61 * 64);
  free(thread_mem);
}

/* A fork while another thread takes snapshots (the statistics lock held
 * much of the time): the child's first snapshot must not find the lock
 * held by a thread it does not have.  Before the fork handler, most
 * children hung here (their alarm ends them); with it, none can. */
static int snap_stop; /* atomic */

static void *snapper(void *arg)
{
  (void)arg;
  struct crts_engine_stats s;
  while (!__atomic_load_n(&snap_stop, __ATOMIC_RELAXED))
    crts_engine_stats_mpe(&s);
  return NULL;
}

Test(engine, fork_while_snapshots_run)
{
  pthread_t th;
  cr_assert_eq(pthread_create(&th, NULL, snapper, NULL), 0);
  int bad = 0;
  for (int i = 0; i < 200 && !bad; i++) {
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork");
    if (pid == 0) {
      alarm(10); /* a hang ends the child with SIGALRM */
      struct crts_engine_stats s;
      crts_engine_stats_mpe(&s);
      _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      bad = i + 1;
  }
  __atomic_store_n(&snap_stop, 1, __ATOMIC_RELAXED);
  pthread_join(th, NULL);
  cr_assert_eq(bad, 0, "child %d hung on the statistics lock", bad);
}
