/*
 * ofi_barrier.c - LAPI_Gfence's barrier of the core groups, over the
 * network.
 *
 * The bootstrap's barrier is a TCP round trip through the job's exchange
 * (lapirun, or rank 0 under PMIx): 130-290 us a call with 2-4 CGs on one
 * host, and LAPI programs call LAPI_Gfence in their loops.  This one is a
 * dissemination barrier: in round k (k = 0 .. ceil(log2 N) - 1) a CG
 * sends a BARRIER packet to CG me + 2^k and waits for the one from
 * CG me - 2^k (mod N); after the last round every CG has heard, directly
 * or not, from every other since it entered.  Each round costs about a
 * small message's half round trip.
 *
 * There is one per handle value: every CG calls LAPI_Gfence on a handle
 * in the same order (in CPE-task mode the CG's first task, for all of
 * them).  A CG cannot finish barrier s + 1 before every CG entered it,
 * so it is never more than one barrier ahead of another: arrivals are
 * kept as round bits in two words, by the parity of the barrier's number.
 * A BARRIER's id is number << 8 | round, and FAIL marks the failure.
 *
 * Failure: while a round waits, the watchdog watches the peer it waits
 * for (PINGs; gone after TIMEOUT of silence), and a peer declared gone
 * any other way (the exchange's GONE, a failed send) breaks every
 * barrier.  A CG whose barrier fails tells every other with a FAIL, once,
 * so that none waits for a CG that gave up; after that a Gfence of the
 * handle fails at once unless every packet it waits for came already (a
 * round whose packet came is done, whatever happened since).
 */
#include "transport/ofi/ofi.h"

#define BAR_FAIL 0x80u
#define BAR_ROUND_MASK 0x3fu

struct round_wait {
  struct ofi_barrier *b;
  unsigned par;
  uint32_t bit;
};

/* The waiter's condition: its round's packet came, or the barrier broke
 * (the arrival and the break both ring the waiters' bell). */
static int round_done(void *arg)
{
  const struct round_wait *w = arg;
  return (__atomic_load_n(&w->b->seen[w->par], __ATOMIC_ACQUIRE) & w->bit) ||
         __atomic_load_n(&w->b->broken, __ATOMIC_ACQUIRE);
}

/* Under ofi.lock: the waiter of hv's barrier looks again: a process
 * task's wait sleeps on the doorbell (its waiters only: the dispatcher's
 * idle sleep has nothing to do with it), a CPE task's (the CG's first)
 * on its handle's own word. */
static void wake(lapi_handle_t hv)
{
  lapi_bell_ring_waiters();
  struct lapi_hndl *h = ofi_hndl(lapi_hndl_key(0, hv));
  if (h)
    lapi_hndl_notify(h);
}

static void send_round(uint peer, lapi_handle_t hv, uint64_t id)
{
  struct ofi_hdr hd;
  ofi_hdr_init(&hd, OFI_M_BARRIER, lapi_hndl_key(0, hv), id, sizeof hd);
  ofi_send_small(peer, &hd, sizeof hd);
}

/* Under ofi.lock: CG `by` (its FAIL if said, else it is gone) breaks
 * the barrier, unless it is broken already.  A round that waits is woken;
 * one about to wait looks at `broken` first. */
static void break_by(lapi_handle_t hv, uint by, int said)
{
  struct ofi_barrier *b = &ofi.bar[hv];
  if (b->broken)
    return;
  b->broken_fail = said;
  __atomic_store_n(&b->broken, by + 1, __ATOMIC_RELEASE);
  if (b->waiting)
    wake(hv);
}

/* Under ofi.lock: the barrier of hv failed here; tell the others once. */
static void tell_failed(struct ofi_barrier *b, lapi_handle_t hv)
{
  if (b->told)
    return;
  b->told = 1;
  for (uint t = 0; t < ofi.ntasks; t++)
    if (t != ofi.me && !ofi.peers[t].failed)
      send_round(t, hv, (uint64_t)b->seq << 8 | BAR_FAIL);
}

int ofi_tp_barrier(struct lapi_hndl *h)
{
  if (!__atomic_load_n(&ofi.up, __ATOMIC_ACQUIRE) || ofi.ntasks < 2)
    return LAPI_TP_NO_BARRIER;
  lapi_handle_t hv = h->index;
  struct ofi_barrier *b = &ofi.bar[hv];
  uint n = ofi.ntasks;
  pthread_mutex_lock(&ofi.lock);
  uint32_t seq = b->seq;
  struct round_wait w = {b, seq & 1, 0};
  int failed = 0;
  for (unsigned k = 0; !failed && (1ull << k) < n; k++) {
    uint step = 1u << k;
    uint to = (ofi.me + step) % n, from = (ofi.me + n - step) % n;
    send_round(to, hv, (uint64_t)seq << 8 | k);
    ofi.st.barrier_rounds++;
    w.bit = 1u << k;
    if (!round_done(&w)) {
      b->waiting = from + 1;
      ofi.bar_waits++;
      /* The progress thread's watchdog watches `from` from its next
       * pass (within IDLE_MS): not woken for it, a wake-up per round. */
      pthread_mutex_unlock(&ofi.lock);
      lapi_wait_until(h, round_done, &w, NULL);
      pthread_mutex_lock(&ofi.lock);
      ofi.bar_waits--;
      b->waiting = 0;
    }
    /* Its packet came: the round is done, even if a CG left since (a
     * waiter that ran a long handler first may look only after that). */
    failed = !(__atomic_load_n(&b->seen[w.par], __ATOMIC_ACQUIRE) & w.bit);
  }
  uint cause = b->broken; /* a round fails only once it is broken */
  int cause_fail = b->broken_fail;
  if (failed) {
    tell_failed(b, hv);
  } else {
    /* Nothing of barrier seq + 2 can come before we send for seq + 1. */
    __atomic_store_n(&b->seen[seq & 1], 0, __ATOMIC_RELAXED);
    b->seq = seq + 1;
  }
  pthread_mutex_unlock(&ofi.lock);
  if (failed)
    LAPI_LOG(LAPI_LOG_ASYNC, "ofi: LAPI_Gfence of handle %u cannot "
             "complete: task %u %s", (unsigned)hv, (cause - 1) * ofi.tpc,
             cause_fail ? "says its barrier failed (a core group of the "
                          "job is gone)" : "is gone");
  return failed ? LAPI_ERR_TIMEOUT : LAPI_SUCCESS;
}

void ofi_on_barrier(const struct ofi_hdr *hd)
{
  /* ofi_pkt_check bounded the handle value and the task index */
  lapi_handle_t hv = hd->hndl & 0xff;
  struct ofi_barrier *b = &ofi.bar[hv];
  uint32_t seq = (uint32_t)(hd->id >> 8);
  if (hd->id & BAR_FAIL) {
    /* Its sender gave up in barrier seq: ours, the one we just left
     * (it did not), or the next (it left ours first).  No CG is more
     * than one barrier from another: any other number is stale, or not
     * its sender's, and breaks nothing. */
    uint32_t d = seq - b->seq;
    if (d != 0 && d != 1 && d != UINT32_MAX) {
      ofi.st.stale_pkts++;
      return;
    }
    LAPI_LOG(LAPI_LOG_INFO, "ofi: task %u says the barrier of handle %u "
             "failed there", hd->src * ofi.tpc, (unsigned)hv);
    break_by(hv, hd->src, 1);
    return;
  }
  unsigned k = (unsigned)(hd->id & BAR_ROUND_MASK);
  uint n = ofi.ntasks;
  if ((hd->hndl >> 8) != 0 || (hd->id & 0xc0) != 0 || (1ull << k) >= n ||
      hd->src != (ofi.me + n - (1u << k)) % n) {
    ofi_bad_pkt("BARRIER of a round that its sender does not have", hd->src);
    return;
  }
  if (seq != b->seq && seq != b->seq + 1) {
    ofi.st.stale_pkts++; /* of a barrier done, or never begun */
    return;
  }
  __atomic_or_fetch(&b->seen[seq & 1], 1u << k, __ATOMIC_RELEASE);
  wake(hv);
}

void ofi_barrier_reset(lapi_handle_t hv)
{
  struct ofi_barrier *b = &ofi.bar[hv];
  b->seq = 0;
  __atomic_store_n(&b->seen[0], 0, __ATOMIC_RELAXED);
  __atomic_store_n(&b->seen[1], 0, __ATOMIC_RELAXED);
  __atomic_store_n(&b->broken, 0, __ATOMIC_RELEASE);
  b->broken_fail = 0;
  b->told = 0;
  b->waiting = 0;
  /* A CG declared gone in an earlier life of the handle (or of another
   * handle) breaks this one from the start: ofi_barrier_peer_failed
   * breaks those of later losses. */
  for (uint t = 0; t < ofi.ntasks; t++)
    if (ofi.peers[t].failed) {
      break_by(hv, t, 0);
      break;
    }
}

void ofi_barrier_peer_failed(uint peer)
{
  /* any CG gone: no barrier of the job can complete */
  for (unsigned hv = 0; hv < LAPI_AM_MAX_HANDLES; hv++)
    break_by((lapi_handle_t)hv, peer, 0);
}

void ofi_barrier_watch(unsigned char *wait)
{
  for (unsigned hv = 0; hv < LAPI_AM_MAX_HANDLES; hv++)
    if (ofi.bar[hv].waiting)
      wait[ofi.bar[hv].waiting - 1] = 1;
}
