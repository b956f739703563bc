/*
 * ofi_direct.c - a small Amsend delivered by the thread that polled it in.
 *
 * In polling mode the application thread that waits in LAPI runs the
 * handlers anyway; in interrupt mode it is an MPE thread as much as the
 * dispatcher, and runs what it reads itself rather than wake the
 * dispatcher for it.  A SHORT packet that such a thread reads from the CQ
 * in its own progress call (ofi_tp_progress, tight polling) need not
 * become a transfer record in the handle's queue, to be popped by the
 * same thread a moment later: it is copied to the thread's slot, and
 * once ofi.lock is released its header handler, the copy of its data,
 * its completion handler and tgt_cntr run right there.  That goes
 * through lapi_dispatch_run_now, so only when the handle's queue is empty
 * and its lock is free (the handlers of a handle still run one at a
 * time); otherwise, and for LAPI_DROP_PKT, the message joins the queue
 * as any other.  LAPI orders no messages, so one that overtakes a queued
 * one breaks no promise.
 * The end of the message (its count for the acknowledgement and in the
 * statistics, or its NAK, and the sender's sign of life for the
 * watchdog) and the repost of its receive buffer are owed,
 * not done, on the way back to the waiter: whoever takes ofi.lock next
 * settles them (ofi_direct_flush), in a ping-pong the thread itself
 * right after it injected its answer, off the answer's path (a
 * statistics query settles them first: the tp sync op).  A lock and a
 * fi_recv less
 * between the arrival and the answer; the acknowledgement rides one
 * packet later.  Every pass of any thread (the progress thread's 1 ms
 * slices while a thread polls, the pass that ends a left registration)
 * settles them too, so none waits long.
 * Measured: docs/PROTOCOL.md, "Progress".
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bulk_copy.h"
#include "transport/ofi/ofi.h"

/* Largest packet a slot holds (bigger ones take the queue): every
 * SHORT on shm (its inject size).  512 before: a 1 KiB Amsend
 * ping-pong took the queue, 2.56 against 1.36 us a half round trip
 * (4000 bytes: 4.28 against 2.01; docs/PERFORMANCE.md, "Session 18"). */
#define OFI_DIRECT_MAX 4096

/* FREE -> FULL (take, under ofi.lock) -> RUNNING (deliver) -> ENDED,
 * its end owed (or FREE if it was queued) -> FREE (ofi_direct_flush,
 * under ofi.lock). */
enum { SLOT_FREE = 0, SLOT_FULL, SLOT_RUNNING, SLOT_ENDED };

struct direct_slot {
  struct lapi_item it; /* first: the item is the slot */
  struct lapi_hndl *h;
  struct direct_slot *next; /* every thread's slot (`slots`) */
  size_t len;
  int state; /* atomic: ENDED is set without ofi.lock */
  int retry; /* the header handler said LAPI_DROP_PKT */
  int end_status;
  int end_delivered;
  size_t end_bytes; /* for the statistics */
  unsigned gen; /* the endpoint life the packet came in on */
  unsigned char pkt[OFI_DIRECT_MAX] __attribute__((aligned(8)));
};

/* Per thread; allocated on first use, so that a CPE thread's TLS (its
 * LDM) does not grow, and freed when the thread ends (slot_key). */
static __thread __attribute__((tls_model("initial-exec")))
struct direct_slot *slot;
__thread int ofi_direct_armed __attribute__((tls_model("initial-exec")));
__thread int ofi_direct_held __attribute__((tls_model("initial-exec")));
static pthread_key_t slot_key;
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;
static int slot_key_ok;
static struct direct_slot *slots; /* under ofi.lock */
int ofi_direct_owing; /* atomic: a slot may be ENDED */

static void end_owed(struct direct_slot *sl);

/* A thread ends: settle its slot and forget it. */
static void slot_free(void *arg)
{
  struct direct_slot *sl = arg;
  pthread_mutex_lock(&ofi.lock);
  if (__atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) == SLOT_ENDED)
    end_owed(sl);
  for (struct direct_slot **pp = &slots; *pp; pp = &(*pp)->next)
    if (*pp == sl) {
      *pp = sl->next;
      break;
    }
  pthread_mutex_unlock(&ofi.lock);
  free(sl);
}

static void slot_key_make(void)
{
  slot_key_ok = pthread_key_create(&slot_key, slot_free) == 0;
}

/* Under ofi.lock. */
static struct direct_slot *slot_new(void)
{
  pthread_once(&slot_once, slot_key_make);
  if (!slot_key_ok)
    return NULL;
  struct direct_slot *sl = calloc(1, sizeof *sl);
  if (sl && pthread_setspecific(slot_key, sl) != 0) {
    free(sl);
    sl = NULL;
  }
  if (sl) {
    sl->next = slots;
    slots = sl;
  }
  return sl;
}

int ofi_direct_take(const struct ofi_short *s, size_t len)
{
  if (!ofi_direct_armed || len > OFI_DIRECT_MAX || !ofi.direct)
    return 0;
  struct lapi_hndl *h = ofi_hndl(s->h.hndl);
  /* Interrupt mode too: the thread that waits for this message would
   * otherwise post it and wake the dispatcher to run it, a thread switch
   * (~5 us here) on every message a waiter reads.  Not a CPE task's
   * handle: its handlers run on the dispatcher only. */
  if (h == NULL || __atomic_load_n(&h->cpe, __ATOMIC_RELAXED) >= 0)
    return 0; /* refused by the queue's path */
  if (slot == NULL && (slot = slot_new()) == NULL)
    return 0;
  if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == SLOT_ENDED)
    end_owed(slot);
  if (__atomic_load_n(&slot->state, __ATOMIC_RELAXED) != SLOT_FREE)
    return 0; /* one at a time (and none while one runs) */
  bulk_copy(slot->pkt, s, len);
  slot->len = len;
  slot->h = h;
  slot->gen = ofi.gen;
  __atomic_store_n(&slot->state, SLOT_FULL, __ATOMIC_RELAXED);
  ofi_direct_held = 1;
  return 1;
}

/* The end of a message, as the queue's path ends it: counted for the
 * acknowledgement, or a NAK to the origin if it failed here.  Under
 * ofi.lock; an end of an endpoint life gone by is dropped with it. */
static void end_owed(struct direct_slot *sl)
{
  const struct ofi_short *s = (const struct ofi_short *)sl->pkt;
  if (ofi.up && sl->gen == ofi.gen) {
    ofi.peers[s->h.src].last_rx_ms = ofi_now_ms(); /* not stamped in */
    if (!ofi_status_failed(sl->end_status))
      lapi_am_stat_recv(sl->h, LAPI_TP_OFI, sl->end_bytes);
    ofi.st.direct++;
    if (sl->len > ofi.st.direct_largest)
      ofi.st.direct_largest = sl->len;
    if (sl->end_delivered)
      ofi.st.eager++;
    if (!ofi_status_failed(sl->end_status))
      ofi_nofin_end(s->h.src, (uint32_t)s->h.id);
    else
      ofi_nofin_fail(s->h.src, s->h.hndl, (uint32_t)s->h.id, OFI_K_AM,
                     sl->end_status);
  }
  __atomic_store_n(&sl->state, SLOT_FREE, __ATOMIC_RELEASE);
}

void ofi_direct_flush(void)
{
  if (ofi.ack_owed)
    ofi_ack_settle();
  while (ofi.repost_owed) {
    struct ofi_buf *b = ofi.repost_owed;
    ofi.repost_owed = b->next;
    ofi_repost(b);
  }
  /* A flag, not a count: plain stores on the deliverer's path.  One
   * that ends after the exchange sets it again for the next flush. */
  if (__atomic_load_n(&ofi_direct_owing, __ATOMIC_ACQUIRE) == 0 ||
      __atomic_exchange_n(&ofi_direct_owing, 0, __ATOMIC_ACQ_REL) == 0)
    return;
  for (struct direct_slot *sl = slots; sl; sl = sl->next)
    if (__atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) == SLOT_ENDED)
      end_owed(sl);
}

static void direct_end(struct direct_slot *sl, int delivered, int status)
{
  sl->end_delivered = delivered;
  sl->end_status = status;
}

/* Run by lapi_dispatch_run_now with the handle's lock held. */
static void direct_run(struct lapi_item *it)
{
  struct direct_slot *sl = (struct direct_slot *)it;
  const struct ofi_short *s = (const struct ofi_short *)sl->pkt;
  size_t head = sizeof *s + ofi_align8(s->uhdr_len);
  unsigned char *data = sl->pkt + head;
  struct lapi_am_msg m;
  memset(&m, 0, sizeof m);
  m.h = sl->h;
  m.src = (int)ofi_src_task(&s->h);
  m.hdr_hdl = ofi_hdl_decode(s->hdr_hdl, (uint32_t)(s->h.id >> 32));
  m.uhdr = s->uhdr_len ? sl->pkt + sizeof *s : NULL;
  m.uhdr_len = s->uhdr_len;
  m.msg_len = sl->len - head;
  m.one_pkt = m.msg_len ? data : NULL;
  m.tgt_cntr = s->tgt_cntr;
  struct lapi_am_dest d;
  lapi_am_recv_header(&m, &d);
  switch (d.action) {
  case LAPI_AM_RETRY:
    sl->retry = 1; /* queued by ofi_direct_deliver, run again later */
    return;
  case LAPI_AM_FAILED:
    direct_end(sl, 0, d.error);
    return;
  case LAPI_AM_DISCARD:
  case LAPI_AM_DELIVER:
    sl->end_bytes = ofi_am_bytes(&d);
    ofi_am_land(&m, &d, data);
    direct_end(sl, d.action == LAPI_AM_DELIVER, LAPI_SUCCESS);
    return;
  }
}

void ofi_direct_deliver(void)
{
  struct direct_slot *sl = slot;
  ofi_direct_held = 0;
  if (sl == NULL || __atomic_load_n(&sl->state, __ATOMIC_RELAXED) != SLOT_FULL)
    return;
  __atomic_store_n(&sl->state, SLOT_RUNNING, __ATOMIC_RELAXED);
  sl->retry = 0;
  sl->it.run = direct_run;
  sl->it.cancel = NULL;
  const struct ofi_short *s = (const struct ofi_short *)sl->pkt;
  sl->it.src = (int)ofi_src_task(&s->h);
  if (!lapi_dispatch_run_now(sl->h, &sl->it) || sl->retry) {
    pthread_mutex_lock(&ofi.lock);
    if (sl->gen == ofi.gen) {
      ofi.peers[s->h.src].last_rx_ms = ofi_now_ms(); /* not stamped in */
      ofi_short_queue(s, sl->len);
    }
    __atomic_store_n(&sl->state, SLOT_FREE, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&ofi.lock);
    return;
  }
  /* the run ended it (a handler never returns without an end) */
  __atomic_store_n(&sl->state, SLOT_ENDED, __ATOMIC_RELEASE);
  __atomic_store_n(&ofi_direct_owing, 1, __ATOMIC_RELEASE);
}
