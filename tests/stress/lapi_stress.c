/*
 * lapi_stress.c - a plain (non-Criterion) stress run of the LAPI core.
 *
 * Criterion cannot start under ThreadSanitizer, so this is the program
 * the TSan build runs.  Several application threads hammer two handles
 * of one task at once: handle 0 in interrupt mode, handle 1 in polling
 * mode (the main thread flips it to interrupt mode and back while the
 * workers run).  Each worker, each round, on each handle:
 *   - a window of LAPI_Amsend messages of varied sizes, then a window of
 *     LAPI_Amsendv (IOVECTOR, GENERIC with other splits, STRIDED with
 *     another pitch), every byte checked by the completion handler;
 *   - LAPI_Put then LAPI_Get of a varied length, bytes checked;
 *   - LAPI_Rmw / LAPI_Rmw64 on shared and private variables;
 *   - now and then a completion handler that sends and waits (nested
 *     progress) and fences, and a burst of messages larger than the
 *     queue (flow control);
 * and checks every counter (org, tgt, cmpl) after each window.  Then
 * the main thread checks LAPI_Util's lock against a handler,
 * Setcntr_wstatus with a purge, and LAPI_Msgpoll.  Handlers
 * check where they run: never inside a send call, and never on an
 * application thread for the interrupt-mode handle.
 * Usage: lapi_stress [rounds [threads]]   (threads 1..4)
 * Prints PASS or FAIL; the exit status is 0 only on PASS.
 */
#include <lapi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 4
#define NHANDLES 2
#define WINDOW 8
#define SLOT_BYTES 4096

static int failures;
static lapi_handle_t hndl[NHANDLES];
static int stop_toggler;

static __thread int is_app_thread;
static __thread int in_send;

static void fail(const char *what, int a, int b)
{
  if (__atomic_fetch_add(&failures, 1, __ATOMIC_SEQ_CST) < 10)
    fprintf(stderr, "lapi_stress: %s (%d, %d)\n", what, a, b);
}

#define CHECK(cond, a, b)                                                  \
  do {                                                                     \
    if (!(cond))                                                           \
      fail(#cond, (a), (b));                                               \
  } while (0)

static unsigned char pattern(int tid, int seq, size_t k)
{
  return (unsigned char)(tid * 61 + seq * 7 + k * 13 + (k >> 8));
}

/* Byte k of the stream a vector describes. */
static unsigned char *vec_byte(const lapi_vec_t *v, size_t k)
{
  if (v->vec_type == LAPI_GEN_STRIDED_XFER) {
    size_t block = (size_t)(uintptr_t)v->info[1];
    size_t pitch = (size_t)(uintptr_t)v->info[2];
    return (unsigned char *)v->info[0] + (k / block) * pitch + k % block;
  }
  for (uint i = 0; i < v->num_vecs; i++) {
    if (k < v->len[i])
      return (unsigned char *)v->info[i] + k;
    k -= v->len[i];
  }
  return NULL;
}

/* ------------------------------------------------------------ slots */

/* One in-flight message of one worker: where it lands and how to check. */
struct slot {
  int tid, seq;
  size_t len;
  int handle;
  unsigned char buf[SLOT_BYTES];
  lapi_vec_t tvec;            /* Amsendv: the vector the handler returns */
  void *tinfo[4];
  ulong tlen[4];
};

static struct slot slots[MAX_THREADS][WINDOW];

struct am_hdr {
  int tid, slot, seq, kind; /* kind: 0 Amsend, 1..3 Amsendv type */
};

static void where_check(int handle)
{
  CHECK(!in_send, handle, 0);
  if (handle == 0)
    CHECK(!is_app_thread, handle, 1);
}

static void check_ch(lapi_handle_t *h, void *p)
{
  struct slot *s = p;
  where_check((int)*h == (int)hndl[0] ? 0 : 1);
  if (s->tvec.num_vecs == 0) {
    for (size_t k = 0; k < s->len; k++)
      if (s->buf[k] != pattern(s->tid, s->seq, k)) {
        fail("amsend byte", s->seq, (int)k);
        break;
      }
    return;
  }
  for (size_t k = 0; k < s->len; k++)
    if (*vec_byte(&s->tvec, k) != pattern(s->tid, s->seq, k)) {
      fail("amsendv byte", s->seq, (int)k);
      break;
    }
}

static void *am_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                   ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  struct am_hdr *a = uhdr;
  CHECK(*uhdr_len == sizeof *a, (int)*uhdr_len, 0);
  where_check((int)*h == (int)hndl[0] ? 0 : 1);
  struct slot *s = &slots[a->tid][a->slot];
  CHECK(s->seq == a->seq && *msg_len == s->len, s->seq, a->seq);
  *c = check_ch;
  *ui = s;
  return s->buf;
}

static lapi_vec_t *amv_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                          ulong *len_vec, compl_hndlr_t **c, void **ui)
{
  (void)len_vec;
  (void)uhdr_len;
  struct am_hdr *a = uhdr;
  where_check((int)*h == (int)hndl[0] ? 0 : 1);
  struct slot *s = &slots[a->tid][a->slot];
  *c = check_ch;
  *ui = s;
  return &s->tvec;
}

/* Origin and target shapes of an Amsendv of `len` bytes (len >= 12). */
static void shape(int kind, size_t len, unsigned char *obuf, lapi_vec_t *ov,
                  void **oinfo, ulong *olen, struct slot *s)
{
  size_t a = len / 3, b = len / 3, c = len - 2 * (len / 3);
  if (kind == 1 || kind == 2) {
    ov->vec_type = kind == 1 ? LAPI_GEN_IOVECTOR : LAPI_GEN_GENERIC;
    ov->num_vecs = 3;
    oinfo[0] = obuf + 2 * len + 8;  /* out of order, with gaps */
    oinfo[1] = obuf;
    oinfo[2] = obuf + len + 4;
    olen[0] = a, olen[1] = b, olen[2] = c;
    ov->info = oinfo;
    ov->len = olen;
    s->tvec.vec_type = ov->vec_type;
    s->tvec.info = s->tinfo;
    s->tvec.len = s->tlen;
    if (kind == 1) {
      s->tvec.num_vecs = 3;
      s->tinfo[0] = s->buf + c + 4, s->tlen[0] = a;
      s->tinfo[1] = s->buf + c + 4 + a + 3, s->tlen[1] = b;
      s->tinfo[2] = s->buf, s->tlen[2] = c;
    } else { /* GENERIC: the same bytes, split another way */
      s->tvec.num_vecs = 2;
      s->tinfo[0] = s->buf + 7, s->tlen[0] = len / 2;
      s->tinfo[1] = s->buf + 7 + len / 2 + 5, s->tlen[1] = len - len / 2;
    }
  } else { /* STRIDED: 4-byte blocks, pitch 6 at the origin, 9 here */
    ov->vec_type = LAPI_GEN_STRIDED_XFER;
    ov->num_vecs = (uint)(len / 4);
    oinfo[0] = obuf, oinfo[1] = (void *)4, oinfo[2] = (void *)6;
    ov->info = oinfo;
    ov->len = NULL;
    s->tvec.vec_type = LAPI_GEN_STRIDED_XFER;
    s->tvec.num_vecs = ov->num_vecs;
    s->tinfo[0] = s->buf, s->tinfo[1] = (void *)4, s->tinfo[2] = (void *)9;
    s->tvec.info = s->tinfo;
    s->tvec.len = NULL;
  }
}

/* ----------------------------------------------------------- workers */

static int shared32;
static long long shared64;

struct worker {
  int tid, rounds;
  unsigned seed;
  unsigned char obuf[WINDOW][3 * SLOT_BYTES];
  unsigned char put_src[SLOT_BYTES], put_dst[SLOT_BYTES], get_dst[SLOT_BYTES];
  int private32;
  long long private64;
};

static void wait_exact(lapi_handle_t h, lapi_cntr_t *c, int n, const char *w)
{
  int cur = -1;
  CHECK(LAPI_Waitcntr(h, c, n, &cur) == LAPI_SUCCESS, n, 0);
  if (cur != 0)
    fail(w, cur, n);
}

static void am_window(struct worker *w, int hi, int vector, int *seq)
{
  lapi_handle_t h = hndl[hi];
  lapi_cntr_t org, tgt, cmpl;
  LAPI_Setcntr(h, &org, 0);
  LAPI_Setcntr(h, &tgt, 0);
  LAPI_Setcntr(h, &cmpl, 0);
  lapi_vec_t ov[WINDOW];
  void *oinfo[WINDOW][4];
  ulong olen[WINDOW][4];
  for (int k = 0; k < WINDOW; k++) {
    struct slot *s = &slots[w->tid][k];
    int kind = vector ? 1 + *seq % 3 : 0;
    size_t len = (size_t)(rand_r(&w->seed) % 600);
    if (vector)
      len += 12;
    if (kind == 3)
      len &= ~(size_t)3; /* whole 4-byte blocks */
    s->tid = w->tid;
    s->seq = ++*seq;
    s->len = len;
    s->handle = hi;
    s->tvec.num_vecs = 0;
    memset(s->buf, 0, sizeof s->buf);
    struct am_hdr a = {w->tid, k, s->seq, kind};
    int rc;
    if (!vector) {
      for (size_t i = 0; i < len; i++)
        w->obuf[k][i] = pattern(w->tid, s->seq, i);
      in_send = 1;
      rc = LAPI_Amsend(h, 0, (void *)am_hh, &a, sizeof a, w->obuf[k], len,
                       &tgt, &org, &cmpl);
      in_send = 0;
    } else {
      shape(a.kind, len, w->obuf[k], &ov[k], oinfo[k], olen[k], s);
      for (size_t i = 0; i < len; i++)
        *vec_byte(&ov[k], i) = pattern(w->tid, s->seq, i);
      in_send = 1;
      rc = LAPI_Amsendv(h, 0, (void *)amv_hh, &a, sizeof a, &ov[k], &tgt,
                        &org, &cmpl);
      in_send = 0;
    }
    CHECK(rc == LAPI_SUCCESS, rc, vector);
  }
  wait_exact(h, &cmpl, WINDOW, "cmpl_cntr left over");
  wait_exact(h, &tgt, WINDOW, "tgt_cntr left over");
  wait_exact(h, &org, WINDOW, "org_cntr left over");
}

static void rma_step(struct worker *w, int hi, int seq)
{
  lapi_handle_t h = hndl[hi];
  lapi_cntr_t org, tgt, cmpl;
  LAPI_Setcntr(h, &org, 0);
  LAPI_Setcntr(h, &tgt, 0);
  LAPI_Setcntr(h, &cmpl, 0);
  size_t len = 1 + (size_t)(rand_r(&w->seed) % (SLOT_BYTES - 1));
  for (size_t i = 0; i < len; i++)
    w->put_src[i] = pattern(w->tid, seq, i);
  CHECK(LAPI_Put(h, 0, len, w->put_dst, w->put_src, &tgt, &org, &cmpl) ==
            LAPI_SUCCESS, 0, 0);
  wait_exact(h, &cmpl, 1, "put cmpl");
  wait_exact(h, &org, 1, "put org");
  CHECK(memcmp(w->put_dst, w->put_src, len) == 0, seq, (int)len);
  CHECK(LAPI_Get(h, 0, len, w->put_dst, w->get_dst, &tgt, &org) ==
            LAPI_SUCCESS, 0, 0);
  wait_exact(h, &org, 1, "get org");
  wait_exact(h, &tgt, 2, "put+get tgt");
  CHECK(memcmp(w->get_dst, w->put_src, len) == 0, seq, (int)len);

  int one = 1, prev = 0;
  long long one64 = 1, prev64 = 0;
  CHECK(LAPI_Rmw(h, FETCH_AND_ADD, 0, &shared32, &one, &prev, &org) ==
            LAPI_SUCCESS, 0, 0);
  CHECK(LAPI_Rmw64(h, FETCH_AND_ADD, 0, &shared64, &one64, &prev64, &org) ==
            LAPI_SUCCESS, 0, 0);
  int sw = seq, old = w->private32;
  CHECK(LAPI_Rmw(h, SWAP, 0, &w->private32, &sw, &prev, &org) ==
            LAPI_SUCCESS, 0, 0);
  wait_exact(h, &org, 3, "rmw org");
  CHECK(prev == old && w->private32 == seq, prev, old);
  long long cas[2] = {w->private64, w->private64 + 5};
  CHECK(LAPI_Rmw64(h, COMPARE_AND_SWAP, 0, &w->private64, cas, &prev64,
                   &org) == LAPI_SUCCESS, 0, 0);
  wait_exact(h, &org, 1, "cas org");
  CHECK(prev64 == TRUE && w->private64 == cas[1], (int)prev64, 0);
}

/* A completion handler that sends to its own handle and waits for it:
 * the nested wait must keep the handle going, in either mode. */
struct nest {
  lapi_cntr_t inner;
  int inner_runs;
  int outer_runs;
};

static void inner_ch(lapi_handle_t *h, void *p)
{
  (void)h;
  struct nest *n = p;
  n->inner_runs++;
}

static void *inner_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)h, (void)uhdr_len, (void)msg_len;
  *c = inner_ch;
  *ui = *(struct nest **)uhdr;
  return NULL;
}

static void outer_ch(lapi_handle_t *h, void *p)
{
  struct nest *n = p;
  where_check((int)*h == (int)hndl[0] ? 0 : 1);
  for (int i = 0; i < 2; i++)
    CHECK(LAPI_Amsend(*h, 0, (void *)inner_hh, &n, sizeof n, NULL, 0,
                      &n->inner, NULL, NULL) == LAPI_SUCCESS, i, 0);
  int cur = -1;
  CHECK(LAPI_Waitcntr(*h, &n->inner, 2, &cur) == LAPI_SUCCESS, 0, 0);
  CHECK(cur == 0 && n->inner_runs == 2, cur, n->inner_runs);
  CHECK(LAPI_Fence(*h) == LAPI_SUCCESS, 0, 0);
  n->outer_runs++;
}

static void *outer_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)h, (void)uhdr_len, (void)msg_len;
  *c = outer_ch;
  *ui = *(struct nest **)uhdr;
  return NULL;
}

static void nested_step(int hi)
{
  lapi_handle_t h = hndl[hi];
  struct nest n;
  memset(&n, 0, sizeof n);
  struct nest *np = &n;
  lapi_cntr_t cmpl;
  LAPI_Setcntr(h, &cmpl, 0);
  LAPI_Setcntr(h, &n.inner, 0);
  in_send = 1;
  CHECK(LAPI_Amsend(h, 0, (void *)outer_hh, &np, sizeof np, NULL, 0, NULL,
                    NULL, &cmpl) == LAPI_SUCCESS, hi, 0);
  in_send = 0;
  wait_exact(h, &cmpl, 1, "nested cmpl");
  CHECK(n.outer_runs == 1 && n.inner_runs == 2, n.outer_runs, n.inner_runs);
}

/* A burst without waiting: more messages than the queue may hold, so in
 * interrupt mode the sender is held back (flow control) now and then. */
static int burst_seen;

static void *burst_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)h, (void)uhdr, (void)uhdr_len, (void)msg_len;
  __atomic_add_fetch(&burst_seen, 1, __ATOMIC_RELAXED);
  *c = NULL;
  *ui = NULL;
  return NULL;
}

static void burst_step(void)
{
  const int n = 9000;
  lapi_cntr_t cmpl;
  LAPI_Setcntr(hndl[0], &cmpl, 0);
  in_send = 1;
  for (int i = 0; i < n; i++)
    CHECK(LAPI_Amsend(hndl[0], 0, (void *)burst_hh, NULL, 0, NULL, 0, NULL,
                      NULL, &cmpl) == LAPI_SUCCESS, i, 0);
  in_send = 0;
  wait_exact(hndl[0], &cmpl, n, "burst cmpl");
}

static void *worker_main(void *arg)
{
  struct worker *w = arg;
  is_app_thread = 1;
  int seq = 0;
  for (int r = 0; r < w->rounds; r++) {
    for (int hi = 0; hi < NHANDLES; hi++) {
      am_window(w, hi, 0, &seq);
      am_window(w, hi, 1, &seq);
      rma_step(w, hi, ++seq);
      if (r % 8 == 0)
        nested_step(hi);
    }
    if (r % 100 == 50)
      burst_step();
  }
  return NULL;
}

/* After the workers: the handle lock of LAPI_Util against a handler,
 * Setcntr_wstatus with a purge, and LAPI_Msgpoll (for TSan's eyes). */
static lapi_thread_func_t tf;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int signalled;

static void signal_ch(lapi_handle_t *h, void *p)
{
  (void)p;
  CHECK(tf.mutex_lock(*h) == 0, 0, 0);
  signalled = 1;
  tf.cond_signal(*h, &cond);
  CHECK(tf.mutex_unlock(*h) == 0, 0, 0);
}

static void *signal_hh(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **c, void **ui)
{
  (void)h, (void)uhdr, (void)uhdr_len, (void)msg_len;
  *c = signal_ch;
  *ui = NULL;
  return NULL;
}

static void misc_checks(void)
{
  lapi_util_t u;
  memset(&u, 0, sizeof u);
  u.Util_type = LAPI_GET_THREAD_FUNC;
  CHECK(LAPI_Util(hndl[0], &u) == LAPI_SUCCESS, 0, 0);
  tf = u.ThreadFunc;
  CHECK(tf.mutex_lock(hndl[0]) == 0, 0, 0);
  CHECK(LAPI_Amsend(hndl[0], 0, (void *)signal_hh, NULL, 0, NULL, 0, NULL,
                    NULL, NULL) == LAPI_SUCCESS, 0, 0);
  while (!signalled)
    CHECK(tf.cond_wait(hndl[0], &cond) == 0, 0, 0);
  CHECK(tf.mutex_unlock(hndl[0]) == 0, 0, 0);

  lapi_cntr_t c;
  uint dest[1] = {0};
  int status[1] = {-1};
  LAPI_Setcntr(hndl[1], &c, 0);
  CHECK(LAPI_Setcntr_wstatus(hndl[1], &c, 1, dest, status) == LAPI_SUCCESS,
        0, 0);
  CHECK(LAPI_Purge_totask(hndl[1], 0) == LAPI_SUCCESS, 0, 0);
  wait_exact(hndl[1], &c, 1, "wstatus after purge");
  CHECK(status[0] == LAPI_MSG_PURGED, status[0], 0);
  CHECK(LAPI_Resume_totask(hndl[1], 0) == LAPI_SUCCESS, 0, 0);

  lapi_msg_info_t info;
  CHECK(LAPI_Amsend(hndl[1], 0, (void *)burst_hh, NULL, 0, NULL, 0, NULL,
                    NULL, NULL) == LAPI_SUCCESS, 0, 0);
  CHECK(LAPI_Msgpoll(hndl[1], 1000, &info) == LAPI_SUCCESS, 0, 0);
  CHECK(info.status & LAPI_RECV_COMPLETE, (int)info.status, 0);
}

/* Flip handle 1 between polling and interrupt mode while work runs. */
static void *toggler_main(void *arg)
{
  (void)arg;
  int mode = 1;
  while (!__atomic_load_n(&stop_toggler, __ATOMIC_SEQ_CST)) {
    usleep(2000);
    LAPI_Senv(hndl[1], INTERRUPT_SET, mode);
    mode = !mode;
  }
  LAPI_Senv(hndl[1], INTERRUPT_SET, 0);
  return NULL;
}

int main(int argc, char **argv)
{
  int rounds = argc > 1 ? atoi(argv[1]) : 200;
  int nthreads = argc > 2 ? atoi(argv[2]) : 3;
  if (rounds < 1 || nthreads < 1 || nthreads > MAX_THREADS) {
    fprintf(stderr, "usage: lapi_stress [rounds [threads 1..%d]]\n",
            MAX_THREADS);
    return 2;
  }
  is_app_thread = 1;
  for (int i = 0; i < NHANDLES; i++) {
    lapi_info_t info;
    memset(&info, 0, sizeof info);
    if (i == 1)
      info.protocol = LAPI_INTERRUPT_OFF;
    if (LAPI_Init(&hndl[i], &info) != LAPI_SUCCESS) {
      printf("FAIL: LAPI_Init\n");
      return 1;
    }
  }
  static struct worker w[MAX_THREADS];
  pthread_t th[MAX_THREADS], toggler;
  pthread_create(&toggler, NULL, toggler_main, NULL);
  for (int i = 0; i < nthreads; i++) {
    w[i].tid = i;
    w[i].rounds = rounds;
    w[i].seed = 12345u + (unsigned)i;
    pthread_create(&th[i], NULL, worker_main, &w[i]);
  }
  for (int i = 0; i < nthreads; i++)
    pthread_join(th[i], NULL);
  __atomic_store_n(&stop_toggler, 1, __ATOMIC_SEQ_CST);
  pthread_join(toggler, NULL);

  misc_checks();
  int want = rounds * NHANDLES * nthreads;
  CHECK(shared32 == want, shared32, want);
  CHECK(shared64 == want, (int)shared64, want);
  for (int i = 0; i < NHANDLES; i++) {
    CHECK(LAPI_Fence(hndl[i]) == LAPI_SUCCESS, i, 0);
    CHECK(LAPI_Term(hndl[i]) == LAPI_SUCCESS, i, 0);
  }
  if (failures) {
    printf("FAIL: %d check(s) failed\n", failures);
    return 1;
  }
  printf("PASS: %d threads x %d rounds x %d handles\n", nthreads, rounds,
         NHANDLES);
  return 0;
}
