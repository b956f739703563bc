/*
 * ofi_zcopy.c - eager data sent from the caller's memory (LAPI_OFI_ZCOPY,
 * src/transport/ofi/ofi_send.c).
 *
 * Over sockets an eager message of at least LAPI_OFI_ZCOPY bytes in one
 * piece is not packed: the send reads the caller's buffer, so an AM's
 * org_cntr may move only once that send is over.  Task 0 sends task 1
 * rounds of messages, each from a slice of its own of one large buffer,
 * all issued before any is waited for (so that sends queue behind a
 * full socket), each AM or put with an org_cntr of its own; as soon as a
 * message's org_cntr moves, task 0 overwrites its slice.  Task 1 checks
 * every byte of every slice: an org_cntr that moved while the send
 * still read the slice shows as overwritten bytes.  Rounds: AMs at the
 * eager limit without cmpl_cntr (the SHORT packet), 16 KiB AMs with a
 * cmpl_cntr (an RTS kept for the target's counts), four times each,
 * 8 KiB AMs (under the default minimum: packed) and 32 KiB puts.
 * Last, a GENERIC Amsendv of 1 MiB in one piece that the target's header
 * handler scatters into 4 KiB pieces (the packed path over sockets: each DATA
 * chunk is then sent from the source's piece), counted on cmpl_cntr,
 * every piece and gap checked.  Task 0 also checks the
 * setting (argv[1], the expected LAPI_OFI_ZCOPY in bytes: 0 where it is
 * off) and its count of such sends per round.  White box (lapi_static).
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define NMSG 256
#define SLOT ((size_t)65536)

static unsigned char src[NMSG * SLOT];
static unsigned char dst[NMSG * SLOT];
static lapi_cntr_t tgt_cntr, cmpl_cntr, org[NMSG];
static size_t round_len; /* task 1: what each AM of the round carries */

struct zc_uh {
  int round;
  int k;
};

static uint32_t seed_of(int round, int k)
{
  return (uint32_t)(round * NMSG + k + 1);
}

static void *hdr_to_slot(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                         ulong *msg_len, compl_hndlr_t **comp_h,
                         void **uinfo)
{
  (void)h;
  (void)uhdr_len;
  struct zc_uh u;
  memcpy(&u, uhdr, sizeof u);
  OT_CHECK(*msg_len == round_len, "AM of %lu bytes, expected %zu",
           (unsigned long)*msg_len, round_len);
  *comp_h = NULL;
  *uinfo = NULL;
  if (u.k < 0 || u.k >= NMSG || *msg_len > SLOT)
    return NULL;
  return dst + (size_t)u.k * SLOT;
}

static uint64_t zc_sends(void)
{
  pthread_mutex_lock(&ofi.lock);
  uint64_t n = ofi.st.zc_sends;
  pthread_mutex_unlock(&ofi.lock);
  return n;
}

/* Task 0: overwrite each slice once its org_cntr moved, until all did. */
static void overwrite_when_free(int n, size_t len)
{
  static unsigned char done[NMSG];
  memset(done, 0, sizeof done);
  for (int left = n; left > 0;) {
    int moved = 0;
    for (int k = 0; k < n; k++)
      if (!done[k] && ot_cntr(&org[k]) >= 1) {
        memset(src + (size_t)k * SLOT, 0xee, len);
        done[k] = 1;
        left--;
        moved = 1;
      }
    if (!moved)
      LAPI_Probe(ot.h); /* polling mode: the sends progress in here */
  }
}

enum { AM_SHORT, AM_CMPL, PUT };

static void run_round(int round, int kind, size_t len, int n, size_t zmin,
                      void **tgt_cntrs, void **dsts)
{
  round_len = len;
  if (ot.me == 1)
    LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  uint64_t before = zc_sends();
  if (ot.me == 0) {
    LAPI_Setcntr(ot.h, &cmpl_cntr, 0);
    for (int k = 0; k < n; k++) {
      ot_fill(src + (size_t)k * SLOT, len, seed_of(round, k));
      LAPI_Setcntr(ot.h, &org[k], 0);
    }
  }
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    for (int k = 0; k < n; k++) {
      unsigned char *s = src + (size_t)k * SLOT;
      struct zc_uh u = {round, k};
      if (kind == PUT)
        OT_OK(LAPI_Put(ot.h, 1, len, (unsigned char *)dsts[1] + k * SLOT, s,
                       tgt_cntrs[1], &org[k], &cmpl_cntr));
      else
        OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, &u, sizeof u, s, len,
                          tgt_cntrs[1], &org[k],
                          kind == AM_CMPL ? &cmpl_cntr : NULL));
    }
    overwrite_when_free(n, len);
    if (kind != AM_SHORT)
      OT_OK(LAPI_Waitcntr(ot.h, &cmpl_cntr, n, NULL));
    uint64_t sent = zc_sends() - before;
    uint64_t want = zmin && len >= zmin ? (uint64_t)n : 0;
    OT_CHECK(sent == want,
             "round %d: %llu of %d messages of %zu B sent from the "
             "caller's memory, want %llu",
             round, (unsigned long long)sent, n, len,
             (unsigned long long)want);
  } else {
    OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, n, NULL));
    for (int k = 0; k < n; k++) {
      unsigned char *d = dst + (size_t)k * SLOT;
      size_t bad = ot_verify(d, len, seed_of(round, k));
      OT_CHECK(bad == len,
               "round %d, message %d of %zu B: byte %zu is 0x%02x, want "
               "0x%02x%s",
               round, k, len, bad, d[bad], ot_byte(seed_of(round, k), bad),
               d[bad] == 0xee ? " (overwritten after its org_cntr moved)"
                              : "");
      memset(d, 0, len);
    }
  }
  OT_OK(LAPI_Gfence(ot.h));
}

/* An Amsendv of 1 MiB in one piece that task 1's header handler
 * scatters into 4 KiB pieces every 8 KiB: GENERIC on both sides, the one
 * vector type whose pieces may differ between them. */
#define PV_TOTAL ((size_t)1 << 20)
#define PV_BLOCK ((size_t)4096)
#define PV_PIECES (PV_TOTAL / PV_BLOCK)

static void *pv_info[PV_PIECES];
static ulong pv_len[PV_PIECES];
static lapi_vec_t pv_vec;

static lapi_vec_t *hdr_scatter(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                               ulong *len_vec, compl_hndlr_t **comp_h,
                               void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  (void)len_vec;
  for (size_t k = 0; k < PV_PIECES; k++) {
    pv_info[k] = dst + 2 * k * PV_BLOCK;
    pv_len[k] = PV_BLOCK;
  }
  pv_vec.vec_type = LAPI_GEN_GENERIC;
  pv_vec.num_vecs = (uint)PV_PIECES;
  pv_vec.info = pv_info;
  pv_vec.len = pv_len;
  *comp_h = NULL;
  *uinfo = NULL;
  return &pv_vec;
}

static void run_scatter(int round, size_t zmin, void **tgt_cntrs)
{
  if (ot.me == 1)
    LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  pthread_mutex_lock(&ofi.lock);
  uint64_t before = ofi.st.zc_sends;
  /* packed (not read) where the target's pieces are under the RMA
   * minimum; chunks by stage reference (shm) carry no data */
  int packed = PV_BLOCK < ofi.min_rma_block && !ofi.pack_ref;
  size_t chunk = ofi.chunk;
  pthread_mutex_unlock(&ofi.lock);
  if (ot.me == 0) {
    LAPI_Setcntr(ot.h, &cmpl_cntr, 0);
    ot_fill(src, PV_TOTAL, seed_of(round, 0));
  } else {
    memset(dst, 0x5a, 2 * PV_TOTAL);
  }
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 0) {
    void *oinfo[1] = {src};
    ulong olen[1] = {PV_TOTAL};
    lapi_vec_t ov = {LAPI_GEN_GENERIC, 1, oinfo, olen};
    int rc = LAPI_Amsendv(ot.h, 1, (void *)2, NULL, 0, &ov, tgt_cntrs[1],
                          NULL, &cmpl_cntr);
    OT_CHECK(rc == LAPI_SUCCESS, "LAPI_Amsendv returned %d", rc);
    if (rc == LAPI_SUCCESS)
      OT_OK(LAPI_Waitcntr(ot.h, &cmpl_cntr, 1, NULL));
    uint64_t want = 0;
    for (size_t off = 0; packed && zmin && off < PV_TOTAL; off += chunk)
      want += PV_TOTAL - off < chunk ? PV_TOTAL - off >= zmin
                                     : chunk >= zmin;
    pthread_mutex_lock(&ofi.lock);
    uint64_t sent = ofi.st.zc_sends - before;
    pthread_mutex_unlock(&ofi.lock);
    OT_CHECK(sent == want,
             "Amsendv: %llu DATA chunks sent from the source's piece, want %llu",
             (unsigned long long)sent, (unsigned long long)want);
  } else {
    OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
    for (size_t k = 0; k < PV_TOTAL / PV_BLOCK; k++) {
      const unsigned char *blk = dst + 2 * k * PV_BLOCK;
      size_t bad = PV_BLOCK;
      for (size_t i = 0; i < PV_BLOCK && bad == PV_BLOCK; i++)
        if (blk[i] != ot_byte(seed_of(round, 0), k * PV_BLOCK + i))
          bad = i;
      OT_CHECK(bad == PV_BLOCK, "Amsendv: block %zu wrong at byte %zu", k, bad);
      size_t gap = PV_BLOCK;
      for (size_t i = 0; i < PV_BLOCK && gap == PV_BLOCK; i++)
        if (blk[PV_BLOCK + i] != 0x5a)
          gap = i;
      OT_CHECK(gap == PV_BLOCK, "Amsendv: gap after block %zu written at %zu",
               k, gap);
      if (bad != PV_BLOCK || gap != PV_BLOCK)
        break;
    }
  }
  OT_OK(LAPI_Gfence(ot.h));
}

int main(int argc, char **argv)
{
  ot_init(NULL, 120);
  if (ot.n != 2 || argc < 2) {
    if (ot.me == 0)
      printf("ofi_zcopy: needs 2 tasks and the expected LAPI_OFI_ZCOPY "
             "as argument: SKIP\n");
    return ot_finish("ofi_zcopy") == 0 ? 77 : 1;
  }
  size_t want_min = (size_t)strtoull(argv[1], NULL, 0);
  pthread_mutex_lock(&ofi.lock);
  size_t zmin = ofi.zcopy_min, eager = ofi.eager_limit;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(zmin == want_min, "LAPI_OFI_ZCOPY is %zu on %s, want %zu", zmin,
           ofi.prov, want_min);
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  OT_OK(LAPI_Addr_set(ot.h, (void *)hdr_to_slot, 1));
  OT_OK(LAPI_Addr_set(ot.h, (void *)hdr_scatter, 2));
  void **tgt_cntrs = ot_addrs(&tgt_cntr);
  void **dsts = ot_addrs(dst);
  size_t lim = eager < SLOT ? eager : SLOT;
  /* A send that finds room in the socket is over before its call
   * returns; only those queued behind a full one show an early org_cntr,
   * so the AM rounds run a few times. */
  int r = 0;
  for (int i = 0; i < 4; i++)
    run_round(r++, AM_SHORT, lim, NMSG, zmin, tgt_cntrs, dsts);
  for (int i = 0; i < 4; i++)
    run_round(r++, AM_CMPL, lim < 16384 ? lim : 16384, NMSG, zmin,
              tgt_cntrs, dsts);
  run_round(r++, AM_SHORT, lim < 8192 ? lim : 8192, 64, zmin, tgt_cntrs,
            dsts);
  run_round(r++, PUT, lim < 32768 ? lim : 32768, 128, zmin, tgt_cntrs,
            dsts);
  run_scatter(r++, zmin, tgt_cntrs);
  free(tgt_cntrs);
  free(dsts);
  return ot_finish("ofi_zcopy");
}
