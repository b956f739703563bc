/*
 * ofi_calls.c - every LAPI data call between core groups, bytes and
 * counters checked: Amsend at eager and rendezvous sizes (handler by
 * address and by Addr_set index), Put/Get, Putv/Getv, Rmw and Rmw64
 * (every op), LAPI_Xfer AM/PUT/GET with their handlers, Fence, Gfence,
 * Address_init/_init64, Probe, Msgpoll, a missing header handler
 * reported at the target, and the wire statistics.
 * Each task sends to (me + 1) % n; started by lapirun with 2 or 4 CGs.
 */
#include "ofi_test.h"

#define BIG (1u << 20)

static unsigned char rbuf[BIG];  /* AM target */
static unsigned char pbuf[BIG];  /* Put target */
static unsigned char gsrc[BIG];  /* Get source */
static lapi_cntr_t am_tgt, put_tgt, get_tgt;
static int cmpl_calls, shdlr_calls, chndlr_calls, err_calls;
static int ticket;
static long long big_sum;
static int swap_word, cas_word;

struct uh {
  int seed;
  int len;
};

static struct uh saved[64];
static int saved_i;

static void am_done(lapi_handle_t *h, void *info)
{
  (void)h;
  struct uh *u = info;
  size_t bad = ot_verify(rbuf, (size_t)u->len, (uint32_t)u->seed);
  OT_CHECK(bad == (size_t)u->len, "AM seed %d len %d: byte %zu wrong",
           u->seed, u->len, bad);
  __atomic_add_fetch(&cmpl_calls, 1, __ATOMIC_SEQ_CST);
}

static void *am_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                    ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  lapi_return_info_t *ri = (lapi_return_info_t *)msg_len;
  struct uh *u = uhdr;
  OT_CHECK(*uhdr_len == sizeof *u, "uhdr_len %u", *uhdr_len);
  OT_CHECK(ri->msg_len == (ulong)u->len, "msg_len %lu, want %d",
           ri->msg_len, u->len);
  OT_CHECK((int)ri->src == ot.src, "src %d, want %d", (int)ri->src,
           ot.src);
  struct uh *s = &saved[__atomic_fetch_add(&saved_i, 1, __ATOMIC_SEQ_CST) %
                        64];
  *s = *u;
  *comp_h = am_done;
  *uinfo = s;
  return rbuf;
}

static void shdlr(lapi_handle_t *h, void *info, lapi_sh_info_t *si)
{
  (void)h;
  OT_CHECK(info == &shdlr_calls, "sinfo %p", info);
  OT_CHECK(si->reason == LAPI_SUCCESS, "reason %u", si->reason);
  __atomic_add_fetch(&shdlr_calls, 1, __ATOMIC_SEQ_CST);
}

static void chndlr(lapi_handle_t *h, void *info)
{
  (void)h;
  OT_CHECK(info == &chndlr_calls, "cinfo %p", info);
  __atomic_add_fetch(&chndlr_calls, 1, __ATOMIC_SEQ_CST);
}

static void errh(lapi_handle_t *h, int *code, lapi_err_t *type, int *task,
                 int *src)
{
  (void)h;
  (void)type;
  (void)task;
  OT_CHECK(*code == LAPI_ERR_HDR_HNDLR_NULL, "error %d", *code);
  /* as the message's target (from src), or as its origin (from tgt) */
  OT_CHECK(*src == ot.src || *src == ot.tgt, "error from %d", *src);
  __atomic_add_fetch(&err_calls, 1, __ATOMIC_SEQ_CST);
}

static void wait1(lapi_cntr_t *c, int v)
{
  OT_OK(LAPI_Waitcntr(ot.h, c, v, NULL));
}

static void amsends(void **am_cntrs)
{
  static const int sizes[] = {0, 1, 100, 4000, 16000, 20000, 300000, BIG};
  unsigned char *data = malloc(BIG);
  lapi_cntr_t org, cmpl;
  int steps = 0;
  OT_OK(LAPI_Addr_set(ot.h, (void *)am_hdr, 5));
  for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    /* the handler by address, by Addr_set index, and by address with
     * org_cntr alone (no cmpl_cntr: a small one goes as a no-FIN SHORT) */
    for (int variant = 0; variant < 3; variant++) {
      int by_index = variant == 1, with_cmpl = variant < 2;
      struct uh u = {ot.me * 1000 + (int)k * 3 + variant, sizes[k]};
      ot_fill(data, (size_t)u.len, (uint32_t)u.seed);
      LAPI_Setcntr(ot.h, &org, 0);
      LAPI_Setcntr(ot.h, &cmpl, 0);
      OT_OK(LAPI_Amsend(ot.h, (uint)ot.tgt,
                        by_index ? (void *)5 : (void *)am_hdr, &u, sizeof u,
                        u.len ? data : NULL, (ulong)u.len,
                        am_cntrs[ot.tgt], &org, with_cmpl ? &cmpl : NULL));
      wait1(&org, 1);
      if (with_cmpl)
        wait1(&cmpl, 1);
      wait1(&am_tgt, 1);
      /* src's message of this step completed (tgt_cntr moved after its
       * handler); its next one waits for the Gfence below. */
      steps++;
      OT_CHECK(__atomic_load_n(&cmpl_calls, __ATOMIC_SEQ_CST) == steps,
               "%d completion handlers after %d messages (size %d)",
               __atomic_load_n(&cmpl_calls, __ATOMIC_SEQ_CST), steps, u.len);
      OT_OK(LAPI_Gfence(ot.h));
    }
  }
  free(data);
}

static void puts_gets(void **pbufs, void **put_cntrs, void **gsrcs,
                      void **get_cntrs)
{
  static const size_t sizes[] = {1, 5000, 20000, BIG};
  unsigned char *data = malloc(BIG);
  lapi_cntr_t org, cmpl;
  for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    size_t len = sizes[k];
    ot_fill(data, len, (uint32_t)(ot.me * 10 + (int)k));
    LAPI_Setcntr(ot.h, &org, 0);
    LAPI_Setcntr(ot.h, &cmpl, 0);
    OT_OK(LAPI_Put(ot.h, (uint)ot.tgt, len, pbufs[ot.tgt], data,
                   put_cntrs[ot.tgt], &org, &cmpl));
    wait1(&org, 1);
    wait1(&cmpl, 1);
    wait1(&put_tgt, 1);
    size_t bad = ot_verify(pbuf, len, (uint32_t)(ot.src * 10 + (int)k));
    OT_CHECK(bad == len, "Put of %zu: byte %zu wrong", len, bad);
    OT_OK(LAPI_Gfence(ot.h));

    /* Get: our gsrc holds our pattern; read the target's. */
    ot_fill(gsrc, len, (uint32_t)(ot.me * 10 + 5 + (int)k));
    memset(data, 0, len);
    OT_OK(LAPI_Gfence(ot.h));
    LAPI_Setcntr(ot.h, &org, 0);
    OT_OK(LAPI_Get(ot.h, (uint)ot.tgt, len, gsrcs[ot.tgt], data,
                   get_cntrs[ot.tgt], &org));
    wait1(&org, 1);
    wait1(&get_tgt, 1);
    bad = ot_verify(data, len, (uint32_t)(ot.tgt * 10 + 5 + (int)k));
    OT_CHECK(bad == len, "Get of %zu: byte %zu wrong", len, bad);
    OT_OK(LAPI_Gfence(ot.h));
  }
  free(data);
}

/* Putv/Getv: a strided source into an iovector target and back. */
static void vectors(void **pbufs, void **put_cntrs, void **get_cntrs)
{
  enum { NB = 64, BLK = 4096, PITCH = 5000 };
  unsigned char *src = malloc((size_t)NB * PITCH);
  unsigned char *packed = malloc((size_t)NB * BLK);
  ot_fill(packed, (size_t)NB * BLK, (uint32_t)(ot.me + 77));
  for (int b = 0; b < NB; b++)
    memcpy(src + (size_t)b * PITCH, packed + (size_t)b * BLK, BLK);
  /* the target: NB blocks packed in pbuf, described as an iovector */
  void *tinfo[NB];
  ulong tlen[NB];
  for (int b = 0; b < NB; b++) {
    tinfo[b] = (char *)pbufs[ot.tgt] + (size_t)b * BLK;
    tlen[b] = BLK;
  }
  lapi_vec_t tv = {LAPI_GEN_IOVECTOR, NB, tinfo, tlen};
  void *oinfo[NB];
  ulong olen[NB];
  for (int b = 0; b < NB; b++) {
    oinfo[b] = src + (size_t)b * PITCH;
    olen[b] = BLK;
  }
  lapi_vec_t ov = {LAPI_GEN_IOVECTOR, NB, oinfo, olen};
  lapi_cntr_t org, cmpl;
  LAPI_Setcntr(ot.h, &org, 0);
  LAPI_Setcntr(ot.h, &cmpl, 0);
  OT_OK(LAPI_Putv(ot.h, (uint)ot.tgt, &tv, &ov, put_cntrs[ot.tgt], &org,
                  &cmpl));
  wait1(&org, 1);
  wait1(&cmpl, 1);
  wait1(&put_tgt, 1);
  size_t n = (size_t)NB * BLK;
  size_t bad = ot_verify(pbuf, n, (uint32_t)(ot.src + 77));
  OT_CHECK(bad == n, "Putv: byte %zu wrong", bad);
  OT_OK(LAPI_Gfence(ot.h));

  /* Getv back into the strided source (zeroed first). */
  memset(src, 0, (size_t)NB * PITCH);
  LAPI_Setcntr(ot.h, &org, 0);
  void *ginfo[3] = {src, (void *)(uintptr_t)BLK, (void *)(uintptr_t)PITCH};
  lapi_vec_t gv = {LAPI_GEN_STRIDED_XFER, NB, ginfo, NULL};
  void *rinfo[3] = {pbufs[ot.tgt], (void *)(uintptr_t)BLK,
                    (void *)(uintptr_t)BLK};
  lapi_vec_t rv = {LAPI_GEN_STRIDED_XFER, NB, rinfo, NULL};
  OT_OK(LAPI_Getv(ot.h, (uint)ot.tgt, &rv, &gv, get_cntrs[ot.tgt], &org));
  wait1(&org, 1);
  wait1(&get_tgt, 1);
  for (int b = 0; b < NB; b++)
    memcpy(packed + (size_t)b * BLK, src + (size_t)b * PITCH, BLK);
  bad = ot_verify(packed, n, (uint32_t)(ot.me + 77));
  OT_CHECK(bad == n, "Getv: byte %zu wrong", bad);
  OT_OK(LAPI_Gfence(ot.h));
  free(src);
  free(packed);
}

static void rmws(void)
{
  void **tickets = ot_addrs(&ticket);
  void **sums = ot_addrs(&big_sum);
  void **swaps = ot_addrs(&swap_word);
  void **cass = ot_addrs(&cas_word);
  lapi_cntr_t org;
  LAPI_Setcntr(ot.h, &org, 0);
  int one = 1, prev = -1;
  OT_OK(LAPI_Rmw(ot.h, FETCH_AND_ADD, 0, tickets[0], &one, &prev, &org));
  long long add = 1000000000000LL + ot.me, before = -1;
  OT_OK(LAPI_Rmw64(ot.h, FETCH_AND_ADD, 0, sums[0], &add, &before, &org));
  int bits = 1 << ot.me, pold = -1;
  OT_OK(LAPI_Rmw(ot.h, FETCH_AND_OR, (uint)ot.tgt, swaps[ot.tgt], &bits,
                 &pold, &org));
  wait1(&org, 3);
  OT_CHECK(prev >= 0 && prev < ot.n, "ticket %d", prev);
  OT_CHECK(before >= 0, "64-bit sum before %lld", before);
  OT_CHECK(pold == 0, "FETCH_AND_OR saw %d", pold);
  /* the same bits again: an OR leaves the word, an ADD would double it */
  OT_OK(LAPI_Rmw(ot.h, FETCH_AND_OR, (uint)ot.tgt, swaps[ot.tgt], &bits,
                 &pold, &org));
  wait1(&org, 1);
  OT_CHECK(pold == bits, "second FETCH_AND_OR saw %d", pold);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    long long want = 0;
    for (int t = 0; t < ot.n; t++)
      want += 1000000000000LL + t;
    OT_CHECK(ticket == ot.n, "ticket %d", ticket);
    OT_CHECK(big_sum == want, "sum %lld, want %lld", big_sum, want);
  }
  OT_CHECK(swap_word == 1 << ot.src, "or word %d", swap_word);
  OT_OK(LAPI_Gfence(ot.h));

  /* SWAP, then COMPARE_AND_SWAP that fails and one that succeeds. */
  int nv = 100 + ot.me, old = -1;
  OT_OK(LAPI_Rmw(ot.h, SWAP, (uint)ot.tgt, swaps[ot.tgt], &nv, &old, &org));
  wait1(&org, 1);
  OT_CHECK(old == 1 << ot.me, "SWAP saw %d", old);
  int bad_cas[2] = {12345, 7}, good_cas[2] = {0, 200 + ot.me}, r = -1;
  OT_OK(LAPI_Rmw(ot.h, COMPARE_AND_SWAP, (uint)ot.tgt, cass[ot.tgt],
                 bad_cas, &r, &org));
  wait1(&org, 1);
  OT_CHECK(r == FALSE, "CAS with a wrong value gave %d", r);
  OT_OK(LAPI_Rmw(ot.h, COMPARE_AND_SWAP, (uint)ot.tgt, cass[ot.tgt],
                 good_cas, &r, &org));
  wait1(&org, 1);
  OT_CHECK(r == TRUE, "CAS with the right value gave %d", r);
  long long s64 = 5, o64 = -1;
  OT_OK(LAPI_Rmw64(ot.h, SWAP, 0, sums[0], &s64, &o64, &org));
  wait1(&org, 1);
  OT_CHECK(o64 != -1, "64-bit SWAP");
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0)
    OT_CHECK(big_sum == 5, "64-bit SWAP left %lld", big_sum);
  OT_CHECK(swap_word == 100 + ot.src, "swap word %d", swap_word);
  OT_CHECK(cas_word == 200 + ot.src, "cas word %d", cas_word);
  free(tickets);
  free(sums);
  free(swaps);
  free(cass);
}

static void xfers(void **am_cntrs, void **pbufs, void **put_cntrs,
                  void **gsrcs, void **get_cntrs)
{
  unsigned char *data = malloc(50000);
  lapi_cntr_t org, cmpl;
  lapi_xfer_t x;

  /* AM with a send completion handler, rendezvous size. */
  struct uh u = {ot.me * 1000 + 999, 50000};
  ot_fill(data, 50000, (uint32_t)u.seed);
  LAPI_Setcntr(ot.h, &org, 0);
  LAPI_Setcntr(ot.h, &cmpl, 0);
  memset(&x, 0, sizeof x);
  x.Am.Xfer_type = LAPI_AM_XFER;
  x.Am.tgt = (uint)ot.tgt;
  x.Am.hdr_hdl = (lapi_long_t)(uintptr_t)am_hdr;
  x.Am.uhdr = &u;
  x.Am.uhdr_len = sizeof u;
  x.Am.udata = data;
  x.Am.udata_len = 50000;
  x.Am.shdlr = shdlr;
  x.Am.sinfo = &shdlr_calls;
  x.Am.tgt_cntr = (lapi_long_t)(uintptr_t)am_cntrs[ot.tgt];
  x.Am.org_cntr = &org;
  x.Am.cmpl_cntr = &cmpl;
  OT_OK(LAPI_Xfer(ot.h, &x));
  wait1(&org, 1);
  wait1(&cmpl, 1);
  wait1(&am_tgt, 1);
  OT_OK(LAPI_Gfence(ot.h));

  /* PUT with a send completion handler. */
  ot_fill(data, 3000, (uint32_t)(ot.me + 4242));
  LAPI_Setcntr(ot.h, &org, 0);
  LAPI_Setcntr(ot.h, &cmpl, 0);
  memset(&x, 0, sizeof x);
  x.Put.Xfer_type = LAPI_PUT_XFER;
  x.Put.tgt = (uint)ot.tgt;
  x.Put.tgt_addr = (lapi_long_t)(uintptr_t)pbufs[ot.tgt];
  x.Put.org_addr = data;
  x.Put.len = 3000;
  x.Put.shdlr = shdlr;
  x.Put.sinfo = &shdlr_calls;
  x.Put.tgt_cntr = (lapi_long_t)(uintptr_t)put_cntrs[ot.tgt];
  x.Put.org_cntr = &org;
  x.Put.cmpl_cntr = &cmpl;
  OT_OK(LAPI_Xfer(ot.h, &x));
  wait1(&org, 1);
  wait1(&cmpl, 1);
  wait1(&put_tgt, 1);
  size_t bad = ot_verify(pbuf, 3000, (uint32_t)(ot.src + 4242));
  OT_CHECK(bad == 3000, "Xfer PUT: byte %zu wrong", bad);
  OT_OK(LAPI_Gfence(ot.h));

  /* GET with an origin completion handler. */
  ot_fill(gsrc, 40000, (uint32_t)(ot.me + 999));
  OT_OK(LAPI_Gfence(ot.h));
  memset(data, 0, 40000);
  LAPI_Setcntr(ot.h, &org, 0);
  memset(&x, 0, sizeof x);
  x.Get.Xfer_type = LAPI_GET_XFER;
  x.Get.tgt = (uint)ot.tgt;
  x.Get.tgt_addr = (lapi_long_t)(uintptr_t)gsrcs[ot.tgt];
  x.Get.org_addr = data;
  x.Get.len = 40000;
  x.Get.tgt_cntr = (lapi_long_t)(uintptr_t)get_cntrs[ot.tgt];
  x.Get.org_cntr = &org;
  x.Get.chndlr = chndlr;
  x.Get.cinfo = &chndlr_calls;
  OT_OK(LAPI_Xfer(ot.h, &x));
  wait1(&org, 1);
  wait1(&get_tgt, 1);
  bad = ot_verify(data, 40000, (uint32_t)(ot.tgt + 999));
  OT_CHECK(bad == 40000, "Xfer GET: byte %zu wrong", bad);
  OT_CHECK(__atomic_load_n(&shdlr_calls, __ATOMIC_SEQ_CST) == 2,
           "send completion handlers ran %d times", shdlr_calls);
  OT_CHECK(__atomic_load_n(&chndlr_calls, __ATOMIC_SEQ_CST) == 1,
           "get completion handler ran %d times", chndlr_calls);
  OT_OK(LAPI_Gfence(ot.h));
  free(data);
}

/* A header handler index nobody registered: the target's error handler
 * hears of it, and so does the origin's (the FIN's status); at the
 * origin org_cntr moves, cmpl_cntr does not. */
static void missing_handler(void)
{
  lapi_cntr_t org, cmpl;
  LAPI_Setcntr(ot.h, &org, 0);
  LAPI_Setcntr(ot.h, &cmpl, 0);
  int word = 42;
  OT_OK(LAPI_Amsend(ot.h, (uint)ot.tgt, (void *)77, &word, sizeof word,
                    &word, sizeof word, NULL, &org, &cmpl));
  wait1(&org, 1);
  OT_OK(LAPI_Fence(ot.h));
  OT_OK(LAPI_Gfence(ot.h));
  /* our handler ran for the message of src before src's Gfence ended */
  /* (the time limit of ot_init catches a report that never comes) */
  while (__atomic_load_n(&err_calls, __ATOMIC_SEQ_CST) < 2) {
    LAPI_Probe(ot.h);
    usleep(1000);
  }
  OT_CHECK(__atomic_load_n(&err_calls, __ATOMIC_SEQ_CST) == 2,
           "error handler ran %d times", err_calls);
  int c = -1;
  LAPI_Getcntr(ot.h, &cmpl, &c);
  OT_CHECK(c == 0, "cmpl_cntr %d after a failed delivery", c);
}

int main(void)
{
  ot_init(errh, 120);
  LAPI_Setcntr(ot.h, &am_tgt, 0);
  LAPI_Setcntr(ot.h, &put_tgt, 0);
  LAPI_Setcntr(ot.h, &get_tgt, 0);
  void **am_cntrs = ot_addrs(&am_tgt);
  void **put_cntrs = ot_addrs(&put_tgt);
  void **get_cntrs = ot_addrs(&get_tgt);
  void **pbufs = ot_addrs(pbuf);
  void **gsrcs = ot_addrs(gsrc);

  lapi_long_t all[64];
  OT_OK(LAPI_Address_init64(ot.h, (lapi_long_t)(uintptr_t)&am_tgt, all));
  for (int t = 0; t < ot.n && t < 64; t++)
    OT_CHECK(all[t] == (lapi_long_t)(uintptr_t)am_cntrs[t],
             "Address_init64 entry %d", t);

  amsends(am_cntrs);
  puts_gets(pbufs, put_cntrs, gsrcs, get_cntrs);
  vectors(pbufs, put_cntrs, get_cntrs);
  rmws();
  xfers(am_cntrs, pbufs, put_cntrs, gsrcs, get_cntrs);
  missing_handler();

  lapi_msg_info_t mi;
  OT_OK(LAPI_Msgpoll(ot.h, 2, &mi));
  OT_OK(LAPI_Probe(ot.h));
  free(am_cntrs);
  free(put_cntrs);
  free(get_cntrs);
  free(pbufs);
  free(gsrcs);
  return ot_finish("ofi_calls");
}
