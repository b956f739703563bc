/*
 * boot_check.c - a CG program for the bootstrap tests, run under lapirun
 * (or alone).  `boot_check MODE [ARG]`; prints PASS or FAIL lines and
 * exits 0 only if every check held.
 *
 *   info [PROVIDER|-] [same|apart]
 *                     rank, size, local rank/size, tasks per CG and the
 *                     job's environment agree with each other; "same":
 *                     all CGs on one host (default), "apart": each CG
 *                     alone on its host (--host-cmd with {rank})
 *   pmixinfo [LOCAL]  started by mpirun or srun: rank, size and local
 *                     rank/size are the launcher's (Open MPI's
 *                     OMPI_COMM_WORLD_*; under Slurm SLURM_PROCID,
 *                     SLURM_NTASKS, SLURM_LOCALID and LOCAL, the CGs a
 *                     node); prints "kind singleton" and fails when the
 *                     build has no PMIx
 *   coll ROUNDS       all-gathers of many sizes, barriers and fetch_add,
 *                     every byte and every counter value checked
 *   fence ROUNDS      no CG leaves a barrier or an all-gather before every
 *                     CG has entered it: each round every CG adds 1 to a
 *                     counter, then after the barrier (the all-gather on
 *                     odd rounds) the counter must hold size x rounds
 *   late              barrier; rank 0 exits at once, the others then
 *                     sleep 0.5 s and count: the counters outlive rank 0
 *                     (under PMIx it serves them until the others left)
 *   exit RANK CODE    barrier, then RANK exits with CODE, the others wait
 *   kill RANK SIG     barrier, then RANK raises SIG, the others wait
 *   wait              barrier, then wait (to be signalled)
 *   leave             barrier; rank 0's next barrier must fail because
 *                     the others have left the job (exit 0)
 *   print             each rank prints two lines, to stdout and stderr
 *   unreachable       lapi_boot_get() must fail (bad LAPIRUN_ADDR)
 *   mismatch          rank 0 all-gathers 8 bytes, the others call a
 *                     barrier: every CG's call must fail, none hang
 *   echo ARGS...      print each argument as "arg <...>" (no bootstrap)
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/boot/boot.h"

#include "boot_test.h"

static int env_is(const char *name, long want)
{
  const char *s = getenv(name);
  return s && strtol(s, NULL, 10) == want;
}

static struct lapi_boot *join(void)
{
  struct lapi_boot *b = lapi_boot_get();
  if (b == NULL) {
    printf("FAIL: lapi_boot_get() returned NULL\n");
    exit(1);
  }
  CHECK(lapi_boot_get() == b, "lapi_boot_get is not one object");
  return b;
}

/* Under mpirun or srun: PMIx's view matches the launcher's environment. */
static void mode_pmixinfo(const char *local)
{
  struct lapi_boot *b = join();
  printf("rank %d size %d local %d/%d tpc %d kind %s key %s\n", b->rank,
         b->size, b->local_rank, b->local_size, b->tasks_per_cg, b->kind,
         b->job_key);
  CHECK(strcmp(b->kind, "pmix") == 0, "kind %s", b->kind);
  if (getenv("SLURM_PROCID")) {
    /* Slurm says how many tasks share the node only in a compressed
     * list ("2(x2)"): the test passes it. */
    CHECK(env_is("SLURM_PROCID", b->rank), "rank");
    CHECK(env_is("SLURM_NTASKS", b->size), "size");
    CHECK(env_is("SLURM_LOCALID", b->local_rank), "local rank");
    CHECK(local && atoi(local) == b->local_size, "local size %d, expected %s",
          b->local_size, local ? local : "(not given)");
  } else {
    CHECK(env_is("OMPI_COMM_WORLD_RANK", b->rank), "rank");
    CHECK(env_is("OMPI_COMM_WORLD_SIZE", b->size), "size");
    CHECK(env_is("OMPI_COMM_WORLD_LOCAL_RANK", b->local_rank), "local rank");
    CHECK(env_is("OMPI_COMM_WORLD_LOCAL_SIZE", b->local_size), "local size");
  }
  CHECK(strncmp(b->job_key, "pmix-", 5) == 0 && !strchr(b->job_key, '/'),
        "job key %s", b->job_key);
  char keys[64][64];
  if (b->size <= 64) {
    CHECK(b->allgather(b, b->job_key, 64, keys) == 0, "allgather");
    for (int r = 0; r < b->size; r++)
      CHECK(strcmp(keys[r], b->job_key) == 0, "rank %d key %s", r, keys[r]);
  }
}

static void mode_fence(int rounds)
{
  struct lapi_boot *b = join();
  int64_t mine = b->rank, all[4096];
  for (int k = 0; k < rounds && failures == 0; k++) {
    CHECK(b->fetch_add(b, 7, 1) >= 0, "fetch_add round %d", k);
    if (k % 2)
      CHECK(b->allgather(b, &mine, sizeof mine, all) == 0, "allgather %d", k);
    else
      CHECK(b->barrier(b) == 0, "barrier round %d", k);
    long v = b->fetch_add(b, 7, 0);
    CHECK(v == (long)b->size * (k + 1), "round %d: left the %s with the "
          "counter at %ld, not %ld: a CG had not entered it yet", k,
          k % 2 ? "all-gather" : "barrier", v, (long)b->size * (k + 1));
    /* Nobody adds for the next round before everyone has read. */
    CHECK(b->barrier(b) == 0, "second barrier round %d", k);
  }
}

static void mode_late(void)
{
  struct lapi_boot *b = join();
  CHECK(b->barrier(b) == 0, "barrier");
  if (b->rank == 0)
    return; /* exits now: its exchange must serve the others on */
  usleep(500000);
  long v = b->fetch_add(b, 11, 1);
  CHECK(v >= 0 && v < b->size, "fetch_add after rank 0 left gave %ld", v);
}

static void mode_info(const char *provider, int apart)
{
  struct lapi_boot *b = join();
  printf("rank %d size %d local %d/%d tpc %d kind %s key %s\n", b->rank,
         b->size, b->local_rank, b->local_size, b->tasks_per_cg, b->kind,
         b->job_key);
  CHECK(strcmp(b->kind, "lapirun") == 0, "kind %s", b->kind);
  CHECK(b->size >= 1 && b->rank >= 0 && b->rank < b->size, "rank %d size %d",
        b->rank, b->size);
  CHECK(env_is("LAPIRUN_RANK", b->rank), "LAPIRUN_RANK");
  CHECK(env_is("LAPIRUN_SIZE", b->size), "LAPIRUN_SIZE");
  CHECK(env_is("LAPIRUN_TASKS_PER_CG", b->tasks_per_cg), "tasks per CG");
  /* One host: local ranks are the ranks; apart: each CG alone. */
  if (apart)
    CHECK(b->local_rank == 0 && b->local_size == 1, "local %d/%d",
          b->local_rank, b->local_size);
  else
    CHECK(b->local_rank == b->rank && b->local_size == b->size,
          "local %d/%d", b->local_rank, b->local_size);
  CHECK(env_is("CRTS_CGN", b->local_rank), "CRTS_CGN");
  CHECK(env_is("CRTS_NODE_CGS", b->local_size), "CRTS_NODE_CGS");
  /* The node scope's key: the job's, or one per host when apart. */
  const char *ck = getenv("CRTS_JOB_KEY");
  char want[96];
  if (apart && b->size > 1)
    snprintf(want, sizeof want, "%s-h%d", b->job_key, b->rank);
  else
    snprintf(want, sizeof want, "%s", b->job_key);
  CHECK(ck && strcmp(ck, want) == 0, "CRTS_JOB_KEY %s, not %s",
        ck ? ck : "-", want);
  CHECK(getenv("LAPI_TIMEOUT") != NULL, "LAPI_TIMEOUT not set");
  if (provider && strcmp(provider, "-") != 0) {
    const char *p = getenv("FI_PROVIDER");
    CHECK(p && strcmp(p, provider) == 0, "FI_PROVIDER %s", p ? p : "-");
  }
  /* Everyone has the same key and knows everyone's rank. */
  char keys[64][64];
  if (b->size <= 64) {
    CHECK(b->allgather(b, b->job_key, 64, keys) == 0, "allgather");
    for (int r = 0; r < b->size; r++)
      CHECK(strcmp(keys[r], b->job_key) == 0, "rank %d key %s", r, keys[r]);
  }
}

/* The byte rank r contributes at offset i of round k. */
static unsigned char pat(int r, int k, size_t i)
{
  return (unsigned char)(r * 131 + k * 17 + i * 7 + (i >> 8));
}

static void mode_coll(int rounds)
{
  struct lapi_boot *b = join();
  static const size_t lens[] = {0, 1, 7, 8, 64, 1000, 4096, 65536, 3};
  const int nl = sizeof lens / sizeof lens[0];
  unsigned char *mine = malloc(65536);
  unsigned char *all = malloc(65536 * (size_t)b->size + 16);
  for (int k = 0; k < rounds && failures == 0; k++) {
    size_t len = lens[k % nl];
    for (size_t i = 0; i < len; i++)
      mine[i] = pat(b->rank, k, i);
    /* A guard byte after the table must stay untouched. */
    all[len * (size_t)b->size] = 0xa5;
    CHECK(b->allgather(b, mine, len, all) == 0, "allgather round %d", k);
    for (int r = 0; r < b->size; r++)
      for (size_t i = 0; i < len; i++)
        if (all[(size_t)r * len + i] != pat(r, k, i)) {
          CHECK(0, "round %d len %zu: byte %zu of rank %d is %d", k, len, i,
                r, all[(size_t)r * len + i]);
          break;
        }
    CHECK(all[len * (size_t)b->size] == 0xa5, "write past the table");
    if (k % 3 == 0)
      CHECK(b->barrier(b) == 0, "barrier round %d", k);
  }
  /* fetch_add: every value 0..size*n-1 handed out exactly once. */
  const int n = 50;
  long sum = 0;
  for (int i = 0; i < n; i++) {
    long v = b->fetch_add(b, 5, 1);
    CHECK(v >= 0 && v < (long)n * b->size, "fetch_add gave %ld", v);
    sum += v;
  }
  int64_t sums[4096];
  int64_t s64 = sum;
  CHECK(b->allgather(b, &s64, sizeof s64, sums) == 0, "allgather sums");
  int64_t total = 0, m = (int64_t)n * b->size;
  for (int r = 0; r < b->size; r++)
    total += sums[r];
  CHECK(total == m * (m - 1) / 2, "fetch_add values sum to %lld, not %lld",
        (long long)total, (long long)(m * (m - 1) / 2));
  CHECK(b->barrier(b) == 0, "barrier");
  CHECK(b->fetch_add(b, 5, 0) == m, "counter 5 is not %lld",
        (long long)m);
  CHECK(b->fetch_add(b, 15, 0) == 0, "counter 15 moved");
  CHECK(b->fetch_add(b, 16, 1) == -1, "counter 16 accepted");
  CHECK(b->barrier(b) == 0, "last barrier");
  free(mine);
  free(all);
}

int main(int argc, char **argv)
{
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "info") == 0) {
    mode_info(argc > 2 ? argv[2] : NULL,
              argc > 3 && strcmp(argv[3], "apart") == 0);
  } else if (strcmp(mode, "pmixinfo") == 0) {
    mode_pmixinfo(argc > 2 ? argv[2] : NULL);
  } else if (strcmp(mode, "coll") == 0) {
    mode_coll(argc > 2 ? atoi(argv[2]) : 20);
  } else if (strcmp(mode, "exit") == 0 || strcmp(mode, "kill") == 0) {
    struct lapi_boot *b = join();
    CHECK(b->barrier(b) == 0, "barrier");
    if (b->rank == atoi(argc > 2 ? argv[2] : "0")) {
      int v = atoi(argc > 3 ? argv[3] : "1");
      if (mode[0] == 'e')
        exit(v);
      raise(v);
    }
    pause(); /* lapirun ends us */
  } else if (strcmp(mode, "wait") == 0) {
    struct lapi_boot *b = join();
    CHECK(b->barrier(b) == 0, "barrier");
    printf("rank %d waiting\n", b->rank);
    pause();
  } else if (strcmp(mode, "late") == 0) {
    mode_late();
  } else if (strcmp(mode, "fence") == 0) {
    mode_fence(argc > 2 ? atoi(argv[2]) : 20);
  } else if (strcmp(mode, "leave") == 0) {
    struct lapi_boot *b = join();
    CHECK(b->barrier(b) == 0, "first barrier");
    if (b->rank != 0)
      return 0; /* leaves the job cleanly (BYE at exit) */
    printf("rank 0: the next barrier must fail:\n");
    CHECK(b->barrier(b) == -1, "a barrier without the others succeeded");
    CHECK(b->barrier(b) == -1, "a later barrier succeeded");
    CHECK(b->fetch_add(b, 0, 1) == 0, "the counters must outlive a failed round");
  } else if (strcmp(mode, "print") == 0) {
    struct lapi_boot *b = join();
    printf("out line one of %d\nout line two of %d\n", b->rank, b->rank);
    fprintf(stderr, "err line of %d\n", b->rank);
    /* A last line without newline still comes out whole. */
    printf("tail of %d", b->rank);
  } else if (strcmp(mode, "mismatch") == 0) {
    struct lapi_boot *b = join();
    CHECK(b->barrier(b) == 0, "first barrier");
    int64_t v = 1, all[64];
    int rc = b->rank == 0 && b->size <= 64 ? b->allgather(b, &v, 8, all)
                                           : b->barrier(b);
    CHECK(rc == -1, "a mismatched collective succeeded");
  } else if (strcmp(mode, "echo") == 0) {
    for (int i = 2; i < argc; i++)
      printf("arg <%s>\n", argv[i]);
    return 0;
  } else if (strcmp(mode, "unreachable") == 0) {
    struct lapi_boot *b = lapi_boot_get();
    CHECK(b == NULL, "lapi_boot_get() joined an unreachable exchange");
    CHECK(lapi_boot_get() == NULL, "a second call joined");
  } else {
    printf("FAIL: unknown mode \"%s\"\n", mode);
    return 2;
  }
  if (strcmp(mode, "print") == 0)
    return 0;
  return boot_test_end(mode);
}
