/*
 * ofi_ask.c - a transfer whose answer was lost with a connection.
 *
 * Over tcp;ofi_rxm a connection can close under a packet without any
 * error reaching our CQ (the peer's provider closed it on an RMA with a
 * wrong key; the FIN sent after it failed inside rxm), while rxm opens a
 * new one on which PINGs and PONGs pass: the silence watch sees a live
 * peer, and a transfer waiting for that FIN would wait forever.  So a
 * transfer that has waited for its peer's answer longer than the ping
 * interval (TIMEOUT/4, at least 1 s) is asked about: ASK quotes its id,
 * and a peer that holds no such transfer answers UNKNOWN.  The asker
 * then knows a packet was lost and declares the peer gone (as after a
 * failed send: error handlers, counter waits end within TIMEOUT).  A
 * peer that holds it says nothing; it is asked again an interval later.
 *
 * Why UNKNOWN never overtakes a real answer: packets to one peer are
 * delivered in the order they were posted (the retry queue keeps that
 * order, and a packet to a peer with queued ones queues behind them), so
 * the answerer first sends the FINs it holds for lists; while a packet
 * to the asker is owed (no buffer: an owed FIN, GET or RMW reply would
 * leave after a packet sent now) it owes the UNKNOWN behind it
 * (asks_owed, ofi_owe_unknown): the UNKNOWN leaves once everything owed
 * ahead of it has (posted, or queued in order for a retry), and is owed
 * again behind anything owed again in the same pass.  The asker asks
 * only about transfers launched (credit taken) and while nothing to that
 * peer is owed (an owed launch), so the ASK cannot arrive before the
 * packet it asks about.  An answer crossing the ASK, or owed when it
 * came, arrives before the UNKNOWN, which then finds nothing and counts
 * as stale.  (Dropping the ASK instead would leave a peer that owes the
 * asker packets at every ask, busy or short of memory, never answering.)
 *
 * A sink pulling packed chunks (PULL / DATA) waits for DATA, which
 * nobody asks about otherwise: the source holds its transfer and says
 * nothing about it to an ASK SINK, so a lost DATA left both waiting.  A
 * sink with PULLs out asks its source (OFI_ASK_DATA, id = the sink's own
 * transfer, ask_no = a number of its own for this ASK) and notes how far
 * it had pulled then (ask_issued).  The source answers UNKNOWN, echoing
 * both, at once unless a packet to the asker is owed: every PULL that
 * came before the ASK has then been answered, and its DATA arrive before
 * the UNKNOWN.  So a sink that still misses bytes below ask_issued when
 * the UNKNOWN of that ASK comes lost a DATA: the peer is declared gone.
 * Only the newest ASK's mark is kept: an UNKNOWN echoing an older number
 * (a deaf source answering late, after the sink pulled on and asked
 * again) is stale, as its mark is not known.  A source that owes the
 * asker packets (the DATA answering those PULLs may be among them) owes
 * the UNKNOWN behind them, as every UNKNOWN.  Until it leaves the sink
 * may ask again with a new number and mark (the older owed UNKNOWN is
 * voided), so a DATA lost after that is still found.  A chunk asked
 * again in a packet (ofi_ref_land) or a new stream (the description's
 * end) voids the pending ask (ask_issued 0: its UNKNOWN is stale).
 *
 * A no-FIN message (ofi_ack.c) has no FIN to ask about: the peer's
 * oldest unacknowledged one is asked about by number (OFI_ASK_NOFIN),
 * answered from the target's window (ofi_nofin_asked), at once even
 * while packets to the asker are owed: its UNKNOWN says the message
 * never arrived, which nothing owed could contradict (an owed NAK's
 * message is seen: held, no UNKNOWN).
 *
 * Off every message's path: the watchdog runs this every 250 ms; a
 * transfer costs nothing until it has waited an interval (one field set
 * by the watchdog, zeroed with the record).
 * Everything here runs under ofi.lock.
 */
#include <stdio.h>

#include "transport/ofi/ofi.h"

/* At most this many ASKs per watchdog pass (more wait for the next). */
#define ASKS_PER_PASS 64

/* What x waits to hear from its peer, as an OFI_ASK_* (0: not a FIN or a
 * GET's answer, or not sent yet). */
static uint32_t awaited(const struct ofi_xfer *x)
{
  /* Packed chunks pulled (RMA reads fail locally), by a sink or by a
   * GET target pulling the description (the origin holds its GET: an
   * ASK GET gets no answer while a DATA lost here is awaited). */
  if (x->role == OFI_R_SINK || x->desc_phase)
    return !x->failed && (x->desc_phase || !x->use_rma) && x->inflight > 0
               ? OFI_ASK_DATA
               : 0;
  if (x->failed || (x->get_write && x->role == OFI_R_SOURCE))
    return 0; /* failed; a GET target writing: its own work */
  if (x->role == OFI_R_GET)
    return x->holds_credit ? OFI_ASK_GET : 0; /* else not launched */
  if (x->role == OFI_R_RMW)
    return x->holds_credit ? OFI_ASK_RMW : 0;
  if (x->role != OFI_R_SOURCE)
    return 0;
  /* An AM or put launched (credit taken; kept no-FIN ones gave theirs
   * back: the acknowledgement counts answer them), or a GET's reply
   * (uncredited, started at once) waiting for its reader's FIN. */
  return x->kind == OFI_K_GETREPLY || x->holds_credit ? OFI_ASK_SINK : 0;
}

static void ask_send(struct ofi_xfer *x, uint32_t what, int type)
{
  struct ofi_ask a;
  a.ask_no = 0;
  if (what == OFI_ASK_DATA) {
    /* A new number and mark: an older ask's UNKNOWN is stale. */
    if (++x->data_ask_no == 0)
      x->data_ask_no = 1; /* 0 is no ask */
    x->ask_issued = x->issued;
    a.ask_no = x->data_ask_no;
  }
  ofi_hdr_init(&a.h, type, 0, x->id, sizeof a);
  a.what = what;
  ofi_send_small(x->peer, &a, sizeof a);
}

void ofi_ask_watch(int64_t now, int64_t after_ms)
{
  int asks = 0;
  for (uint32_t s = 0; s < ofi.xcap && asks < ASKS_PER_PASS; s++) {
    struct ofi_xfer *x = ofi.xtab[s];
    uint32_t what = x ? awaited(x) : 0;
    if (what == 0)
      continue;
    struct ofi_peer *p = &ofi.peers[x->peer];
    if (p->failed || p->fail_pending || p->owed)
      continue; /* an earlier packet to it is owed: may come later */
    if (x->watch_ms == 0) {
      x->watch_ms = now;
      continue;
    }
    if (now - x->watch_ms < after_ms)
      continue;
    x->watch_ms = now;
    x->asked = 1;
    ofi.st.asks++;
    ask_send(x, what, OFI_M_ASK);
    asks++;
  }
}

/* No-FIN messages (ofi_ack.c) have no FIN to wait for and, unless kept,
 * no record: a peer whose oldest unacknowledged message has not moved
 * for a ping interval is asked whether that message arrived.  Packets to
 * a peer arrive in the order posted and the message was posted (its
 * number is taken with its buffer) before anything asking about it, so
 * "not seen" (UNKNOWN) means lost; one still in a handler there is
 * held, and asked about again an interval later.  One field compare per
 * peer per watchdog pass, nothing per message. */
void ofi_nofin_ask_watch(int64_t now, int64_t after_ms)
{
  for (uint t = 0; t < ofi.ntasks; t++) {
    struct ofi_peer *p = &ofi.peers[t];
    if (p->nf_next == p->nf_acked || p->failed || p->fail_pending ||
        p->owed) {
      p->nf_ask_ms = 0;
      continue;
    }
    if (p->nf_ask_ms == 0 || p->nf_ask_seq != p->nf_acked) {
      p->nf_ask_seq = p->nf_acked; /* a new oldest: watch it from now */
      p->nf_ask_ms = now;
      p->nf_ask_sent = 0;
      continue;
    }
    if (now - p->nf_ask_ms < after_ms)
      continue;
    p->nf_ask_ms = now;
    p->nf_ask_sent = 1;
    struct ofi_ask a;
    ofi_hdr_init(&a.h, OFI_M_ASK, 0, p->nf_ask_seq, sizeof a);
    a.what = OFI_ASK_NOFIN;
    a.ask_no = 0;
    ofi.st.asks++;
    ofi_send_small(t, &a, sizeof a);
  }
}

/* UNKNOWN about the pulls of our sink a->h.id, answering its ASK
 * numbered a->ask_no: every DATA answering a PULL sent before that ASK
 * has arrived by now. */
static void data_unknown(const struct ofi_ask *a)
{
  struct ofi_xfer *x = ofi_xfer_find(a->h.id);
  if (x == NULL || x->peer != a->h.src ||
      (x->role != OFI_R_SINK && !x->desc_phase) || x->failed ||
      a->ask_no != x->data_ask_no || x->ask_issued == 0) {
    /* ended meanwhile, never asked, an older ask (its mark is gone),
     * answered already or voided */
    ofi.st.stale_pkts++;
    return;
  }
  uint64_t mark = x->ask_issued;
  x->ask_issued = 0; /* answered: a copy of this UNKNOWN is stale */
  if (x->done >= mark)
    return; /* all there: slow, not lost */
  char why[160];
  snprintf(why, sizeof why, "a chunk it sent of a transfer we pull never "
           "came (%llu of %llu bytes): lost",
           (unsigned long long)x->done, (unsigned long long)mark);
  ofi_peer_fail(x->peer, LAPI_ERR_RECV_INCOMP, why);
}

/* UNKNOWN about our no-FIN message: it never arrived, and its counts
 * will never cover it (nor any later message's: the target's window
 * cannot pass it).  As a lost FIN: the peer is declared gone. */
static void nofin_unknown(const struct ofi_ask *a)
{
  struct ofi_peer *p = &ofi.peers[a->h.src];
  uint32_t seq = (uint32_t)a->h.id;
  if (a->h.id > UINT32_MAX || !p->nf_ask_sent || p->nf_ask_ms == 0 ||
      seq != p->nf_ask_seq || seq != p->nf_acked || p->failed) {
    ofi.st.stale_pkts++; /* covered meanwhile, or never asked */
    return;
  }
  char why[96];
  snprintf(why, sizeof why, "it never got our message number %u sent "
           "without a FIN: lost", (unsigned)seq);
  ofi_peer_fail(a->h.src, LAPI_ERR_SEND_INCOMP, why);
}

/* The fields of an ASK or UNKNOWN beyond the header check: a DATA one
 * carries its ask number, the others none. */
static int ask_ok(const struct ofi_ask *a)
{
  if (a->h.len != sizeof *a || a->h.hndl != 0 ||
      a->what < OFI_ASK_SINK || a->what > OFI_ASK_DATA ||
      (a->what == OFI_ASK_DATA) != (a->ask_no != 0)) {
    ofi_bad_pkt("ASK or UNKNOWN fields", a->h.src);
    return 0;
  }
  return 1;
}

void ofi_on_ask(const struct ofi_ask *a)
{
  if (!ask_ok(a))
    return;
  uint src = a->h.src;
  if (a->what == OFI_ASK_NOFIN) {
    ofi_nofin_asked(src, a->h.id);
    return;
  }
  /* An RMW is never held: its reply leaves when it arrives; nor is a
   * DATA ask: the PULLs before it are answered, unless owed.  No walk of
   * the table for them (every pulling sink asks each interval). */
  int may_hold = a->what == OFI_ASK_SINK || a->what == OFI_ASK_GET;
  for (uint32_t s = 0; may_hold && s < ofi.xcap; s++) {
    const struct ofi_xfer *x = ofi.xtab[s];
    if (x == NULL || x->peer != src)
      continue;
    if (a->what == OFI_ASK_SINK ? x->role == OFI_R_SINK &&
                                      x->src_xfer == a->h.id
        : a->what == OFI_ASK_GET ? x->role == OFI_R_SOURCE &&
                                       x->kind == OFI_K_GETREPLY &&
                                       x->cookie == a->h.id
                                 : 0)
    {
      ofi.st.asks_held++;
      return; /* held: its answer is still to come */
    }
  }
  /* Not held: its answer left, is owed, or never will.  Held FINs go
   * first (owed if no buffer).  An answer in the retry queue is passed
   * by nothing (the UNKNOWN queues behind it); an owed one would come
   * after an UNKNOWN sent now, so the UNKNOWN is owed behind it. */
  ofi_fin_flush();
  struct ofi_ask u = *a;
  ofi_hdr_init(&u.h, OFI_M_UNKNOWN, 0, a->h.id, sizeof u);
  ofi.st.unknowns++;
  if (ofi.peers[src].owed) {
    ofi.st.asks_owed++;
    ofi_owe_unknown(src, &u);
    return;
  }
  ofi_send_small(src, &u, sizeof u);
}

void ofi_on_unknown(const struct ofi_ask *a)
{
  if (!ask_ok(a))
    return;
  if (a->what == OFI_ASK_NOFIN) {
    nofin_unknown(a);
    return;
  }
  if (a->what == OFI_ASK_DATA) {
    data_unknown(a);
    return;
  }
  struct ofi_xfer *x = ofi_xfer_find(a->h.id);
  if (x == NULL || x->peer != a->h.src || !x->asked || x->failed ||
      awaited(x) != a->what) {
    ofi.st.stale_pkts++; /* answered meanwhile, or never asked */
    return;
  }
  char why[96];
  static const char *const name[] = {"", "transfer", "GET", "RMW"};
  snprintf(why, sizeof why, "it holds no %s of ours that we wait for: "
           "its answer was lost", name[a->what]);
  ofi_peer_fail(x->peer, a->what == OFI_ASK_SINK ? LAPI_ERR_SEND_INCOMP
                                                 : LAPI_ERR_RECV_INCOMP, why);
}
