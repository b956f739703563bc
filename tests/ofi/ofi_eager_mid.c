/*
 * ofi_eager_mid.c - mid-size messages at the eager limit, and the
 * counters of eager messages acknowledged by count.
 *
 * Over tcp;ofi_rxm (an RMA read there is a request and a response) a
 * whole packet buffer of data goes eagerly: without LAPI_EAGER_LIMIT the
 * limit must be 64 KiB there.  Task 0 sends task 1, for sizes L - 1, L
 * (the eager limit) and L + 1: a LAPI_Put, a LAPI_Amsend (both with
 * tgt_cntr, org_cntr and cmpl_cntr: such eager messages go without a FIN
 * and their cmpl_cntr waits for the target's counts) and a LAPI_Get (org
 * and tgt counters); then a stream of WINDOW puts and WINDOW Amsends of
 * L bytes counted on one cmpl_cntr.  Every counter must reach its value,
 * every byte must arrive, and task 1's transport counts prove the path:
 * up to L eager, L + 1 not, and no FIN for the streams.
 * Last, NMANY eager Amsends of different sizes (L/2 to L, at most SLOT)
 * whose header handler returns a buffer of its own to each and whose
 * completion handler checks its bytes: over tcp such messages keep
 * their receive buffer until the data is copied out (ofi_sink.c,
 * rx_hold_ok), and the first header handler waits until one arrival
 * found the held share full and was copied, so both ways run while
 * held buffers are outstanding; every fourth is discarded (NULL), so
 * held buffers also go back when a transfer ends undelivered.  White
 * box (lapi_static).
 */
#include "ofi_test.h"

#include <sched.h>

#include "transport/ofi/ofi.h"

#define WINDOW 64
#define MAXLEN ((size_t)1 << 20)

static unsigned char src[MAXLEN], dst[WINDOW * 65536 + MAXLEN];
static lapi_cntr_t tgt_cntr, org_cntr, cmpl_cntr;
static size_t am_len; /* where the next Amsend lands: dst */

static void *hdr_to_dst(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                        ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  OT_CHECK(*msg_len == am_len, "Amsend of %lu bytes, expected %zu",
           (unsigned long)*msg_len, am_len);
  *comp_h = NULL;
  *uinfo = NULL;
  return dst;
}

static void fill(unsigned char *p, size_t len, unsigned seed)
{
  for (size_t i = 0; i < len; i++)
    p[i] = (unsigned char)(i * 7 + seed);
}

static size_t bad_byte(const unsigned char *p, size_t len, unsigned seed)
{
  for (size_t i = 0; i < len; i++)
    if (p[i] != (unsigned char)(i * 7 + seed))
      return i;
  return SIZE_MAX;
}

/* ------------------------------------------- many Amsends, own buffers */

#define NMANY 96
#define SLOT ((size_t)65536)

static unsigned char many[NMANY * SLOT];
static size_t many_lim;  /* the largest of them: min(eager limit, SLOT) */
static int many_block;   /* the first header handler waits (see above) */
static int many_ok;      /* completion handlers that found their bytes */
static uint64_t many_full0; /* ofi.st.rx_hold_full before them */
static int many_peak;       /* the most ofi.rx_held a header handler saw */

struct many_hdr {
  uint32_t i, len;
};

static size_t many_len(uint32_t i)
{
  return many_lim - (i * 1531u) % (many_lim / 2);
}

static void many_done(lapi_handle_t *h, void *uinfo)
{
  (void)h;
  uint32_t i = (uint32_t)(uintptr_t)uinfo;
  size_t at = bad_byte(many + i * SLOT, many_len(i), 100 + i);
  OT_CHECK(at == SIZE_MAX, "Amsend %u of %zu bytes: byte %zu wrong", i,
           many_len(i), at);
  if (at == SIZE_MAX)
    __atomic_add_fetch(&many_ok, 1, __ATOMIC_SEQ_CST);
  /* Its receive buffer went back before this handler ran (which may
   * wait for further messages): no transfer into it still holds one. */
  int holding = 0;
  pthread_mutex_lock(&ofi.lock);
  for (uint32_t s = 0; s < ofi.xcap; s++) {
    struct ofi_xfer *x = ofi.xtab[s];
    if (x && x->rx_buf && x->d.buf == many + i * SLOT)
      holding = 1;
  }
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(!holding, "Amsend %u: its receive buffer still held in its "
           "completion handler", i);
}

static void *hdr_many(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  struct many_hdr m;
  OT_CHECK(*uhdr_len == sizeof m, "uhdr of %u bytes", *uhdr_len);
  memcpy(&m, uhdr, sizeof m);
  OT_CHECK(m.i < NMANY && m.len == many_len(m.i) && *msg_len == m.len,
           "Amsend %u of %lu bytes", m.i, (unsigned long)*msg_len);
  if (m.i >= NMANY)
    m.i = 0;
  if (m.i == 0 && many_block) {
    /* Held buffers stay out while this runs; the arrivals behind it
     * must still come in (and be copied once the share is full).  The
     * alarm of ot_init bounds the wait. */
    for (;;) {
      pthread_mutex_lock(&ofi.lock);
      uint64_t full = ofi.st.rx_hold_full;
      pthread_mutex_unlock(&ofi.lock);
      if (full > many_full0)
        break;
      sched_yield();
    }
  }
  pthread_mutex_lock(&ofi.lock);
  if (ofi.rx_held > many_peak)
    many_peak = ofi.rx_held;
  pthread_mutex_unlock(&ofi.lock);
  if (m.i % 4 == 3) {
    /* Discarded (NULL): a held buffer goes back by ofi_xfer_free. */
    *comp_h = NULL;
    *uinfo = NULL;
    return NULL;
  }
  *comp_h = many_done;
  *uinfo = (void *)(uintptr_t)m.i;
  return many + (size_t)m.i * SLOT;
}

static void wait(lapi_cntr_t *c, int v)
{
  OT_OK(LAPI_Waitcntr(ot.h, c, v, NULL));
}

/* Task 1 after each transfer into dst: the bytes, and whether it came
 * eagerly (its eager count moved by `eager`).  After a LAPI_Gfence that
 * followed the origin's wait on cmpl_cntr: the count moves after the
 * data landed and tgt_cntr moved, before the target is done with it. */
static void check_in(const char *what, size_t len, unsigned seed,
                     uint64_t eager_before, uint64_t eager_want)
{
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me != 1)
    return;
  size_t at = bad_byte(dst, len, seed);
  OT_CHECK(at == SIZE_MAX, "%s of %zu bytes: byte %zu wrong", what, len, at);
  pthread_mutex_lock(&ofi.lock);
  uint64_t eager = ofi.st.eager - eager_before;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(eager == eager_want, "%s of %zu bytes: %llu eager arrivals, "
           "expected %llu", what, len, (unsigned long long)eager,
           (unsigned long long)eager_want);
}

static uint64_t eager_now(void)
{
  pthread_mutex_lock(&ofi.lock);
  uint64_t e = ofi.st.eager;
  pthread_mutex_unlock(&ofi.lock);
  return e;
}

/* FINs this task sent, alone or listed. */
static uint64_t fins_now(void)
{
  pthread_mutex_lock(&ofi.lock);
  uint64_t f = ofi.st.fins + ofi.st.fins_listed;
  pthread_mutex_unlock(&ofi.lock);
  return f;
}

int main(void)
{
  ot_init(NULL, 100);
  void **tgts = ot_addrs(&tgt_cntr);
  void **dsts = ot_addrs(dst);
  void **srcs = ot_addrs(src);
  OT_OK(LAPI_Addr_set(ot.h, (void *)hdr_to_dst, 1));
  size_t lim = ofi.eager_limit;
  if (strstr(ofi.prov, "tcp") && !getenv("LAPI_EAGER_LIMIT"))
    OT_CHECK(lim == 65536, "eager limit over tcp %zu, expected 65536", lim);
  OT_CHECK(lim > 0 && lim + 1 <= MAXLEN, "eager limit %zu", lim);
  size_t sizes[3] = {lim - 1, lim, lim + 1};
  unsigned seed = 1;
  for (int k = 0; k < 3; k++) {
    size_t len = sizes[k];
    int eager = len <= lim;
    /* put */
    /* counted before the fence: task 0 may send before we leave it */
    uint64_t e0 = eager_now();
    OT_OK(LAPI_Gfence(ot.h));
    if (ot.me == 0) {
      fill(src, len, seed);
      OT_OK(LAPI_Put(ot.h, 1, len, dsts[1], src, tgts[1], &org_cntr,
                     &cmpl_cntr));
      wait(&org_cntr, 1);
      wait(&cmpl_cntr, 1);
    } else if (ot.me == 1) {
      wait(&tgt_cntr, 1);
    }
    check_in("Put", len, seed, e0, (uint64_t)eager);
    seed++;
    /* Amsend */
    am_len = len;
    e0 = eager_now();
    OT_OK(LAPI_Gfence(ot.h));
    if (ot.me == 0) {
      fill(src, len, seed);
      OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, src, len, tgts[1],
                        &org_cntr, &cmpl_cntr));
      wait(&org_cntr, 1);
      wait(&cmpl_cntr, 1);
    } else if (ot.me == 1) {
      wait(&tgt_cntr, 1);
    }
    check_in("Amsend", len, seed, e0, (uint64_t)eager);
    seed++;
    /* Get: task 0 takes task 1's src into its dst */
    OT_OK(LAPI_Gfence(ot.h));
    if (ot.me == 1)
      fill(src, len, seed);
    OT_OK(LAPI_Gfence(ot.h));
    if (ot.me == 0) {
      memset(dst, 0, len);
      OT_OK(LAPI_Get(ot.h, 1, len, srcs[1], dst, tgts[1], &org_cntr));
      wait(&org_cntr, 1);
      size_t at = bad_byte(dst, len, seed);
      OT_CHECK(at == SIZE_MAX, "Get of %zu bytes: byte %zu wrong", len, at);
    } else if (ot.me == 1) {
      wait(&tgt_cntr, 1);
    }
    seed++;
  }
  /* Streams of WINDOW at the limit, counted on one cmpl_cntr each. */
  OT_CHECK(WINDOW * lim <= sizeof dst, "eager limit %zu too large", lim);
  uint64_t e0 = eager_now();
  OT_OK(LAPI_Gfence(ot.h));
  uint64_t f0 = fins_now(); /* the Gets' FINs went before task 0 came */
  if (ot.me == 0) {
    fill(src, lim, seed);
    for (int i = 0; i < WINDOW; i++)
      OT_OK(LAPI_Put(ot.h, 1, lim, (unsigned char *)dsts[1] + i * lim, src,
                     tgts[1], NULL, &cmpl_cntr));
    wait(&cmpl_cntr, WINDOW);
    am_len = lim;
  } else if (ot.me == 1) {
    wait(&tgt_cntr, WINDOW);
  }
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1) {
    for (int i = 0; i < WINDOW; i++) {
      size_t at = bad_byte(dst + i * lim, lim, seed);
      OT_CHECK(at == SIZE_MAX, "streamed Put %d: byte %zu wrong", i, at);
    }
    OT_CHECK(eager_now() - e0 == WINDOW, "streamed Puts: %llu eager",
             (unsigned long long)(eager_now() - e0));
  }
  seed++;
  am_len = lim;
  e0 = eager_now();
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    fill(src, lim, seed);
    for (int i = 0; i < WINDOW; i++)
      OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, src, lim, tgts[1],
                        &org_cntr, &cmpl_cntr));
    wait(&org_cntr, WINDOW);
    wait(&cmpl_cntr, WINDOW);
  } else if (ot.me == 1) {
    wait(&tgt_cntr, WINDOW);
  }
  check_in("streamed Amsend", lim, seed, e0, WINDOW);
  /* Acknowledged by count, not one FIN each (LAPI_OFI_CMPL_BY_COUNT). */
  if (ot.me == 1 && ofi.cmpl_by_count && !ofi.fin_always)
    OT_CHECK(fins_now() == f0, "%llu FINs for the streams",
             (unsigned long long)(fins_now() - f0));
  int v = ot_cntr(&cmpl_cntr);
  OT_CHECK(v == 0, "cmpl_cntr at %d after the waits", v);

  /* NMANY Amsends, each into a buffer of its own. */
  OT_OK(LAPI_Addr_set(ot.h, (void *)hdr_many, 2));
  many_lim = lim < SLOT ? lim : SLOT;
  /* Wait for the share to fill only where it surely does: over tcp, with
   * more messages (and credits) than the share. */
  many_block = strstr(ofi.prov, "tcp") && many_lim / 2 >= 2048 &&
               ofi.rx_hold_max + 2 <= NMANY &&
               ofi.rx_hold_max + 2 <= ofi.credits;
  pthread_mutex_lock(&ofi.lock);
  uint64_t holds0 = ofi.st.rx_holds, full0 = ofi.st.rx_hold_full;
  many_full0 = full0;
  pthread_mutex_unlock(&ofi.lock);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    for (uint32_t i = 0; i < NMANY; i++) {
      struct many_hdr m = {i, (uint32_t)many_len(i)};
      fill(many + i * SLOT, m.len, 100 + i);
      OT_OK(LAPI_Amsend(ot.h, 1, (void *)2, &m, sizeof m, many + i * SLOT,
                        m.len, tgts[1], NULL, &cmpl_cntr));
    }
    wait(&cmpl_cntr, NMANY);
  } else if (ot.me == 1) {
    wait(&tgt_cntr, NMANY);
    OT_CHECK(__atomic_load_n(&many_ok, __ATOMIC_SEQ_CST) == NMANY - NMANY / 4,
             "%d of %d Amsends with their bytes", many_ok,
             NMANY - NMANY / 4);
    pthread_mutex_lock(&ofi.lock);
    uint64_t holds = ofi.st.rx_holds - holds0;
    uint64_t full = ofi.st.rx_hold_full - full0;
    pthread_mutex_unlock(&ofi.lock);
    if (many_block)
      OT_CHECK((holds > 0 || ofi.rx_hold_max == 0) && full > 0, "%llu Amsends held their buffer, "
               "%llu found the share full", (unsigned long long)holds,
               (unsigned long long)full);
  }
  /* Every transfer ended (the origin's cmpl_cntr: FINs go out after
   * ofi_xfer_free), discarded ones too: none holds a buffer. */
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1) {
    pthread_mutex_lock(&ofi.lock);
    int held = ofi.rx_held, peak = many_peak;
    pthread_mutex_unlock(&ofi.lock);
    OT_CHECK(held == 0, "%d receive buffers still held", held);
    OT_CHECK(peak <= ofi.rx_hold_max, "%d receive buffers held at once, "
             "LAPI_OFI_RX_HOLD %d", peak, ofi.rx_hold_max);
    const char *e = getenv("LAPI_OFI_RX_HOLD");
    if (e)
      OT_CHECK(ofi.rx_hold_max == atoi(e), "LAPI_OFI_RX_HOLD=%s read as %d",
               e, ofi.rx_hold_max);
  }
  free(tgts);
  free(dsts);
  free(srcs);
  return ot_finish("ofi_eager_mid");
}
