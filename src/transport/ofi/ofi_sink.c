/*
 * ofi_sink.c - arrivals that write our memory: an AM or put at its
 * target, a get's reply at its origin; and a GET or RMW at its target.
 *
 * An RTS is checked field by field (sizes must add up to the packet,
 * segments must not wrap, descriptions must parse and, for puts, pass
 * the target-vector checks) and copied out of the receive buffer, which
 * is posted again at once (an eager AM's data may stay in it until its
 * header handler ran: rx_hold_ok).  Then:
 *   AM       the header handler runs in MPE context (a work item); it
 *            names the destination, or discards, or fails the message.
 *   PUT      the destination is the vector the origin described.
 *   GETREPLY the destination is the get's own origin buffer or vector.
 * The data comes by one of three paths:
 *   eager    it is in the packet: unpacked at once;
 *   RMA      the source registered its pieces: we read them straight
 *            into the destination (fi_readmsg, up to iov_limit local and
 *            rma_iov_limit remote pieces per read, at most max_read
 *            bytes, read_window reads in flight);
 *   packed   (no RMA, pieces under LAPI_RDV_MIN_BLOCK on either side, or
 *            registration failed) PULL requests of one chunk each, up to
 *            pull_window in flight; the source packs, we unpack (on shm
 *            from its stage arena: ofi_packref.c).
 * With CMA an AM into a contiguous buffer is read by its header
 * handler's item, outside ofi.lock, which then runs its completion
 * handler too; and a GET flagged WRITE is answered by writing our memory
 * into the origin's buffer, then a FIN, instead of an RTS.
 * When every byte is in: the AM's completion handler and tgt_cntr (MPE
 * item), or the put's tgt_cntr, then a FIN to the source, or for a NO_FIN
 * RTS (eager, the origin waits for nothing) a count towards the next
 * acknowledgement (ofi_ack.c).  A small RTS is copied into its transfer
 * record, which comes from a list of spare ones.  A description too
 * large for one packet is pulled first (stream DESC).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bulk_copy.h"
#include "transport/ofi/ofi.h"

#define DESC_MAX ((size_t)1 << 30)

static void after_desc(struct ofi_xfer *x);
static void pulls_ended(long n);
static void get_after_desc(struct ofi_xfer *x);
static void get_write(struct ofi_xfer *x);
static void get_write_end(struct ofi_xfer *x, int err);
static int cma_next(struct ofi_xfer *x, struct iovec *l, struct iovec *r,
                    struct fi_rma_iov *rr, size_t max);

static void ready_add(struct ofi_xfer *x)
{
  if (x->in_ready)
    return;
  x->in_ready = 1;
  x->next = NULL;
  if (ofi.ready_tail)
    ofi.ready_tail->next = x;
  else
    ofi.ready_head = x;
  ofi.ready_tail = x;
}

/* The read cursor at the start: the first remote segment, the local
 * side (local) from its beginning. */
static void read_cursor_start(struct ofi_xfer *x, const lapi_vec_t *local)
{
  lapi_vec_walk_init(&x->dw, local);
  x->lcur_left = 0;
  x->rseg_i = 0;
  x->rseg_off = 0;
}

/* The end of an AM or put at its target: FIN, or counted for the
 * acknowledgement when the origin sent it without one (after a NAK if
 * it failed: the origin hears the status either way). */
static void sink_fin_free(struct ofi_xfer *x, int status)
{
  if (x->no_fin) {
    if (ofi_status_failed(status))
      ofi_nofin_fail(x->peer, ofi_key(x), x->nf_seq, x->kind, status);
    else
      ofi_nofin_end(x->peer, x->nf_seq);
  } else
    ofi_fin_queue(x->peer, ofi_key(x), x->src_xfer, status, x->data_len);
  ofi_xfer_free(x);
}

/* An RTS refused before it has a record: FIN(status), or NAK(status)
 * and counted. */
static void rts_refuse(const struct ofi_rts *r, int status)
{
  if (r->flags & OFI_RTS_NO_FIN)
    ofi_nofin_fail(r->h.src, r->h.hndl, r->seq, r->kind, status);
  else
    ofi_send_fin(r->h.src, r->h.hndl, r->h.id, status);
}

/* A malformed RTS: dropped, but a no-FIN one whose number was taken
 * still counts, or the origin's LAPI_Fence would wait for it forever,
 * and its origin hears of it (NAK), as a FIN would have told it. */
static void rts_bad(const struct ofi_rts *r, const char *why)
{
  ofi_drop(OFI_BAD_RTS, why, r->h.src);
  if (r->flags & OFI_RTS_NO_FIN)
    ofi_nofin_fail(r->h.src, r->h.hndl, r->seq, r->kind, LAPI_ERR_UNKNOWN);
}

void ofi_sink_fail(struct ofi_xfer *x, int code)
{
  (void)code;
  if (x->failed)
    return;
  x->failed = 1;
  if (x->kind == OFI_K_GETREPLY) {
    lapi_am_origin_landed(x->h); /* our get: org_cntr never moves */
    if (x->holds_credit)
      ofi_credit_release(x->peer);
  }
  if (!x->item_queued)
    ofi_xfer_free(x); /* else the item frees it */
}

/* ------------------------------------------------------------ AM items */

/*
 * An item owns its transfer from the post until it ends (item_queued
 * stays 1 while its handlers run without ofi.lock), so a peer declared
 * gone meanwhile only marks the transfer failed (ofi_sink_fail) and the
 * item frees it at its end: the handlers never see freed memory.
 */

/* At the start of an item, under ofi.lock: 1 if the transfer failed
 * while queued (then it is freed and the item must stop). */
static int item_gone(struct ofi_xfer *x)
{
  if (!x->failed)
    return 0;
  x->item_queued = 0;
  ofi_xfer_free(x);
  return 1;
}

/* The end of an item, under ofi.lock: FIN with status, unless the
 * transfer failed meanwhile (nobody to tell). */
static void item_end(struct ofi_xfer *x, int status)
{
  x->item_queued = 0;
  if (x->failed) {
    ofi_xfer_free(x);
    return;
  }
  /* The FIN may wait for the next items' (ofi_fin.c): the dispatcher's
   * drained op sends it after this run of items. */
  ofi.fin_hold++;
  sink_fin_free(x, status);
  ofi.fin_hold--;
}

/* The same two, taking ofi.lock themselves. */
static int item_begin(struct ofi_xfer *x)
{
  pthread_mutex_lock(&ofi.lock);
  int gone = item_gone(x);
  pthread_mutex_unlock(&ofi.lock);
  return gone;
}

static void item_finish(struct ofi_xfer *x, int status)
{
  pthread_mutex_lock(&ofi.lock);
  item_end(x, status);
  pthread_mutex_unlock(&ofi.lock);
}

static void am_done_run(struct lapi_item *it)
{
  struct ofi_xfer *x = (struct ofi_xfer *)it;
  if (item_begin(x))
    return;
  lapi_am_recv_complete(&x->msg, &x->d);
  item_finish(x, LAPI_SUCCESS);
}

/* LAPI_Purge_totask: the message is never delivered; the origin's
 * memory is free again (its org_cntr moves, no cmpl_cntr). */
static void am_cancel(struct lapi_item *it)
{
  item_finish((struct ofi_xfer *)it, LAPI_ERR_TGT_PURGED);
}

static void post_item(struct ofi_xfer *x, void (*run)(struct lapi_item *))
{
  x->it.run = run;
  x->it.cancel = am_cancel;
  x->it.src = (int)x->task;
  x->item_queued = 1;
  lapi_am_post(x->h, &x->it);
}

static void start_data(struct ofi_xfer *x);

static void am_copy_in(const struct lapi_am_dest *d,
                       const unsigned char *data)
{
  size_t bytes = ofi_am_bytes(d);
  if (bytes && d->vec)
    lapi_vec_unpack(d->vec, data, 0, bytes);
  else if (bytes)
    bulk_copy(d->buf, data, bytes);
}

void ofi_am_land(struct lapi_am_msg *m, struct lapi_am_dest *d,
                 const unsigned char *data)
{
  am_copy_in(d, data);
  lapi_am_recv_complete(m, d);
}

static int am_cma_here(struct ofi_xfer *x);
static void am_cma_run(struct ofi_xfer *x);

static void am_header_run(struct lapi_item *it)
{
  struct ofi_xfer *x = (struct ofi_xfer *)it;
  if (item_begin(x))
    return;

  struct lapi_am_dest *d = &x->d;
  lapi_am_recv_header(&x->msg, d);
  switch (d->action) {
  case LAPI_AM_RETRY:
    pthread_mutex_lock(&ofi.lock);
    if (!item_gone(x))
      post_item(x, am_header_run); /* LAPI_DROP_PKT: comes again */
    pthread_mutex_unlock(&ofi.lock);
    return;
  case LAPI_AM_FAILED:
    item_finish(x, d->error);
    return;
  case LAPI_AM_DISCARD:
    lapi_am_stat_recv(x->h, LAPI_TP_OFI, 0);
    ofi_am_land(&x->msg, d, NULL);
    item_finish(x, LAPI_SUCCESS);
    return;
  case LAPI_AM_DELIVER:
    break;
  }
  if (x->mode == OFI_MODE_EAGER) {
    /* The data is in our copy of the packet, or in the receive buffer
     * it came in: straight to the user; a held buffer goes back before
     * the completion handler runs (which may wait for more messages). */
    lapi_am_stat_recv(x->h, LAPI_TP_OFI, d->bytes);
    if (x->rx_buf) {
      am_copy_in(d, x->p_data);
      pthread_mutex_lock(&ofi.lock);
      ofi_rx_release(x);
      pthread_mutex_unlock(&ofi.lock);
      lapi_am_recv_complete(&x->msg, d);
    } else {
      ofi_am_land(&x->msg, d, x->p_data);
    }
    pthread_mutex_lock(&ofi.lock);
    ofi.st.eager++;
    item_end(x, LAPI_SUCCESS);
    pthread_mutex_unlock(&ofi.lock);
    return;
  }
  lapi_am_stat_recv(x->h, LAPI_TP_OFI, d->bytes);
  /* Under the lock: a DATA the wire sends before our PULL (forged) reads
   * want and dest in ofi_on_data, which drops it. */
  pthread_mutex_lock(&ofi.lock);
  if (d->vec) {
    x->dest = d->vec;
  } else {
    ofi_vec_one(&x->dest_one, d->buf, d->bytes);
    x->dest = &x->dest_one.v;
  }
  x->want = d->bytes;
  if (item_gone(x)) {
    pthread_mutex_unlock(&ofi.lock);
    return;
  }
  if (x->p_staged) {
    /* Copied outside ofi.lock, and completed in this same item, as a
     * read by CMA (am_cma_run): the arena stays mapped until the
     * endpoint closes, and the origin's stage until our FIN. */
    ofi.st.staged_in++;
    pthread_mutex_unlock(&ofi.lock);
    lapi_vec_unpack(x->dest, x->p_staged, 0, x->want);
    lapi_am_recv_complete(&x->msg, d);
    item_finish(x, LAPI_SUCCESS);
    return;
  }
  if (am_cma_here(x)) {
    pthread_mutex_unlock(&ofi.lock);
    am_cma_run(x);
    return;
  }
  x->item_queued = 0; /* the data phase owns it now */
  start_data(x);
  ofi_sink_issue();
  pthread_mutex_unlock(&ofi.lock);
}

/* ------------------------------------------------------------ finishing */

static void finish(struct ofi_xfer *x)
{
  switch (x->kind) {
  case OFI_K_AM:
    post_item(x, am_done_run);
    break;
  case OFI_K_PUT:
    lapi_am_stat_recv(x->h, LAPI_TP_OFI, x->want);
    if (x->cntr_remote)
      lapi_cntr_bump(lapi_addr_ptr(x->cntr_remote), (int)x->task);
    sink_fin_free(x, LAPI_SUCCESS);
    break;
  case OFI_K_GETREPLY:
    lapi_am_stat_recv(x->h, LAPI_TP_OFI, x->want);
    ofi_fin_queue(x->peer, ofi_key(x), x->src_xfer, LAPI_SUCCESS,
                  x->want);
    ofi_note_fire(x);
    if (x->holds_credit)
      ofi_credit_release(x->peer);
    ofi_xfer_free(x);
    break;
  default:
    ofi_xfer_free(x);
    break;
  }
}

/* Pieces of the destination big enough to read into directly? */
static int dest_friendly(const lapi_vec_t *v, size_t want)
{
  if (v->vec_type == LAPI_GEN_STRIDED_XFER)
    return lapi_vec_stride_block(v) >= ofi.min_rma_block;
  uint n = 0;
  for (uint i = 0; i < v->num_vecs; i++)
    n += v->len[i] != 0;
  return n && (want / n >= ofi.min_rma_block || ofi_one_read(n));
}

static void start_data(struct ofi_xfer *x)
{
  x->issued = x->done = 0;
  x->inflight = 0;
  if (x->want == 0) {
    finish(x);
    return;
  }
  if (x->mode == OFI_MODE_EAGER) {
    lapi_vec_unpack(x->dest, x->p_data, 0, x->want);
    ofi.st.eager++;
    finish(x);
    return;
  }
  if (x->p_staged) {
    lapi_vec_unpack(x->dest, x->p_staged, 0, x->want);
    ofi.st.staged_in++;
    finish(x);
    return;
  }
  x->use_rma = x->mode == OFI_MODE_RMA && dest_friendly(x->dest, x->want);
  if (x->use_rma) {
    ofi.st.rma++;
    read_cursor_start(x, x->dest);
  } else {
    ofi.st.pull++;
  }
  ready_add(x);
}

/* ------------------------------------------------------------ arrivals */

static int segs_ok(const struct ofi_rts *r, const struct ofi_seg *s)
{
  if (r->strided) {
    if (r->nseg != 1 || r->s_block == 0 || r->s_num == 0 ||
        r->s_stride < r->s_block || r->s_num > UINT32_MAX)
      return 0;
    unsigned __int128 ext =
        (unsigned __int128)r->s_stride * (r->s_num - 1) + r->s_block;
    if (ext != s[0].len || s[0].addr + s[0].len < s[0].addr ||
        (unsigned __int128)r->s_block * r->s_num < r->data_len)
      return 0;
    return 1;
  }
  uint64_t sum = 0;
  for (uint32_t i = 0; i < r->nseg; i++) {
    if (s[i].len == 0 || s[i].addr + s[i].len < s[i].addr ||
        sum + s[i].len < sum)
      return 0;
    sum += s[i].len;
  }
  /* a GENERIC pair may move fewer bytes than the source holds */
  return sum >= r->data_len;
}

static void rts_take(const struct ofi_rts *r, const unsigned char *body,
                     size_t body_len, const unsigned char *staged);

void ofi_on_rts(const struct ofi_rts *r, size_t len)
{
  uint src = r->h.src;
  if (r->flags & ~(OFI_RTS_NO_FIN | OFI_RTS_STAGED)) {
    ofi_bad_pkt("RTS flags", src);
    return;
  }
  if ((r->flags & OFI_RTS_NO_FIN) && ofi_nofin_arrived(src, r->seq) != 0) {
    ofi_bad_pkt("RTS number outside the window or repeated", src);
    return;
  }
  if ((r->flags & OFI_RTS_NO_FIN) &&
      (r->mode != OFI_MODE_EAGER ||
       (r->kind != OFI_K_AM && r->kind != OFI_K_PUT))) {
    rts_bad(r, "RTS without FIN that is not an eager AM or put");
    return;
  }
  if (r->kind < OFI_K_AM || r->kind > OFI_K_GETREPLY ||
      r->mode > OFI_MODE_PULL || r->uhdr_len > LAPI_AM_MAX_UHDR ||
      r->uhdr_len % 4 || r->shape > 1 + LAPI_GEN_GENERIC ||
      r->data_len > (uint64_t)LAPI_MAX_MSG_SZ ||
      r->nseg > len / sizeof(struct ofi_seg) ||
      (r->mode == OFI_MODE_RMA) != (r->nseg != 0) ||
      (r->strided && r->mode != OFI_MODE_RMA) ||
      ((r->flags & OFI_RTS_STAGED) &&
       (r->mode != OFI_MODE_PULL || r->data_len == 0))) {
    rts_bad(r, "RTS fields out of range");
    return;
  }
  if (r->desc_inline ? r->desc_len > len : r->desc_len > DESC_MAX) {
    rts_bad(r, "RTS description length");
    return;
  }
  size_t need = sizeof *r + r->nseg * sizeof(struct ofi_seg) +
                ofi_align8(r->uhdr_len) +
                (r->desc_inline ? ofi_align8(r->desc_len) : 0) +
                (r->mode == OFI_MODE_EAGER ? r->data_len : 0) +
                (r->flags & OFI_RTS_STAGED ? sizeof(struct ofi_data_ref)
                                           : 0);
  if (need != len) {
    rts_bad(r, "RTS sizes do not add up to the packet");
    return;
  }
  const struct ofi_seg *segs = (const struct ofi_seg *)(r + 1);
  if (r->mode == OFI_MODE_RMA && !segs_ok(r, segs)) {
    rts_bad(r, "RTS memory segments");
    return;
  }
  const unsigned char *staged = NULL;
  if (r->flags & OFI_RTS_STAGED) {
    /* The stream waits in the origin's stage (ofi_packref.c), named
     * after the uhdr and the description: checked before anything of
     * the RTS is taken (a get reply names a transfer of ours).  NULL:
     * the stage cannot be read here, the stream is pulled instead. */
    struct ofi_data_ref ref;
    int forged;
    memcpy(&ref, (const unsigned char *)r + len - sizeof ref, sizeof ref);
    staged = ofi_ref_whole(src, &ref, r->data_len, &forged);
    if (forged) {
      ofi_drop(OFI_BAD_REF, "staged RTS naming a process or file other "
               "than its sender's stage arena", src);
      return;
    }
    if (staged == NULL)
      ofi.st.staged_pulled++;
  }
  rts_take(r, (const unsigned char *)(r + 1), len - sizeof *r, staged);
}

/* A checked SHORT: the eager no-FIN RTS it stands for, the same from
 * here on. */
void ofi_on_short(const struct ofi_short *s, size_t len)
{
  uint src = s->h.src;
  size_t head = sizeof *s + ofi_align8(s->uhdr_len);
  uint32_t seq = (uint32_t)s->h.id;
  if (s->flags != OFI_RTS_NO_FIN || s->pad != 0 ||
      s->uhdr_len > LAPI_AM_MAX_UHDR || s->uhdr_len % 4 || head > len) {
    /* As a malformed no-FIN RTS: its sender passed ofi_pkt_check; a
     * number inside the window and new is taken, counted as completed
     * and NAKed, or the origin's LAPI_Fence would wait for it forever.
     * (The fault hook's invalid copies of real SHORTs carry a number
     * outside the window, as its RTS copies drop NO_FIN, so that a copy
     * overtaking its packet cannot take the real number.) */
    ofi_drop(OFI_BAD_RTS, "SHORT fields out of range", src);
    if (ofi_nofin_arrived(src, seq) == 0)
      ofi_nofin_fail(src, s->h.hndl, seq, OFI_K_AM, LAPI_ERR_UNKNOWN);
    return;
  }
  if (ofi_nofin_arrived(src, seq) != 0) {
    ofi_bad_pkt("SHORT number outside the window or repeated", src);
    return;
  }
  if (!ofi_direct_take(s, len))
    ofi_short_queue(s, len);
}

void ofi_short_queue(const struct ofi_short *s, size_t len)
{
  size_t head = sizeof *s + ofi_align8(s->uhdr_len);
  uint32_t seq = (uint32_t)s->h.id;
  struct ofi_rts r;
  memset(&r, 0, sizeof r);
  r.h = s->h;
  r.h.type = OFI_M_RTS;
  r.h.id = 0;
  r.h.len = (uint32_t)(sizeof r + len - sizeof *s);
  r.kind = OFI_K_AM;
  r.mode = OFI_MODE_EAGER;
  r.desc_inline = 1;
  r.uhdr_len = s->uhdr_len;
  r.hdr_hdl = s->hdr_hdl;
  r.hdl_module = (uint32_t)(s->h.id >> 32);
  r.tgt_cntr = s->tgt_cntr;
  r.data_len = len - head;
  r.flags = OFI_RTS_NO_FIN;
  r.seq = seq;
  rts_take(&r, (const unsigned char *)(s + 1), len - sizeof *s, NULL);
}

/*
 * An eager AM's header handler runs later (an item), so its data would
 * be copied out of the receive buffer here and again into the handler's
 * buffer: a 64 KiB Amsend over tcp;ofi_rxm spent ~5 us of ~17 in the
 * first copy (docs/PERFORMANCE.md, "Eager Amsend copied once over tcp").
 * Instead the transfer keeps the buffer (not reposted) until its item
 * copied the data out.  At most ofi.rx_hold_max buffers (LAPI_OFI_RX_HOLD,
 * half the posted ones) are held at once, so the CQ always has buffers
 * to receive into, even while handlers wait for more messages; beyond
 * that, and under OFI_RX_HOLD_MIN bytes (a copy cheaper than the hold),
 * the data is copied as before.  Only a packet read from a posted
 * buffer qualifies (not a SHORT copied by ofi_direct.c).
 */
#define OFI_RX_HOLD_MIN 2048

/* r: an eager AM whose description (if any) and data are in the packet
 * (rts_take). */
static int rx_hold_ok(const struct ofi_rts *r, const unsigned char *body,
                      size_t body_len)
{
  const struct ofi_buf *b = ofi.rx_cur;
  if (r->data_len < OFI_RX_HOLD_MIN ||
      b == NULL || ofi.rx_kept || body <= b->mem ||
      body + body_len > b->mem + ofi.buf_size)
    return 0;
  if (ofi.rx_held >= ofi.rx_hold_max) {
    ofi.st.rx_hold_full++;
    return 0;
  }
  ofi.st.rx_holds++;
  return 1;
}

/* A checked RTS whose segments, uhdr, description and data (body_len
 * bytes) are at body: a transfer record for it.  staged: a STAGED one's
 * stream, mapped (ofi_on_rts), or NULL. */
static void rts_take(const struct ofi_rts *r, const unsigned char *body,
                     size_t body_len, const unsigned char *staged)
{
  uint src = r->h.src;
  size_t len = sizeof *r + body_len;
  struct lapi_hndl *h = ofi_hndl(r->h.hndl);
  if (h == NULL) {
    ofi.st.stale_pkts++;
    if (r->kind != OFI_K_GETREPLY)
      rts_refuse(r, LAPI_ERR_HNDL_INVALID);
    return;
  }
  struct ofi_xfer *x;
  if (r->kind == OFI_K_GETREPLY) {
    x = ofi_xfer_find(r->cookie);
    if (x == NULL || x->role != OFI_R_GET || x->peer != src ||
        x->data_len != r->data_len || x->h != h) {
      ofi.st.stale_pkts++;
      return;
    }
    x->role = OFI_R_SINK;
  } else {
    x = ofi_xfer_new(OFI_R_SINK, ofi_src_task(&r->h), h);
    if (x == NULL) {
      rts_refuse(r, LAPI_ERR_MEMORY_EXHAUSTED);
      return;
    }
    x->kind = r->kind;
    x->no_fin = (r->flags & OFI_RTS_NO_FIN) != 0;
    x->nf_seq = r->seq;
  }
  x->src_xfer = r->h.id;
  /* An eager put or get reply with its description inline lands, and
   * ends, before this call returns (after_desc, start_data): its data is
   * copied from the receive buffer straight to its destination, not into
   * our copy of the packet first (a 64 KiB put over tcp was two copies
   * and a malloc at the target: docs/PERFORMANCE.md, "Mid-size messages
   * over tcp, session 10"). */
  int whole = r->mode == OFI_MODE_EAGER &&
              (r->desc_inline || r->desc_len == 0) &&
              r->data_len <= body_len;
  int in_place = (r->kind == OFI_K_PUT || r->kind == OFI_K_GETREPLY) &&
                 whole;
  int hold = r->kind == OFI_K_AM && whole && rx_hold_ok(r, body, body_len);
  size_t keep = in_place || hold ? len - (size_t)r->data_len : len;
  x->pkt = keep <= OFI_PKT_INLINE ? x->pkt_inline : malloc(keep);
  if (x->pkt == NULL) {
    rts_refuse(r, LAPI_ERR_MEMORY_EXHAUSTED);
    if (x->kind == OFI_K_GETREPLY)
      ofi_sink_fail(x, LAPI_ERR_MEMORY_EXHAUSTED);
    else
      ofi_xfer_free(x);
    return;
  }
  memcpy(x->pkt, r, sizeof *r);
  memcpy(x->pkt + sizeof *r, body, keep - sizeof *r);
  x->pkt_len = keep;
  const unsigned char *p = x->pkt + sizeof *r;
  x->rsegs = (struct ofi_seg *)p;
  x->nrseg = r->nseg;
  x->rstrided = r->strided;
  x->rblock = r->s_block;
  x->rstride = r->s_stride;
  x->rnum = r->s_num;
  p += r->nseg * sizeof(struct ofi_seg);
  x->p_uhdr = p;
  p += ofi_align8(r->uhdr_len);
  x->p_desc = r->desc_inline ? p : NULL;
  if (r->desc_inline)
    p += ofi_align8(r->desc_len);
  x->p_data = in_place || hold ? body + (p - (x->pkt + sizeof *r)) : p;
  if (hold) {
    x->rx_buf = ofi.rx_cur;
    ofi.rx_kept = 1;
    ofi.rx_held++;
  }
  /* copied from there once the destination is known (am_header_run,
   * start_data) */
  x->p_staged = staged;
  x->mode = r->mode;
  x->hdr_hdl = ofi_hdl_decode(r->hdr_hdl, r->hdl_module);
  x->uhdr_len = r->uhdr_len;
  x->shape = r->shape;
  x->cntr_remote = r->tgt_cntr;
  x->data_len = r->data_len;
  x->desc_in_len = r->desc_len;
  if (r->desc_inline || r->desc_len == 0) {
    uint64_t id = x->id;
    after_desc(x);
    if (in_place && ofi_xfer_find(id) == x)
      x->p_data = NULL; /* (cannot happen) the buffer is reposted next */
    return;
  }
  x->desc_in = malloc(r->desc_len);
  if (x->desc_in == NULL) {
    sink_fin_free(x, LAPI_ERR_MEMORY_EXHAUSTED);
    return;
  }
  x->desc_phase = 1;
  x->issued = x->done = 0;
  ready_add(x);
}

static const unsigned char *desc_bytes(const struct ofi_xfer *x)
{
  return x->desc_in ? x->desc_in : x->p_desc;
}

/* The origin's shape of an Amsendv, for the vhdr handler. */
static int am_shape(struct ofi_xfer *x)
{
  struct lapi_am_msg *m = &x->msg;
  if (x->shape == 0) {
    if (x->desc_in_len != 0)
      return -1;
    m->org_shape = NULL;
    m->one_pkt = x->mode == OFI_MODE_EAGER && x->data_len
                     ? (void *)x->p_data : NULL;
    return 0;
  }
  struct ofi_vec *sv = &x->shape_vec;
  if (ofi_desc_read(desc_bytes(x), x->desc_in_len, sv) != 0 ||
      (uint32_t)sv->v.vec_type != x->shape - 1)
    return -1;
  if (sv->v.vec_type == LAPI_GEN_STRIDED_XFER) {
    size_t block = lapi_vec_stride_block(&sv->v);
    size_t pitch = lapi_vec_stride_pitch(&sv->v);
    if ((unsigned __int128)block * sv->v.num_vecs != x->data_len ||
        (sv->v.num_vecs > 1 && pitch < block))
      return -1;
    x->strided_len[0] = x->strided_len[1] = block;
    x->strided_len[2] = pitch;
    m->len_vec = x->strided_len;
  } else {
    uint64_t sum = 0;
    for (uint i = 0; i < sv->v.num_vecs; i++) {
      if (sum + sv->len[i] < sum)
        return -1;
      sum += sv->len[i];
    }
    if (sum != x->data_len)
      return -1;
    m->len_vec = sv->len;
  }
  m->org_shape = &sv->v;
  return 0;
}

static void after_desc(struct ofi_xfer *x)
{
  if (x->kind == OFI_K_AM) {
    struct lapi_am_msg *m = &x->msg;
    memset(m, 0, sizeof *m);
    if (am_shape(x) != 0) {
      ofi_bad_pkt("AM shape description", x->peer);
      sink_fin_free(x, LAPI_ERR_UNKNOWN);
      return;
    }
    m->h = x->h;
    m->src = (int)x->task;
    m->hdr_hdl = x->hdr_hdl;
    m->uhdr = x->uhdr_len ? (void *)x->p_uhdr : NULL;
    m->uhdr_len = x->uhdr_len;
    m->msg_len = x->data_len;
    m->tgt_cntr = x->cntr_remote;
    post_item(x, am_header_run);
    return;
  }
  if (x->kind == OFI_K_PUT) {
    int rc = ofi_desc_read(desc_bytes(x), x->desc_in_len, &x->rdesc);
    if (rc == 0)
      rc = lapi_vec_check_target(&x->rdesc.v) == LAPI_SUCCESS &&
                   x->data_len <= lapi_vec_bytes(&x->rdesc.v)
               ? 0 : -1;
    if (rc != 0) {
      ofi_bad_pkt("put target description", x->peer);
      sink_fin_free(x, LAPI_ERR_TGT_VEC_ADDR);
      return;
    }
    x->dest = &x->rdesc.v;
  } else {
    x->dest = x->org_dst; /* GETREPLY */
  }
  x->want = x->data_len;
  start_data(x);
}

/* ----------------------------------------------------------------- GET */

/* A malformed GET: its header passed ofi_pkt_check, so it names its
 * sender and transfer, and the origin hears the refusal (FIN) instead of
 * waiting for TIMEOUT. */
static void get_refuse(const struct ofi_get *g, const char *why)
{
  ofi_bad_pkt(why, g->h.src);
  ofi_send_fin(g->h.src, g->h.hndl, g->h.id, LAPI_ERR_UNKNOWN);
}

void ofi_on_get(const struct ofi_get *g, size_t len)
{
  uint src = g->h.src;
  int wr = g->flags == OFI_GET_WRITE;
  /* A write needs CMA or RMA writes (job-wide / the provider's: the
   * origin knows) and the inline description; then the origin's segment
   * follows it. */
  if ((g->flags & ~OFI_GET_WRITE) ||
      (wr && (!(ofi.cma || ofi.rma_write) || !g->desc_inline))) {
    get_refuse(g, "GET flags");
    return;
  }
  size_t wat = g->desc_inline && g->desc_len <= len
                   ? ofi_align8(sizeof *g + g->desc_len) : 0;
  if (g->desc_inline ? len != (wr ? wat + sizeof(struct ofi_seg)
                                  : sizeof *g + g->desc_len)
                     : (len != sizeof *g || g->desc_len == 0 ||
                        g->desc_len > DESC_MAX) ||
      g->data_len > (uint64_t)LAPI_MAX_MSG_SZ) {
    get_refuse(g, "GET sizes");
    return;
  }
  struct ofi_seg w = {0, 0, 0};
  if (wr) {
    memcpy(&w, (const unsigned char *)g + wat, sizeof w);
    if (w.len != g->data_len || w.len == 0 || (ofi.cma && w.key != 0) ||
        w.addr + w.len < w.addr) {
      get_refuse(g, "GET origin segment");
      return;
    }
  }
  struct lapi_hndl *h = ofi_hndl(g->h.hndl);
  if (h == NULL) {
    ofi.st.stale_pkts++;
    ofi_send_fin(src, g->h.hndl, g->h.id, LAPI_ERR_HNDL_INVALID);
    return;
  }
  struct ofi_xfer *x = ofi_xfer_new(OFI_R_SOURCE, ofi_src_task(&g->h), h);
  if (x == NULL) {
    ofi_send_fin(src, g->h.hndl, g->h.id, LAPI_ERR_MEMORY_EXHAUSTED);
    return;
  }
  x->kind = OFI_K_GETREPLY;
  x->cookie = g->h.id;
  x->src_xfer = g->h.id;
  x->get_write = wr;
  x->wseg = w;
  x->tgt_cntr = g->tgt_cntr;
  x->data_len = g->data_len;
  x->desc_in_len = g->desc_len;
  if (g->desc_inline) {
    x->desc_in = malloc(g->desc_len ? g->desc_len : 1);
    if (x->desc_in == NULL) {
      ofi_send_fin(src, g->h.hndl, g->h.id, LAPI_ERR_MEMORY_EXHAUSTED);
      ofi_xfer_free(x);
      return;
    }
    memcpy(x->desc_in, g + 1, g->desc_len);
    get_after_desc(x);
    return;
  }
  x->desc_in = malloc(g->desc_len);
  if (x->desc_in == NULL) {
    ofi_send_fin(src, g->h.hndl, g->h.id, LAPI_ERR_MEMORY_EXHAUSTED);
    ofi_xfer_free(x);
    return;
  }
  x->desc_phase = 1;
  x->issued = x->done = 0;
  ready_add(x);
}

/* The GET's target memory is known: answer with an RTS. */
static void get_after_desc(struct ofi_xfer *x)
{
  int rc = ofi_desc_read(x->desc_in, x->desc_in_len, &x->rdesc);
  if (rc == 0)
    rc = lapi_vec_check_target(&x->rdesc.v) == LAPI_SUCCESS &&
                 x->data_len <= lapi_vec_bytes(&x->rdesc.v)
             ? 0 : -1;
  if (rc != 0) {
    ofi_bad_pkt("get target description", x->peer);
    ofi_send_fin(x->peer, ofi_key(x), x->cookie,
                 LAPI_ERR_TGT_VEC_ADDR);
    ofi_xfer_free(x);
    return;
  }
  x->src = &x->rdesc.v;
  lapi_am_stat_recv(x->h, LAPI_TP_OFI, x->data_len);
  if (x->get_write) {
    get_write(x);
    return;
  }
  ofi_source_mode(x);
  ofi_source_start(x);
}

/* OFI_GET_WRITE: the origin's buffer is one remote segment (under its
 * key, or by address with CMA), our memory the local side of the read
 * cursor.  By RMA the writes go out as reads do (issue_read: up to
 * iov_limit local pieces and max_read bytes each, read_window in
 * flight); the last completion ends the get (get_write_end). */
static void get_write_cursor(struct ofi_xfer *x)
{
  x->rsegs = &x->wseg;
  x->nrseg = 1;
  x->rstrided = 0;
  x->want = x->data_len;
  x->issued = x->done = 0;
  x->inflight = 0;
  x->use_rma = 1;
  read_cursor_start(x, x->src);
}

/* The end of a get written into its origin's buffer (OFI_GET_WRITE):
 * tgt_cntr and a FIN that says the data is there; a failed write
 * (LAPI_ERR_RECV_INCOMP in the FIN) fails the get at its origin as a
 * failed read would, and tgt_cntr stays.  The FIN leaves after the last
 * write completed, and a send cannot overtake an earlier write (CMA:
 * synchronous; RMA: FI_ORDER_SAW).  x is freed. */
static void get_write_end(struct ofi_xfer *x, int err)
{
  if (err == 0 && x->tgt_cntr)
    lapi_cntr_bump(lapi_addr_ptr(x->tgt_cntr), (int)x->task);
  ofi_fin_queue(x->peer, ofi_key(x), x->cookie,
                err ? LAPI_ERR_RECV_INCOMP : LAPI_SUCCESS, x->data_len);
  ofi_xfer_free(x);
}

/* OFI_GET_WRITE: our memory (x->src) into the origin's buffer by CMA
 * (cma_next at the cursor, as issue_cma reads), else by RMA writes;
 * then get_write_end. */
static void get_write(struct ofi_xfer *x)
{
  get_write_cursor(x);
  if (!ofi.cma) {
    ready_add(x);
    return;
  }
  static struct iovec l[OFI_CMA_IOV], r[OFI_CMA_IOV]; /* under ofi.lock */
  static struct fi_rma_iov rr[OFI_CMA_IOV];
  int err = 0;
  while (x->issued < x->want && err == 0) {
    ofi.st.cma_writes++;
    err = cma_next(x, l, r, rr, OFI_CMA_IOV);
  }
  get_write_end(x, err);
}

/* ----------------------------------------------------------------- RMW */

void ofi_on_rmw(const struct ofi_rmw *m)
{
  struct lapi_hndl *h;
  struct ofi_rmw_reply r;
  memset(&r, 0, sizeof r);
  ofi_hdr_init(&r.h, OFI_M_RMW_REPLY, m->h.hndl, m->h.id, sizeof r);
  if (m->h.len != sizeof *m || (m->size != 4 && m->size != 8) ||
      m->op > COMPARE_AND_SWAP || m->tgt_var == 0 ||
      m->tgt_var % m->size != 0) {
    ofi_bad_pkt("RMW fields", m->h.src);
    r.status = LAPI_ERR_RMW_OP;
  } else if ((h = ofi_hndl(m->h.hndl)) == NULL) {
    ofi.st.stale_pkts++;
    r.status = LAPI_ERR_HNDL_INVALID;
  } else {
    r.prev = lapi_rmw_apply(lapi_addr_ptr(m->tgt_var), m->size, m->op,
                            m->in[0], m->in[1]);
    lapi_am_stat_recv(h, LAPI_TP_OFI, (size_t)m->size);
  }
  ofi_send_small(m->h.src, &r, sizeof r);
}

/* ------------------------------------------------------- pulled chunks */

static void desc_done(struct ofi_xfer *x)
{
  x->desc_phase = 0;
  x->issued = x->done = 0;
  x->ask_issued = 0; /* it counted the description */
  x->inflight = 0;
  if (x->role == OFI_R_SOURCE)
    get_after_desc(x);
  else
    after_desc(x);
}

void ofi_on_data(const struct ofi_data *d, size_t len)
{
  size_t n = len - sizeof *d;
  /* A reference names the bytes instead of carrying them (ofi_packref.c):
   * its length is checked like a carried chunk's. */
  const struct ofi_data_ref *ref = NULL;
  if (d->flags == OFI_DATA_REF && n == sizeof *ref) {
    ref = (const struct ofi_data_ref *)(d + 1);
    n = ref->len > SIZE_MAX ? 0 : (size_t)ref->len;
  } else if (d->flags != 0) {
    n = 0;
  }
  /* A DATA is one chunk (a PULL of several is answered by one each) and
   * counts one in the window: a larger one would end the stream with
   * chunks still counted in flight.  Checked before the transfer is
   * looked up: malformed whichever transfer it names (its own class). */
  if (n > ofi.chunk) {
    ofi_drop(OFI_BAD_CHUNK, "DATA longer than one chunk", d->h.src);
    return;
  }
  /* A reference names another process's memory: only the sender's own,
   * by the pid start-up proved, is read (ofi_packref.c). */
  if (ref && !ofi_ref_trusted(d->h.src, ref)) {
    ofi_drop(OFI_BAD_REF, "DATA reference to a process other than its "
             "sender", d->h.src);
    return;
  }
  struct ofi_xfer *x = ofi_xfer_find(d->h.id);
  if (x == NULL || x->peer != d->h.src || x->failed) {
    ofi.st.stale_pkts++;
    return;
  }
  int desc = d->stream == OFI_STREAM_DESC;
  size_t total = desc ? x->desc_in_len : x->want;
  if ((desc ? !x->desc_phase : (x->desc_phase || x->use_rma ||
                                x->role != OFI_R_SINK)) ||
      d->stream > OFI_STREAM_DESC || n == 0 || d->offset > x->issued ||
      n > x->issued - d->offset || x->done + n > total ||
      x->inflight <= 0 || (ref && desc)) {
    ofi_drop(OFI_BAD_DATA, "DATA outside what was pulled", d->h.src);
    return;
  }
  if (ref) {
    int rc = ofi_ref_land(x, d, ref);
    if (rc == -2) {
      ofi_drop(OFI_BAD_REF, "DATA reference to a file other than its "
               "sender's stage arena", d->h.src);
      return;
    }
    if (rc < 0) {
      ofi_drop(OFI_BAD_DATA, "DATA reference out of sequence", d->h.src);
      return;
    }
    if (rc == 0) {
      x->ask_issued = 0; /* its answer may come after an UNKNOWN */
      return; /* asked again in a packet: the pull stays in flight */
    }
  } else if (desc) {
    memcpy(x->desc_in + d->offset, d + 1, n);
  } else {
    lapi_vec_unpack(x->dest, d + 1, d->offset, n);
  }
  x->inflight--;
  x->pulls_out--;
  pulls_ended(1);
  x->done += n;
  if (x->done < total) {
    ready_add(x);
    return;
  }
  if (desc)
    desc_done(x);
  else
    finish(x);
}

/* ------------------------------------------------------------ RMA reads */

/* Read records: finished ones are kept (a 1 MiB strided transfer posts
 * 64-256 reads; calloc and free of each showed in the profile). */
#define OFI_SPARE_READS 64

static struct ofi_read *read_get(void)
{
  struct ofi_read *rd = ofi.rd_spare;
  if (rd == NULL)
    return calloc(1, sizeof *rd);
  ofi.rd_spare = rd->next;
  ofi.nrd_spare--;
  memset(rd, 0, sizeof *rd);
  return rd;
}

static void read_put(struct ofi_read *rd)
{
  for (int k = 0; k < rd->niov; k++)
    ofi_mr_close(rd->lmr[k]);
  rd->niov = 0;
  if (ofi.nrd_spare >= OFI_SPARE_READS) {
    free(rd);
    return;
  }
  rd->next = ofi.rd_spare;
  ofi.rd_spare = rd;
  ofi.nrd_spare++;
}

static void read_failed(struct ofi_xfer *x, const char *what);

void ofi_on_read_done(struct ofi_read *rd, int err)
{
  struct ofi_xfer *x = ofi_xfer_find(rd->xid);
  size_t bytes = rd->bytes;
  if (rd->fault && err == 0)
    err = FI_EIO; /* LAPI_OFI_TEST_WRITE_FAULT */
  read_put(rd);
  if (x) {
    /* A transfer freed first took its reads out of the count. */
    x->reads_out--;
    ofi.reads_posted--;
  }
  if (x == NULL || x->failed)
    return;
  x->inflight--;
  if (x->role == OFI_R_SOURCE) {
    /* An RMA write of a GET's target (get_write): the first failure
     * ends the get; the writes still out complete into nothing. */
    x->done += bytes;
    if (err || x->done >= x->want)
      get_write_end(x, err);
    else
      ready_add(x);
    return;
  }
  if (err) {
    read_failed(x, fi_strerror(err));
    return;
  }
  x->done += bytes;
  if (x->done < x->want)
    ready_add(x);
  else
    finish(x);
}

/* The remote piece at the read cursor: address, bytes left, key, base. */
static void rpiece(const struct ofi_xfer *x, uint64_t *addr, uint64_t *left,
                   uint64_t *key, uint64_t *base)
{
  if (x->rstrided) {
    *addr = x->rsegs[0].addr + x->rseg_i * x->rstride + x->rseg_off;
    *left = x->rblock - x->rseg_off;
    *key = x->rsegs[0].key;
    *base = x->rsegs[0].addr;
  } else {
    const struct ofi_seg *s = &x->rsegs[x->rseg_i];
    *addr = s->addr + x->rseg_off;
    *left = s->len - x->rseg_off;
    *key = s->key;
    *base = s->addr;
  }
}

static void radvance(struct ofi_xfer *x, uint64_t n, uint64_t left)
{
  if (n < left) {
    x->rseg_off += n;
    return;
  }
  x->rseg_i++;
  x->rseg_off = 0;
}

/* A read's pieces, gathered at the read cursor. */
struct read_run {
  struct iovec *l;           /* local pieces ... */
  struct fi_rma_iov *r;      /* ... and remote ones */
  size_t lmax, rmax;         /* room */
  int absolute;              /* remote addresses as they are (else by
                                the offset in their registration) */
  size_t fast;               /* ofi.fast_read, or 0 */
  size_t nl, nr, bytes;      /* gathered */
};

/*
 * Moves the read cursor over the pieces of the next read.  The local and
 * the remote side are merged separately: a run contiguous on one side
 * extends that side's last piece, so a contiguous source read into a
 * strided destination is one remote piece and several local ones.
 * Shapes (run->fast, the libfabric path): once the remote piece of a
 * read is that long, or the next one would be, the read stops before a
 * second remote piece, so a long run goes alone (shm: copied inline by
 * the call) and short fragments still share a read.
 */
static void gather(struct ofi_xfer *x, struct read_run *run)
{
  struct iovec *iov = run->l;
  struct fi_rma_iov *riov = run->r;
  size_t bytes = 0, nl = 0, nr = 0;
  while (x->issued + bytes < x->want && bytes < ofi.max_read) {
    if (x->lcur_left == 0) {
      void *a;
      size_t l;
      if (!lapi_vec_walk_next(&x->dw, x->want - x->issued - bytes, &a, &l))
        break;
      x->lcur = a;
      x->lcur_left = l;
    }
    uint64_t raddr, rleft, key, base;
    if (x->rstrided ? x->rseg_i >= x->rnum : x->rseg_i >= x->nrseg)
      break; /* the source ends first (cannot happen after the checks) */
    rpiece(x, &raddr, &rleft, &key, &base);
    size_t n = x->lcur_left;
    if (n > rleft)
      n = (size_t)rleft;
    if (n > ofi.max_read - bytes)
      n = ofi.max_read - bytes;
    if (n > x->want - x->issued - bytes)
      n = x->want - x->issued - bytes;
    uint64_t roff_addr = run->absolute ? raddr : raddr - base;
    int lcat = nl > 0 &&
               (char *)iov[nl - 1].iov_base + iov[nl - 1].iov_len == x->lcur;
    int rcat = nr > 0 && riov[nr - 1].key == key &&
               riov[nr - 1].addr + riov[nr - 1].len == roff_addr;
    if ((!lcat && nl == run->lmax) || (!rcat && nr == run->rmax))
      break;
    if (!rcat && nr == 1 && run->fast &&
        (riov[0].len >= run->fast || rleft >= run->fast))
      break; /* a long remote run: a read of its own */
    if (lcat) {
      iov[nl - 1].iov_len += n;
    } else {
      iov[nl].iov_base = x->lcur;
      iov[nl].iov_len = n;
      nl++;
    }
    if (rcat) {
      riov[nr - 1].len += n;
    } else {
      riov[nr].addr = roff_addr;
      riov[nr].len = n;
      riov[nr].key = key;
      nr++;
    }
    bytes += n;
    x->lcur = (char *)x->lcur + n;
    x->lcur_left -= n;
    radvance(x, n, rleft);
  }
  run->nl = nl;
  run->nr = nr;
  run->bytes = bytes;
}

/* A transfer whose bytes cannot all come in fails with
 * LAPI_ERR_RECV_INCOMP: the error handler hears why, the source its FIN
 * (or NAK); x is freed. */
static void sink_incomplete(struct ofi_xfer *x, lapi_err_t type,
                            const char *why)
{
  ofi_report(x->h, LAPI_ERR_RECV_INCOMP, type, x->task, why);
  if (x->role == OFI_R_SINK && x->kind == OFI_K_GETREPLY) {
    ofi_send_fin(x->peer, ofi_key(x), x->src_xfer, LAPI_ERR_RECV_INCOMP);
    ofi_sink_fail(x, LAPI_ERR_RECV_INCOMP);
  } else {
    sink_fin_free(x, LAPI_ERR_RECV_INCOMP);
  }
}

/* An RMA read failed (its completion, or the CMA call). */
static void read_failed(struct ofi_xfer *x, const char *what)
{
  char why[160];
  snprintf(why, sizeof why, "an RMA read from task %u failed: %s",
           x->task, what);
  sink_incomplete(x, x->kind == OFI_K_GETREPLY ? GET_ERR : PUT_ERR, why);
}

/*
 * Post one read (for a GET's target writing its origin's buffer,
 * get_write: one write, the cursor's local pieces being the
 * source); 0 posted, -FI_EAGAIN, other < 0 failed, 1 nothing to do.
 */
static int issue_read(struct ofi_xfer *x)
{
  static long writes; /* under ofi.lock: for LAPI_OFI_TEST_WRITE_FAULT */
  int write = x->role == OFI_R_SOURCE;
  struct ofi_read *rd = read_get();
  if (rd == NULL)
    return -FI_ENOMEM;
  struct iovec iov[OFI_READ_IOV];
  void *desc[OFI_READ_IOV];
  struct fi_rma_iov riov[OFI_READ_IOV];
  /* Save the cursor: an -FI_EAGAIN rolls it back. */
  struct lapi_vec_walk dw = x->dw;
  void *lcur = x->lcur;
  size_t lcur_left = x->lcur_left;
  uint64_t ri = x->rseg_i, roff = x->rseg_off;
  struct read_run run = {
    .l = iov, .r = riov, .lmax = ofi.iov_limit, .rmax = ofi.rma_iov_limit,
    .absolute = (ofi.mr_mode & FI_MR_VIRT_ADDR) != 0, .fast = ofi.fast_read,
  };
  gather(x, &run);
  size_t nl = run.nl, nr = run.nr, bytes = run.bytes;
  if (nl == 0) {
    read_put(rd);
    return 1;
  }
  int rc = 0;
  for (size_t k = 0; k < nl; k++)
    desc[k] = NULL;
  if (ofi.mr_mode & FI_MR_LOCAL)
    for (size_t k = 0; k < nl && rc == 0; k++) {
      if (ofi_mr_reg(iov[k].iov_base, iov[k].iov_len,
                     write ? FI_WRITE : FI_READ, &rd->lmr[k]) != 0) {
        rc = -FI_ENOMEM;
      } else {
        rd->niov = (int)k + 1;
        desc[k] = fi_mr_desc(rd->lmr[k]);
      }
    }
  if (rc == 0) {
    rd->c.kind = OFI_C_READ;
    rd->x = x;
    rd->xid = x->id;
    rd->bytes = bytes;
    struct fi_msg_rma msg = {
      .msg_iov = iov, .desc = desc, .iov_count = nl,
      .addr = ofi.peers[x->peer].addr, .rma_iov = riov,
      .rma_iov_count = nr, .context = &rd->c.fi, .data = 0,
    };
    rd->write = write;
    rd->fault = write && ofi.write_fault > 0 &&
                (writes + 1) % ofi.write_fault == 0;
    rc = write ? (int)fi_writemsg(ofi.ep, &msg, 0)
               : (int)fi_readmsg(ofi.ep, &msg, 0);
    /* shm serves a read of several remote pieces through the peer: wake
     * it either way */
    ofi_bell_ring(x->peer);
  }
  if (rc != 0) {
    read_put(rd);
    x->dw = dw;
    x->lcur = lcur;
    x->lcur_left = lcur_left;
    x->rseg_i = ri;
    x->rseg_off = roff;
    return rc;
  }
  if (write) {
    writes++;
    ofi.st.rma_writes++;
  } else {
    ofi.st.reads++;
  }
  ofi.reads_posted++;
  x->reads_out++;
  x->issued += bytes;
  x->inflight++;
  /* Its completion comes to our CQ and nobody rings for it: make sure
   * the progress thread (or a thread polling our CQ) looks soon. */
  ofi_kick_unpolled();
  return 0;
}

/* One CMA read at x's read cursor (a write for a GET's target writing
 * its origin's buffer, get_write), up to max pieces a side (room at l,
 * r and rr): 0 (x->issued and x->done moved on) or -errno. */
static int cma_next(struct ofi_xfer *x, struct iovec *l,
                    struct iovec *r, struct fi_rma_iov *rr, size_t max)
{
  struct read_run run = {
    .l = l, .r = rr, .lmax = max, .rmax = max, .absolute = 1, .fast = 0,
  };
  gather(x, &run);
  if (run.bytes == 0) /* cannot happen after the checks of the RTS */
    return -EFAULT;
  for (size_t i = 0; i < run.nr; i++) {
    r[i].iov_base = (void *)(uintptr_t)rr[i].addr;
    r[i].iov_len = (size_t)rr[i].len;
  }
  int err = x->role == OFI_R_SOURCE
                ? ofi_cma_write(x->peer, l, run.nl, r, run.nr, run.bytes)
                : ofi_cma_read(x->peer, l, run.nl, r, run.nr, run.bytes);
  if (err == 0) {
    x->issued += run.bytes;
    x->done += run.bytes;
  }
  return err;
}

/*
 * The RMA reads of x by CMA (ofi.cma): synchronous, so nothing is in
 * flight and nothing comes to the CQ; each call takes up to OFI_CMA_IOV
 * pieces a side and ofi.max_read bytes.  After read_window calls a
 * transfer that is not done goes behind the others on the ready list,
 * for the next pass (ofi_sink_issue gives each one turn per pass).
 * x may be freed (finished, failed) on return.
 */
static void issue_cma(struct ofi_xfer *x)
{
  static struct iovec l[OFI_CMA_IOV], r[OFI_CMA_IOV]; /* under ofi.lock */
  static struct fi_rma_iov rr[OFI_CMA_IOV];
  for (int k = 0; k < ofi.read_window && x->issued < x->want; k++) {
    ofi.st.reads++;
    ofi.st.cma_reads++;
    int err = cma_next(x, l, r, rr, OFI_CMA_IOV);
    if (err) {
      read_failed(x, strerror(-err));
      return;
    }
  }
  if (x->done >= x->want)
    finish(x);
  else
    ready_add(x);
}

/*
 * An AM read by CMA into a contiguous destination, in the item that ran
 * its header handler: copied outside ofi.lock (the thread reading the CQ
 * goes on meanwhile), then its completion handler runs in the same item
 * instead of a second one.  64 KiB Amsend streamed went from ~0.8 to
 * Put's level of raw libfabric (docs/PERFORMANCE.md).  The item owns x
 * the whole time (item_queued), so a peer declared gone meanwhile only
 * marks it failed.  Under ofi.lock: 1 if x is to be copied that way
 * (its read cursor is set).
 */
static int am_cma_here(struct ofi_xfer *x)
{
  if (!ofi.cma || x->mode != OFI_MODE_RMA || x->want == 0 ||
      x->d.vec != NULL || x->rstrided || !dest_friendly(x->dest, x->want))
    return 0;
  x->issued = x->done = 0;
  x->inflight = 0;
  x->use_rma = 1;
  read_cursor_start(x, x->dest);
  ofi.st.rma++;
  return 1;
}

/* Pieces a side per call of am_cma_run (on the stack: any thread). */
#define AM_CMA_IOV 64

static void am_cma_run(struct ofi_xfer *x)
{
  struct iovec l[AM_CMA_IOV], r[AM_CMA_IOV];
  struct fi_rma_iov rr[AM_CMA_IOV];
  long calls = 0;
  int err = 0;
  while (x->issued < x->want && err == 0) {
    calls++;
    err = cma_next(x, l, r, rr, AM_CMA_IOV);
  }
  pthread_mutex_lock(&ofi.lock);
  ofi.st.reads += (uint64_t)calls;
  ofi.st.cma_reads += (uint64_t)calls;
  if (item_gone(x)) {
    pthread_mutex_unlock(&ofi.lock);
    return;
  }
  if (err) {
    x->item_queued = 0;
    read_failed(x, strerror(-err)); /* frees x */
    pthread_mutex_unlock(&ofi.lock);
    return;
  }
  pthread_mutex_unlock(&ofi.lock);
  lapi_am_recv_complete(&x->msg, &x->d);
  item_finish(x, LAPI_SUCCESS);
}

int ofi_pull_send(struct ofi_xfer *x, int stream, uint64_t offset,
                  size_t len, int ref)
{
  struct ofi_pull p;
  memset(&p, 0, sizeof p);
  ofi_hdr_init(&p.h, OFI_M_PULL, ofi_key(x), x->src_xfer, sizeof p);
  p.sink = x->id;
  p.offset = offset;
  p.len = (uint32_t)len;
  p.stream = (uint16_t)stream;
  p.flags = ref ? OFI_PULL_REF : 0;
  /* Every DATA pull tells the source which stages it may take back. */
  if (stream == OFI_STREAM_DATA)
    p.ref_landed = x->ref_base;
  return ofi_send_small(x->peer, &p, sizeof p);
}

/* One PULL for `chunks` chunks (fewer at the end of the stream): the
 * source answers each with its own DATA, so the window, the budget and
 * the DATA checks still count chunks. */
static int issue_pull(struct ofi_xfer *x, int stream, size_t total, int ref,
                      int chunks)
{
  size_t n = total - x->issued;
  int k = (int)((n + ofi.chunk - 1) / ofi.chunk);
  if (k > chunks)
    k = chunks;
  if (n > (size_t)k * ofi.chunk)
    n = (size_t)k * ofi.chunk;
  if (ofi_pull_send(x, stream, x->issued, n, ref) != LAPI_SUCCESS)
    return -FI_ENOMEM;
  x->issued += n;
  x->inflight += k;
  x->pulls_out += k;
  ofi.pulls_out += k;
  if (stream == OFI_STREAM_DATA && !ref) {
    ofi.st.batch_pulls++;
    ofi.st.batch_chunks += (uint64_t)k;
    if (k > ofi.st.batch_peak)
      ofi.st.batch_peak = k;
  }
  if (ofi.pulls_out > ofi.st.pulls_peak)
    ofi.st.pulls_peak = ofi.pulls_out;
  return 0;
}

/* Chunks the next PULL of x asks for, or 0 to wait for more of its
 * window: where chunks ride in packets (tcp), each PULL is a message
 * the sink sends and the source receives between two packs, so one
 * asks for ofi.pull_batch chunks (LAPI_OFI_PULL_BATCH, half the window)
 * once that much of the window is free (docs/PERFORMANCE.md, "The
 * packed pipeline, session 11").  By reference, and for descriptions,
 * one chunk a PULL. */
static int pull_chunks(const struct ofi_xfer *x, int window, size_t total,
                       int batch)
{
  if (!batch || ofi.pull_batch <= 1)
    return 1;
  size_t left = (total - x->issued + ofi.chunk - 1) / ofi.chunk;
  long k = window - x->inflight;
  if (k > ofi.pull_batch)
    k = ofi.pull_batch;
  if (k > ofi.pull_budget - ofi.pulls_out)
    k = ofi.pull_budget - ofi.pulls_out;
  if ((size_t)k > left)
    k = (long)left;
  /* A short PULL only to start, or for the rest of the stream: else the
   * window refills by whole batches. */
  if (k < ofi.pull_batch && (size_t)k < left && x->inflight > 0)
    return 0;
  return k > 0 ? (int)k : 0;
}

/* x waits until PULLs in flight fall under ofi.pull_budget
 * (LAPI_OFI_PULL_BUDGET), by default half the posted receive buffers.
 * Each DATA that carries its chunk is a packet of up to a buffer's size
 * that should find a posted buffer: more of them in flight than that
 * land in the provider's unexpected-message buffers (ofi_rxm allocates
 * and copies each; the rest wait in the socket), and a stream of 64
 * transfers with 8 PULLs each ran at half the rate of one with 1 each
 * over tcp;ofi_rxm (docs/PERFORMANCE.md).  Every PULL counts (each
 * answer takes a posted buffer), but those answered by a stage
 * reference (shm) carry no chunk and are not held back. */
static void pwait_add(struct ofi_xfer *x)
{
  if (x->in_pwait)
    return;
  ofi.st.pull_waits++;
  x->in_pwait = 1;
  x->pw_next = NULL;
  if (ofi.pwait_tail)
    ofi.pwait_tail->pw_next = x;
  else
    ofi.pwait_head = x;
  ofi.pwait_tail = x;
}

/* n PULLs ended: as many waiting sinks get their turn, first come first. */
static void pulls_ended(long n)
{
  ofi.pulls_out -= n;
  while (n-- > 0 && ofi.pwait_head) {
    struct ofi_xfer *w = ofi.pwait_head;
    ofi.pwait_head = w->pw_next;
    if (ofi.pwait_head == NULL)
      ofi.pwait_tail = NULL;
    w->in_pwait = 0;
    w->pw_next = NULL;
    ready_add(w);
  }
}

void ofi_pull_forget(struct ofi_xfer *x)
{
  if (x->in_pwait) {
    struct ofi_xfer **pp = &ofi.pwait_head;
    ofi.pwait_tail = NULL;
    while (*pp) {
      if (*pp == x)
        *pp = x->pw_next;
      else {
        ofi.pwait_tail = *pp;
        pp = &(*pp)->pw_next;
      }
    }
    x->in_pwait = 0;
  }
  long n = x->pulls_out;
  x->pulls_out = 0;
  pulls_ended(n);
}

/* 1 if x has nothing more to issue now, 0 if blocked (-FI_EAGAIN). */
static int issue(struct ofi_xfer *x)
{
  int desc = x->desc_phase;
  size_t total = desc ? x->desc_in_len : x->want;
  if (!desc && x->use_rma && ofi.cma) {
    issue_cma(x);
    return 1;
  }
  int rma = !desc && x->use_rma;
  /* PULLs per transfer: ofi.pull_window (LAPI_OFI_PULL_WINDOW), by
   * default 8 on shm with stage references: a lone transfer's source
   * packs 8 chunks ahead of our unpack (a 1 MiB STRIDED ping-pong in
   * ~70 us instead of ~120 with 4), and the budget below keeps a
   * stream to one PULL a transfer, within the 256 stages. */
  int window = rma ? ofi.read_window : ofi.pull_window;
  int ref = !rma && !desc && ofi_ref_wanted(x);
  while (x->inflight < window && x->issued < total) {
    if (!rma && !ref && ofi.pulls_out >= ofi.pull_budget) {
      pwait_add(x); /* on again when a PULL of any sink ends */
      break;
    }
    /* By reference, the window is for a transfer the CG moves alone:
     * its PULLs overlap the source's pack with our unpack.  Many
     * transfers at once overlap among themselves with one PULL each,
     * and every PULL beyond holds a stage more: a stream of 64 with 4
     * each ran out of the arena's 256 and fell back to packets
     * (docs/PERFORMANCE.md).  So past ofi.ref_budget PULLs out from
     * all sinks a transfer keeps to one; its DATA brings it back. */
    if (ref && x->inflight > 0 && ofi.pulls_out >= ofi.ref_budget)
      break;
    int chunks = rma ? 0 : pull_chunks(x, window, total, !ref && !desc);
    if (!rma && chunks == 0)
      break; /* on again when its DATA come */
    int rc = rma ? issue_read(x)
                 : issue_pull(x, desc ? OFI_STREAM_DESC : OFI_STREAM_DATA,
                              total, ref, chunks);
    if (rc == -FI_EAGAIN) {
      ofi.st.eagain++;
      return 0;
    }
    if (rc == 1)
      break;
    if (rc < 0) {
      char why[160];
      snprintf(why, sizeof why, "%s could not be posted: %s",
               !rma ? "a PULL" : x->get_write ? "an RMA write of a Get's data"
                                              : "an RMA read",
               fi_strerror(-rc));
      sink_incomplete(x, INT_ERR, why); /* off the list: caller unlinked */
      return -1;
    }
  }
  return 1;
}

void ofi_sink_issue(void)
{
  /* One turn per transfer that was ready when we came: a transfer put
   * back meanwhile (a CMA read with more to copy) waits for the next
   * pass, so ofi.lock is let go between turns instead of being held
   * until every such transfer is copied to its end. */
  struct ofi_xfer *last = ofi.ready_tail;
  while (ofi.ready_head) {
    struct ofi_xfer *x = ofi.ready_head;
    ofi.ready_head = x->next;
    if (ofi.ready_head == NULL)
      ofi.ready_tail = NULL;
    x->in_ready = 0;
    x->next = NULL;
    int was_last = x == last; /* issue() may free x */
    int rc = issue(x);
    if (rc == 0) {
      /* blocked: back to the front, try again after progress */
      x->in_ready = 1;
      x->next = ofi.ready_head;
      ofi.ready_head = x;
      if (ofi.ready_tail == NULL)
        ofi.ready_tail = x;
      ofi_kick_unpolled();
      return;
    }
    if (was_last)
      break;
  }
}
