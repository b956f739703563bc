/*
 * ofi_progress.c - the progress thread: the only reader of the CQ.
 *
 * It turns completions into transport work under ofi.lock (packets are
 * parsed and copied out, receive buffers reposted at once, RMA reads and
 * pulls continued, FINs and the acknowledgement counts every packet
 * carries turned into counter increments and credits) and hands
 * everything LAPI means to run in MPE context (header and completion
 * handlers, send completion handlers, error handlers) to the handle's
 * dispatcher as work items.  So the application's threads and the
 * dispatcher never poll the wire, and a thread that blocks (a plain
 * LAPI_Waitcntr, a bootstrap barrier) never stops the network.
 *
 * Idle, it blocks: with a CQ wait fd (tcp;ofi_rxm, sockets, net) in
 * poll() on that fd and an eventfd senders use to wake it; without one
 * (shm, udp;ofi_rxd) it naps on a futex word with a growing sleep (50 us
 * to 1 ms while transfers are in flight, up to 20 ms when nothing is),
 * and senders wake it the same way.  docs/PROTOCOL.md has the numbers.
 *
 * Faults: a failed completion names its peer; so does silence: a peer we
 * wait for that sent nothing for TIMEOUT/4 gets a PING (answered by its
 * progress thread, not its application), and one silent for TIMEOUT
 * seconds (LAPI_Qenv TIMEOUT, the smallest of the served handles) is
 * declared gone; silence counts from the pass that first found us
 * waiting for it if that is later than its last packet.  A peer that
 * holds messages of ours not acknowledged yet (ofi_ack.c) is watched the
 * same way, and asked about them when they did not move for a pass.  Every
 * transfer with a gone peer fails: the origin's error handler hears of it,
 * its counters never move, and new operations to that task return
 * LAPI_ERR_NO_CONNECTIVITY.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "transport/boot/boot.h"
#include "transport/ofi/ofi.h"

#define CQ_BATCH 32
#define NAP_MIN_US 50
#define NAP_BUSY_US 1000
#define NAP_IDLE_US 20000
#define WATCH_MS 250
#define IDLE_MS 1000 /* longest sleep: a transfer begun meanwhile is watched */
#define POLL_GAP_NS 2000

/* The thread is about to block or blocks.  Written under ofi.lock; read
 * by kickers under it, and by LAPI_Term's flush loop without it (which
 * kicks again every ms): atomic, relaxed. */
static int sleeping;
/* A kick sits in kick_fd that the thread has not read yet, or it read it
 * and has not cleared this since: a second write would wake nobody more.
 * The thread clears it by an exchange after the read, before its next
 * pass, so that pass sees what a kicker that skipped its write did
 * before.  (A 16 KiB Put stream in interrupt mode wrote kick_fd once per
 * Put, ~60 system calls a window of 64.) */
static int kick_pending; /* atomic */

void ofi_kick(void)
{
  if (!ofi.thread_on)
    return;
  if (ofi_bell_on()) {
    ofi_bell_kick(); /* rings only if the thread sleeps */
    return;
  }
  if (!__atomic_load_n(&sleeping, __ATOMIC_RELAXED))
    return;
  if (ofi.kick_fd >= 0 && ofi.wait_fd >= 0) {
    if (__atomic_exchange_n(&kick_pending, 1, __ATOMIC_SEQ_CST))
      return;
    uint64_t one = 1;
    ssize_t w = write(ofi.kick_fd, &one, sizeof one);
    (void)w;
  } else {
    __atomic_add_fetch(&ofi.kick_word, 1, __ATOMIC_SEQ_CST);
    lapi_futex_wake(&ofi.kick_word, 1);
  }
}

/* ----------------------------------------------------------- packets */

static void pong(const struct ofi_hdr *hd)
{
  struct ofi_hdr r;
  ofi_hdr_init(&r, OFI_M_PONG, hd->hndl, hd->id, sizeof r);
  ofi_send_small(hd->src, &r, sizeof r);
}

/* A checked packet's work; its sender, or -1 if the checks dropped it. */
static int packet_run(const unsigned char *mem, size_t len)
{
  const struct ofi_hdr *hd = (const struct ofi_hdr *)mem;
  if (ofi_pkt_check(hd, len))
    return -1;
  struct ofi_peer *p = &ofi.peers[hd->src];
  LAPI_LOG(LAPI_LOG_TRACE, "ofi: recv type %d from %u, %zu B, id %llx",
           hd->type, hd->src, len, (unsigned long long)hd->id);
  if (p->failed) {
    ofi.st.stale_pkts++; /* declared gone: nothing it says is used */
    return (int)hd->src;
  }
  if (ofi_ack_in(hd) != 0)
    return (int)hd->src;
  switch (hd->type) {
  case OFI_M_SHORT: ofi_on_short((const struct ofi_short *)mem, len); break;
  case OFI_M_RTS: ofi_on_rts((const struct ofi_rts *)mem, len); break;
  case OFI_M_GET: ofi_on_get((const struct ofi_get *)mem, len); break;
  case OFI_M_RMW: ofi_on_rmw((const struct ofi_rmw *)mem); break;
  case OFI_M_RMW_REPLY:
    ofi_on_rmw_reply((const struct ofi_rmw_reply *)mem);
    break;
  case OFI_M_PULL: ofi_on_pull((const struct ofi_pull *)mem); break;
  case OFI_M_DATA: ofi_on_data((const struct ofi_data *)mem, len); break;
  case OFI_M_FIN: ofi_on_fin((const struct ofi_fin *)mem); break;
  case OFI_M_FIN_LIST:
    ofi_on_fin_list((const struct ofi_fin_list *)mem, len);
    break;
  case OFI_M_PING: pong(hd); break;
  case OFI_M_ACK_REQ: ofi_on_ack_req(hd); break;
  case OFI_M_ASK: ofi_on_ask((const struct ofi_ask *)mem); break;
  case OFI_M_UNKNOWN: ofi_on_unknown((const struct ofi_ask *)mem); break;
  case OFI_M_BARRIER: ofi_on_barrier(hd); break;
  default: break; /* PONG, ACK: last_rx_ms and the counts are all */
  }
  return (int)hd->src;
}

static void packet(const unsigned char *mem, size_t len)
{
  int held = ofi_direct_held;
  int src = packet_run(mem, len);
  /* The watchdog's sign of life.  A SHORT this thread kept for direct
   * delivery is stamped when its end is settled (ofi_direct.c): a clock
   * read less between its arrival and the application's answer. */
  if (src >= 0 && (held || !ofi_direct_held))
    ofi.peers[src].last_rx_ms = ofi_now_ms();
}

void ofi_repost(struct ofi_buf *b)
{
  int rc;
  for (int tries = 0;; tries++) {
    rc = (int)fi_recv(ofi.ep, b->mem, ofi.buf_size, b->desc, FI_ADDR_UNSPEC,
                      &b->c.fi);
    if (rc != -FI_EAGAIN || tries > 1000)
      break;
    fi_cq_read(ofi.cq, NULL, 0); /* progress, then try again */
  }
  if (rc)
    LAPI_LOG(LAPI_LOG_ASYNC, "ofi: a receive buffer could not be posted "
             "again: %s", fi_strerror(-rc));
}

/* Under ofi.lock: the receive buffer x held (ofi_sink.c, rts_take)
 * goes back to the provider, exactly once.  While its own completion is
 * still being handled (the transfer ended at once) that completion
 * reposts it; after LAPI_Term closed the endpoint it went with
 * ofi.recv_bufs. */
void ofi_rx_release(struct ofi_xfer *x)
{
  struct ofi_buf *b = x->rx_buf;
  if (b == NULL)
    return;
  x->rx_buf = NULL;
  x->p_data = NULL;
  ofi.rx_held--;
  if (b == ofi.rx_cur)
    ofi.rx_kept = 0;
  else if (ofi.ep)
    ofi_repost(b);
}

static void completion(void *ctx, size_t len)
{
  struct ofi_ctx *c = ctx;
  if (c == NULL)
    return;
  switch (c->kind) {
  case OFI_C_SEND:
    ofi.tx_posted--;
    ofi.peers[((struct ofi_buf *)c)->peer].tx_posted--;
    ofi_buf_put((struct ofi_buf *)c);
    break;
  case OFI_C_RECV: {
    struct ofi_buf *b = (struct ofi_buf *)c;
    int held = ofi_direct_held;
    ofi.rx_cur = b;
    ofi.rx_kept = 0;
    packet(b->mem, len);
    ofi.rx_cur = NULL;
    if (ofi.rx_kept) {
      ofi.rx_kept = 0; /* an eager AM reads its data from it: its
                          transfer reposts it (ofi_rx_release) */
    } else if (!held && ofi_direct_held) {
      /* delivered from a copy: the repost can wait (ofi_direct.c) */
      b->next = ofi.repost_owed;
      ofi.repost_owed = b;
    } else {
      ofi_repost(b);
    }
    break;
  }
  case OFI_C_READ:
    ofi_on_read_done((struct ofi_read *)c, 0);
    break;
  default:
    break;
  }
}

static void completion_error(void)
{
  struct fi_cq_err_entry e;
  memset(&e, 0, sizeof e);
  if (fi_cq_readerr(ofi.cq, &e, 0) != 1)
    return;
  struct ofi_ctx *c = e.op_context;
  char why[160];
  snprintf(why, sizeof why, "%s", fi_strerror(e.err));
  if (c == NULL) {
    LAPI_LOG(LAPI_LOG_ASYNC, "ofi: completion error without a context: %s",
             why);
    return;
  }
  switch (c->kind) {
  case OFI_C_SEND: {
    struct ofi_buf *b = (struct ofi_buf *)c;
    uint peer = b->peer;
    ofi.tx_posted--;
    ofi.peers[peer].tx_posted--;
    ofi_buf_put(b);
    ofi_peer_fail(peer, LAPI_ERR_SEND_INCOMP, why);
    break;
  }
  case OFI_C_RECV:
    /* A message longer than our buffers (FI_ETRUNC) or a receive error:
     * nothing of it is used. */
    ofi_bad_pkt(why, UINT32_MAX);
    ofi_repost((struct ofi_buf *)c);
    break;
  case OFI_C_READ: {
    /* The provider failed our RMA (not a CMA read: those never come
     * here).  tcp;ofi_rxm says FI_ECANCELED when it tore the connection
     * down, e.g. after a key it did not know, and packets of ours on it
     * (a FIN) went with it, unreported, while a new connection carries
     * PINGs on: as after a failed send, the peer is gone, or its
     * transfer would wait for our FIN forever. */
    struct ofi_xfer *x = ofi_xfer_find(((struct ofi_read *)c)->xid);
    if (x && !x->failed) {
      char what[200];
      snprintf(what, sizeof what, "its RMA failed: %s", why);
      ofi_peer_fail(x->peer, LAPI_ERR_RECV_INCOMP, what);
    }
    ofi_on_read_done((struct ofi_read *)c, e.err ? e.err : FI_EIO);
    break;
  }
  default:
    break;
  }
}

/* Read what the CQ has; returns the completions handled. */
static int drain_cq(void)
{
  struct fi_cq_msg_entry ev[CQ_BATCH];
  int total = ofi.lane ? ofi_lane_drain(packet) : 0;
  for (int round = 0; round < 8; round++) {
    ssize_t n = fi_cq_read(ofi.cq, ev, CQ_BATCH);
    if (n == -FI_EAVAIL) {
      completion_error();
      total++;
      continue;
    }
    if (n <= 0)
      break;
    for (ssize_t k = 0; k < n; k++)
      completion(ev[k].op_context, ev[k].len);
    total += (int)n;
    if (n < CQ_BATCH)
      break;
  }
  if (total == 0 && ofi.soon_unasked)
    ofi_soon_ask(); /* whoever polled has nothing else to do */
  return total;
}

/* ------------------------------------------------------------- faults */

struct fault_item {
  struct lapi_item it;
  struct lapi_hndl *h;
  int code;
  lapi_err_t type;
  uint peer;
  char why[160];
};

static void fault_run(struct lapi_item *it)
{
  struct fault_item *f = (struct fault_item *)it;
  LAPI_ASYNC_ERROR(f->h, f->code, f->type, (int)f->peer, "task %u: %s",
                   f->peer, f->why);
  free(f);
}

void ofi_report(struct lapi_hndl *h, int code, lapi_err_t type, uint peer,
                const char *why)
{
  struct fault_item *f = calloc(1, sizeof *f);
  if (f == NULL) {
    LAPI_LOG(LAPI_LOG_ASYNC, "ofi: task %u: %s", peer, why);
    return;
  }
  f->h = h;
  f->code = code;
  f->type = type;
  f->peer = peer;
  snprintf(f->why, sizeof f->why, "%s", why);
  f->it.run = fault_run;
  f->it.src = (int)peer;
  lapi_am_post(h, &f->it);
}

void ofi_peer_fail(uint peer, int code, const char *why)
{
  struct ofi_peer *p = &ofi.peers[peer];
  if (p->failed)
    return;
  p->failed = code;
  LAPI_LOG(LAPI_LOG_INFO, "ofi: task %u declared gone: %s", peer, why);
  /* Tell every served handle once, in MPE context; count the fault so
   * that counter waits stop waiting for it (lapi_cntr.c). */
  for (unsigned i = 0; i < lapi_hndl_limit(); i++) {
    if (!ofi.hmap[i])
      continue;
    struct lapi_hndl *h = ofi.hmap[i];
    __atomic_add_fetch(&h->faults, 1, __ATOMIC_SEQ_CST);
    char msg[200];
    snprintf(msg, sizeof msg, "unreachable (%s): its operations fail", why);
    ofi_report(h, code, INT_ERR, peer * ofi.tpc, msg); /* its 1st task */
  }
  ofi_nofin_peer_fail(peer);
  ofi_barrier_peer_failed(peer);
  for (uint32_t s = 0; s < ofi.xcap; s++) {
    struct ofi_xfer *x = ofi.xtab[s];
    if (x && x->peer == peer && !x->failed) {
      if (x->role == OFI_R_SINK)
        ofi_sink_fail(x, code);
      else
        ofi_fail_xfer(x, code);
    }
  }
  lapi_bell_ring(); /* waiters look again */
}

static int64_t last_watch;
static int watch_gap; /* a loop found nothing to watch since the last pass */

static void watchdog(void)
{
  int64_t now = ofi_now_ms();
  if (now - last_watch < WATCH_MS)
    return;
  last_watch = now;
  int64_t limit = 1000L * ofi_timeout_s();
  int64_t ping = limit / 4 > 1000 ? limit / 4 : 1000;
  if (ofi.nf_unacked)
    ofi_ack_watch();
  unsigned char *wait = calloc(ofi.ntasks, 1);
  if (wait == NULL)
    return;
  for (uint32_t s = 0; s < ofi.xcap; s++)
    if (ofi.xtab[s] && !ofi.xtab[s]->failed)
      wait[ofi.xtab[s]->peer] = 1;
  for (uint t = 0; t < ofi.ntasks && ofi.nf_unacked; t++)
    if (ofi.peers[t].nf_next != ofi.peers[t].nf_acked)
      wait[t] = 1; /* our Fence may wait for its acknowledgement */
  if (ofi.bar_waits)
    ofi_barrier_watch(wait); /* a Gfence round waits for its packet */
  for (uint t = 0; t < ofi.ntasks; t++) {
    struct ofi_peer *p = &ofi.peers[t];
    if (!wait[t] || p->failed) {
      p->wait_from_ms = 0;
      continue;
    }
    /* Silence counts from its last packet, but not from before we began
     * to wait for it: a peer we needed nothing from for longer than
     * TIMEOUT (a compute phase) is not gone for that. */
    if (p->wait_from_ms == 0 || watch_gap)
      p->wait_from_ms = now;
    int64_t heard = p->last_rx_ms > p->wait_from_ms ? p->last_rx_ms
                                                    : p->wait_from_ms;
    int64_t quiet = now - heard;
    if (quiet > limit) {
      char why[96];
      snprintf(why, sizeof why, "no answer for %lld s (TIMEOUT)",
               (long long)(quiet / 1000));
      ofi_peer_fail(t, LAPI_ERR_TIMEOUT, why);
    } else if (quiet > ping && now - p->ping_ms > ping) {
      struct ofi_hdr hd;
      ofi_hdr_init(&hd, OFI_M_PING, 0, 0, sizeof hd);
      ofi_send_small(t, &hd, sizeof hd);
      p->ping_ms = now;
    }
  }
  free(wait);
  watch_gap = 0;
  /* PINGs pass on a new connection while an answer lost with the old
   * one never comes: ask about transfers that waited that long. */
  if (ofi.xlive)
    ofi_ask_watch(now, ping);
  if (ofi.nf_unacked)
    ofi_nofin_ask_watch(now, ping);
}

/* CGs that exited without LAPI_Term, as the launcher reports them (the
 * lapirun exchange's GONE): a peer we only wait to hear from, with
 * nothing outstanding toward it, is watched by nobody else, so a
 * LAPI_Waitcntr for its message would wait forever.  Asked at most every
 * LEAVERS_MS, when the CQ is empty: a peek at a socket, off the path of
 * any message. */
#define LEAVERS_MS 250
static int64_t last_leavers;

static void leavers_watch(void)
{
  int64_t now = ofi_now_ms();
  if (now - last_leavers < LEAVERS_MS)
    return;
  last_leavers = now;
  struct lapi_boot *b = lapi_boot_get();
  if (b == NULL || b->gone == NULL)
    return;
  int ranks[16], n;
  while ((n = b->gone(b, ranks, 16)) > 0)
    for (int i = 0; i < n; i++)
      if (ranks[i] >= 0 && (uint)ranks[i] < ofi.ntasks &&
          (uint)ranks[i] != ofi.me)
        ofi_peer_fail((uint)ranks[i], LAPI_ERR_TGT_PURGED,
                      "it exited without LAPI_Term (reported by the job's "
                      "exchange)");
}

/* ------------------------------------------------------------ the loop */

static void nap(int us)
{
  int seen = __atomic_load_n(&ofi.kick_word, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&ofi.lock);
  lapi_futex_wait(&ofi.kick_word, seen, us < 1000 ? 1 : us / 1000);
  pthread_mutex_lock(&ofi.lock);
}

/* Application threads polling the CQ in a tight loop (ofi_tp_tight). */
static int tight_pollers; /* atomic */

/* nap(NAP_BUSY_US) while a thread of ours polls the CQ: out of its way,
 * and back under ofi.lock only when the lock is free, unless kicked.
 * The poller takes and drops the lock at every turn; blocked in lock(),
 * we made each of its unlocks a futex wake-up (a system call on its path
 * to the answer) until we won the lock, which took several of its turns. */
static void nap_aside(void)
{
  pthread_mutex_unlock(&ofi.lock);
  for (;;) {
    int seen = __atomic_load_n(&ofi.kick_word, __ATOMIC_SEQ_CST);
    lapi_futex_wait(&ofi.kick_word, seen, NAP_BUSY_US / 1000);
    if (__atomic_load_n(&ofi.stop, __ATOMIC_SEQ_CST) ||
        __atomic_load_n(&tight_pollers, __ATOMIC_SEQ_CST) == 0 ||
        __atomic_load_n(&ofi.kick_word, __ATOMIC_SEQ_CST) != seen) {
      pthread_mutex_lock(&ofi.lock);
      return;
    }
    if (pthread_mutex_trylock(&ofi.lock) == 0)
      return;
  }
}

/* Registrations left behind by tight pollers whose waits ended in
 * polling mode (LAPI_TIGHT_PAUSE): the thread's next wait adopts its own
 * without a lock, a write to the shared bell page or a CQ read; the
 * progress thread, which polls in 1 ms slices while anything is
 * registered, ends one LINGER_MS after it was left.  Meanwhile an
 * arrival waits for the next LAPI call or for that slice: in polling
 * mode nothing runs a handler before the next call anyway.  Every one
 * left must be ended, or peers would never ring us again.
 * Each thread leaves its registration in a word of its own (a slot of
 * `lingering`), by a plain store: the pause is on the way from an
 * arrival back to the application, where a locked add on a shared word
 * cost one more locked instruction per message.  The thread's next START
 * and the progress thread's end take it back by a compare-and-swap, so
 * exactly one of them has it.  A pause reads no clock either: it counts
 * itself in the word's upper half, and the progress thread ends the
 * registration once the word has stayed the same for LINGER_MS by its
 * own clock (so 1 ms slice later at most).  A thread beyond the
 * LINGER_SLOTS first pollers ends its registration at every wait's end
 * (as LAPI_TIGHT_STOP).  A slot stays its thread's for the process's
 * life (a left one of a thread gone is ended as any other). */
#define LINGER_MS 2
#define LINGER_SLOTS 64
#define LINGER_LEFT 1u                    /* low bit: left, nobody polls */
#define LINGER_PAUSE ((uint64_t)1 << 32) /* the pauses, upper half */
struct linger_slot {
  uint64_t word;  /* atomic: LINGER_LEFT | pauses so far */
  unsigned gen;   /* atomic: the endpoint life of a left registration */
} __attribute__((aligned(64))); /* its thread's line alone */
static struct linger_slot lingering[LINGER_SLOTS];
static unsigned lingering_used; /* atomic: slots handed out */
/* The progress thread's: each word as it last saw it, and since when. */
static uint64_t linger_seen[LINGER_SLOTS];
static int64_t linger_seen_ms[LINGER_SLOTS];

static unsigned linger_slots(void)
{
  unsigned n = __atomic_load_n(&lingering_used, __ATOMIC_ACQUIRE);
  return n < LINGER_SLOTS ? n : LINGER_SLOTS;
}

/* Left registrations of this endpoint life (under ofi.lock). */
static int linger_count(void)
{
  int n = 0;
  for (unsigned i = 0, used = linger_slots(); i < used; i++)
    if ((__atomic_load_n(&lingering[i].word, __ATOMIC_ACQUIRE) &
         LINGER_LEFT) &&
        __atomic_load_n(&lingering[i].gen, __ATOMIC_RELAXED) == ofi.gen)
      n++;
  return n;
}

/* Passes in a row in which fi_trywait said events were there and the CQ
 * read after it found none (the thread's; 0 after any completion). */
static int trywait_held;
/* Waits in a row that the wait fd ended at once (or naps taken instead)
 * with nothing read after them (the thread's; 0 after any completion or
 * a wait the fd did not end). */
static int fd_held;

/* The k-th nap in a row: 50 us doubling, at most cap_us. */
static int nap_grown(int k, int cap_us)
{
  int us = NAP_MIN_US << (k < 10 ? k : 10);
  return us < cap_us ? us : cap_us;
}

static int app_polls(void);

/* Reads a kick out of kick_fd, if one came. */
static void kick_clear(const struct pollfd *kick)
{
  if (!(kick->revents & POLLIN))
    return;
  uint64_t v;
  ssize_t r = read(ofi.kick_fd, &v, sizeof v);
  (void)r;
  /* after the read; an exchange, to see what the kickers did */
  __atomic_exchange_n(&kick_pending, 0, __ATOMIC_SEQ_CST);
}

/*
 * Back under ofi.lock after a wait on the fd, out of the way of an
 * application thread that holds it.  Blocked in lock(), we made each of
 * its unlocks a futex wake-up, and on 2 CPUs the woken thread took the
 * CPU of the other CG's application thread (an interrupt-mode stream
 * over tcp ran at about half its polling-mode rate).  So: the lock if it
 * is free; else wait for kicks alone, in 1 ms slices for up to 10 ms
 * while a thread of ours polls the CQ (it reads what woke us), in slices
 * of 100 us for up to 1 ms while none does (a sender inside LAPI), and
 * take the lock as soon as it is free; block for it after that (the
 * watchdog runs under it).  docs/PERFORMANCE.md, "Session 24".
 */
#define ASIDE_SENDER_US 100
#define ASIDE_SENDER_MAX_US 1000
#define ASIDE_POLLER_US 1000
#define ASIDE_POLLER_MAX_US 10000
static void relock_aside(void)
{
  for (int waited = 0;;) {
    if (pthread_mutex_trylock(&ofi.lock) == 0)
      return;
    if (__atomic_load_n(&ofi.stop, __ATOMIC_SEQ_CST))
      break;
    int polls = app_polls();
    if (waited >= (polls ? ASIDE_POLLER_MAX_US : ASIDE_SENDER_MAX_US))
      break;
    int slice = polls ? ASIDE_POLLER_US : ASIDE_SENDER_US;
    struct pollfd kick = {ofi.kick_fd, POLLIN, 0};
    struct timespec ts = {0, (long)slice * 1000};
    ppoll(&kick, 1, &ts, NULL);
    kick_clear(&kick);
    waited += slice;
  }
  pthread_mutex_lock(&ofi.lock);
}

static void wait_fd(int ms)
{
  /* While a thread of ours polls the CQ it finds every arrival itself:
   * waking here as well (the kernel marks the fd on each packet) would
   * only fight it for the lock and a CPU.  Wait for kicks alone then,
   * 1 ms at a time, and look again. */
  int parked = __atomic_load_n(&tight_pollers, __ATOMIC_SEQ_CST) > 0;
  int nap_us = 0;
  if (!parked &&
      fi_trywait(ofi.fabric, (struct fid **)&ofi.cq, 1) != FI_SUCCESS) {
    /* Events are there: read them, no sleep.  While peers may read our
     * memory, always: their RMA reads wake the fd and complete nothing
     * here, and are served only by our reads of the CQ. */
    if (ofi.exposed || trywait_held++ == 0) /* not counted while
                                exposed: it would overflow, nap_grown's
                                shift go negative when exposure ends */
      return;
    /* They were there before the last read as well, and it got none:
     * an event the CQ read does not take.  tcp;ofi_rxm's connection
     * request from a new peer waits in its EQ (which its trywait
     * checks) for its connection progress, which its CQ read runs
     * only every FI_OFI_RXM_CM_PROGRESS_INTERVAL (10 ms): until then
     * the fd stays readable and we looped ~1000 times a ms under
     * ofi.lock.  Nap on kicks alone instead, 50 us growing to 1 ms:
     * packets of connected peers wait at most that long, meanwhile. */
    nap_us = nap_grown(trywait_held - 2, NAP_BUSY_US);
  } else {
    trywait_held = 0;
    /* trywait says all is read, yet the fd ended two waits at once and
     * the reads after them found nothing: it stays readable with nothing
     * for us (the net provider's, once a connection is up: the thread
     * looped ~1e6 times a second, a whole CPU for an idle job).  Nap as
     * without a wait fd instead, kicks still waking us; not while peers
     * may read our memory (as above).  Only while it stays readable: a
     * tcp fd that woke us for what another thread then read is quiet
     * again, and a nap would hold its next arrival (up to 20 ms), as it
     * did until a completion of the progress thread's own (in
     * ofi_calls over tcp, a few times a run). */
    struct pollfd now = {ofi.wait_fd, POLLIN, 0};
    if (!parked && fd_held >= 2 && !ofi.exposed && poll(&now, 1, 0) > 0) {
      nap_us = nap_grown(fd_held - 2,
                         ms >= IDLE_MS ? NAP_IDLE_US : NAP_BUSY_US);
      if (ms >= 0 && nap_us > ms * 1000)
        nap_us = ms * 1000;
      fd_held++;
    }
  }
  pthread_mutex_unlock(&ofi.lock);
  struct pollfd pf[2] = {{parked || nap_us ? -1 : ofi.wait_fd, POLLIN, 0},
                         {ofi.kick_fd, POLLIN, 0}};
  if (nap_us) {
    struct timespec ts = {0, (long)nap_us * 1000};
    ppoll(pf, 2, &ts, NULL);
  } else {
    poll(pf, 2, parked && (ms < 0 || ms > 1) ? 1 : ms);
    if (!parked) /* saturated: counted while exposed, ~1e6 times a s */
      fd_held = pf[0].revents & POLLIN ? fd_held + (fd_held < 64) : 0;
  }
  kick_clear(&pf[1]);
  relock_aside();
}

/* Under ofi.lock: give up the left registrations older than LINGER_MS
 * (unless their thread adopted them meanwhile) and read the CQ, as the
 * threads that left them would have.  1 if it ended one. */
static int linger_end_old(void)
{
  int ended = 0;
  int64_t now = -1;
  for (unsigned i = 0, used = linger_slots(); i < used; i++) {
    struct linger_slot *ls = &lingering[i];
    uint64_t w = __atomic_load_n(&ls->word, __ATOMIC_ACQUIRE);
    if (!(w & LINGER_LEFT))
      continue;
    if (now < 0)
      now = ofi_now_ms();
    if (w != linger_seen[i]) { /* left (again) since we last looked */
      linger_seen[i] = w;
      linger_seen_ms[i] = now;
      continue;
    }
    if (now - linger_seen_ms[i] < LINGER_MS)
      continue;
    /* the count of pauses stays; lost to an adoption: its thread polls */
    if (!__atomic_compare_exchange_n(&ls->word, &w, w & ~(uint64_t)LINGER_LEFT,
                                     0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      continue;
    if (__atomic_load_n(&ls->gen, __ATOMIC_RELAXED) != ofi.gen)
      continue; /* of an endpoint life gone by: counted nowhere now */
    ofi_bell_polled(-1);
    __atomic_sub_fetch(&tight_pollers, 1, __ATOMIC_SEQ_CST);
    ended++;
  }
  if (ended == 0)
    return 0;
  ofi_direct_settle();
  drain_cq();
  return 1;
}

int ofi_tight_registered(void)
{
  return __atomic_load_n(&tight_pollers, __ATOMIC_SEQ_CST);
}

/* An application thread polls the CQ now (a registration left to
 * linger does not count: nobody polls on it). */
static int app_polls(void)
{
  return __atomic_load_n(&tight_pollers, __ATOMIC_SEQ_CST) -
             linger_count() > 0;
}

/* A kick wakes a thread parked beside a poller too (wait_fd, the bell's
 * slices), which then takes the poller's CPU on 2 cores and its lock
 * for a pass the poller makes anyway: over tcp a read issued by a
 * polling thread preempted it once per read.  When the poller stops, the
 * parked thread's next slice (<= 1 ms) looks, as for any arrival. */
void ofi_kick_unpolled(void)
{
  if (app_polls())
    ofi.st.kicks_spared++;
  else
    ofi_kick();
}

/* The packed path's PULLs and DATA need somebody's progress at both
 * ends, and nothing rings us for them without a doorbell or a wait fd
 * (tcp in polling mode): a progress thread napping 1 ms held each one
 * whenever no application thread polled (a trace of a STRIDED stream
 * over tcp;ofi_rxm: about half its time in such gaps).  Poll for them
 * while PULLs of ours are out or peers may PULL from us, unless a
 * thread of ours polls (a registration nobody polls on, left to linger,
 * does not count): two pollers only fight for the lock and the CPUs
 * (a ping-pong got slower). */
static int pull_serve(void)
{
  if ((!ofi.pulls_out && !ofi.pull_sources) || ofi.wait_fd >= 0 ||
      ofi_bell_on())
    return 0;
  return !app_polls();
}

static void *progress_main(void *arg)
{
  (void)arg;
  pthread_setname_np(pthread_self(), "lapi-ofi");
  int idle = 0;
  pthread_mutex_lock(&ofi.lock);
  while (!__atomic_load_n(&ofi.stop, __ATOMIC_SEQ_CST)) {
    ofi_direct_settle();
    int n = drain_cq();
    ofi_send_retry();
    ofi_sink_issue();
    ofi_fail_pending();
    if (ofi.xlive || ofi.nf_unacked || ofi.bar_waits)
      watchdog();
    else
      watch_gap = 1; /* nobody waited for anybody: every wait is new */
    if (n > 0) {
      idle = 0;
      trywait_held = 0;
      fd_held = 0;
      if (ofi.retry_head == NULL) {
        /* let a sender in between two batches */
        pthread_mutex_unlock(&ofi.lock);
        pthread_mutex_lock(&ofi.lock);
      }
      continue;
    }
    leavers_watch();
    int busy = ofi.tx_posted || ofi.retry_head || ofi.xlive ||
               ofi.nf_unacked || ofi.bar_waits;
    /* something waits for a retry, or our own reads complete without a
     * ring: come back soon */
    int again = ofi.retry_head || ofi.owed_head || ofi.ready_head ||
                ofi.reads_posted;
    /* RMA reads in flight either way and no wait object: shm serves a
     * read through the owner's endpoint (the CMA copy runs when the
     * owner progresses) and its answer reaches the reader's CQ without a
     * ring, so a sleep on either side would stall each read for a
     * wake-up.  Poll, yielding, until they are done (FINs end it at the
     * owner, completions at the reader; the watchdog if a peer is gone). */
    int serve = (ofi.exposed || ofi.reads_posted || ofi.ready_head) &&
                ofi.wait_fd < 0;
    int registered = __atomic_load_n(&tight_pollers, __ATOMIC_SEQ_CST) > 0;
    /* Without a bell (tcp in polling mode) a thread of ours that polls
     * serves the reads itself: polling beside it only fought it for the
     * lock and a CPU (docs/PERFORMANCE.md, "Read pieces over tcp"). */
    if (serve && !ofi_bell_on() && app_polls())
      serve = 0;
    serve |= pull_serve();
    if (registered && linger_end_old())
      continue;
    __atomic_store_n(&sleeping, 1, __ATOMIC_RELAXED);
    if (ofi.wait_fd >= 0) {
      wait_fd(again || ofi.tx_posted ? 1 : busy ? WATCH_MS : IDLE_MS);
    } else if (ofi_bell_on() && (idle >= 4 || registered) && !serve) {
      /* A thread of ours polls (or its registration lingers): it reads
       * what comes, and peers do not ring, so look every ms; a yielding
       * poll here would race it for every packet (on one CPU it won them
       * all, each through the queue). */
      ofi_bell_sleep(again || registered ? 1 : busy ? WATCH_MS : IDLE_MS,
                     drain_cq);
    } else if ((idle < 4 && !registered) || serve) {
      idle++;
      pthread_mutex_unlock(&ofi.lock);
      sched_yield();
      pthread_mutex_lock(&ofi.lock);
    } else if (registered) {
      nap_aside(); /* a thread of ours polls: out of its way */
    } else {
      int us = NAP_MIN_US << (idle < 14 ? idle - 4 : 10);
      int cap = busy ? NAP_BUSY_US : NAP_IDLE_US;
      idle++;
      nap(us < cap ? us : cap);
    }
    __atomic_store_n(&sleeping, 0, __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&ofi.lock);
  return NULL;
}

/* The tp progress op: the dispatcher's spin window and polling waiters
 * read the CQ too when the lock is free, which saves the hand-over from
 * the progress thread while traffic flows.  Everything stays under
 * ofi.lock, so completions are still handled one at a time, in order. */
/* initial-exec: read on every poll (no __tls_get_addr call) */
#define OFI_TLS __thread __attribute__((tls_model("initial-exec")))
static OFI_TLS int tight_thread; /* this thread polls in a tight loop */

/* One pass of an application thread over the transport's work, under
 * ofi.lock: completions, packets to retry, reads to issue, failures.
 * Returns the completions handled. */
static int progress_pass(void)
{
  ofi_direct_settle();
  ofi.fin_hold++; /* the FINs of this pass go together at its end */
  int n = drain_cq();
  if (ofi.retry_head || ofi.owed_head)
    ofi_send_retry();
  if (ofi.ready_head)
    ofi_sink_issue();
  ofi.fin_hold--;
  if (ofi.fins_held)
    ofi_fin_flush();
  if (ofi.fail_pending) /* rare: no call on every turn */
    ofi_fail_pending();
  return n;
}

int ofi_tp_progress(struct lapi_hndl *h)
{
  (void)h;
  if (!__atomic_load_n(&ofi.up, __ATOMIC_ACQUIRE))
    return 0;
  /* Spinning callers poll in tight loops sized for cheap polls: read the
   * CQ at most once per POLL_GAP_NS per thread, so a spin window keeps
   * its length and does not starve the application on 2 cores.  A tight
   * poller (ofi_tp_tight) reads it every time: it waits for the network
   * and nothing else, and its loop is timed, not counted. */
  static OFI_TLS int64_t last;
  if (!tight_thread) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    if (now - last < POLL_GAP_NS)
      return 0;
    last = now;
  }
  if (pthread_mutex_trylock(&ofi.lock) != 0)
    return 0;
  ofi_direct_armed = tight_thread; /* ofi_direct.c */
  int n = ofi.up ? progress_pass() : 0;
  /* an interrupt-mode wait ends its registration when it is done */
  if (n > 0 && tight_thread && h && lapi_hndl_mpe_served(h))
    ofi_bell_polled_soon();
  ofi_direct_armed = 0;
  pthread_mutex_unlock(&ofi.lock);
  if (ofi_direct_held)
    ofi_direct_deliver();
  return n;
}

/* The tp tight op.  While a thread polls the CQ in a tight loop, peers
 * on this host do not ring our doorbell (ofi_bell_polled), so the
 * progress thread sleeps on and a message costs no system call and no
 * thread switch.  When it stops it reads the CQ once more, under the
 * lock, so that nothing a peer did not ring for is left unread.
 * A wait nested in a handler that the tight loop ran (polling mode)
 * polls on the outer registration and ends it when it stops, so it never
 * sleeps while peers think it polls; the outer loop registers again
 * (on = 1 again is cheap).  Registrations belong to one endpoint's life
 * (tight_gen): a poller that outlives a LAPI_Term leaves nothing behind. */
static OFI_TLS unsigned tight_gen;
static OFI_TLS struct linger_slot *my_linger; /* NULL: none (yet) */
static OFI_TLS int pass_owed; /* the pass that ended tight polling */

void ofi_owed_pass(void)
{
  ofi_direct_settle();
  if (pass_owed) {
    pass_owed = 0;
    progress_pass();
  }
}

int ofi_tp_tight(struct lapi_hndl *h, int on)
{
  (void)h; /* both modes alike */
  if (on == LAPI_TIGHT_START) {
    if (!__atomic_load_n(&ofi.up, __ATOMIC_ACQUIRE))
      return 0;
    /* ofi.gen is read only where it decides (an interrupt-mode START
     * takes the lock below, which reads it there) */
    if (tight_thread) {
      if (tight_gen == __atomic_load_n(&ofi.gen, __ATOMIC_ACQUIRE))
        return 1;
      /* We polled across LAPI_Term and LAPI_Init: our registration is
       * of a life gone by and counted nowhere now (peers would ring, the
       * progress thread sleep long): register in this one. */
      tight_thread = 0;
    }
    pass_owed = 0; /* the loop polls anyway */
    struct linger_slot *ls = my_linger;
    if (ls) {
      uint64_t w = __atomic_load_n(&ls->word, __ATOMIC_RELAXED);
      if ((w & LINGER_LEFT) &&
          __atomic_compare_exchange_n(&ls->word, &w,
                                      w & ~(uint64_t)LINGER_LEFT, 0,
                                      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED) &&
          __atomic_load_n(&ls->gen, __ATOMIC_RELAXED) ==
              __atomic_load_n(&ofi.gen, __ATOMIC_ACQUIRE)) {
        /* adopted: the registration never lapsed, nothing went unread */
        tight_thread = 1;
        tight_gen = __atomic_load_n(&ls->gen, __ATOMIC_RELAXED);
        return 1;
      }
      /* (one left in a life gone by, taken back just now, counted
       * nowhere: register below as if none was left) */
    }
    pthread_mutex_lock(&ofi.lock);
    int ok = ofi.up;
    if (ok) {
      tight_thread = 1;
      tight_gen = ofi.gen;
      ofi_bell_polled(1);
      __atomic_add_fetch(&tight_pollers, 1, __ATOMIC_SEQ_CST);
      if (ls == NULL) {
        unsigned i = __atomic_fetch_add(&lingering_used, 1, __ATOMIC_ACQ_REL);
        if (i < LINGER_SLOTS)
          my_linger = &lingering[i];
      }
    }
    pthread_mutex_unlock(&ofi.lock);
    /* The progress thread may sleep long (nobody rings it now): wake it
     * into its 1 ms slices, which end a registration left behind and
     * find what came as an interrupt-mode wait stopped (its pass is
     * owed, below).  Not if it is in a slice already. */
    if (ok && ofi.wait_fd < 0)
      ofi_bell_wake_self();
    return ok;
  }
  if (!tight_thread)
    return 0;
  tight_thread = 0;
  struct linger_slot *ls = my_linger;
  if (on == LAPI_TIGHT_PAUSE && ls) {
    /* (One of a life gone by is left marked with that life: no START
     * adopts it, nothing counts it, the progress thread takes it back.)
     * Only this thread writes its word while it polls: a plain store. */
    __atomic_store_n(&ls->gen, tight_gen, __ATOMIC_RELAXED); /* read
                                        after the word, by its acquire */
    uint64_t w = __atomic_load_n(&ls->word, __ATOMIC_RELAXED);
    __atomic_store_n(&ls->word, w + LINGER_PAUSE + LINGER_LEFT,
                     __ATOMIC_RELEASE);
    return 0;
  }
  pthread_mutex_lock(&ofi.lock);
  if (ofi.up && tight_gen == ofi.gen) {
    ofi_bell_polled(-1);
    __atomic_sub_fetch(&tight_pollers, 1, __ATOMIC_SEQ_CST);
    /* What came since our last poll and before the count fell was rung
     * for by nobody.  The pass that reads it is owed to this thread's
     * next send (after its post, off the reply's path: ~160 ns on shm,
     * a poll() or epoll_wait of the sockets on tcp) or next wait.  If
     * the thread makes no further LAPI call, the progress thread finds
     * it: within a 1 ms slice with a bell (every START wakes it into
     * them) or a wait fd (parked in slices while we polled, on the fd
     * after), within its nap (<= NAP_IDLE_US) with neither (tcp with
     * LAPI_OFI_WAIT_FD=0).  Only a shm wait that gave up reads now: its
     * thread sleeps next, on no reply's path (docs/PERFORMANCE.md,
     * "Interrupt mode over tcp, session 13"; ofi_late_arrival). */
    if (ofi.wait_fd >= 0 || !ofi_bell_on() || on != LAPI_TIGHT_SLEEP)
      pass_owed = 1;
    else
      progress_pass();
    /* A wait that gave up sends nothing next, and the progress thread,
     * parked on kicks alone for up to 1 ms, would leave the fd (and the
     * peer reading our memory, or its FINs) unserved that long: send it
     * back to the fd now.  One write, off any answer's path. */
    if (on == LAPI_TIGHT_SLEEP && ofi.wait_fd >= 0 &&
        __atomic_load_n(&tight_pollers, __ATOMIC_SEQ_CST) == 0) {
      pass_owed = 0;
      ofi_kick();
    }
  }
  pthread_mutex_unlock(&ofi.lock);
  return 0;
}

int ofi_progress_start(void)
{
  __atomic_store_n(&ofi.stop, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&tight_pollers, 0, __ATOMIC_SEQ_CST); /* a new life */
  __atomic_store_n(&kick_pending, 0, __ATOMIC_SEQ_CST); /* a new kick_fd */
  /* Left registrations of the life gone by are counted nowhere now.  A
   * thread that polled across the new start leaves none of it later
   * (LAPI_TIGHT_PAUSE compares its life with ofi.gen), and one left all
   * the same (it read ofi.gen just before the increment) is not adopted
   * (LAPI_TIGHT_START) nor counted (linger_count, linger_end_old). */
  for (unsigned i = 0; i < LINGER_SLOTS; i++) {
    __atomic_and_fetch(&lingering[i].word, ~(uint64_t)LINGER_LEFT,
                       __ATOMIC_SEQ_CST);
    linger_seen[i] = 0; /* the thread is not running yet */
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&ofi.thread, NULL, progress_main, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    LAPI_LOG(LAPI_LOG_ASYNC, "ofi: the progress thread could not start");
    return LAPI_ERR_MEMORY_EXHAUSTED;
  }
  ofi.thread_on = 1;
  return LAPI_SUCCESS;
}

/* Not under ofi.lock. */
void ofi_progress_stop(void)
{
  if (!ofi.thread_on)
    return;
  __atomic_store_n(&ofi.stop, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_lock(&ofi.lock);
  __atomic_store_n(&sleeping, 1, __ATOMIC_RELAXED);
  ofi_kick();
  pthread_mutex_unlock(&ofi.lock);
  pthread_join(ofi.thread, NULL);
  ofi.thread_on = 0;
}

/* --------------------------------------------------- a test entry (fuzz) */

#if defined(__SANITIZE_ADDRESS__) /* gcc */
#define TEST_ASAN 1
#elif defined(__has_feature) /* clang */
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#define TEST_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define TEST_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define TEST_POISON(p, n) ((void)(p), (void)(n))
#define TEST_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* The entry's receive buffers.  One that an eager AM kept is reposted
 * when its transfer releases it (ofi_rx_release, as any other): from
 * then on it is one more posted receive of this endpoint life, never
 * the entry's again.  At most TEST_RX_LEND are lent so; past that the
 * entry runs packets as copies (rx_cur NULL, as ofi_direct.c's SHORTs),
 * which no AM keeps.  All under ofi.lock. */
#define TEST_RX_LEND 32
static struct ofi_buf *test_rx;            /* the entry's own, not posted */
static struct ofi_buf *test_lent[TEST_RX_LEND];
static int test_nlent;
static unsigned test_gen;                  /* endpoint life they belong to */

static void test_buf_free(struct ofi_buf *b)
{
  if (b) {
    free(b->mem);
    free(b);
  }
}

static struct ofi_buf *test_buf(void)
{
  if (test_gen != ofi.gen) {
    /* lent to an endpoint now closed: nobody reposts them any more */
    for (int i = 0; i < test_nlent; i++)
      test_buf_free(test_lent[i]);
    test_nlent = 0;
    test_buf_free(test_rx);
    test_rx = NULL;
    test_gen = ofi.gen;
  }
  if (test_rx == NULL) {
    struct ofi_buf *b = calloc(1, sizeof *b);
    if (b == NULL)
      return NULL;
    b->c.kind = OFI_C_RECV;
    b->mem = aligned_alloc(64, ofi_align8(ofi.buf_size + 63) & ~(size_t)63);
    if (b->mem == NULL) {
      free(b);
      return NULL;
    }
    test_rx = b;
  }
  return test_rx;
}

int ofi_test_arrival(const void *pkt, size_t len, int direct)
{
  pthread_mutex_lock(&ofi.lock);
  struct ofi_buf *b = NULL;
  /* A provider that wants local registrations would need one per lent
   * buffer, closed before its domain: not worth it for a test. */
  if (!ofi.up || len > ofi.buf_size || (ofi.mr_mode & FI_MR_LOCAL) ||
      (b = test_buf()) == NULL) {
    pthread_mutex_unlock(&ofi.lock);
    return -1;
  }
  int lend = test_nlent < TEST_RX_LEND;
  memcpy(b->mem, pkt, len);
  /* Bytes past the arrival were never received: reading them is a bug
   * even inside the buffer (ASan says so; a copy at the tail of a real
   * buffer holds an older packet's bytes). */
  TEST_POISON(b->mem + len, ofi.buf_size - len);
  ofi.rx_cur = lend ? b : NULL;
  ofi.rx_kept = 0;
  if (direct) {
    /* as ofi_tp_progress's pass: owed ends first, then the arrival with
     * this thread armed to keep a SHORT for itself */
    ofi_direct_settle();
    ofi_direct_armed = 1;
  }
  packet(b->mem, len);
  ofi_direct_armed = 0;
  ofi.rx_cur = NULL;
  TEST_UNPOISON(b->mem + len, ofi.buf_size - len);
  if (ofi.rx_kept) { /* its transfer reposts it (ofi_rx_release) */
    ofi.rx_kept = 0;
    test_lent[test_nlent++] = b;
    test_rx = NULL;
  }
  pthread_mutex_unlock(&ofi.lock);
  if (ofi_direct_held) /* kept (direct): its handlers run here, now */
    ofi_direct_deliver();
  return 0;
}
