/*
 * ofi_test.h - helpers of the tests between core groups (tests/ofi).
 *
 * Each test is a plain program that lapirun starts once per core group
 * (one LAPI task each).  Checks count failures (OT_CHECK works on any
 * thread, handlers included) and print the first few; ot_finish() meets
 * every task in a LAPI_Gfence, terminates LAPI and prints "PASS" or
 * "FAIL" with the task's number; the exit code is non-zero on failure, so
 * lapirun ends the job and ctest sees it.  An alarm bounds every test: a
 * hang is a failure, never a stuck ctest.
 */
#ifndef OFI_TEST_H
#define OFI_TEST_H

#include <lapi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ot {
  lapi_handle_t h;
  int me, n;
  int tgt, src;       /* (me + 1) % n, (me + n - 1) % n */
  int failures;       /* atomic */
};

static struct ot ot;

#define OT_CHECK(cond, ...)                                               \
  do {                                                                    \
    if (!(cond)) {                                                        \
      if (__atomic_add_fetch(&ot.failures, 1, __ATOMIC_SEQ_CST) <= 10) {  \
        fprintf(stderr, "task %d: %s:%d: check failed: %s: ", ot.me,      \
                __FILE__, __LINE__, #cond);                               \
        fprintf(stderr, __VA_ARGS__);                                     \
        fputc('\n', stderr);                                              \
      }                                                                   \
    }                                                                     \
  } while (0)

/* A LAPI call that must succeed. */
#define OT_OK(call)                                                       \
  do {                                                                    \
    int ot_rc_ = (call);                                                  \
    OT_CHECK(ot_rc_ == LAPI_SUCCESS, "%s returned %d", #call, ot_rc_);    \
  } while (0)

static void ot_alarm(int sig)
{
  (void)sig;
  static const char msg[] = "ofi test: time limit reached (a hang)\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  _exit(3);
}

/* LAPI_Init with an optional error handler; limit_s bounds the test. */
static inline void ot_init(LAPI_err_hndlr *eh, int limit_s)
{
  signal(SIGALRM, ot_alarm);
  alarm((unsigned)limit_s);
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  info.err_hndlr = eh;
  int rc = LAPI_Init(&ot.h, &info);
  if (rc != LAPI_SUCCESS) {
    fprintf(stderr, "LAPI_Init failed: %d\n", rc);
    exit(2);
  }
  LAPI_Qenv(ot.h, TASK_ID, &ot.me);
  LAPI_Qenv(ot.h, NUM_TASKS, &ot.n);
  ot.tgt = (ot.me + 1) % ot.n;
  ot.src = (ot.me + ot.n - 1) % ot.n;
}

/* Every task's address of a local object. */
static inline void **ot_addrs(void *mine)
{
  void **tab = calloc((size_t)ot.n, sizeof *tab);
  OT_OK(LAPI_Address_init(ot.h, mine, tab));
  return tab;
}

/* The job's sum of a count (a collective: every task calls it). */
static inline uint64_t ot_job_sum(uint64_t mine)
{
  void **tab = ot_addrs((void *)(uintptr_t)mine);
  uint64_t s = 0;
  for (int t = 0; t < ot.n; t++)
    s += (uint64_t)(uintptr_t)tab[t];
  free(tab);
  return s;
}

static inline int ot_finish(const char *name)
{
  OT_OK(LAPI_Gfence(ot.h));
  OT_OK(LAPI_Term(ot.h));
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("%s task %d of %d: %s\n", name, ot.me, ot.n, bad ? "FAIL" : "PASS");
  fflush(stdout);
  return bad ? 1 : 0;
}

/* The victim leaves at once, without a word (_exit(0): no LAPI_Term,
 * and lapirun lets the others run on); the others return once it is
 * really gone (lapirun reaps it at once; all CGs run on this host), so
 * that nothing they do next can still reach it.  pids: every task's,
 * from LAPI_Address_init64. */
static inline void ot_victim_leaves(int victim, const lapi_long_t *pids)
{
  if (ot.me == victim) {
    fflush(stdout);
    _exit(0);
  }
  for (int i = 0; i < 1000 && kill((pid_t)pids[victim], 0) == 0; i++)
    usleep(10000);
}

/* Seconds on the monotonic clock. */
static inline double ot_now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The end of a fault test: LAPI_Term must end within term_limit_s
 * seconds; the PASS/FAIL line says how long the awaited error took. */
static inline int ot_finish_fault(const char *name, double waited,
                                  double term_limit_s)
{
  double t1 = ot_now_s();
  OT_OK(LAPI_Term(ot.h));
  double term = ot_now_s() - t1;
  OT_CHECK(term < term_limit_s, "LAPI_Term took %.1f s", term);
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("%s task %d of %d (error after %.1f s, LAPI_Term %.1f s): %s\n",
         name, ot.me, ot.n, waited, term, bad ? "FAIL" : "PASS");
  fflush(stdout);
  return bad ? 1 : 0;
}

/* Signs between the tasks of one job, to order steps without sleeps:
 * a file in /tmp named for lapirun (the parent of every task) and what
 * the sign says. */
static inline void ot_sign_path(char *path, size_t len, const char *what)
{
  snprintf(path, len, "/tmp/ofi_test.%d.%s", (int)getppid(), what);
}

static inline void ot_sign_give(const char *what)
{
  char path[96];
  ot_sign_path(path, sizeof path, what);
  FILE *f = fopen(path, "w");
  OT_CHECK(f != NULL, "cannot create %s", path);
  if (f)
    fclose(f);
}

/* Waits at most s seconds for the other task's sign (taken: removed);
 * 0 if it did not come. */
static inline int ot_sign_take(const char *what, double s)
{
  char path[96];
  ot_sign_path(path, sizeof path, what);
  double until = ot_now_s() + s;
  int seen = 0;
  while (!(seen = access(path, F_OK) == 0) && ot_now_s() < until)
    usleep(1000);
  if (seen)
    unlink(path);
  return seen;
}

/* Fault tests: the task expected to go away, and how many asynchronous
 * errors its error handler (ot_errh_watch) heard naming it. */
static int ot_watch = -1;
static int ot_errs_from_watch; /* atomic */

static inline void ot_errh_watch(lapi_handle_t *h, int *code,
                                 lapi_err_t *type, int *task, int *src)
{
  (void)h;
  (void)type;
  (void)task;
  if (*src == ot_watch && *code != LAPI_SUCCESS)
    __atomic_add_fetch(&ot_errs_from_watch, 1, __ATOMIC_SEQ_CST);
}

/* Waits, probing (in polling mode the handlers run in there), at most
 * secs seconds until the handler-kept *count reaches want; returns it. */
static inline int ot_await_count(const int *count, int want, int secs)
{
  for (int i = 0; i < 100 * secs &&
                  __atomic_load_n(count, __ATOMIC_SEQ_CST) < want;
       i++) {
    LAPI_Probe(ot.h);
    usleep(10000);
  }
  return __atomic_load_n(count, __ATOMIC_SEQ_CST);
}

/* Waits (at most secs seconds) until the error handler named ot_watch;
 * how many times it did. */
static inline int ot_await_watch_error(int secs)
{
  return ot_await_count(&ot_errs_from_watch, 1, secs);
}

/* The value of counter c now. */
static inline int ot_cntr(lapi_cntr_t *c)
{
  int v = -1;
  LAPI_Getcntr(ot.h, c, &v);
  return v;
}

/* What a fault test sends to task t that cannot answer: nam Amsends to
 * the ot_hdr_inbox handler at index 1 (every 4th of 300000 bytes, i.e.
 * by rendezvous, the others eager) and a put, counted on org and cmpl,
 * then a get and an rmw counted on gorg (2).  Counters are reset first;
 * cntrs and boxes are every task's counter and ot_inbox.  Returns the
 * operations that count on cmpl. */
static inline int ot_issue_to_gone(int t, int nam, void **cntrs,
                                   void **boxes, lapi_cntr_t *org,
                                   lapi_cntr_t *cmpl, lapi_cntr_t *gorg)
{
  static unsigned char big[300000], back[300000];
  static int one = 1, prev;
  LAPI_Setcntr(ot.h, org, 0);
  LAPI_Setcntr(ot.h, cmpl, 0);
  LAPI_Setcntr(ot.h, gorg, 0);
  int issued = 0;
  for (int k = 0; k < nam; k++) {
    size_t len = k % 4 == 3 ? sizeof big : 64;
    if (LAPI_Amsend(ot.h, (uint)t, (void *)1, NULL, 0, big, len, cntrs[t],
                    org, cmpl) == LAPI_SUCCESS)
      issued++;
  }
  if (LAPI_Put(ot.h, (uint)t, 1000, boxes[t], big, NULL, org, cmpl) ==
      LAPI_SUCCESS)
    issued++;
  LAPI_Get(ot.h, (uint)t, sizeof back, boxes[t], back, NULL, gorg);
  LAPI_Rmw(ot.h, FETCH_AND_ADD, (uint)t, cntrs[t], &one, &prev, gorg);
  return issued;
}

/* After ot_issue_to_gone: messages to task t that get no FIN (eager,
 * no cmpl_cntr: Amsends and a put without counters), then LAPI_Fence.
 * Their acknowledgement never comes from a task that is gone, so the
 * fence must end once t is declared gone (as for failed transfers:
 * LAPI_SUCCESS), not hang.  The seconds it took. */
static inline double ot_fence_on_gone(int t, void **boxes)
{
  static unsigned char small[64];
  double t0 = ot_now_s();
  for (int k = 0; k < 4; k++)
    LAPI_Amsend(ot.h, (uint)t, (void *)1, NULL, 0, small, sizeof small,
                NULL, NULL, NULL);
  LAPI_Put(ot.h, (uint)t, sizeof small, boxes[t], small, NULL, NULL, NULL);
  int rc = LAPI_Fence(ot.h);
  OT_CHECK(rc == LAPI_SUCCESS, "LAPI_Fence over messages to a gone task "
           "returned %d", rc);
  return ot_now_s() - t0;
}

/* A header handler for messages whose bytes nobody reads: they all land
 * in ot_inbox, with no completion handler. */
static unsigned char ot_inbox[1 << 20] __attribute__((unused));

static inline void *ot_hdr_inbox(lapi_handle_t *h, void *uhdr,
                                 uint *uhdr_len, ulong *msg_len,
                                 compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  (void)msg_len;
  *comp_h = NULL;
  *uinfo = NULL;
  return ot_inbox;
}

/* A completion handler that counts its runs (atomically) in the int its
 * uinfo points at: the header handler sets *uinfo to that count. */
static inline void ot_cmpl_count(lapi_handle_t *h, void *uinfo)
{
  (void)h;
  __atomic_add_fetch((int *)uinfo, 1, __ATOMIC_SEQ_CST);
}

/* A LAPI_Xfer put of len bytes at org into tgt_addr at task tgt, with
 * its send handler (or NULL), remote tgt_cntr (or NULL) and org_cntr;
 * every other field zero. */
static inline lapi_xfer_t ot_xfer_put(uint tgt, void *tgt_addr, void *org,
                                      ulong len, scompl_hndlr_t *shdlr,
                                      void *tgt_cntr, lapi_cntr_t *org_cntr)
{
  lapi_xfer_t x;
  memset(&x, 0, sizeof x);
  x.Put.Xfer_type = LAPI_PUT_XFER;
  x.Put.tgt = tgt;
  x.Put.tgt_addr = (lapi_long_t)(uintptr_t)tgt_addr;
  x.Put.org_addr = org;
  x.Put.len = len;
  x.Put.shdlr = shdlr;
  x.Put.tgt_cntr = (lapi_long_t)(uintptr_t)tgt_cntr;
  x.Put.org_cntr = org_cntr;
  return x;
}

/* Byte i of the stream numbered seed. */
static inline unsigned char ot_byte(uint32_t seed, size_t i)
{
  return (unsigned char)(seed * 131u + i * 7u + (i >> 9) + 1u);
}

static inline void ot_fill(void *p, size_t len, uint32_t seed)
{
  unsigned char *b = p;
  for (size_t i = 0; i < len; i++)
    b[i] = ot_byte(seed, i);
}

/* Index of the first wrong byte, or len. */
static inline size_t ot_verify(const void *p, size_t len, uint32_t seed)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < len; i++)
    if (b[i] != ot_byte(seed, i))
      return i;
  return len;
}

/* The user header of a numbered test message, and the seed of its data. */
struct ot_uh {
  int round;
  int from;
};

static inline uint32_t ot_numbered_seed(int round, int from)
{
  return (uint32_t)round * 64u + (uint32_t)from;
}

/* Amsend message `round` of this task to `to` (header handler 1), from a
 * user header and data slot the caller keeps until org_cntr says so. */
static inline void ot_send_numbered(int to, int round, struct ot_uh *uh,
                                    void *data, size_t len, void *tgt_cntr,
                                    lapi_cntr_t *org_cntr)
{
  uh->round = round;
  uh->from = ot.me;
  ot_fill(data, len, ot_numbered_seed(round, ot.me));
  OT_OK(LAPI_Amsend(ot.h, (uint)to, (void *)1, uh, sizeof *uh, data, len,
                    tgt_cntr, org_cntr, NULL));
}

/* The data of message `round` from task `from` arrived whole. */
static inline int ot_numbered_ok(const void *p, size_t len, int round,
                                 int from)
{
  return ot_verify(p, len, ot_numbered_seed(round, from)) == len;
}

/* A small deterministic generator (xorshift). */
static inline uint32_t ot_rand(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (uint32_t)(*s >> 11);
}

#endif /* OFI_TEST_H */
