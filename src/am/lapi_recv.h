/*
 * lapi_recv.h - what src/am offers to transports.
 *
 * A transport moves bytes; this is how it hands the LAPI meaning back to
 * the core, whatever the wire:
 *
 *   target side   lapi_am_post()          queue work for the handle's MPE
 *                 lapi_am_recv_header()   resolve and run the header
 *                                         handler, check its answer
 *                 (the transport moves the bytes it was told to)
 *                 lapi_am_recv_complete() completion handler, tgt_cntr
 *   origin side   lapi_am_origin_landed() the data is at the target
 *                                         (LAPI_Fence waits for this)
 *                 lapi_am_origin_sent()   origin buffers reusable: send
 *                                         completion handler, org_cntr
 *                 lapi_am_origin_done()   target completed: cmpl_cntr
 *
 * Everything here except lapi_am_post and the counter/statistics helpers
 * runs in MPE context: on the dispatcher thread, or on the application
 * thread that polls a handle in polling mode, never on a sender.
 */
#ifndef LAPI_RECV_H
#define LAPI_RECV_H

#include <stddef.h>
#include <stdint.h>

#include <lapi.h>

#include "transport/tp.h"

struct lapi_hndl;

/* ------------------------------------------------------------ work items */

/*
 * A unit of work for a handle's MPE.  run() owns the item (frees it);
 * cancel() releases it without delivering anything when LAPI_Purge_totask
 * names its origin (NULL: the item cannot be cancelled).  Embed this as
 * the first member of the transport's own record.
 */
struct lapi_item {
  struct lapi_item *next;
  void (*run)(struct lapi_item *it);
  void (*cancel)(struct lapi_item *it);
  int src; /* origin task */
};

/* Queue it on h; the dispatcher or a polling thread will run it. */
void lapi_am_post(struct lapi_hndl *h, struct lapi_item *it);

/*
 * Flow control for a sender about to post new messages to h: in
 * interrupt mode, while LAPI_AM_QUEUE_MAX items wait, a plain sender
 * waits until the dispatcher has run half of them.  It never waits in
 * polling mode (it may be the only thread that polls) nor in MPE context
 * (the dispatcher, a holder of h's lock), where waiting could deadlock.
 */
#define LAPI_AM_QUEUE_MAX 4096
void lapi_am_throttle(struct lapi_hndl *h);

/* ------------------------------------------------------- active messages */

/* An arrived active message as the transport describes it. */
struct lapi_am_msg {
  struct lapi_hndl *h;          /* target handle instance */
  int src;                      /* origin task */
  uint64_t hdr_hdl;             /* handler address or Addr_set index */
  void *uhdr;                   /* valid until recv_complete returns */
  uint uhdr_len;
  size_t msg_len;               /* data bytes the origin sends */
  void *one_pkt;                /* Amsend: the data if already here */
  const lapi_vec_t *org_shape;  /* Amsendv: the origin's type, num_vecs,
                                   len[] and strided block (addresses are
                                   not read); NULL for Amsend */
  ulong *len_vec;               /* Amsendv: given to the vhdr handler */
  uint64_t tgt_cntr;
};

enum lapi_am_action {
  LAPI_AM_DELIVER, /* move `bytes` into buf / vec */
  LAPI_AM_DISCARD, /* no data moves (BURY, NULL buffer, 0 bytes) */
  LAPI_AM_RETRY,   /* LAPI_DROP_PKT: post the message again later */
  LAPI_AM_FAILED,  /* reported to the error handler; drop everything */
};

/* What the header handler decided. */
struct lapi_am_dest {
  enum lapi_am_action action;
  void *buf;               /* Amsend: contiguous target */
  lapi_vec_t *vec;         /* Amsendv: checked target vector */
  size_t bytes;            /* bytes to move when DELIVER */
  compl_hndlr_t *comp_h;
  void *uinfo;
  int ret_flags;
  int error;               /* FAILED: the code the error handler got */
};

void lapi_am_recv_header(struct lapi_am_msg *m, struct lapi_am_dest *d);

/* After the data landed (DELIVER) or not (DISCARD): the completion
 * handler, then tgt_cntr.  Not called for FAILED or RETRY. */
void lapi_am_recv_complete(struct lapi_am_msg *m, struct lapi_am_dest *d);

void lapi_am_origin_landed(struct lapi_hndl *h);
/* n messages of h landed at once (a transport completing a run of them). */
void lapi_am_origin_landed_n(struct lapi_hndl *h, long n);
void lapi_am_origin_sent(struct lapi_hndl *h, uint tgt, lapi_cntr_t *org_cntr,
                         scompl_hndlr_t *shdlr, void *sinfo, int reason);
void lapi_am_origin_done(struct lapi_hndl *h, uint tgt,
                         lapi_cntr_t *cmpl_cntr);

/* --------------------------------------------- one-sided completions */

/*
 * Origin notification of a put, get or rmw: an optional handler
 * (LAPI_Xfer's shdlr or chndlr) that must run in MPE context, then
 * org_cntr, then cmpl_cntr.  Reserve before starting the operation (the
 * only step that can fail, with LAPI_ERR_MEMORY_EXHAUSTED), fire when it
 * completed: without a handler the counters move at once, with one an
 * item is posted to the handle's MPE.
 */
struct lapi_am_notify {
  uint tgt;
  scompl_hndlr_t *shdlr;
  void *sinfo;
  compl_hndlr_t *chndlr;
  void *cinfo;
  lapi_cntr_t *org_cntr;
  lapi_cntr_t *cmpl_cntr;
  struct lapi_item *item; /* set by reserve when a handler must run */
};

int lapi_am_notify_reserve(struct lapi_am_notify *n);
void lapi_am_notify_fire(struct lapi_hndl *h, struct lapi_am_notify *n);
/* The operation failed once the origin's memory was free again (a put
 * whose transfer failed): org_cntr moves and the send handler hears
 * reason, in MPE context, in the item reserved for the handlers (so
 * nothing is allocated on the way and nothing can be lost); chndlr and
 * cmpl_cntr never.  Takes n->item when it carries the send handler. */
void lapi_am_notify_fail(struct lapi_hndl *h, struct lapi_am_notify *n,
                         int reason);
/* The same as `count` fires of n, which has no handler (n->item NULL):
 * each counter moves once, by count. */
void lapi_am_notify_fire_n(struct lapi_hndl *h, const struct lapi_am_notify *n,
                           int count);

/* ------------------------------------------------------------- helpers */

/* +1 on a counter, on behalf of task src (LAPI_Setcntr_wstatus). */
void lapi_cntr_bump(lapi_cntr_t *c, int src);
/* +n in one step: n bumps on behalf of the same task. */
void lapi_cntr_add(lapi_cntr_t *c, int src, int n);

/* Statistics of handle h: one operation of `bytes` sent or received. */
void lapi_am_stat_sent(struct lapi_hndl *h, enum lapi_tp_id tp, size_t bytes);
void lapi_am_stat_recv(struct lapi_hndl *h, enum lapi_tp_id tp, size_t bytes);
/* msgs operations of `bytes` in all received. */
void lapi_am_stat_recv_n(struct lapi_hndl *h, enum lapi_tp_id tp,
                         unsigned long msgs, size_t bytes);

/* An error found while delivering: to the handle's err_hndlr, or logged. */
void lapi_am_async_error(struct lapi_hndl *h, int code, lapi_err_t type,
                         int src, const char *func, int line,
                         const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

#define LAPI_ASYNC_ERROR(h, code, type, src, ...)                        \
  lapi_am_async_error((h), (code), (type), (src), __func__, __LINE__,    \
                      __VA_ARGS__)

#endif /* LAPI_RECV_H */
