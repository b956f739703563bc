/*
 * ofi_storm.c - floods between core groups, every counter checked.
 *
 *  all-to-all  every task sends K active messages to every other task
 *              without waiting (mostly 0-256 B, every 50th 20 KB, so the
 *              eager and rendezvous paths mix), then K puts;
 *  fenced      all-to-all again with no origin counters (the eager
 *              messages and the puts get no FIN: the targets acknowledge
 *              them by count), then LAPI_Gfence: every message has then
 *              completed at its target, counted once, bytes right;
 *  many-to-one every task but 0 sends M messages to task 0 at once.
 * Each message carries (source, sequence) in its user header; the target
 * checks its bytes, that every sequence number of every source arrives
 * exactly once, and the target counter; the origin waits for org_cntr
 * and cmpl_cntr to reach the number of messages it sent.  Thousands of
 * messages are outstanding at once: credits, queueing and -FI_EAGAIN
 * retries must neither lose nor duplicate any.
 */
#include "ofi_test.h"

#define K 1500
#define M 3000
#define BIGLEN 20000
#define MAXT 64

struct sh {
  int src;
  int seq;
  int len;
  int phase;
};

static unsigned char *seen[3][MAXT]; /* [phase][src]: one byte per seq */
static lapi_cntr_t am_tgt, put_tgt;
static unsigned char put_slots[MAXT][K][8];

static int msg_len(int seq)
{
  return seq % 50 == 49 ? BIGLEN : (seq * 37) % 257;
}

static void done(lapi_handle_t *h, void *info)
{
  (void)h;
  struct sh *s = info;
  unsigned char *buf = (unsigned char *)(s + 1);
  uint32_t seed = (uint32_t)(s->src * 131 + ot.me);
  size_t bad = ot_verify(buf, (size_t)s->len, seed);
  OT_CHECK(bad == (size_t)s->len, "message %d from %d: byte %zu wrong",
           s->seq, s->src, bad);
  free(s);
}

static void *hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                 ulong *msg_len_p, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr_len;
  lapi_return_info_t *ri = (lapi_return_info_t *)msg_len_p;
  struct sh *u = uhdr;
  int lim = u->phase == 1 ? M : K;
  if (u->src < 0 || u->src >= ot.n || u->seq < 0 || u->seq >= lim ||
      u->phase < 0 || u->phase > 2) {
    OT_CHECK(0, "bad header src %d seq %d", u->src, u->seq);
    return NULL;
  }
  OT_CHECK((int)ri->src == u->src, "src %d claims %d", (int)ri->src,
           u->src);
  OT_CHECK(ri->msg_len == (ulong)msg_len(u->seq), "length %lu for seq %d",
           ri->msg_len, u->seq);
  unsigned char *mark = &seen[u->phase][u->src][u->seq];
  OT_CHECK(*mark == 0, "message %d from %d arrived twice", u->seq, u->src);
  *mark = 1;
  struct sh *s = malloc(sizeof *s + ri->msg_len);
  *s = *u;
  *comp_h = done;
  *uinfo = s;
  return s + 1;
}

static void wait_n(lapi_cntr_t *c, int v, const char *what)
{
  int cur = -1;
  OT_OK(LAPI_Waitcntr(ot.h, c, v, &cur));
  OT_CHECK(cur == 0, "%s overshot by %d", what, cur);
}

static void check_seen(int phase, int from, int count)
{
  for (int q = 0; q < count; q++)
    if (!seen[phase][from][q]) {
      OT_CHECK(0, "phase %d: message %d from %d never arrived", phase, q,
               from);
      return;
    }
}

int main(void)
{
  ot_init(NULL, 170);
  if (ot.n > MAXT) {
    fprintf(stderr, "at most %d tasks\n", MAXT);
    return 2;
  }
  for (int p = 0; p < 3; p++)
    for (int t = 0; t < ot.n; t++)
      seen[p][t] = calloc(M, 1);
  LAPI_Setcntr(ot.h, &am_tgt, 0);
  LAPI_Setcntr(ot.h, &put_tgt, 0);
  /* registered before the collective below: nobody sends earlier */
  OT_OK(LAPI_Addr_set(ot.h, (void *)hdr, 3));
  void **am_cntrs = ot_addrs(&am_tgt);
  void **put_cntrs = ot_addrs(&put_tgt);
  void **slots = ot_addrs(put_slots);

  /* One read-only data buffer per destination. */
  unsigned char **data = calloc((size_t)ot.n, sizeof *data);
  for (int t = 0; t < ot.n; t++) {
    data[t] = malloc(BIGLEN);
    ot_fill(data[t], BIGLEN, (uint32_t)(ot.me * 131 + t));
  }
  struct sh u;
  lapi_cntr_t org, cmpl;
  LAPI_Setcntr(ot.h, &org, 0);
  LAPI_Setcntr(ot.h, &cmpl, 0);

  /* all-to-all: interleave destinations so every pair is busy at once */
  for (int q = 0; q < K; q++)
    for (int d = 1; d < ot.n; d++) {
      int t = (ot.me + d) % ot.n;
      u = (struct sh){ot.me, q, msg_len(q), 0};
      OT_OK(LAPI_Amsend(ot.h, (uint)t, (void *)3, &u, sizeof u, data[t],
                        (ulong)u.len, am_cntrs[t], &org, &cmpl));
    }
  int sent = K * (ot.n - 1);
  wait_n(&org, sent, "org_cntr");
  wait_n(&cmpl, sent, "cmpl_cntr");
  wait_n(&am_tgt, sent, "tgt_cntr");
  for (int t = 0; t < ot.n; t++)
    if (t != ot.me)
      check_seen(0, t, K);

  /* put storm: slot [me][q] of every other task */
  unsigned char val[K][8];
  for (int q = 0; q < K; q++)
    for (int b = 0; b < 8; b++)
      val[q][b] = ot_byte((uint32_t)(ot.me + q), (size_t)b);
  for (int q = 0; q < K; q++)
    for (int d = 1; d < ot.n; d++) {
      int t = (ot.me + d) % ot.n;
      OT_OK(LAPI_Put(ot.h, (uint)t, 8,
                     (char *)slots[t] + ((size_t)ot.me * K + q) * 8, val[q],
                     put_cntrs[t], &org, &cmpl));
    }
  wait_n(&org, sent, "put org_cntr");
  wait_n(&cmpl, sent, "put cmpl_cntr");
  wait_n(&put_tgt, sent, "put tgt_cntr");
  for (int t = 0; t < ot.n; t++)
    for (int q = 0; t != ot.me && q < K; q++)
      if (ot_verify(put_slots[t][q], 8, (uint32_t)(t + q)) != 8) {
        OT_CHECK(0, "put %d from %d wrong", q, t);
        break;
      }
  OT_OK(LAPI_Gfence(ot.h));

  /* fenced: nothing but LAPI_Gfence tells that these completed */
  for (int q = 0; q < K; q++)
    for (int d = 1; d < ot.n; d++) {
      int t = (ot.me + d) % ot.n;
      u = (struct sh){ot.me, q, msg_len(q), 2};
      OT_OK(LAPI_Amsend(ot.h, (uint)t, (void *)3, &u, sizeof u, data[t],
                        (ulong)u.len, am_cntrs[t], NULL, NULL));
    }
  for (int q = 0; q < K; q++)
    for (int b = 0; b < 8; b++)
      val[q][b] = ot_byte((uint32_t)(ot.me + q + 7), (size_t)b);
  for (int q = 0; q < K; q++)
    for (int d = 1; d < ot.n; d++) {
      int t = (ot.me + d) % ot.n;
      OT_OK(LAPI_Put(ot.h, (uint)t, 8,
                     (char *)slots[t] + ((size_t)ot.me * K + q) * 8, val[q],
                     NULL, NULL, NULL));
    }
  OT_OK(LAPI_Gfence(ot.h));
  int got = -1;
  LAPI_Getcntr(ot.h, &am_tgt, &got);
  OT_CHECK(got == sent, "after LAPI_Gfence tgt_cntr is %d, not %d", got,
           sent);
  LAPI_Setcntr(ot.h, &am_tgt, 0);
  for (int t = 0; t < ot.n; t++)
    if (t != ot.me)
      check_seen(2, t, K);
  for (int t = 0; t < ot.n; t++)
    for (int q = 0; t != ot.me && q < K; q++)
      if (ot_verify(put_slots[t][q], 8, (uint32_t)(t + q + 7)) != 8) {
        OT_CHECK(0, "fenced put %d from %d wrong", q, t);
        break;
      }
  OT_OK(LAPI_Gfence(ot.h)); /* nobody sends the next phase before */

  /* many-to-one */
  if (ot.me != 0) {
    for (int q = 0; q < M; q++) {
      u = (struct sh){ot.me, q, msg_len(q), 1};
      OT_OK(LAPI_Amsend(ot.h, 0, (void *)3, &u, sizeof u, data[0],
                        (ulong)u.len, am_cntrs[0], &org, &cmpl));
    }
    wait_n(&org, M, "many-to-one org_cntr");
    wait_n(&cmpl, M, "many-to-one cmpl_cntr");
  } else {
    wait_n(&am_tgt, M * (ot.n - 1), "many-to-one tgt_cntr");
    for (int t = 1; t < ot.n; t++)
      check_seen(1, t, M);
  }
  int rc = ot_finish("ofi_storm");
  for (int t = 0; t < ot.n; t++) {
    free(data[t]);
    free(seen[0][t]);
    free(seen[1][t]);
    free(seen[2][t]);
  }
  free(data);
  free(am_cntrs);
  free(put_cntrs);
  free(slots);
  return rc;
}
