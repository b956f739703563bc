/*
 * ofi_ack.c - acknowledgements of messages sent without a FIN.
 *
 * An eager AM whose origin has no cmpl_cntr (and a put without any
 * counter or handler) needs nothing back from its target: the origin
 * forgot it once the RTS left, and a FIN per message would cost a second
 * packet on the critical path of every ping-pong.  Such an RTS carries
 * OFI_RTS_NO_FIN and a sequence number `seq`, counted per (origin CG,
 * target CG).  What stays at the origin, per peer:
 *   - the credit of each such message, until the target says it is done;
 *   - the handle whose LAPI_Fence waits for it (h->outstanding), by seq,
 *     until the target says every message up to it is done.
 * The target counts per origin the messages it completed (in_done: the
 * item ended, exactly when the FIN would have left) and the first seq
 * not yet completed (in_base: all below it are).  Both ride in the header
 * of every packet it sends to that origin (ack_done, ack_seq), and in a
 * standalone ACK when half the credits' worth is owed, or when an
 * ACK_REQ asks for it: LAPI_Fence and LAPI_Term ask (ofi_tp_flush) with
 * the count sent so far, and the target answers once in_base reaches it,
 * that is when none of those messages is still in progress there.  An
 * origin out of credits asks too.  A PONG carries the counts as well, so
 * a peer we hold unacknowledged messages for is watched as one we wait
 * for and its silence is caught as before.
 *
 * Counts come from the wire: ack_done and ack_seq beyond what we sent,
 * or ack_seq beyond ack_done, drop the packet (bad_pkts); an older pair
 * (packets overtaking each other) is ignored.  An RTS whose seq lies
 * outside the window or repeats one is dropped likewise.  A message
 * over the window (one stuck in a handler while many others passed) is
 * sent with a FIN.  Only in process mode (one task per CG): CPE tasks'
 * fences wait through paths that do not ask, so they keep the FIN.
 *
 * A no-FIN message that fails at the target (refused: handle not open,
 * no header handler, a target vector that does not fit, memory; or
 * malformed) is answered by a NAK {seq, status, kind} before it counts
 * as completed there: the origin's error handler hears the status a FIN
 * would have carried, and the count still advances (LAPI_Fence ends).
 * The NAK is posted before the completion is counted, and packets to a
 * peer keep their order (retry queue; an owed NAK defers the count until
 * it is posted), so no count covering the message reaches the origin
 * before its NAK; the NAK's own counts (stamped when posted) may, so the
 * origin takes the NAK before its counts.  The origin accepts a NAK only
 * for a message it sent and still awaits, once (nf_naked).
 */
#include <stdlib.h>
#include <string.h>

#include "transport/ofi/ofi.h"

/* Bitmaps over the window, by sequence number. */
static int bit_get(const uint64_t *m, uint32_t seq)
{
  uint32_t i = seq % OFI_NOFIN_WINDOW;
  return (int)(m[i / 64] >> (i % 64) & 1);
}

static void bit_set(uint64_t *m, uint32_t seq, int on)
{
  uint32_t i = seq % OFI_NOFIN_WINDOW;
  if (on)
    m[i / 64] |= (uint64_t)1 << (i % 64);
  else
    m[i / 64] &= ~((uint64_t)1 << (i % 64));
}

/* ------------------------------------------------------------ origin */

/* 1 if the next eager message to peer may go without a FIN. */
int ofi_nofin_room(uint peer)
{
  struct ofi_peer *p = &ofi.peers[peer];
  if (ofi.tpc != 1 || ofi.fin_always || p->failed || p->fail_pending)
    return 0;
  if (p->nf_hndl == NULL) {
    p->nf_hndl = calloc(OFI_NOFIN_WINDOW, sizeof *p->nf_hndl);
    if (p->nf_hndl == NULL)
      return 0;
  }
  if (p->nf_xfer == NULL) {
    p->nf_xfer = calloc(OFI_NOFIN_WINDOW, sizeof *p->nf_xfer);
    if (p->nf_xfer == NULL)
      return 0;
  }
  return (uint32_t)(p->nf_next - p->nf_acked) < OFI_NOFIN_WINDOW;
}

/* The message's number; h->outstanding stays counted until it is
 * acknowledged.  After ofi_nofin_room said yes. */
uint32_t ofi_nofin_take(uint peer, struct lapi_hndl *h)
{
  struct ofi_peer *p = &ofi.peers[peer];
  uint32_t seq = p->nf_next++;
  p->nf_hndl[seq % OFI_NOFIN_WINDOW] = h;
  ofi.nf_unacked++;
  __atomic_store_n(&ofi.nf_unasked, 1, __ATOMIC_RELEASE);
  return seq;
}

/* Messages numbered [nf_acked, upto) completed, or never will.  A kept
 * one (nf_soon) finishes as its FIN would have finished it, its landing
 * included. */
static void landed_upto(struct ofi_peer *p, uint32_t upto)
{
  while (p->nf_acked != upto) {
    uint32_t slot = p->nf_acked % OFI_NOFIN_WINDOW;
    struct lapi_hndl *h = p->nf_hndl[slot];
    struct ofi_xfer *x = p->nf_xfer[slot];
    p->nf_hndl[slot] = NULL;
    p->nf_xfer[slot] = NULL;
    bit_set(p->nf_naked, p->nf_acked, 0);
    p->nf_acked++;
    ofi.nf_unacked--;
    if (x) {
      x->nf_soon = 0;
      ofi_soon_landed(x);
    } else if (h) {
      lapi_am_origin_landed(h);
    }
  }
}

void ofi_nofin_keep(struct ofi_xfer *x, uint32_t seq)
{
  struct ofi_peer *p = &ofi.peers[x->peer];
  x->nf_soon = 1;
  x->nf_seq = seq;
  x->nf_status = LAPI_SUCCESS;
  p->nf_xfer[seq % OFI_NOFIN_WINDOW] = x;
  p->nf_soon_new = 1;
  ofi.soon_unasked = 1;
  /* Nobody polls (interrupt mode, LAPI_POLL_US=0: the waiter sleeps on
   * its counter) and nothing of this peer's is asked yet: the progress
   * thread, maybe asleep for WATCH_MS, asks once it found the CQ empty
   * (250 ms per Put with cmpl_cntr before this kick). */
  if (!p->nf_asking && ofi_tight_registered() == 0)
    ofi_kick();
}

/* x goes another way (its peer failed: the sweep fails it, landing
 * included): the counts no longer finish it. */
void ofi_nofin_forget(struct ofi_xfer *x)
{
  struct ofi_peer *p = &ofi.peers[x->peer];
  uint32_t slot = x->nf_seq % OFI_NOFIN_WINDOW;
  x->nf_soon = 0;
  if (p->nf_xfer && p->nf_xfer[slot] == x) {
    p->nf_xfer[slot] = NULL;
    p->nf_hndl[slot] = NULL;
  }
}

/* The peer is gone: what it did not acknowledge counts as done for
 * LAPI_Fence (as failed transfers do), after the error handlers heard. */
void ofi_nofin_peer_fail(uint peer)
{
  struct ofi_peer *p = &ofi.peers[peer];
  if (p->nf_hndl) {
    /* Kept transfers fail with the peer's other transfers (the sweep
     * of ofi_peer_fail), not as completed here. */
    for (uint32_t s = p->nf_acked; s != p->nf_next; s++)
      if (p->nf_xfer && p->nf_xfer[s % OFI_NOFIN_WINDOW])
        ofi_nofin_forget(p->nf_xfer[s % OFI_NOFIN_WINDOW]);
    landed_upto(p, p->nf_next);
  }
  p->nf_done = p->nf_next;
}

static void send_ack_req(uint peer)
{
  struct ofi_peer *p = &ofi.peers[peer];
  struct ofi_hdr r;
  ofi_hdr_init(&r, OFI_M_ACK_REQ, 0, p->nf_next, sizeof r);
  p->nf_asked = p->nf_next;
  p->nf_asking = 1;
  ofi_send_small(peer, &r, sizeof r);
}

void ofi_remote_fail(struct lapi_hndl *h, int kind, uint task, int code)
{
  ofi.st.remote_fails++;
  ofi_report(h, code, kind == OFI_K_PUT ? PUT_ERR : AM_ERR, task,
             kind == OFI_K_PUT ? "a put to it failed there"
                               : "an active message to it failed there "
                                 "(refused, or no handler took it)");
}

/* A NAK: its message failed at the target.  -1 drops the packet. */
static int nak_in(const struct ofi_nak *n)
{
  struct ofi_peer *p = &ofi.peers[n->h.src];
  uint32_t seq = (uint32_t)n->h.id;
  if (!ofi_status_failed(n->status) || n->status < LAPI_ERR_FIRSTCODE ||
      n->status > LAPI_ERR_LASTCODE ||
      (n->kind != OFI_K_AM && n->kind != OFI_K_PUT)) {
    ofi_drop(OFI_BAD_NAK, "NAK without a failure code", n->h.src);
    return -1;
  }
  if (n->h.id > UINT32_MAX || p->nf_hndl == NULL ||
      (int32_t)(seq - p->nf_acked) < 0 || (int32_t)(seq - p->nf_next) >= 0 ||
      bit_get(p->nf_naked, seq)) {
    ofi_drop(OFI_BAD_NAK, "NAK of a message not sent or not awaited",
             n->h.src);
    return -1;
  }
  bit_set(p->nf_naked, seq, 1);
  if (p->nf_xfer && p->nf_xfer[seq % OFI_NOFIN_WINDOW])
    p->nf_xfer[seq % OFI_NOFIN_WINDOW]->nf_status = n->status;
  /* (no handle: its kept transfer failed here already, and said so) */
  if (p->nf_hndl[seq % OFI_NOFIN_WINDOW])
    ofi_remote_fail(p->nf_hndl[seq % OFI_NOFIN_WINDOW], (int)n->kind,
                    ofi_src_task(&n->h), n->status);
  return 0;
}

/* Checked counts from src: credits back, our messages landed. */
static void counts_in(uint src, uint32_t done, uint32_t seq)
{
  struct ofi_peer *p = &ofi.peers[src];
  int32_t more = (int32_t)(done - p->nf_done);
  if (more > 0) {
    p->nf_done = done;
    ofi_credit_give(src, (uint)more);
  }
  if ((int32_t)(seq - p->nf_acked) > 0)
    landed_upto(p, seq);
  if (p->nf_asking && (int32_t)(p->nf_acked - p->nf_asked) >= 0) {
    /* Answered.  Messages sent since (launched as credits came back, or
     * by handlers) need asking too: the waiter may be asleep and not
     * call ofi_tp_flush again until its messages land. */
    p->nf_asking = 0;
    if (p->nf_next != p->nf_acked)
      send_ack_req(src);
  }
}

/* The counts of a packet from hd->src; -1 if they cannot be true. */
int ofi_ack_in(const struct ofi_hdr *hd)
{
  struct ofi_peer *p = &ofi.peers[hd->src];
  /* ack_seq against nf_next too, not only against ack_done: modulo 2^32
   * a done count 2^31 or more behind nf_next passes as old, and a seq
   * "behind" that one may still be past nf_next, which counts_in took as
   * messages landed that were never sent (a forged header crashed
   * landed_upto on the unallocated window; tests/fuzz, regress_ack_seq) */
  if ((int32_t)(hd->ack_done - p->nf_next) > 0 ||
      (int32_t)(hd->ack_seq - hd->ack_done) > 0 ||
      (int32_t)(hd->ack_seq - p->nf_next) > 0) {
    ofi_drop(OFI_BAD_ACK, "acknowledges more than was sent", hd->src);
    return -1;
  }
  /* A SHORT that a tight poller may deliver at once: its counts (the
   * credits back, our messages landed) wait for the owed end of the
   * pass, as its own end does (ofi_direct.c), off the way from its
   * arrival to the answer.  Counts are cumulative: the newest serve. */
  if (hd->type == OFI_M_SHORT && ofi_direct_armed && ofi.direct) {
    if (ofi.ack_owed != hd->src + 1) {
      if (ofi.ack_owed)
        ofi_ack_settle(); /* another peer's: in order */
      ofi.ack_owed = hd->src + 1;
      p->owed_ack_done = hd->ack_done;
      p->owed_ack_seq = hd->ack_seq;
    } else {
      if ((int32_t)(hd->ack_done - p->owed_ack_done) > 0)
        p->owed_ack_done = hd->ack_done;
      if ((int32_t)(hd->ack_seq - p->owed_ack_seq) > 0)
        p->owed_ack_seq = hd->ack_seq;
    }
    return 0;
  }
  if (ofi.ack_owed)
    ofi_ack_settle(); /* the older counts first */
  /* Before the counts: they may already cover the NAK's message. */
  if (__builtin_expect(hd->type == OFI_M_NAK, 0) &&
      nak_in((const struct ofi_nak *)hd) != 0)
    return -1;
  counts_in(hd->src, hd->ack_done, hd->ack_seq);
  return 0;
}

void ofi_ack_settle(void)
{
  uint src = ofi.ack_owed - 1;
  ofi.ack_owed = 0;
  counts_in(src, ofi.peers[src].owed_ack_done, ofi.peers[src].owed_ack_seq);
}

/* 1 if an ACK_REQ to p would learn something not already asked for. */
static int worth_asking(const struct ofi_peer *p)
{
  return p->nf_next != p->nf_acked && p->nf_asked != p->nf_next &&
         !p->failed && !p->fail_pending;
}

/* Kept messages (nf_soon) wait for counts that the target sends only
 * every half credits' worth, or when asked: ask once nobody has
 * anything else to do (a poll of the CQ found nothing), so that a
 * stream is asked about once, at its end, and a single message as soon
 * as its sender waits.  One ACK_REQ in flight per peer: its answer asks
 * again for what was sent meanwhile (counts_in). */
void ofi_soon_ask(void)
{
  ofi.soon_unasked = 0;
  for (uint t = 0; t < ofi.ntasks; t++) {
    struct ofi_peer *p = &ofi.peers[t];
    if (!p->nf_soon_new)
      continue;
    p->nf_soon_new = 0;
    if (!p->nf_asking && worth_asking(p))
      send_ack_req(t);
  }
}

/* The tp flush op: h waits for its messages to land (LAPI_Fence,
 * LAPI_Gfence, LAPI_Term).  Ask every peer that holds no-FIN messages
 * sent since we last asked; cheap when there are none (no lock). */
void ofi_tp_flush(struct lapi_hndl *h)
{
  (void)h; /* a fence waits for every handle's messages to the peer */
  if (!__atomic_load_n(&ofi.nf_unasked, __ATOMIC_ACQUIRE))
    return;
  pthread_mutex_lock(&ofi.lock);
  ofi_direct_settle(); /* counts owed by a pass: no needless ACK_REQ */
  __atomic_store_n(&ofi.nf_unasked, 0, __ATOMIC_RELAXED);
  if (ofi.up && ofi.nf_unacked)
    for (uint t = 0; t < ofi.ntasks; t++)
      if (worth_asking(&ofi.peers[t]))
        send_ack_req(t);
  pthread_mutex_unlock(&ofi.lock);
}

/* The tp sync op.  Arrivals are written under ofi.lock (eager data,
 * unpacked chunks, rmws; RMA reads end there too) and acknowledged
 * under it: taking it once orders all of them before the caller's next
 * reads, which a barrier through the bootstrap does not. */
void ofi_tp_sync(void)
{
  pthread_mutex_lock(&ofi.lock);
  ofi_direct_settle(); /* counts the statistics readers want too */
  pthread_mutex_unlock(&ofi.lock);
}

/* Out of credits with no-FIN messages holding some: ask, or the stream
 * may wait for acknowledgements the target keeps (fewer than half of
 * its own credits' worth, when LAPI_OFI_CREDITS differ). */
void ofi_nofin_starved(uint peer)
{
  if (worth_asking(&ofi.peers[peer]))
    send_ack_req(peer);
}

/* The watchdog's pass (every WATCH_MS): unacknowledged messages that
 * nobody asked about and that did not move since the last pass.  A
 * waiter asleep in LAPI_Fence while a handler sent more (so nothing
 * asked for those) ends within two passes; idle credits come back. */
void ofi_ack_watch(void)
{
  for (uint t = 0; t < ofi.ntasks; t++) {
    struct ofi_peer *p = &ofi.peers[t];
    if (!p->nf_asking && p->nf_watched == p->nf_acked && worth_asking(p))
      send_ack_req(t);
    p->nf_watched = p->nf_acked;
  }
}

/* ------------------------------------------------------------ target */

static void send_ack(uint peer)
{
  struct ofi_hdr a;
  ofi_hdr_init(&a, OFI_M_ACK, 0, 0, sizeof a);
  ofi.st.acks++;
  ofi_send_small(peer, &a, sizeof a); /* ofi_ack_stamp fills the counts */
}

/* A peer's messages kept for our counts (eager ones with a completion
 * counter, docs/PROTOCOL.md) end only when it hears them.  Below
 * ack_every() nothing was sent unasked, and its ACK_REQ may come after
 * we close: LAPI_Term's barrier holds us back for it only while the job
 * is whole (a job that lost a task fails the barrier at once, and the
 * survivor waited out TIMEOUT for a message long delivered). */
void ofi_ack_final(void)
{
  for (uint t = 0; t < ofi.ntasks; t++) {
    struct ofi_peer *p = &ofi.peers[t];
    if (!p->failed &&
        (p->told_done != p->in_done || p->told_base != p->in_base))
      send_ack(t);
  }
}

void ofi_ack_stamp(struct ofi_hdr *hd, uint peer)
{
  struct ofi_peer *p = &ofi.peers[peer];
  hd->ack_done = p->told_done = p->in_done;
  hd->ack_seq = p->told_base = p->in_base;
}

/* An RTS numbered seq from peer: 0 if it is new and inside the window
 * (then it must end with ofi_nofin_end, whatever becomes of it). */
int ofi_nofin_arrived(uint peer, uint32_t seq)
{
  struct ofi_peer *p = &ofi.peers[peer];
  if ((uint32_t)(seq - p->in_base) >= OFI_NOFIN_WINDOW ||
      bit_get(p->in_seen, seq))
    return -1;
  bit_set(p->in_seen, seq, 1);
  return 0;
}

/* Half the credits' worth owed: the origin may be about to run out. */
static uint32_t ack_every(void)
{
  int c = ofi.credits < OFI_NOFIN_WINDOW ? ofi.credits : OFI_NOFIN_WINDOW;
  return c >= 2 ? (uint32_t)c / 2 : 1;
}

/* The message numbered seq ended here (delivered, discarded, refused or
 * failed: the origin learns nothing more of it than that). */
void ofi_nofin_end(uint peer, uint32_t seq)
{
  struct ofi_peer *p = &ofi.peers[peer];
  if (p->failed || (uint32_t)(seq - p->in_base) >= OFI_NOFIN_WINDOW ||
      !bit_get(p->in_seen, seq) || bit_get(p->in_end, seq))
    return; /* cannot happen: each arrival ends once */
  bit_set(p->in_end, seq, 1);
  p->in_done++;
  while (bit_get(p->in_end, p->in_base)) {
    bit_set(p->in_end, p->in_base, 0);
    bit_set(p->in_seen, p->in_base, 0);
    p->in_base++;
  }
  int asked = p->in_asked && (int32_t)(p->in_base - p->in_want) >= 0;
  if (asked) {
    if ((int32_t)(p->in_base - p->in_want_hi) >= 0)
      p->in_asked = 0;
    else
      p->in_want = p->in_want_hi; /* the next to answer at */
  }
  if (asked || p->in_done - p->told_done >= ack_every())
    send_ack(peer);
}

void ofi_nofin_fail(uint peer, uint16_t hndl, uint32_t seq, int kind,
                    int status)
{
  struct ofi_nak n;
  ofi_hdr_init(&n.h, OFI_M_NAK, hndl, seq, sizeof n);
  n.status = status;
  n.kind = kind == OFI_K_PUT ? OFI_K_PUT : OFI_K_AM;
  ofi.st.naks_sent++;
  if (ofi_nak_post(peer, &n) != 0)
    ofi_owe_nak(peer, &n); /* its message stays open until it is posted */
}

int ofi_nak_post(uint peer, const struct ofi_nak *n)
{
  struct ofi_buf *b = ofi_buf_get();
  if (b == NULL)
    return -1;
  memcpy(b->mem, n, sizeof *n);
  b->len = sizeof *n;
  ofi_send(b, peer, 0);
  /* After the post: every count that covers it follows the NAK. */
  ofi_nofin_end(peer, (uint32_t)n->h.id);
  return 0;
}

/* ACK_REQ: answer once every message numbered below id completed. */
void ofi_on_ack_req(const struct ofi_hdr *hd)
{
  struct ofi_peer *p = &ofi.peers[hd->src];
  uint32_t want = (uint32_t)hd->id;
  int32_t ahead = (int32_t)(want - p->in_base);
  if (hd->id > UINT32_MAX || ahead > OFI_NOFIN_WINDOW) {
    ofi_bad_pkt("ACK_REQ beyond what may be in flight", hd->src);
    return;
  }
  if (ofi_deaf_acks)
    return; /* test hook: as if it came after we closed */
  if (ahead <= 0) {
    send_ack(hd->src);
    return;
  }
  /* Answered at the lowest number asked, then at the highest: a sender's
   * later ACK_REQ asks for more (LAPI_Fence asks whatever is in flight),
   * and one that asks for more than was ever sent (forged: it passes the
   * window check) must not hold back the answer a real one waits for;
   * kept as the only number, it did until the sender's ASK, a ping
   * interval later. */
  if (!p->in_asked) {
    p->in_want = p->in_want_hi = want;
  } else {
    if ((int32_t)(want - p->in_want) < 0)
      p->in_want = want;
    if ((int32_t)(want - p->in_want_hi) > 0)
      p->in_want_hi = want;
  }
  p->in_asked = 1;
}

/* ASK about the asker's no-FIN message seq, which its counts have not
 * covered for a ping interval (ofi_ask.c).  It was posted before the
 * ASK and packets to a peer arrive in order: not seen here means lost
 * (UNKNOWN); seen and not ended means a handler still holds it (no
 * answer); ended means our counts are on the way (an ACK repeats them). */
void ofi_nofin_asked(uint peer, uint64_t seq)
{
  struct ofi_peer *p = &ofi.peers[peer];
  int32_t ahead = (int32_t)((uint32_t)seq - p->in_base);
  /* The asker asks about its oldest message not acknowledged, and only
   * our counts (in_base) acknowledge: never one past in_base. */
  if (seq > UINT32_MAX || ahead > 0) {
    ofi_bad_pkt("ASK about a message past the first not completed", peer);
    return;
  }
  if (ofi_deaf_acks)
    return; /* test hook: as if it came after we closed */
  if (ahead < 0) {
    send_ack(peer);
    return;
  }
  if (bit_get(p->in_seen, (uint32_t)seq)) {
    ofi.st.asks_held++;
    return;
  }
  struct ofi_ask u;
  ofi_hdr_init(&u.h, OFI_M_UNKNOWN, 0, seq, sizeof u);
  u.what = OFI_ASK_NOFIN;
  u.ask_no = 0;
  ofi.st.unknowns++;
  ofi_send_small(peer, &u, sizeof u);
}

void ofi_ack_free(void)
{
  if (ofi.st.naks_sent || ofi.st.remote_fails)
    LAPI_LOG(LAPI_LOG_INFO, "ofi: messages failed at their target: %llu "
             "of peers' here (NAKs sent), %llu of ours there",
             (unsigned long long)ofi.st.naks_sent,
             (unsigned long long)ofi.st.remote_fails);
  for (uint t = 0; ofi.peers && t < ofi.ntasks; t++) {
    free(ofi.peers[t].nf_hndl);
    ofi.peers[t].nf_hndl = NULL;
    free(ofi.peers[t].nf_xfer);
    ofi.peers[t].nf_xfer = NULL;
  }
  ofi.nf_unacked = 0;
  __atomic_store_n(&ofi.nf_unasked, 0, __ATOMIC_RELAXED);
}
