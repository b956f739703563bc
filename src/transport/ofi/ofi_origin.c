/*
 * ofi_origin.c - the transport's operations at the origin, the transfer
 * table, credits, and what the origin does with FIN, PULL and RMW replies.
 *
 * Every operation is a transfer record with an id (slot | generation <<
 * 32) that the peer quotes back (but a small Amsend that needs no FIN:
 * its RTS is built straight from the call, am_send_direct); records are
 * kept on a spare list for reuse; a quote of a freed or reused slot is
 * stale and dropped.  Requests (RTS of an AM or put, GET, RMW) need a
 * credit of their target: LAPI_OFI_CREDITS per peer, given back by the
 * FIN or reply (or the acknowledgement by count).  Without one the
 * request waits in the peer's queue and leaves when a credit returns, so
 * any number of operations may be outstanding while the target holds at
 * most `credits` of ours.
 *
 * Counters at the origin (docs/LAPI.md):
 *   AM   org_cntr when the data left our memory: at once for eager
 *        messages packed into the packet, when the send completed for
 *        those sent from the caller's memory (LAPI_OFI_ZCOPY), at the
 *        FIN otherwise;
 *        cmpl_cntr at the FIN, which the target sends after the
 *        completion handler ran and tgt_cntr moved.
 *   PUT  org_cntr and cmpl_cntr at the FIN (tgt_cntr moved before it).
 *   GET  org_cntr when the data is in our memory (the target's tgt_cntr
 *        moves when it got our FIN: its memory was read).
 *   RMW  org_cntr when the previous value is in prev_tgt_val.
 * Puts, gets and rmws over the network count in LAPI_Fence like AMs.
 * An eager AM without cmpl_cntr, or an eager put without any counter or
 * handler, gets no FIN: its record goes once it is sent, and its credit
 * and its landing (LAPI_Fence) wait for the target's acknowledgement by
 * count (ofi_ack.c).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bulk_copy.h"
#include "transport/ofi/ofi.h"

/* Freed records kept for reuse (none under ASan: it would miss a use
 * after free). */
#if defined(__SANITIZE_ADDRESS__)
#define OFI_SPARE_XFERS 0
#else
#define OFI_SPARE_XFERS 64
#endif

/* ---------------------------------------------------------- the table */

struct ofi_xfer *ofi_xfer_new(enum ofi_role role, uint task,
                              struct lapi_hndl *h)
{
  uint32_t s = ofi.xfree_hint;
  while (s < ofi.xcap && ofi.xtab[s])
    s++;
  if (s >= ofi.xcap) {
    uint32_t ncap = ofi.xcap ? ofi.xcap * 2 : 256;
    struct ofi_xfer **nt = realloc(ofi.xtab, ncap * sizeof *nt);
    if (nt == NULL)
      return NULL;
    ofi.xtab = nt;
    uint32_t *ng = realloc(ofi.xgen, ncap * sizeof *ng);
    if (ng == NULL)
      return NULL;
    ofi.xgen = ng;
    for (uint32_t k = ofi.xcap; k < ncap; k++) {
      ofi.xtab[k] = NULL;
      ofi.xgen[k] = 0;
    }
    s = ofi.xcap;
    ofi.xcap = ncap;
  }
  struct ofi_xfer *x = ofi.xspare;
  if (x) {
    ofi.xspare = x->next;
    ofi.nspare--;
    memset(x, 0, offsetof(struct ofi_xfer, pkt_inline));
  } else {
    x = calloc(1, sizeof *x);
    if (x == NULL)
      return NULL;
  }
  ofi.xgen[s]++;
  x->id = (uint64_t)ofi.xgen[s] << 32 | s;
  x->role = role;
  x->task = task;
  x->peer = task / ofi.tpc; /* its core group */
  x->h = h;
  ofi.xtab[s] = x;
  ofi.xfree_hint = s + 1;
  /* No kick: an idle progress thread wakes every IDLE_MS anyway, soon
   * enough to watch for a silent peer (pings start after >= 1 s), and a
   * kick per message would cost a ping-pong a thread switch. */
  ofi.xlive++;
  return x;
}

struct ofi_xfer *ofi_xfer_find(uint64_t id)
{
  uint32_t s = (uint32_t)id;
  if (s >= ofi.xcap || ofi.xtab[s] == NULL || ofi.xtab[s]->id != id)
    return NULL;
  return ofi.xtab[s];
}

/* The source's registration and segment arrays for n pieces: in the
 * record itself for one, else allocated; 0 on success. */
static int source_arrays(struct ofi_xfer *x, uint n)
{
  if (n == 1) {
    x->mrs = &x->mr_one;
    x->segs = &x->seg_one;
    return 0;
  }
  x->mrs = calloc(n, sizeof *x->mrs);
  x->segs = calloc(n, sizeof *x->segs);
  return x->mrs == NULL || x->segs == NULL ? -1 : 0;
}

static void source_arrays_free(struct ofi_xfer *x)
{
  if (x->mrs != &x->mr_one)
    free(x->mrs);
  if (x->segs != &x->seg_one)
    free(x->segs);
  x->mrs = NULL;
  x->segs = NULL;
}

void ofi_xfer_free(struct ofi_xfer *x)
{
  uint32_t s = (uint32_t)x->id;
  if (s < ofi.xcap && ofi.xtab[s] == x) {
    ofi.xtab[s] = NULL;
    if (s < ofi.xfree_hint)
      ofi.xfree_hint = s;
    ofi.xlive--;
  }
  if (x->in_ready) {
    struct ofi_xfer **pp = &ofi.ready_head;
    ofi.ready_tail = NULL;
    while (*pp) {
      if (*pp == x)
        *pp = x->next;
      else {
        ofi.ready_tail = *pp;
        pp = &(*pp)->next;
      }
    }
  }
  if (x->pulls_out || x->in_pwait)
    ofi_pull_forget(x);
  if (x->nf_soon && x->role == OFI_R_SOURCE)
    ofi_nofin_forget(x);
  if (x->exposed)
    ofi.exposed--;
  ofi.pull_sources -= x->pull_src;
  ofi.reads_posted -= x->reads_out; /* their completions may never come */
  for (uint k = 0; k < x->nmr; k++)
    ofi_mr_close(x->mrs[k]);
  source_arrays_free(x);
  free(x->uhdr);
  free(x->desc);
  ofi_ref_release_all(x);
  ofi_rx_release(x);
  if (x->pkt != x->pkt_inline)
    free(x->pkt);
  free(x->desc_in);
  ofi_vec_free(&x->shape_vec);
  ofi_vec_free(&x->rdesc);
  if (x->note.item)
    free(x->note.item); /* a completion handler that will never run */
  free(x->sent_item); /* a send handler that had no need to */
  if (ofi.nspare < OFI_SPARE_XFERS) {
    /* a small message costs no calloc and no free at either end */
    x->next = ofi.xspare;
    ofi.xspare = x;
    ofi.nspare++;
    return;
  }
  free(x);
}

/* ------------------------------------------------------------- credits */

static void launch(struct ofi_xfer *x);

/* 1 if x may go now; else it waits in its peer's queue. */
static int credit_take(struct ofi_xfer *x)
{
  struct ofi_peer *p = &ofi.peers[x->peer];
  if (p->credits <= 0 && ofi.ack_owed == x->peer + 1)
    ofi_ack_settle(); /* a pass owes the peer's credits back */
  if (p->credits > 0 && p->wq_head == NULL) {
    p->credits--;
    x->holds_credit = 1;
    return 1;
  }
  if (p->credits <= 0)
    ofi_nofin_starved(x->peer); /* acknowledgements may hold them */
  x->next = NULL;
  if (p->wq_tail)
    p->wq_tail->next = x;
  else
    p->wq_head = x;
  p->wq_tail = x;
  return 0;
}

void ofi_credit_release(uint peer)
{
  ofi_credit_give(peer, 1);
}

void ofi_credit_give(uint peer, uint n)
{
  struct ofi_peer *p = &ofi.peers[peer];
  p->credits += (int)n;
  /* Nothing starts towards a peer that is gone: the sweep of
   * ofi_peer_fail fails what waits (launching it would report success
   * for a message that never left). */
  if (p->failed || p->fail_pending)
    return;
  while (p->credits > 0 && p->wq_head) {
    struct ofi_xfer *x = p->wq_head;
    p->wq_head = x->next;
    if (p->wq_head == NULL)
      p->wq_tail = NULL;
    x->next = NULL;
    p->credits--;
    x->holds_credit = 1;
    launch(x);
  }
}

static void unqueue(struct ofi_xfer *x)
{
  struct ofi_peer *p = &ofi.peers[x->peer];
  struct ofi_xfer **pp = &p->wq_head;
  p->wq_tail = NULL;
  while (*pp) {
    if (*pp == x)
      *pp = x->next;
    else {
      p->wq_tail = *pp;
      pp = &(*pp)->next;
    }
  }
}

/* ------------------------------------------------ origin notifications */

struct sent_item {
  struct lapi_item it;
  struct lapi_hndl *h;
  uint tgt;
  lapi_cntr_t *org_cntr;
  scompl_hndlr_t *shdlr;
  void *sinfo;
  int reason;
};

static void sent_run(struct lapi_item *it)
{
  struct sent_item *s = (struct sent_item *)it;
  lapi_am_origin_sent(s->h, s->tgt, s->org_cntr, s->shdlr, s->sinfo,
                      s->reason);
  free(s);
}

/* The item of an Amsend's send handler, taken when the call is made (it
 * fails with LAPI_ERR_MEMORY_EXHAUSTED then), so that firing it later
 * cannot fail and move org_cntr without the handler.  (A put's is the
 * item its x->note reserved: put_sent_failed.) */
static int sent_reserve(struct ofi_xfer *x, scompl_hndlr_t *shdlr)
{
  if (shdlr == NULL)
    return LAPI_SUCCESS;
  x->sent_item = malloc(sizeof(struct sent_item));
  return x->sent_item ? LAPI_SUCCESS : LAPI_ERR_MEMORY_EXHAUSTED;
}

/* org_cntr of an AM (and its LAPI_Xfer send handler, in MPE context). */
static void am_sent(struct ofi_xfer *x, int reason)
{
  if (x->sent_fired)
    return;
  x->sent_fired = 1;
  if (x->shdlr == NULL) {
    lapi_am_origin_sent(x->h, x->task, x->org_cntr, NULL, NULL, reason);
    return;
  }
  struct sent_item *s = x->sent_item; /* reserved by the call */
  x->sent_item = NULL;
  if (s == NULL)
    s = malloc(sizeof *s); /* a path that did not reserve: never lost */
  if (s == NULL) {
    lapi_am_origin_sent(x->h, x->task, x->org_cntr, NULL, NULL, reason);
    ofi_report(x->h, LAPI_ERR_MEMORY_EXHAUSTED, INT_ERR, x->task,
               "out of memory: a send handler could not be run");
    return;
  }
  s->h = x->h;
  s->tgt = x->task;
  s->org_cntr = x->org_cntr;
  s->shdlr = x->shdlr;
  s->sinfo = x->sinfo;
  s->reason = reason;
  s->it.run = sent_run;
  s->it.cancel = NULL;
  s->it.src = (int)x->task;
  lapi_am_post(x->h, &s->it);
}

/* A put that failed: its memory is free again, so org_cntr moves and
 * its LAPI_Xfer send handler hears the code (both kept in x->note), in
 * the item x->note reserved for its handlers: a put with a send handler
 * allocates one item, not a second one for failing. */
static void put_sent_failed(struct ofi_xfer *x, int code)
{
  if (x->sent_fired)
    return;
  x->sent_fired = 1;
  lapi_am_notify_fail(x->h, &x->note, code);
}

/* PUT, GET, RMW: completion handlers, org_cntr, cmpl_cntr. */
void ofi_note_fire(struct ofi_xfer *x)
{
  lapi_am_origin_landed(x->h);
  lapi_am_notify_fire(x->h, &x->note);
  x->note.item = NULL; /* now the handle's */
}

void ofi_fail_xfer(struct ofi_xfer *x, int code)
{
  if (x->failed)
    return;
  x->failed = 1;
  unqueue(x);
  switch (x->role) {
  case OFI_R_SOURCE:
    if (x->kind == OFI_K_AM) {
      lapi_am_origin_landed(x->h);
      am_sent(x, code); /* our memory is free again; cmpl_cntr never */
    } else if (x->kind == OFI_K_PUT) {
      lapi_am_origin_landed(x->h);
      put_sent_failed(x, code);
    }
    break;
  case OFI_R_GET:
  case OFI_R_RMW:
    lapi_am_origin_landed(x->h); /* org_cntr never: nothing arrived */
    break;
  default:
    break;
  }
  ofi_xfer_free(x);
}

/* ---------------------------------------------------------- launching */

/* Bytes [off, off + n) of a source held in one piece (IOVECTOR or
 * GENERIC), where they may go from the caller's memory instead of being
 * packed (LAPI_OFI_ZCOPY, ofi_send.c): at least ofi.zcopy_min of them.
 * Their address, or NULL. */
static const void *zc_range(const lapi_vec_t *v, size_t off, size_t n)
{
  if (ofi.zcopy_min == 0 || n < ofi.zcopy_min || v == NULL ||
      (v->vec_type != LAPI_GEN_IOVECTOR && v->vec_type != LAPI_GEN_GENERIC) ||
      v->num_vecs != 1 || off > v->len[0] || n > v->len[0] - off)
    return NULL;
  return (const unsigned char *)v->info[0] + off;
}

/* Eager data sent so: not for an AM with a send handler (it would have
 * to run where the buffer comes back, and hear how the send went). */
static const void *zc_source(const lapi_vec_t *v, size_t len,
                             scompl_hndlr_t *shdlr)
{
  return shdlr ? NULL : zc_range(v, 0, len);
}

/* b's last len bytes go from data; an AM's org_cntr then moves when b
 * comes back (h NULL: a put, whose org_cntr waits for the FIN or the
 * counts anyway). */
static void zc_attach(struct ofi_buf *b, const void *data, size_t len,
                      struct lapi_hndl *h, uint task, lapi_cntr_t *org_cntr)
{
  b->zc_data = data;
  b->zc_len = len;
  b->zc_h = h;
  b->zc_task = task;
  b->zc_org = org_cntr;
  ofi.st.zc_sends++;
}

static size_t rts_room(const struct ofi_xfer *x, int with_desc)
{
  return sizeof(struct ofi_rts) + (size_t)x->nseg * sizeof(struct ofi_seg) +
         ofi_align8(x->uhdr_len) + (with_desc ? ofi_align8(x->desc_len) : 0);
}

/* Nothing has to come back for x once its RTS left: an eager AM
 * without cmpl_cntr (org_cntr moves when it is packed), or an eager put
 * that nobody at the origin waits for but LAPI_Fence. */
static int needs_no_fin(const struct ofi_xfer *x)
{
  if (x->role != OFI_R_SOURCE || x->mode != OFI_MODE_EAGER)
    return 0;
  if (x->kind == OFI_K_AM)
    return x->cmpl_cntr == NULL;
  if (x->kind == OFI_K_PUT)
    return x->note.item == NULL && x->note.org_cntr == NULL &&
           x->note.cmpl_cntr == NULL;
  return 0;
}

/* An eager AM or put that the origin still waits for (cmpl_cntr, a
 * put's counters or handlers) is sent without a FIN too, numbered, and
 * kept here until the target's counts cover it (ofi_ack.c: asked for
 * once we wait, ofi_soon_ask).  A stream of them is then acknowledged
 * by a few ACKs where each had a FIN: over tcp every packet is a system
 * call and a trip through both kernels' stacks, and a stream of 16 KiB
 * puts carried one FIN per put (docs/PERFORMANCE.md, "Mid-size messages
 * over tcp, session 10"). */
static int acked_soon(const struct ofi_xfer *x)
{
  return ofi.cmpl_by_count && x->role == OFI_R_SOURCE &&
         x->mode == OFI_MODE_EAGER &&
         (x->kind == OFI_K_AM || x->kind == OFI_K_PUT);
}

static void launch_rts(struct ofi_xfer *x)
{
  struct ofi_buf *b = ofi_buf_get();
  if (b == NULL) {
    ofi_owe_launch(x); /* launched again once a buffer is free */
    return;
  }
  int no_fin = needs_no_fin(x) && ofi_nofin_room(x->peer);
  int soon = !no_fin && acked_soon(x) && ofi_nofin_room(x->peer);
  size_t tail = x->mode == OFI_MODE_EAGER ? x->data_len
                : x->staged_whole       ? sizeof(struct ofi_data_ref)
                                        : 0;
  int inl = x->desc_len == 0 || rts_room(x, 1) + tail <= ofi.buf_size;
  size_t len = rts_room(x, inl) + tail;
  struct ofi_rts *r = ofi_pkt_init(b, OFI_M_RTS, ofi_key(x), x->id, len);
  memset((unsigned char *)r + sizeof r->h, 0, sizeof *r - sizeof r->h);
  r->h.src_local = ofi_local(x->h);
  r->kind = (uint8_t)x->kind;
  r->mode = (uint8_t)x->mode;
  r->desc_inline = (uint8_t)inl;
  r->strided = (uint8_t)x->strided_rma;
  r->uhdr_len = x->uhdr_len;
  r->hdr_hdl = x->hdr_hdl;
  r->hdl_module = x->hdl_module;
  r->tgt_cntr = x->tgt_cntr;
  r->cookie = x->cookie;
  r->data_len = x->data_len;
  r->desc_len = x->desc_len;
  r->nseg = x->nseg;
  r->shape = x->shape;
  uint32_t seq = 0;
  if (no_fin || soon) {
    r->flags = OFI_RTS_NO_FIN;
    r->seq = seq = ofi_nofin_take(x->peer, x->h);
  }
  if (x->strided_rma) {
    r->s_block = lapi_vec_stride_block(x->src);
    r->s_stride = lapi_vec_stride_pitch(x->src);
    r->s_num = x->src->num_vecs;
  }
  unsigned char *p = (unsigned char *)(r + 1);
  if (x->nseg) {
    memcpy(p, x->segs, x->nseg * sizeof(struct ofi_seg));
    if (ofi_badkey_every)
      ofi_badkey_apply((struct ofi_seg *)p, x->nseg);
    p += x->nseg * sizeof(struct ofi_seg);
  }
  if (x->uhdr_len)
    memcpy(p, x->uhdr, x->uhdr_len);
  p += ofi_align8(x->uhdr_len);
  if (inl && x->desc_len) {
    memcpy(p, x->desc, x->desc_len);
    p += ofi_align8(x->desc_len);
  }
  const void *zc = NULL;
  if (x->mode == OFI_MODE_EAGER && x->data_len) {
    /* (a put's handlers and counters wait for the FIN or the counts:
     * the data is at the target then, out of the caller's memory) */
    zc = zc_source(x->src, x->data_len,
                   x->kind == OFI_K_AM ? x->shdlr : NULL);
    if (zc == NULL) {
      lapi_vec_pack(x->src, p, 0, x->data_len);
    } else if (x->kind == OFI_K_AM) {
      x->sent_fired = 1; /* told when b comes back, whatever x becomes */
      zc_attach(b, zc, x->data_len, x->h, x->task, x->org_cntr);
    } else {
      zc_attach(b, zc, x->data_len, NULL, 0, NULL);
    }
  }
  if (x->staged_whole) {
    struct ofi_data_ref ref;
    ofi_ref_whole_ref(x, &ref);
    r->flags |= OFI_RTS_STAGED;
    memcpy(p, &ref, sizeof ref);
  }
  ofi_send(b, x->peer, x->id);
  if (x->mode == OFI_MODE_EAGER && x->kind == OFI_K_AM && zc == NULL)
    am_sent(x, LAPI_SUCCESS); /* packed: the origin buffer is free */
  if (no_fin) {
    /* Its credit and its landing now wait for the target's counts. */
    x->holds_credit = 0;
    ofi_xfer_free(x);
  } else if (soon) {
    x->holds_credit = 0; /* back with the counts */
    ofi_nofin_keep(x, seq);
  }
}

/* OFI_GET_WRITE without CMA: our buffer registered for the target's RMA
 * write (once per get: launch_get may come again); 1 if it was.  Until
 * the FIN the get counts as exposed: over tcp the written bytes come in
 * through our progress, so the progress thread must not nap meanwhile. */
static int get_write_register(struct ofi_xfer *x)
{
  if (x->nmr)
    return 1;
  x->mrs = &x->mr_one;
  if (ofi_mr_reg(x->one.v.info[0], x->data_len, FI_REMOTE_WRITE,
                 &x->mrs[0]) != 0) {
    x->mrs = NULL;
    return 0; /* the target answers with an RTS, as before */
  }
  x->nmr = 1;
  x->exposed = 1;
  ofi.exposed++;
  return 1;
}

/* A get whose reply its target will likely stage whole (it decides,
 * ofi_ref_stage_whole): copied from its stage here, cheaper than a
 * write by CMA up to LAPI_OFI_STAGED_MAX (a system call each). */
static int get_staged(const struct ofi_xfer *x)
{
  const struct ofi_peer *p = &ofi.peers[x->peer];
  return ofi_ref_whole_fits(x->data_len) && p->pid != 0 && !p->ref_off;
}

static void launch_get(struct ofi_xfer *x)
{
  struct ofi_buf *b = ofi_buf_get();
  if (b == NULL) {
    ofi_owe_launch(x); /* launched again once a buffer is free */
    return;
  }
  int inl = sizeof(struct ofi_get) + x->desc_len <= ofi.buf_size;
  /* By CMA or an RMA write the target writes a contiguous origin buffer
   * itself: a FIN comes back instead of an RTS, and the copy runs at the
   * target while we go on issuing, as a put's does (64 KiB Get
   * streamed: see docs/PERFORMANCE.md).  Small ones keep their eager
   * reply. */
  size_t wat = ofi_align8(sizeof(struct ofi_get) + x->desc_len);
  x->get_write = (ofi.cma || ofi.rma_write) && ofi.get_write_ok && inl &&
                 x->org_dst == &x->one.v &&
                 x->data_len > ofi.get_eager_limit && !get_staged(x) &&
                 wat + sizeof(struct ofi_seg) <= ofi.buf_size &&
                 (ofi.cma || get_write_register(x));
  size_t len = x->get_write ? wat + sizeof(struct ofi_seg)
               : sizeof(struct ofi_get) + (inl ? x->desc_len : 0);
  struct ofi_get *g = ofi_pkt_init(b, OFI_M_GET, ofi_key(x), x->id, len);
  g->h.src_local = ofi_local(x->h);
  g->tgt_cntr = x->tgt_cntr;
  g->data_len = x->data_len;
  g->desc_len = x->desc_len;
  g->desc_inline = (uint8_t)inl;
  g->flags = x->get_write ? OFI_GET_WRITE : 0;
  memset(g->pad, 0, sizeof g->pad);
  if (inl)
    memcpy(g + 1, x->desc, x->desc_len);
  if (x->get_write) {
    struct ofi_seg w = {(uint64_t)(uintptr_t)x->one.v.info[0],
                        x->data_len,
                        ofi.cma ? 0 : fi_mr_key(x->mrs[0])};
    memset((unsigned char *)g + sizeof *g + x->desc_len, 0,
           wat - sizeof *g - x->desc_len);
    if (ofi_badkey_every)
      ofi_badkey_apply(&w, 1);
    memcpy((unsigned char *)g + wat, &w, sizeof w);
  }
  ofi_send(b, x->peer, x->id);
}

static void launch_rmw(struct ofi_xfer *x)
{
  struct ofi_buf *b = ofi_buf_get();
  if (b == NULL) {
    ofi_owe_launch(x); /* launched again once a buffer is free */
    return;
  }
  /* The request was built into x->desc at submission. */
  memcpy(b->mem, x->desc, sizeof(struct ofi_rmw));
  b->len = sizeof(struct ofi_rmw);
  ofi_send(b, x->peer, x->id);
}

static void launch(struct ofi_xfer *x)
{
  switch (x->role) {
  case OFI_R_GET: launch_get(x); break;
  case OFI_R_RMW: launch_rmw(x); break;
  default: launch_rts(x); break;
  }
}

void ofi_relaunch(struct ofi_xfer *x)
{
  launch(x);
}

/* The GET target answers with an uncredited RTS (the GET holds it). */
void ofi_source_start(struct ofi_xfer *x)
{
  launch_rts(x);
}

/* ----------------------------------------------------- source set-up */

/* Register the pieces of x->src for RMA reads (by CMA: only described,
 * ofi_cma.c); 0 if the sink may read them, -1 to use the packed path
 * instead. */
static int rma_prepare(struct ofi_xfer *x)
{
  const lapi_vec_t *v = x->src;
  if (!ofi.has_rma || x->data_len == 0)
    return -1;
  if (v->vec_type == LAPI_GEN_STRIDED_XFER) {
    size_t block = lapi_vec_stride_block(v);
    size_t pitch = lapi_vec_stride_pitch(v);
    if (block < ofi.min_rma_block)
      return -1;
    size_t extent = pitch * (v->num_vecs - 1) + block;
    if (source_arrays(x, 1))
      return -1;
    void *base = (void *)lapi_vec_stride_base(v);
    if (!ofi.cma && ofi_mr_reg(base, extent, FI_REMOTE_READ, &x->mrs[0]))
      return -1;
    x->nmr = 1;
    x->segs[0].addr = (uint64_t)(uintptr_t)base;
    x->segs[0].len = extent;
    x->segs[0].key = ofi.cma ? 0 : fi_mr_key(x->mrs[0]);
    x->nseg = 1;
    x->strided_rma = 1;
    return 0;
  }
  uint n = 0;
  for (uint i = 0; i < v->num_vecs; i++)
    n += v->len[i] != 0;
  size_t room = ofi.buf_size - sizeof(struct ofi_rts) -
                ofi_align8(x->uhdr_len) - ofi_align8(x->desc_len);
  if (n == 0 || (size_t)n * sizeof(struct ofi_seg) > room ||
      (x->data_len / n < ofi.min_rma_block && !ofi_one_read(n)))
    return -1;
  if (source_arrays(x, n))
    return -1;
  for (uint i = 0; i < v->num_vecs; i++) {
    if (v->len[i] == 0)
      continue;
    if (!ofi.cma &&
        ofi_mr_reg(v->info[i], v->len[i], FI_REMOTE_READ, &x->mrs[x->nmr]))
      return -1;
    struct ofi_seg *s = &x->segs[x->nmr];
    s->addr = (uint64_t)(uintptr_t)v->info[i];
    s->len = v->len[i];
    s->key = ofi.cma ? 0 : fi_mr_key(x->mrs[x->nmr]);
    x->nmr++;
  }
  x->nseg = x->nmr;
  return 0;
}

static void rma_unprepare(struct ofi_xfer *x)
{
  for (uint k = 0; k < x->nmr; k++)
    ofi_mr_close(x->mrs[k]);
  source_arrays_free(x);
  x->nmr = x->nseg = 0;
  x->strided_rma = 0;
}

/* Eager, RMA or packed for a source stream. */
static void choose_mode(struct ofi_xfer *x)
{
  if (x->data_len <= ofi.eager_limit &&
      rts_room(x, 1) + x->data_len <= ofi.buf_size) {
    x->mode = OFI_MODE_EAGER;
    return;
  }
  /* Mid-size on shm: staged whole, no system call (ofi_packref.c). */
  if (rts_room(x, 1) + sizeof(struct ofi_data_ref) <= ofi.buf_size &&
      ofi_ref_stage_whole(x) == 0) {
    x->mode = OFI_MODE_PULL;
    x->staged_whole = 1;
    return;
  }
  if (rma_prepare(x) == 0) {
    x->mode = OFI_MODE_RMA;
    /* Read by CMA (ofi.cma, ofi_cma.c) it needs no progress of ours:
     * not counted, so an idle progress thread may sleep. */
    x->exposed = !ofi.cma;
    ofi.exposed += x->exposed;
    return;
  }
  rma_unprepare(x);
  x->mode = OFI_MODE_PULL;
  /* Its PULLs are answered by our progress (ofi_progress.c: counted,
   * the progress thread polls for them while no application thread
   * does). */
  x->pull_src = 1;
  ofi.pull_sources++;
}

void ofi_source_mode(struct ofi_xfer *x)
{
  choose_mode(x);
}

/* ------------------------------------------------------- the tp ops */

static int usable(uint tgt)
{
  if (!ofi.up || tgt / ofi.tpc >= ofi.ntasks)
    return LAPI_ERR_NO_CONNECTIVITY;
  if (ofi.peers[tgt / ofi.tpc].failed)
    return LAPI_ERR_NO_CONNECTIVITY;
  return LAPI_SUCCESS;
}

static int set_desc(struct ofi_xfer *x, const lapi_vec_t *v)
{
  x->desc_len = ofi_desc_size(v, 1);
  x->desc = malloc(x->desc_len);
  if (x->desc == NULL)
    return LAPI_ERR_MEMORY_EXHAUSTED;
  ofi_desc_write(v, x->desc);
  return LAPI_SUCCESS;
}

/* The common small message: an Amsend that fits the eager limit, has no
 * cmpl_cntr nor send handler, and finds a credit and room for a no-FIN
 * number.  It goes as a SHORT packet built straight from the call, with
 * no transfer record (nothing refers to it again).  1 if sent, 0 to take
 * the general path; under ofi.lock. */
static int am_send_direct(struct lapi_hndl *h, const struct lapi_tp_am *am)
{
  uint peer = am->tgt / ofi.tpc;
  struct ofi_peer *p = &ofi.peers[peer];
  size_t len = sizeof(struct ofi_short) + ofi_align8(am->uhdr_len) +
               am->udata_len;
  /* Counts a pass owes from the peer first, if they may decide (not on
   * a ping-pong's answer: its credits are not out).  The window is asked
   * once, again only if the settle moved it. */
  int room = ofi_nofin_room(peer);
  if (ofi.ack_owed == peer + 1 && (p->credits <= 0 || !room)) {
    ofi_ack_settle();
    room = ofi_nofin_room(peer);
  }
  if (am->org_vec || am->cmpl_cntr || am->shdlr ||
      am->udata_len > ofi.eager_limit || len > ofi.buf_size ||
      p->credits <= 0 || p->wq_head || !room)
    return 0;
  struct ofi_buf *b = ofi_buf_get();
  if (b == NULL)
    return 0;
  uint32_t module;
  uint64_t hdl = ofi_hdl_encode(am->hdr_hdl, &module);
  uint32_t seq = ofi_nofin_take(peer, h);
  /* The whole header in one assignment, every field named (the rest is
   * zero): no memset of the buffer first, on the path of every message.
   * post() stamps the acknowledgement counts. */
  struct ofi_short *r = (struct ofi_short *)b->mem;
  *r = (struct ofi_short){
      .h = {.magic = OFI_WIRE_MAGIC,
            .type = OFI_M_SHORT,
            .src_local = (uint8_t)ofi_local(h),
            .hndl = lapi_hndl_key(am->tgt % ofi.tpc, h->index),
            .src = ofi.me,
            .len = (uint32_t)len,
            .id = (uint64_t)module << 32 | seq},
      .hdr_hdl = hdl,
      .tgt_cntr = am->tgt_cntr,
      .uhdr_len = (uint16_t)am->uhdr_len,
      .flags = OFI_RTS_NO_FIN};
  b->len = len;
  unsigned char *d = (unsigned char *)(r + 1);
  if (am->uhdr_len) {
    memcpy(d, am->uhdr, am->uhdr_len);
    memset(d + am->uhdr_len, 0, ofi_align8(am->uhdr_len) - am->uhdr_len);
  }
  d += ofi_align8(am->uhdr_len);
  /* one piece, no send handler (zc_source's rule), on the path of
   * every small message: one compare when it is off */
  const void *zc = ofi.zcopy_min && am->udata_len >= ofi.zcopy_min
                       ? am->udata
                       : NULL;
  if (zc)
    zc_attach(b, zc, am->udata_len, h, am->tgt, am->org_cntr);
  else if (am->udata_len)
    bulk_copy(d, am->udata, am->udata_len);
  p->credits--; /* back when the target counts it done */
  ofi_send(b, peer, 0);
  /* Outstanding for LAPI_Fence from here (am_counts_outstanding): a
   * locked add less before the inject, and nothing lands it before we
   * release ofi.lock (failures of ofi_send are declared later). */
  __atomic_add_fetch(&h->outstanding, 1, __ATOMIC_SEQ_CST);
  if (zc == NULL) /* packed: the origin buffer is free */
    lapi_am_origin_sent(h, am->tgt, am->org_cntr, NULL, NULL, LAPI_SUCCESS);
  return 1;
}

static int ofi_am_send(struct lapi_hndl *h, const struct lapi_tp_am *am)
{
  pthread_mutex_lock(&ofi.lock);
  int rc = usable(am->tgt);
  if (rc == LAPI_SUCCESS && am_send_direct(h, am)) {
    ofi_owed_pass();
    pthread_mutex_unlock(&ofi.lock);
    return LAPI_SUCCESS;
  }
  struct ofi_xfer *x = NULL;
  if (rc == LAPI_SUCCESS) {
    x = ofi_xfer_new(OFI_R_SOURCE, am->tgt, h);
    if (x == NULL)
      rc = LAPI_ERR_MEMORY_EXHAUSTED;
  }
  if (rc == LAPI_SUCCESS) {
    x->kind = OFI_K_AM;
    x->hdr_hdl = ofi_hdl_encode(am->hdr_hdl, &x->hdl_module);
    x->tgt_cntr = am->tgt_cntr;
    x->org_cntr = am->org_cntr;
    x->cmpl_cntr = am->cmpl_cntr;
    x->shdlr = am->shdlr;
    x->sinfo = am->sinfo;
    x->uhdr_len = am->uhdr_len;
    rc = sent_reserve(x, am->shdlr);
    if (rc == LAPI_SUCCESS && am->uhdr_len) {
      x->uhdr = malloc(am->uhdr_len);
      if (x->uhdr == NULL)
        rc = LAPI_ERR_MEMORY_EXHAUSTED;
      else
        memcpy(x->uhdr, am->uhdr, am->uhdr_len);
    }
  }
  if (rc == LAPI_SUCCESS) {
    if (am->org_vec) {
      x->src = am->org_vec;
      x->shape = 1 + (uint32_t)am->org_vec->vec_type;
      x->data_len = lapi_vec_bytes(am->org_vec);
      rc = set_desc(x, am->org_vec);
    } else {
      ofi_vec_one(&x->one, (void *)am->udata, am->udata_len);
      x->src = &x->one.v;
      x->data_len = am->udata_len;
    }
  }
  if (rc != LAPI_SUCCESS) {
    if (x)
      ofi_xfer_free(x);
    pthread_mutex_unlock(&ofi.lock);
    return rc;
  }
  __atomic_add_fetch(&h->outstanding, 1, __ATOMIC_SEQ_CST); /* launched next */
  choose_mode(x);
  if (credit_take(x))
    launch(x);
  ofi_owed_pass();
  pthread_mutex_unlock(&ofi.lock);
  return LAPI_SUCCESS;
}

/* Put, get and rmw begin alike, under ofi.lock: a transfer record for
 * tgt with its completion notice reserved.  NULL and *rc on failure. */
static struct ofi_xfer *noted_xfer(struct lapi_hndl *h, enum ofi_role role,
                                   uint tgt, const struct lapi_am_notify *n,
                                   int *rc)
{
  *rc = usable(tgt);
  if (*rc != LAPI_SUCCESS)
    return NULL;
  struct ofi_xfer *x = ofi_xfer_new(role, tgt, h);
  if (x == NULL) {
    *rc = LAPI_ERR_MEMORY_EXHAUSTED;
    return NULL;
  }
  x->note = *n;
  *rc = lapi_am_notify_reserve(&x->note);
  if (*rc != LAPI_SUCCESS) {
    ofi_xfer_free(x);
    return NULL;
  }
  return x;
}

/* The target side of a put or get, described for the peer, and the
 * local side (*local: what the origin reads for a put, writes for a get):
 * the vectors of Putv/Getv, or one segment each. */
static int rma_shape(struct ofi_xfer *x, const struct lapi_tp_rma *op,
                     const lapi_vec_t **local, int is_put)
{
  if (op->org_vec) {
    *local = op->org_vec;
    x->data_len = is_put ? lapi_vec_pair_bytes(op->org_vec, op->tgt_vec)
                         : lapi_vec_pair_bytes(op->tgt_vec, op->org_vec);
    return set_desc(x, op->tgt_vec);
  }
  ofi_vec_one(&x->one, op->org_addr, op->len);
  *local = &x->one.v;
  x->data_len = op->len;
  struct ofi_vec t;
  ofi_vec_one(&t, lapi_addr_ptr(op->tgt_addr), op->len);
  return set_desc(x, &t.v);
}

/* Put, get and rmw end alike, under ofi.lock (released here): on rc the
 * record goes, else the operation counts for LAPI_Fence and starts when
 * a credit allows. */
static int start_noted(struct lapi_hndl *h, struct ofi_xfer *x, int rc)
{
  if (rc != LAPI_SUCCESS) {
    if (x)
      ofi_xfer_free(x);
    pthread_mutex_unlock(&ofi.lock);
    return rc;
  }
  __atomic_add_fetch(&h->outstanding, 1, __ATOMIC_SEQ_CST);
  if (credit_take(x))
    launch(x);
  ofi_owed_pass();
  pthread_mutex_unlock(&ofi.lock);
  return LAPI_SUCCESS;
}

static int ofi_put(struct lapi_hndl *h, const struct lapi_tp_rma *op)
{
  struct lapi_am_notify n = {
    .tgt = op->tgt, .shdlr = op->shdlr, .sinfo = op->sinfo,
    .org_cntr = op->org_cntr, .cmpl_cntr = op->cmpl_cntr,
  };
  int rc;
  pthread_mutex_lock(&ofi.lock);
  struct ofi_xfer *x = noted_xfer(h, OFI_R_SOURCE, op->tgt, &n, &rc);
  if (x) {
    x->kind = OFI_K_PUT;
    x->tgt_cntr = op->tgt_cntr;
    x->sent_fired = 0;
    rc = rma_shape(x, op, &x->src, 1);
    if (rc == LAPI_SUCCESS)
      choose_mode(x);
  }
  return start_noted(h, x, rc);
}

static int ofi_get(struct lapi_hndl *h, const struct lapi_tp_rma *op)
{
  struct lapi_am_notify n = {
    .tgt = op->tgt, .chndlr = op->chndlr, .cinfo = op->cinfo,
    .org_cntr = op->org_cntr,
  };
  int rc;
  pthread_mutex_lock(&ofi.lock);
  struct ofi_xfer *x = noted_xfer(h, OFI_R_GET, op->tgt, &n, &rc);
  if (x) {
    x->kind = OFI_K_GETREPLY;
    x->tgt_cntr = op->tgt_cntr;
    rc = rma_shape(x, op, &x->org_dst, 0);
  }
  return start_noted(h, x, rc);
}

/* The RMW packet, built once at submission into x->desc. */
static void rmw_build(struct ofi_xfer *x, struct lapi_hndl *h,
                      const struct lapi_tp_rmw *op)
{
  struct ofi_rmw *m = (struct ofi_rmw *)x->desc;
  ofi_hdr_init(&m->h, OFI_M_RMW, ofi_key(x), x->id, sizeof *m);
  m->h.src_local = ofi_local(h);
  m->op = (uint32_t)op->op;
  m->size = (uint32_t)op->size;
  m->tgt_var = op->tgt_var;
  long long in[2];
  lapi_rmw_operands(op, in);
  m->in[0] = in[0];
  m->in[1] = in[1];
}

static int ofi_rmw(struct lapi_hndl *h, const struct lapi_tp_rmw *op)
{
  struct lapi_am_notify n = {
    .tgt = op->tgt, .shdlr = op->shdlr, .sinfo = op->sinfo,
    .org_cntr = op->org_cntr,
  };
  int rc;
  pthread_mutex_lock(&ofi.lock);
  struct ofi_xfer *x = noted_xfer(h, OFI_R_RMW, op->tgt, &n, &rc);
  if (x) {
    x->desc = calloc(1, sizeof(struct ofi_rmw));
    if (x->desc == NULL) {
      rc = LAPI_ERR_MEMORY_EXHAUSTED;
    } else {
      rmw_build(x, h, op);
      x->prev = op->prev;
      x->rmw_size = op->size;
    }
  }
  return start_noted(h, x, rc);
}

static void ofi_caps(struct lapi_tp_caps *caps)
{
  caps->max_eager = ofi.up ? ofi.eager_limit : 16384;
  caps->max_pkt = ofi.up ? ofi.buf_size : 65536;
  caps->max_iov = ofi.up ? (uint)ofi.iov_limit : 4;
  caps->strided = 1;
  caps->atomics = 0;
}

const struct lapi_tp_ops lapi_tp_ofi = {
  .name = "ofi",
  .id = LAPI_TP_OFI,
  .init = ofi_tp_init,
  .fini = ofi_tp_fini,
  .caps = ofi_caps,
  .am_send = ofi_am_send,
  .am_counts_outstanding = 1,
  .put = ofi_put,
  .get = ofi_get,
  .rmw = ofi_rmw,
  .progress = ofi_tp_progress,
  .tight = ofi_tp_tight,
  .flush = ofi_tp_flush,
  .sync = ofi_tp_sync,
  .drained = ofi_tp_drained,
  .barrier = ofi_tp_barrier,
};

/* --------------------------------------------------- arrivals (origin) */

void ofi_soon_landed(struct ofi_xfer *x)
{
  int ok = x->nf_status == LAPI_SUCCESS; /* a NAK reported the failure */
  if (x->kind == OFI_K_AM) {
    lapi_am_origin_landed(x->h);
    am_sent(x, x->nf_status);
    if (ok)
      lapi_am_origin_done(x->h, x->task, x->cmpl_cntr);
  } else if (ok) {
    ofi_note_fire(x);
  } else {
    lapi_am_origin_landed(x->h);
    put_sent_failed(x, x->nf_status);
  }
  ofi_xfer_free(x);
}

void ofi_send_fin(uint peer, uint16_t hndl, uint64_t id, int status)
{
  struct ofi_fin f;
  memset(&f, 0, sizeof f);
  ofi_hdr_init(&f.h, OFI_M_FIN, hndl, id, sizeof f);
  f.status = status;
  ofi_send_small(peer, &f, sizeof f);
}

void ofi_on_fin(const struct ofi_fin *f)
{
  struct ofi_xfer *x = ofi_xfer_find(f->h.id);
  if (x == NULL || x->peer != f->h.src || x->role == OFI_R_SINK) {
    ofi.st.stale_pkts++;
    return;
  }
  int ok = f->status == LAPI_SUCCESS;
  if (x->role == OFI_R_GET && x->get_write && ok) {
    /* The target wrote our buffer (OFI_GET_WRITE). */
    lapi_am_stat_recv(x->h, LAPI_TP_OFI, x->data_len);
    ofi_note_fire(x);
    if (x->holds_credit)
      ofi_credit_release(x->peer);
    ofi_xfer_free(x);
    return;
  }
  if (x->role != OFI_R_SOURCE && ok) {
    /* Success is answered by data (RTS, RMW_REPLY) or, for a write, by
     * the FIN above: this one is no answer at all. */
    ofi_bad_pkt("FIN of success for a GET or RMW", f->h.src);
    return;
  }
  if (x->role != OFI_R_SOURCE) {
    /* A GET or RMW the target refused (its handle is not open), or a
     * GET whose write into our buffer failed there (OFI_GET_WRITE): as
     * a failed read here. */
    int unwritten = x->get_write && f->status == LAPI_ERR_RECV_INCOMP;
    ofi_report(x->h, f->status, x->role == OFI_R_GET ? GET_ERR : RMW_ERR,
               x->task, unwritten ? "the target could not write the data "
                                    "into the origin buffer"
                                  : "the target refused the operation "
                                    "(handle not open there?)");
    x->failed = 1;
    lapi_am_origin_landed(x->h);
    if (x->holds_credit)
      ofi_credit_release(x->peer);
    ofi_xfer_free(x);
    return;
  }
  if (!ok && x->kind != OFI_K_GETREPLY && ofi_status_failed(f->status))
    ofi_remote_fail(x->h, x->kind, x->task, f->status); /* as a NAK */
  switch (x->kind) {
  case OFI_K_AM:
    lapi_am_origin_landed(x->h);
    am_sent(x, f->status);
    if (ok)
      lapi_am_origin_done(x->h, x->task, x->cmpl_cntr);
    break;
  case OFI_K_PUT:
    if (ok) {
      ofi_note_fire(x);
    } else {
      lapi_am_origin_landed(x->h);
      put_sent_failed(x, f->status);
    }
    break;
  case OFI_K_GETREPLY:
    /* We were the GET's target: our memory has been read. */
    if (ok && x->tgt_cntr)
      lapi_cntr_bump(lapi_addr_ptr(x->tgt_cntr), (int)x->task);
    break;
  default:
    break;
  }
  if (x->holds_credit)
    ofi_credit_release(x->peer);
  ofi_xfer_free(x);
}

void ofi_on_pull(const struct ofi_pull *p)
{
  struct ofi_xfer *x = ofi_xfer_find(p->h.id);
  if (x == NULL || x->peer != p->h.src ||
      (x->role != OFI_R_SOURCE && x->role != OFI_R_GET)) {
    ofi.st.stale_pkts++;
    return;
  }
  size_t size = p->stream == OFI_STREAM_DESC ? x->desc_len
                : x->role == OFI_R_SOURCE   ? x->data_len
                                            : 0;
  /* Several chunks only for carried DATA (ofi_sink.c, pull_chunks). */
  size_t most = p->stream == OFI_STREAM_DATA && !(p->flags & OFI_PULL_REF)
                    ? (size_t)OFI_PULL_BATCH_MAX * ofi.chunk
                    : ofi.chunk;
  if (p->stream > OFI_STREAM_DESC || p->len == 0 || p->len > most ||
      p->offset > size || p->len > size - p->offset) {
    ofi_bad_pkt("PULL outside the stream", p->h.src);
    return;
  }
  if (x->staged_whole)
    ofi.peers[x->peer].staged_off = 1; /* it cannot read our arena */
  if (ofi_ref_answer(x, p) == 0)
    return; /* packed into a stage the sink copies from */
  /* One DATA per chunk, each packed just before it is sent, or sent from
   * the source's memory where it is one piece (a GENERIC Amsendv that the
   * target's header handler scattered into pieces too small to read). */
  const void *zc;
  for (size_t done = 0; done < p->len;) {
    size_t n = p->len - done < ofi.chunk ? p->len - done : ofi.chunk;
    struct ofi_buf *b = ofi_buf_get();
    if (b == NULL) {
      struct ofi_pull rest = *p; /* the chunks not sent yet */
      rest.offset += done;
      rest.len -= (uint32_t)done;
      ofi_owe_pull(&rest); /* answered once a buffer is free */
      return;
    }
    struct ofi_data *d = ofi_pkt_init(b, OFI_M_DATA, p->h.hndl, p->sink,
                                      sizeof *d + n);
    d->offset = p->offset + done;
    d->stream = p->stream;
    d->flags = 0;
    if (p->stream == OFI_STREAM_DESC)
      memcpy(d + 1, x->desc + d->offset, n);
    else if ((zc = zc_range(x->src, d->offset, n)) != NULL)
      zc_attach(b, zc, n, NULL, 0, NULL); /* counters wait for the FIN */
    else
      lapi_vec_pack(x->src, d + 1, d->offset, n);
    if (__builtin_expect(ofi_dropdata_at, 0) && ofi_dropdata_now(x->peer))
      ofi_buf_put(b); /* the test hook: lost on the way */
    else
      ofi_send(b, x->peer, 0);
    done += n;
  }
}

void ofi_on_rmw_reply(const struct ofi_rmw_reply *r)
{
  struct ofi_xfer *x = ofi_xfer_find(r->h.id);
  if (x == NULL || x->role != OFI_R_RMW || x->peer != r->h.src) {
    ofi.st.stale_pkts++;
    return;
  }
  if (r->status == LAPI_SUCCESS) {
    lapi_rmw_store_prev(x->prev, x->rmw_size, (long long)r->prev);
    lapi_am_stat_recv(x->h, LAPI_TP_OFI, (size_t)x->rmw_size);
    ofi_note_fire(x);
  } else {
    lapi_am_origin_landed(x->h);
  }
  if (x->holds_credit)
    ofi_credit_release(x->peer);
  ofi_xfer_free(x);
}
