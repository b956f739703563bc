/*
 * ofi_faults.c - invalid packets and buffer exhaustion do not hurt a job.
 *
 * Run with LAPI_OFI_TEST_MANGLE=N (every Nth packet sent is followed by
 * an invalid copy, ofi_fault.c) and optionally LAPI_OFI_TEST_NOMEM=M
 * (every Mth packet buffer allocation fails).  Every task sends every
 * other task, in rounds: Amsends eager with and without a FIN, by RMA
 * rendezvous and as an Amsendv of small pieces (the packed PULL/DATA
 * path), puts, gets and rmws, with a LAPI_Fence per round; and REFUSED
 * Amsends without a FIN (to an Addr_set index nobody filled), which the
 * target refuses with a NAK.  Every byte, every counter and the rmw
 * totals are checked, and the error handler runs exactly for the refused
 * messages: once at their target, once at their origin (the NAK).  Then the injection stops and the job compares, class by class
 * (summed over all tasks), the invalid copies sent with the arrivals the
 * receivers dropped: each class was injected and every copy of a class
 * that cannot occur otherwise was dropped as that class; a DATA copy
 * that arrives after its transfer ended counts as stale instead, and
 * genuine stale packets may add to that class.  A DATA longer than a
 * chunk (class chunk) is dropped as such before its transfer is looked
 * up, so every one counts there, and no byte of it lands (the bytes
 * checks).  White box: it links
 * lapi_static for ofi_fault_counts.
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define ROUNDS 12
#define MAXT 16
#define SMALL 100
#define BIG 200000          /* above the eager limit: RMA rendezvous */
#define NPIECE 200          /* Amsendv pieces under LAPI_RDV_MIN_BLOCK */
#define PIECE 1000
#define PUTLEN 5000
#define GETLEN 100000

enum { K_SMALL_FIN, K_SMALL_NOFIN, K_BIG, K_VEC, K_KINDS };

struct uh {
  int src, round, kind, len;
};

static lapi_cntr_t am_tgt;   /* every AM to us */
#define REFUSED 3           /* refused Amsends per round and target */

static int errors_heard;     /* atomic: any other error */
static int refusals_heard;   /* atomic: LAPI_ERR_HDR_HNDLR_NULL */
static int seen[MAXT][ROUNDS][K_KINDS];
static unsigned char put_box[MAXT][ROUNDS][PUTLEN];
static unsigned char get_src[GETLEN];
static int rmw32;
static long long rmw64;

static uint32_t am_seed(int src, int dst, int round, int kind)
{
  return (uint32_t)(src * 1000 + dst * 100 + round * 7 + kind);
}

static void errh(lapi_handle_t *h, int *code, lapi_err_t *type, int *task,
                 int *src)
{
  (void)h;
  (void)task;
  if (*code == LAPI_ERR_HDR_HNDLR_NULL && *type == AM_ERR) {
    __atomic_add_fetch(&refusals_heard, 1, __ATOMIC_SEQ_CST);
    return;
  }
  __atomic_add_fetch(&errors_heard, 1, __ATOMIC_SEQ_CST);
  fprintf(stderr, "task %d: error handler: code %d from %d\n", ot.me, *code,
          *src);
}

static void am_done(lapi_handle_t *h, void *info)
{
  (void)h;
  struct uh *u = info;
  unsigned char *buf = (unsigned char *)(u + 1);
  size_t bad = ot_verify(buf, (size_t)u->len,
                         am_seed(u->src, ot.me, u->round, u->kind));
  OT_CHECK(bad == (size_t)u->len, "AM kind %d round %d from %d: byte %zu "
           "wrong", u->kind, u->round, u->src, bad);
  free(u);
}

static void *am_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                    ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr_len;
  lapi_return_info_t *ri = (lapi_return_info_t *)msg_len;
  struct uh *u = uhdr;
  if (u->src < 0 || u->src >= ot.n || u->round < 0 || u->round >= ROUNDS ||
      u->kind < 0 || u->kind >= K_KINDS) {
    OT_CHECK(0, "bad user header");
    return NULL;
  }
  OT_CHECK(ri->msg_len == (ulong)u->len, "length %lu, want %d",
           ri->msg_len, u->len);
  int *mark = &seen[u->src][u->round][u->kind];
  OT_CHECK(*mark == 0, "AM kind %d round %d from %d twice", u->kind,
           u->round, u->src);
  *mark = 1;
  struct uh *copy = malloc(sizeof *copy + ri->msg_len);
  *copy = *u;
  *comp_h = am_done;
  *uinfo = copy;
  return copy + 1;
}

/* An Amsendv lands in the same shape: NPIECE pieces of a fresh buffer. */
struct vin {
  struct uh u;
  lapi_vec_t v;
  void *info[NPIECE];
  ulong len[NPIECE];
  unsigned char buf[NPIECE * PIECE];
};

static void vec_done(lapi_handle_t *h, void *info)
{
  (void)h;
  struct vin *in = info;
  size_t bad = ot_verify(in->buf, sizeof in->buf,
                         am_seed(in->u.src, ot.me, in->u.round, K_VEC));
  OT_CHECK(bad == sizeof in->buf, "Amsendv round %d from %d: byte %zu "
           "wrong", in->u.round, in->u.src, bad);
  free(in);
}

static lapi_vec_t *vec_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                           ulong *len_vec, compl_hndlr_t **comp_h,
                           void **uinfo)
{
  (void)h;
  (void)uhdr_len;
  struct uh *u = uhdr;
  if (u->src < 0 || u->src >= ot.n || u->round < 0 || u->round >= ROUNDS ||
      u->kind != K_VEC) {
    OT_CHECK(0, "bad Amsendv user header");
    return NULL;
  }
  OT_CHECK(len_vec[0] == PIECE, "len_vec[0] %lu", len_vec[0]);
  int *mark = &seen[u->src][u->round][K_VEC];
  OT_CHECK(*mark == 0, "Amsendv round %d from %d twice", u->round, u->src);
  *mark = 1;
  struct vin *in = malloc(sizeof *in);
  in->u = *u;
  for (int k = 0; k < NPIECE; k++) {
    in->info[k] = in->buf + (size_t)k * PIECE;
    in->len[k] = PIECE;
  }
  in->v = (lapi_vec_t){.vec_type = LAPI_GEN_IOVECTOR, .num_vecs = NPIECE,
                       .info = in->info, .len = in->len};
  *comp_h = vec_done;
  *uinfo = in;
  return &in->v;
}

static void wait_cntr(lapi_cntr_t *c, int v, const char *what)
{
  int cur = -1;
  OT_OK(LAPI_Waitcntr(ot.h, c, v, &cur));
  OT_CHECK(cur == 0, "%s overshot by %d", what, cur);
}

/* One round from this task to task t: on cmpl 3 AMs and a put, on gorg
 * a get and an rmw. */
static void round_to(int t, int r, void **am_cntrs, void **boxes,
                     void **get_srcs, void **rmw32s, void **rmw64s,
                     unsigned char *bufs,
                     unsigned char *getbuf, lapi_cntr_t *cmpl,
                     lapi_cntr_t *gorg)
{
  static int one = 1, prev32;
  static long long one64 = 1, prev64;
  /* each origin buffer is left alone until its counters say so */
  unsigned char *small = bufs, *small2 = bufs + SMALL;
  unsigned char *big = small2 + SMALL, *vec = big + BIG;
  unsigned char *put = vec + NPIECE * PIECE;
  struct uh u;

  ot_fill(small, SMALL, am_seed(ot.me, t, r, K_SMALL_FIN));
  u = (struct uh){ot.me, r, K_SMALL_FIN, SMALL};
  OT_OK(LAPI_Amsend(ot.h, (uint)t, (void *)5, &u, sizeof u, small, SMALL,
                    am_cntrs[t], NULL, cmpl));
  ot_fill(small2, SMALL, am_seed(ot.me, t, r, K_SMALL_NOFIN));
  u = (struct uh){ot.me, r, K_SMALL_NOFIN, SMALL};
  OT_OK(LAPI_Amsend(ot.h, (uint)t, (void *)5, &u, sizeof u, small2, SMALL,
                    am_cntrs[t], NULL, NULL));

  /* refused at the target (no handler under index 7): NAK */
  static char refused[SMALL];
  for (int k = 0; k < REFUSED; k++)
    OT_OK(LAPI_Amsend(ot.h, (uint)t, (void *)7, NULL, 0, refused, SMALL,
                      NULL, NULL, NULL));

  ot_fill(big, BIG, am_seed(ot.me, t, r, K_BIG));
  u = (struct uh){ot.me, r, K_BIG, BIG};
  OT_OK(LAPI_Amsend(ot.h, (uint)t, (void *)5, &u, sizeof u, big, BIG,
                    am_cntrs[t], NULL, cmpl));

  /* the origin vector is read until cmpl moves: not on the stack */
  static void *info[MAXT][NPIECE];
  static ulong len[MAXT][NPIECE];
  static lapi_vec_t vs[MAXT];
  ot_fill(vec, NPIECE * PIECE, am_seed(ot.me, t, r, K_VEC));
  for (int k = 0; k < NPIECE; k++) {
    info[t][k] = vec + (size_t)k * PIECE;
    len[t][k] = PIECE;
  }
  lapi_vec_t *v = &vs[t];
  *v = (lapi_vec_t){.vec_type = LAPI_GEN_IOVECTOR, .num_vecs = NPIECE,
                    .info = info[t], .len = len[t]};
  u = (struct uh){ot.me, r, K_VEC, NPIECE * PIECE};
  OT_OK(LAPI_Amsendv(ot.h, (uint)t, (void *)6, &u, sizeof u, v,
                     am_cntrs[t], NULL, cmpl));

  ot_fill(put, PUTLEN, am_seed(ot.me, t, r, 9));
  OT_OK(LAPI_Put(ot.h, (uint)t, PUTLEN,
                 (unsigned char *)boxes[t] +
                     ((size_t)ot.me * ROUNDS + (size_t)r) * PUTLEN,
                 put, NULL, NULL, cmpl));
  OT_OK(LAPI_Get(ot.h, (uint)t, GETLEN, get_srcs[t], getbuf, NULL, gorg));
  if (r % 2)
    OT_OK(LAPI_Rmw64(ot.h, FETCH_AND_ADD, (uint)t, rmw64s[t], &one64,
                     &prev64, gorg));
  else
    OT_OK(LAPI_Rmw(ot.h, FETCH_AND_ADD, (uint)t, rmw32s[t], &one, &prev32,
                   gorg));
}

static const char *const class_name[OFI_BAD_N] = {
  "other", "magic", "length", "short", "type", "sender", "handle", "ack",
  "stale", "data", "rts", "nak", "chunk", "ref",
};

/* Only the hook makes these: every copy must have been dropped as such. */
static int exact_class(int c)
{
  return c != OFI_BAD_OTHER && c != OFI_BAD_STALE && c != OFI_BAD_DATA;
}

static void check_counts(void)
{
  uint64_t inj[OFI_BAD_N], drop[OFI_BAD_N], sinj[OFI_BAD_N], sdrop[OFI_BAD_N];
  /* Copies still in flight land within moments: look until the exact
   * classes match (every task sees the same sums, so all loop alike). */
  for (int tries = 0;; tries++) {
    ofi_fault_counts(inj, drop);
    int settled = 1;
    for (int c = 0; c < OFI_BAD_N; c++) {
      sinj[c] = ot_job_sum(inj[c]);
      sdrop[c] = ot_job_sum(drop[c]);
      if (exact_class(c) && sdrop[c] < sinj[c])
        settled = 0;
    }
    if (settled || tries == 50)
      break;
    usleep(100000);
  }
  for (int c = 1; c < OFI_BAD_N; c++) {
    if (c == OFI_BAD_REF)
      continue; /* a hook of its own (ofi_ref_trust.c), not a copy */
    if (ot.me == 0)
      printf("class %-7s injected %6llu dropped %6llu\n", class_name[c],
             (unsigned long long)sinj[c], (unsigned long long)sdrop[c]);
    OT_CHECK(sinj[c] > 0, "no copy of class %s was injected",
             class_name[c]);
    if (exact_class(c))
      OT_CHECK(sdrop[c] == sinj[c], "class %s: %llu injected, %llu dropped",
               class_name[c], (unsigned long long)sinj[c],
               (unsigned long long)sdrop[c]);
  }
  OT_CHECK(sdrop[OFI_BAD_OTHER] == 0, "%llu drops of no injected class",
           (unsigned long long)sdrop[OFI_BAD_OTHER]);
  OT_CHECK(sdrop[OFI_BAD_DATA] > 0 && sdrop[OFI_BAD_DATA] <=
           sinj[OFI_BAD_DATA], "DATA: %llu injected, %llu dropped",
           (unsigned long long)sinj[OFI_BAD_DATA],
           (unsigned long long)sdrop[OFI_BAD_DATA]);
  OT_CHECK(sdrop[OFI_BAD_DATA] + sdrop[OFI_BAD_STALE] >=
           sinj[OFI_BAD_DATA] + sinj[OFI_BAD_STALE],
           "stale and DATA copies: %llu injected, %llu dropped",
           (unsigned long long)(sinj[OFI_BAD_DATA] + sinj[OFI_BAD_STALE]),
           (unsigned long long)(sdrop[OFI_BAD_DATA] + sdrop[OFI_BAD_STALE]));
}

int main(void)
{
  ot_init(errh, 170);
  if (ot.n > MAXT) {
    fprintf(stderr, "at most %d tasks\n", MAXT);
    return 2;
  }
  int mangle = getenv("LAPI_OFI_TEST_MANGLE") != NULL;
  LAPI_Setcntr(ot.h, &am_tgt, 0);
  ot_fill(get_src, GETLEN, (uint32_t)(77 + ot.me));
  OT_OK(LAPI_Addr_set(ot.h, (void *)am_hdr, 5));
  OT_OK(LAPI_Addr_set(ot.h, (void *)vec_hdr, 6));
  void **am_cntrs = ot_addrs(&am_tgt);
  void **boxes = ot_addrs(put_box);
  void **get_srcs = ot_addrs(get_src);
  void **rmw32s = ot_addrs(&rmw32);
  void **rmw64s = ot_addrs(&rmw64);

  size_t per = 2 * SMALL + BIG + NPIECE * PIECE + PUTLEN;
  unsigned char *bufs = malloc(per * (size_t)ot.n);
  unsigned char *getbufs = malloc((size_t)GETLEN * (size_t)ot.n);
  lapi_cntr_t cmpl, gorg;
  LAPI_Setcntr(ot.h, &cmpl, 0);
  LAPI_Setcntr(ot.h, &gorg, 0);
  int others = ot.n - 1;
  for (int r = 0; r < ROUNDS; r++) {
    memset(getbufs, 0, (size_t)GETLEN * (size_t)ot.n);
    for (int d = 1; d < ot.n; d++) {
      int t = (ot.me + d) % ot.n;
      round_to(t, r, am_cntrs, boxes, get_srcs, rmw32s, rmw64s,
               bufs + per * (size_t)t, getbufs + (size_t)GETLEN * t, &cmpl,
               &gorg);
    }
    /* cmpl: 3 AMs with a FIN and a put per target; gorg: get and rmw */
    wait_cntr(&cmpl, 4 * others, "cmpl_cntr");
    wait_cntr(&gorg, 2 * others, "get/rmw org_cntr");
    OT_OK(LAPI_Fence(ot.h));
    for (int d = 1; d < ot.n; d++) {
      int t = (ot.me + d) % ot.n;
      size_t bad = ot_verify(getbufs + (size_t)GETLEN * t, GETLEN,
                             (uint32_t)(77 + t));
      OT_CHECK(bad == GETLEN, "round %d: get from %d: byte %zu wrong", r, t,
               bad);
    }
  }
  /* Every AM to us has arrived (their origins fenced) once all did. */
  OT_OK(LAPI_Gfence(ot.h));
  wait_cntr(&am_tgt, ROUNDS * K_KINDS * others, "AM tgt_cntr");
  for (int s = 0; s < ot.n; s++)
    for (int r = 0; r < ROUNDS && s != ot.me; r++) {
      for (int k = 0; k < K_KINDS; k++)
        OT_CHECK(seen[s][r][k], "AM kind %d round %d from %d missing", k, r,
                 s);
      size_t bad = ot_verify(put_box[s][r], PUTLEN, am_seed(s, ot.me, r, 9));
      OT_CHECK(bad == PUTLEN, "put round %d from %d: byte %zu wrong", r, s,
               bad);
    }
  OT_CHECK(rmw32 == ROUNDS / 2 * others && rmw64 == ROUNDS / 2 * others,
           "rmw totals %d and %lld, want %d", rmw32, rmw64,
           ROUNDS / 2 * others);

  /* The small messages without a cmpl_cntr went without a FIN, and
   * after our fence the targets had acknowledged every one of them. */
  OT_OK(LAPI_Fence(ot.h));
  uint64_t nofin = 0, unacked = 0;
  pthread_mutex_lock(&ofi.lock);
  for (uint t = 0; t < ofi.ntasks; t++) {
    nofin += ofi.peers[t].nf_next;
    unacked += (uint32_t)(ofi.peers[t].nf_next - ofi.peers[t].nf_acked);
  }
  uint64_t naks = ofi.st.naks_sent, remote_fails = ofi.st.remote_fails;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(ot_job_sum(nofin) > 0, "no message went without a FIN");
  OT_CHECK(unacked == 0, "%llu messages without a FIN unacknowledged "
           "after LAPI_Fence", (unsigned long long)unacked);
  /* The refusals went by NAK (no FIN), one each way, not by a FIN's
   * status: the error handler count below cannot tell the two apart.
   * Their NAKs precede the counts our fence waited for. */
  uint64_t want_naks = (uint64_t)REFUSED * ROUNDS * (uint64_t)others;
  OT_CHECK(naks == want_naks, "%llu NAKs sent, want %llu",
           (unsigned long long)naks, (unsigned long long)want_naks);
  OT_CHECK(remote_fails == want_naks, "%llu of our messages failed at "
           "their target, want %llu", (unsigned long long)remote_fails,
           (unsigned long long)want_naks);

  if (mangle) {
    ofi_fault_mangle_stop();
    OT_OK(LAPI_Gfence(ot.h)); /* nobody injects from here on */
    check_counts();
  }
  /* Refusals: each heard at its target and at its origin.  The reports
   * run as items: look until they are in (the time limit catches a
   * missing one), then see that no more come. */
  int want_ref = 2 * REFUSED * ROUNDS * others;
  while (__atomic_load_n(&refusals_heard, __ATOMIC_SEQ_CST) < want_ref) {
    LAPI_Probe(ot.h);
    usleep(1000);
  }
  OT_OK(LAPI_Gfence(ot.h));
  LAPI_Probe(ot.h);
  OT_OK(LAPI_Gfence(ot.h));
  OT_CHECK(__atomic_load_n(&refusals_heard, __ATOMIC_SEQ_CST) == want_ref,
           "refusals heard %d times, want %d",
           __atomic_load_n(&refusals_heard, __ATOMIC_SEQ_CST), want_ref);
  OT_CHECK(__atomic_load_n(&errors_heard, __ATOMIC_SEQ_CST) == 0,
           "the error handler ran");
  free(bufs);
  free(getbufs);
  free(am_cntrs);
  free(boxes);
  free(get_srcs);
  free(rmw32s);
  free(rmw64s);
  return ot_finish("ofi_faults");
}
