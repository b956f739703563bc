/*
 * ofi_nak.c - an active message refused at its target reaches its
 * origin's error handler, with or without a FIN.
 *
 * Two tasks.  Task 0 sends task 1, per round, eager Amsends without a
 * cmpl_cntr (so, in process mode, without a FIN: acknowledged by count,
 * ofi_ack.c) of every outcome:
 *   good     delivered: data checked, tgt_cntr moves;
 *   nohdl    to an Addr_set index task 1 never filled: refused there
 *            with LAPI_ERR_HDR_HNDLR_NULL;
 *   badvec   an Amsendv whose header handler returns a vector of one
 *            segment for an origin of two: LAPI_ERR_VEC_NUM_DIFF;
 *   null     an Amsend whose header handler returns NULL: documented
 *            as a discard that completes normally (tgt_cntr moves, no
 *            error anywhere).
 * On odd rounds good and nohdl carry a cmpl_cntr (kept at the origin
 * and finished by the counts, LAPI_OFI_CMPL_BY_COUNT): it moves for the
 * good ones only.
 * Task 1 answers each round with a good one (its packets carry the
 * counts) and waits for the next, so it is in LAPI when refusals come.
 * Checked: task 0's error handler ran exactly once per refused message,
 * with its code, AM_ERR and task 1 as the source, and never otherwise;
 * task 1's ran for the same messages with task 0 as the source (the
 * target's own report); every good message landed, counters exact;
 * LAPI_Fence and LAPI_Term complete.  Run plain (the NAK path) and with
 * LAPI_OFI_FIN_ALWAYS=1 (the FIN path): the same user-visible result.
 * White box (links lapi_static): under the NAK path task 1 sent one NAK
 * per refused message and task 0 counted each failure.
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define ROUNDS 40
#define LEN 64
#define NCODES 2

enum { K_GOOD, K_GOOD2, K_NOHDL, K_BADVEC, K_NULL, K_BACK, K_KINDS };

struct uh {
  int round, kind;
};

static lapi_cntr_t tgt;      /* good and null AMs to us */
static lapi_cntr_t last;     /* the peer's last AM of each round */
static int seen[ROUNDS][K_KINDS];
static int heard[NCODES];    /* atomic: error handler, by expected code */
static int heard_other;      /* atomic: any other call of it */
static const int codes[NCODES] = {LAPI_ERR_HDR_HNDLR_NULL,
                                  LAPI_ERR_VEC_NUM_DIFF};

static void errh(lapi_handle_t *h, int *code, lapi_err_t *type, int *task,
                 int *src)
{
  (void)h;
  (void)task;
  int peer = ot.me == 0 ? 1 : 0;
  for (int i = 0; i < NCODES; i++)
    if (*code == codes[i] && *type == AM_ERR && *src == peer) {
      __atomic_add_fetch(&heard[i], 1, __ATOMIC_SEQ_CST);
      return;
    }
  __atomic_add_fetch(&heard_other, 1, __ATOMIC_SEQ_CST);
  fprintf(stderr, "task %d: unexpected error: code %d type %d from %d\n",
          ot.me, *code, (int)*type, *src);
}

static uint32_t seed(int round, int kind)
{
  return (uint32_t)(round * 10 + kind + 1);
}

struct box {
  struct uh u;
  unsigned char buf[2 * LEN];
  void *info[2];
  ulong len[2];
  lapi_vec_t v;
};

static void done(lapi_handle_t *h, void *info)
{
  (void)h;
  struct box *b = info;
  size_t n = b->u.kind == K_BADVEC ? 2 * LEN : LEN;
  size_t bad = ot_verify(b->buf, n, seed(b->u.round, b->u.kind));
  OT_CHECK(bad == n, "round %d kind %d: byte %zu wrong", b->u.round,
           b->u.kind, bad);
  free(b);
}

static int mark(const struct uh *u)
{
  if (u->round < 0 || u->round >= ROUNDS || u->kind < 0 ||
      u->kind >= K_KINDS) {
    OT_CHECK(0, "bad user header");
    return -1;
  }
  OT_CHECK(seen[u->round][u->kind] == 0, "round %d kind %d twice",
           u->round, u->kind);
  seen[u->round][u->kind]++;
  return 0;
}

static void *good_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr_len;
  lapi_return_info_t *ri = (lapi_return_info_t *)msg_len;
  if (mark(uhdr) != 0)
    return NULL;
  OT_CHECK(ri->msg_len == LEN, "length %lu", ri->msg_len);
  struct box *b = calloc(1, sizeof *b);
  b->u = *(struct uh *)uhdr;
  *comp_h = done;
  *uinfo = b;
  return b->buf;
}

static void *null_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr_len;
  (void)msg_len;
  (void)comp_h;
  (void)uinfo;
  mark(uhdr);
  return NULL;
}

/* A vector of one segment for an origin of two: refused by the checks. */
static lapi_vec_t *badvec_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                              ulong *len_vec, compl_hndlr_t **comp_h,
                              void **uinfo)
{
  (void)h;
  (void)uhdr_len;
  (void)len_vec;
  if (mark(uhdr) != 0)
    return NULL;
  struct box *b = calloc(1, sizeof *b);
  b->u = *(struct uh *)uhdr;
  b->info[0] = b->buf;
  b->len[0] = 2 * LEN;
  b->v = (lapi_vec_t){.vec_type = LAPI_GEN_IOVECTOR, .num_vecs = 1,
                      .info = b->info, .len = b->len};
  *comp_h = done;
  *uinfo = b; /* leaked if refused: a test */
  return &b->v;
}

static void am(int t, int hdl, int r, int kind, lapi_cntr_t *tc,
               lapi_cntr_t *org, lapi_cntr_t *cmpl)
{
  static unsigned char data[K_KINDS][2 * LEN];
  struct uh u = {r, kind};
  ot_fill(data[kind], 2 * LEN, seed(r, kind));
  if (kind == K_BADVEC) {
    static void *info[2];
    static ulong len[2] = {LEN, LEN};
    static lapi_vec_t v;
    info[0] = data[kind];
    info[1] = data[kind] + LEN;
    v = (lapi_vec_t){.vec_type = LAPI_GEN_IOVECTOR, .num_vecs = 2,
                     .info = info, .len = len};
    OT_OK(LAPI_Amsendv(ot.h, (uint)t, (void *)(uintptr_t)hdl, &u, sizeof u,
                       &v, tc, org, cmpl));
  } else {
    OT_OK(LAPI_Amsend(ot.h, (uint)t, (void *)(uintptr_t)hdl, &u, sizeof u,
                      data[kind], LEN, tc, org, cmpl));
  }
  /* eager: the data was copied, org_cntr moved at the send */
  int cur = -1;
  OT_OK(LAPI_Waitcntr(ot.h, org, 1, &cur));
}

static int sum_heard(void)
{
  int s = 0;
  for (int i = 0; i < NCODES; i++)
    s += __atomic_load_n(&heard[i], __ATOMIC_SEQ_CST);
  return s;
}

int main(void)
{
  ot_init(errh, 120);
  if (ot.n != 2) {
    fprintf(stderr, "two tasks\n");
    return 2;
  }
  /* as ofi_fabric.c reads it: unset, empty or "0" is off */
  const char *fa = getenv("LAPI_OFI_FIN_ALWAYS");
  int fin_always = fa && *fa && strcmp(fa, "0") != 0;
  LAPI_Setcntr(ot.h, &tgt, 0);
  OT_OK(LAPI_Addr_set(ot.h, (void *)good_hdr, 5));
  OT_OK(LAPI_Addr_set(ot.h, (void *)badvec_hdr, 6));
  OT_OK(LAPI_Addr_set(ot.h, (void *)null_hdr, 8)); /* 7 stays empty */
  void **tgts = ot_addrs(&tgt);
  LAPI_Setcntr(ot.h, &last, 0);
  void **lasts = ot_addrs(&last);
  int peer = 1 - ot.me;
  lapi_cntr_t org, cmpl;
  LAPI_Setcntr(ot.h, &org, 0);
  LAPI_Setcntr(ot.h, &cmpl, 0);

  for (int r = 0; r < ROUNDS; r++) {
    if (ot.me == 0) {
      OT_OK(LAPI_Waitcntr(ot.h, &last, 1, NULL)); /* task 1 waits now */
      lapi_cntr_t *c = r % 2 ? &cmpl : NULL;
      am(peer, 5, r, K_GOOD, tgts[peer], &org, c);
      am(peer, 7, r, K_NOHDL, tgts[peer], &org, c);
      am(peer, 6, r, K_BADVEC, tgts[peer], &org, NULL);
      am(peer, 8, r, K_NULL, tgts[peer], &org, NULL);
      am(peer, 5, r, K_GOOD2, lasts[peer], &org, NULL);
    } else {
      am(peer, 5, r, K_BACK, lasts[peer], &org, NULL);
      /* Rounds go in turn, so that task 1 waits in LAPI while the
       * refused ones arrive: in polling mode the waiting thread reads
       * them itself (ofi_direct.c), and that path's NAKs are tested,
       * not only the queue's. */
      OT_OK(LAPI_Waitcntr(ot.h, &last, 1, NULL));
    }
    if (r % 8 == 7)
      OT_OK(LAPI_Fence(ot.h)); /* fences end with refusals in flight */
  }
  OT_OK(LAPI_Fence(ot.h));
  OT_OK(LAPI_Gfence(ot.h));

  /* Good and null messages: tgt_cntr exact, the data checked. */
  int want_tgt = ot.me == 1 ? 2 * ROUNDS : 0;
  int cur = -1;
  OT_OK(LAPI_Waitcntr(ot.h, &tgt, want_tgt, &cur));
  OT_CHECK(cur == 0, "tgt_cntr overshot by %d", cur);
  for (int r = 0; r < ROUNDS; r++)
    for (int k = 0; k < K_KINDS; k++) {
      /* no handler ran for nohdl; badvec's did, then was refused */
      int want = ot.me == 1 ? k != K_BACK && k != K_NOHDL : k == K_BACK;
      OT_CHECK(seen[r][k] == want, "round %d kind %d seen %d times, want %d",
               r, k, seen[r][k], want);
    }

  /* Both refused kinds: task 1 reported them as their target, task 0
   * hears them as their origin.  The reports run as items: look until
   * they are in (the time limit catches a report that never comes). */
  while (sum_heard() < NCODES * ROUNDS) {
    LAPI_Probe(ot.h);
    usleep(1000);
  }
  OT_OK(LAPI_Gfence(ot.h));
  LAPI_Probe(ot.h);
  OT_OK(LAPI_Gfence(ot.h)); /* none more arrive after that */
  for (int i = 0; i < NCODES; i++)
    OT_CHECK(__atomic_load_n(&heard[i], __ATOMIC_SEQ_CST) == ROUNDS,
             "code %d heard %d times, want %d", codes[i],
             __atomic_load_n(&heard[i], __ATOMIC_SEQ_CST), ROUNDS);
  OT_CHECK(__atomic_load_n(&heard_other, __ATOMIC_SEQ_CST) == 0,
           "the error handler ran for something else");
  /* cmpl_cntr: the good ones of the odd rounds, not the refused */
  OT_OK(LAPI_Waitcntr(ot.h, &cmpl, ot.me == 0 ? ROUNDS / 2 : 0, &cur));
  OT_CHECK(cur == 0, "cmpl_cntr %d beyond the good messages", cur);

  /* LAPI_OFI_CMPL_BY_COUNT=0: the odd rounds' good and nohdl with FIN */
  unsigned kept_fin = ofi.cmpl_by_count ? 0 : ROUNDS;
  pthread_mutex_lock(&ofi.lock);
  uint64_t naks = ofi.st.naks_sent, fails = ofi.st.remote_fails;
  uint32_t nofin = ofi.peers[peer].nf_next;
  pthread_mutex_unlock(&ofi.lock);
  if (ot.me == 0) {
    OT_CHECK(fails == NCODES * ROUNDS, "%llu failures counted, want %d",
             (unsigned long long)fails, NCODES * ROUNDS);
    if (fin_always)
      OT_CHECK(nofin == 0, "%u messages went without a FIN", nofin);
    else
      OT_CHECK(nofin == 5 * ROUNDS - kept_fin, "%u messages without a FIN, "
               "want %u", nofin, 5 * ROUNDS - kept_fin);
  } else {
    OT_CHECK(naks == (fin_always ? 0 : NCODES * ROUNDS - kept_fin / 2),
             "%llu NAKs sent", (unsigned long long)naks);
    OT_CHECK(fails == 0, "%llu of our messages failed",
             (unsigned long long)fails);
  }
  free(tgts);
  free(lasts);
  return ot_finish(fin_always ? "ofi_nak (FIN)" : "ofi_nak");
}
