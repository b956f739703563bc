/*
 * fuzz_job.c - the job around the fuzzed receive path (fuzz_wire.h).
 *
 * Task 1 registers an Amsend and an Amsendv header handler that hand
 * out its sandbox (a buffer, or a vector of the origin's shape, sized by
 * what they are told), then runs inputs through ofi_test_arrival.  Task
 * 0 serves (its progress thread answers what task 1 sends it) until task
 * 1's Amsend says the run is over; then it sends task 1 a real Amsend
 * and a Put, and both check them.  Every wait is bounded and names its
 * step when it gives up.
 *
 * In a 3-task job task 2 is the task the inputs claim (fuzz_wire.h):
 * it serves until task 0 tells it that the run is over, then leaves
 * without LAPI_Term (its link with task 1 is broken for good: it drops
 * every packet task 1 sends it, BAD_ACK).  Task 0 waits until it knows
 * task 2 gone, then sends the final Amsend and Put; both tasks' last
 * LAPI_Gfence must fail at once (LAPI_ERR_TIMEOUT: a CG of the job is
 * gone), and LAPI_Term must work (its barriers are the job's exchange's).
 * lapirun then exits with 70 (a task left without LAPI_Term).
 */
#include "ofi_test.h"

#include <pthread.h>

#include "fuzz_wire.h"
#include "transport/ofi/ofi.h"

#define CHECK_LEN 3000  /* the final Amsend */
#define PUT_LEN 5000    /* the final Put */
#define CHECK_SEED 77
#define PUT_SEED 78
#define WAIT_S 20       /* each step of the end */
#define VSLOTS 1024     /* Amsendv vectors handed out, reused in turn */
#define VMAX 64         /* their most segments */

int fz_strict;

static unsigned char sandbox[FZ_SANDBOX] __attribute__((aligned(64)));
static unsigned char check_box[CHECK_LEN], put_box[PUT_LEN];
static lapi_cntr_t fz_cntr, check_cntr, put_cntr, over_cntr, leave_cntr;
/* "The run is over" (task 1 to task 0), passed on as "leave now" (task 0
 * to task 2): packets run, and task FZ_FORGED's no-FIN messages task 1
 * completed (then it acknowledged numbers task 2 never used). */
struct over_msg {
  int runs;
  uint32_t forged_done;
};
static struct over_msg over_msg, leave_msg;
static struct fid_mr *sandbox_mr; /* without CMA: its key is sent */
static struct ofi_barrier bar_snap[LAPI_AM_MAX_HANDLES]; /* task 1's */
static long bar_broken;           /* inputs whose BARRIER broke one */
static long runs;                 /* task 1: packets run */
static int errs;                  /* atomic: error handler calls */
static int am_calls, amv_calls;   /* atomic: header handler calls */
static int drop_turn;             /* atomic: LAPI_DROP_PKT every other time */
static void **peer_put_box, **peer_check_cntr, **peer_put_cntr,
    **peer_over_cntr, **peer_leave_cntr;

/* ------------------------------------------------------------ handlers */

static void errh(lapi_handle_t *h, int *code, lapi_err_t *type, int *task,
                 int *src)
{
  (void)h;
  (void)type;
  (void)task;
  (void)src;
  (void)code;
  __atomic_add_fetch(&errs, 1, __ATOMIC_RELAXED); /* the inputs' doing */
}

static void fz_done(lapi_handle_t *h, void *uinfo)
{
  (void)h;
  (void)uinfo;
}

/* What a handler may read: the whole uhdr, and the data if it came with
 * the header (udata_one_pkt_ptr: then it is in one packet, so no longer
 * than a receive buffer).  Read as a program that looks at them would,
 * so that a length the library did not check against the packet reads
 * what was never received (ASan) or fails here. */
static unsigned looked; /* atomic: the reads are not optimised away */

static void look_at(const void *uhdr, uint uhdr_len,
                    const lapi_return_info_t *ri)
{
  unsigned char sum = 0;
  for (uint i = 0; i < uhdr_len; i++)
    sum ^= ((const unsigned char *)uhdr)[i];
  if (ri->udata_one_pkt_ptr) {
    OT_CHECK(ri->msg_len <= ofi.buf_size, "a message of %lu bytes whose data "
             "came with its header (in a packet of at most %zu)",
             ri->msg_len, ofi.buf_size);
    if (ri->msg_len <= ofi.buf_size)
      for (ulong i = 0; i < ri->msg_len; i++)
        sum ^= ((const unsigned char *)ri->udata_one_pkt_ptr)[i];
  }
  __atomic_store_n(&looked, sum, __ATOMIC_RELAXED);
}

/* Amsend: the sandbox if the message fits it; the uhdr's first word may
 * ask to bury the message or to have it come again. */
static void *am_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                    ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  __atomic_add_fetch(&am_calls, 1, __ATOMIC_RELAXED);
  lapi_return_info_t *ri = (lapi_return_info_t *)msg_len;
  look_at(uhdr, *uhdr_len, ri);
  *comp_h = fz_done;
  *uinfo = NULL;
  uint32_t w = 0;
  if (*uhdr_len >= 4)
    memcpy(&w, uhdr, 4);
  if (w % 4 == 1)
    ri->ctl_flags = LAPI_BURY_MSG;
  if (w % 4 == 2 && __atomic_fetch_xor(&drop_turn, 1, __ATOMIC_RELAXED))
    ri->ctl_flags = LAPI_DROP_PKT;
  return *msg_len <= FZ_SANDBOX ? sandbox : NULL;
}

/* Amsendv: a vector of the origin's shape (written into the uhdr by
 * fuzz_shape.c, or absent: then the data is discarded) over the
 * sandbox, with the lengths len_vec tells. */
struct vslot {
  lapi_vec_t v;
  void *info[VMAX];
  ulong len[VMAX];
};
static struct vslot vslots[VSLOTS];
static unsigned vnext; /* atomic */

static lapi_vec_t *amv_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                           ulong *len_vec, compl_hndlr_t **comp_h,
                           void **uinfo)
{
  (void)h;
  __atomic_add_fetch(&amv_calls, 1, __ATOMIC_RELAXED);
  *comp_h = fz_done;
  *uinfo = NULL;
  uint32_t tag[3];
  if (*uhdr_len < sizeof tag)
    return NULL;
  memcpy(tag, uhdr, sizeof tag);
  if (tag[0] != 0x465a5654u || tag[2] > VMAX)
    return NULL;
  struct vslot *s =
      &vslots[__atomic_fetch_add(&vnext, 1, __ATOMIC_RELAXED) % VSLOTS];
  memset(s, 0, sizeof *s);
  s->v.vec_type = (lapi_vectype_t)tag[1];
  s->v.num_vecs = tag[2];
  s->v.info = s->info;
  s->v.len = s->len;
  if (tag[1] == LAPI_GEN_STRIDED_XFER) {
    uint64_t block = len_vec[0];
    if (block > FZ_SANDBOX || (tag[2] && block * tag[2] > FZ_SANDBOX))
      return NULL;
    s->info[0] = sandbox;
    s->info[1] = (void *)(uintptr_t)block;
    s->info[2] = (void *)(uintptr_t)block; /* packed */
    s->v.len = NULL;
    return &s->v;
  }
  if (tag[1] != LAPI_GEN_IOVECTOR && tag[1] != LAPI_GEN_GENERIC)
    return NULL;
  uint64_t at = 0;
  for (uint32_t i = 0; i < tag[2]; i++) {
    if (len_vec[i] > FZ_SANDBOX - at)
      return NULL;
    s->info[i] = sandbox + at;
    s->len[i] = len_vec[i];
    at += len_vec[i];
  }
  return &s->v;
}

/* Task 0: task 1 says the run is over (its count in the uhdr). */
static void *over_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                      ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)msg_len;
  *comp_h = NULL;
  *uinfo = NULL;
  if (*uhdr_len >= sizeof over_msg)
    memcpy(&over_msg, uhdr, sizeof over_msg);
  return NULL;
}

/* Task 2: task 0 says leave. */
static void *leave_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)msg_len;
  *comp_h = NULL;
  *uinfo = NULL;
  if (*uhdr_len >= sizeof leave_msg)
    memcpy(&leave_msg, uhdr, sizeof leave_msg);
  return NULL;
}

/* Task 1: the final Amsend. */
static void *check_hdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  *comp_h = NULL;
  *uinfo = NULL;
  OT_CHECK(*msg_len == CHECK_LEN, "final Amsend of %lu bytes", *msg_len);
  return *msg_len == CHECK_LEN ? check_box : NULL;
}

/* --------------------------------------------------------------- set-up */

int fz_start(int limit_s)
{
  ot_init(errh, limit_s);
  if (ot.n != 2 && ot.n != 3) {
    fprintf(stderr, "fuzz_wire: run as 2 or 3 tasks (lapirun -n 2)\n");
    exit(2);
  }
  if (ot.me == 1) {
    OT_OK(LAPI_Addr_set(ot.h, (void *)am_hdr, FZ_HDL_AM));
    OT_OK(LAPI_Addr_set(ot.h, (void *)amv_hdr, FZ_HDL_AMV));
    OT_OK(LAPI_Addr_set(ot.h, (void *)check_hdr, FZ_HDL_CHECK));
  } else if (ot.me == 0) {
    OT_OK(LAPI_Addr_set(ot.h, (void *)over_hdr, FZ_HDL_OVER));
  } else {
    OT_OK(LAPI_Addr_set(ot.h, (void *)leave_hdr, FZ_HDL_LEAVE));
  }
  OT_OK(LAPI_Setcntr(ot.h, &fz_cntr, 0));
  OT_OK(LAPI_Setcntr(ot.h, &check_cntr, 0));
  OT_OK(LAPI_Setcntr(ot.h, &put_cntr, 0));
  OT_OK(LAPI_Setcntr(ot.h, &over_cntr, 0));
  OT_OK(LAPI_Setcntr(ot.h, &leave_cntr, 0));
  /* Without CMA task 1 reads and writes a sender's sandbox by RMA: the
   * senders register it and tell its key. */
  uint64_t rkey = 0;
  pthread_mutex_lock(&ofi.lock);
  int keys = !ofi.cma;
  if (keys && ot.me != 1 &&
      ofi_mr_reg(sandbox, sizeof sandbox, FI_REMOTE_READ | FI_REMOTE_WRITE,
                 &sandbox_mr) == 0)
    rkey = fi_mr_key(sandbox_mr);
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(!keys || ot.me == 1 || sandbox_mr != NULL,
           "the sandbox could not be registered");
  void **sbs = ot_addrs(sandbox);
  void **pids = ot_addrs((void *)(uintptr_t)getpid());
  void **rkeys = ot_addrs((void *)(uintptr_t)rkey);
  peer_put_box = ot_addrs(put_box);
  peer_check_cntr = ot_addrs(&check_cntr);
  peer_put_cntr = ot_addrs(&put_cntr);
  peer_over_cntr = ot_addrs(&over_cntr);
  peer_leave_cntr = ot_addrs(&leave_cntr);
  OT_OK(LAPI_Gfence(ot.h));
  if (ot.me == 1) {
    pthread_mutex_lock(&ofi.lock);
    fz_env.key = lapi_hndl_key(0, ot.h);
    fz_env.ack_done = fz_env.ack_seq = ofi.peers[0].nf_acked;
    fz_env.nofin_base = ofi.peers[0].in_base;
    fz_env.bar_seq = ofi.bar[ot.h & 0xff].seq;
    memcpy(bar_snap, ofi.bar, sizeof bar_snap); /* no Gfence until the end */
    pthread_mutex_unlock(&ofi.lock);
    fz_env.third = ot.n == 3;
    fz_env.keys = keys;
    for (int t = 0; t < ot.n; t++) {
      fz_env.peer[t].sb = (uint64_t)(uintptr_t)sbs[t];
      fz_env.peer[t].pid = (uint32_t)(uintptr_t)pids[t];
      fz_env.peer[t].rkey = (uint64_t)(uintptr_t)rkeys[t];
    }
    fz_env.sb1 = sandbox;
    fz_env.cntr = &fz_cntr;
  }
  free(sbs);
  free(pids);
  free(rkeys);
  return ot.me;
}

/* Task 1, 3 tasks: a forged BARRIER did what task 2's own would (broke
 * task 1's barrier, or passed a round of it); that story ends with its
 * input, as a transfer's does (sweep, below): the barrier state goes
 * back to what it was after the start-up Gfence, the last one until the
 * final check.  Under ofi.lock. */
static void barrier_back(void)
{
  for (unsigned hv = 0; hv < LAPI_AM_MAX_HANDLES; hv++) {
    if (ofi.bar[hv].broken)
      bar_broken++;
    ofi.bar[hv] = bar_snap[hv];
  }
}

/* Task 1: its count of task FZ_FORGED's no-FIN messages completed. */
static uint32_t forged_done(void)
{
  pthread_mutex_lock(&ofi.lock);
  uint32_t n = ofi.peers[FZ_FORGED].in_done;
  pthread_mutex_unlock(&ofi.lock);
  return n;
}

/* A transfer a forged packet began can never finish: its claimed
 * sender (task 0, or task 2 in a 3-task job) knows nothing of it, and
 * when task 1 asks (ofi_ask.c) its UNKNOWN makes task 1 declare it gone,
 * rightly (a lost answer looks the same; task 2, which drops task 1's
 * packets once it acknowledged numbers task 2 never used, does not even
 * answer, and is declared gone after TIMEOUT).  So the
 * harness ends them itself before every input (an input is one story,
 * told again the same way: libFuzzer's crashes replay) and before the
 * final check, as ofi_peer_fail's sweep would, without failing the
 * peer. */
static uint sender(void) /* the task the inputs claim */
{
  return fz_env.third ? FZ_FORGED : 0;
}

static void sweep(void)
{
  pthread_mutex_lock(&ofi.lock);
  for (uint32_t s = 0; s < ofi.xcap; s++) {
    struct ofi_xfer *x = ofi.xtab[s];
    /* Not one whose item is queued: it waits for the dispatcher, not for
     * the sender, and ends by itself.  Failed there, its item would free
     * it without ending its no-FIN number (right for a peer gone, whose
     * numbers no longer count): the number would stay open in task 1's
     * window, and after 256 of them the window takes no more (a 14-min
     * campaign completed 259 of task 2's messages).  The next input's
     * sweep takes it if it waits for the sender by then. */
    if (x && x->peer == sender() && !x->failed && !x->item_queued) {
      /* A no-FIN message of task 2's (an eager one whose description
       * is pulled) took its number: the sweep is no peer failure, so the
       * number ends as a failure here ends it (NAK, dropped by task 2),
       * or it would stay open in the window for good (1299 completed of
       * 200000 replay mutations, where 20000 complete 1000). */
      if (x->role == OFI_R_SINK && x->no_fin)
        ofi_nofin_fail(x->peer, ofi_key(x), x->nf_seq, x->kind,
                       LAPI_ERR_TGT_PURGED);
      if (x->role == OFI_R_SINK)
        ofi_sink_fail(x, LAPI_ERR_TGT_PURGED);
      else
        ofi_fail_xfer(x, LAPI_ERR_TGT_PURGED);
    }
  }
  pthread_mutex_unlock(&ofi.lock);
}

/* 1 while a transfer a forged packet began is left, failed or not. */
static int forged_left(void)
{
  int left = 0;
  pthread_mutex_lock(&ofi.lock);
  for (uint32_t s = 0; s < ofi.xcap && !left; s++)
    left = ofi.xtab[s] && ofi.xtab[s]->peer == sender();
  pthread_mutex_unlock(&ofi.lock);
  return left;
}

/* Before the final check: sweep until nothing the inputs began is left.
 * An AM whose item was queued at one sweep runs its header handler
 * later, then waits for the sender's data with a PULL out; a few dozen
 * of them held the CG's PULL budget, and the final Put, pulled (its
 * stage unreadable once an input turned references off), waited for
 * the budget past the check's 20 s. */
static void sweep_all(void)
{
  for (int i = 0; i < 5000 && forged_left(); i++) {
    sweep();
    LAPI_Probe(ot.h); /* queued items run, failed ones end */
    usleep(1000);
  }
  OT_CHECK(!forged_left(), "transfers the inputs began are left after "
           "5 s of sweeps");
}

static void live_get(struct fz_live *live)
{
  live->n = 0;
  pthread_mutex_lock(&ofi.lock);
  for (uint32_t s = 0; s < ofi.xcap && live->n < 64; s++) {
    struct ofi_xfer *x = ofi.xtab[s];
    if (x && x->peer == sender() && !x->failed)
      live->id[live->n++] = x->id;
  }
  pthread_mutex_unlock(&ofi.lock);
}

void fz_one(const uint8_t *in, size_t n)
{
  static uint64_t pkt[(1u << 24) / 8]; /* LAPI_OFI_BUF_SIZE's largest */
  struct fz_live live;
  sweep();
  if (fz_env.third) {
    pthread_mutex_lock(&ofi.lock);
    barrier_back();
    fz_env.forged_base = ofi.peers[FZ_FORGED].in_base;
    pthread_mutex_unlock(&ofi.lock);
  }
  for (int r = 0; r < FZ_RECORDS && n > 0; r++) {
    unsigned ctl = in[0];
    size_t plen = n - 1;
    in++;
    n--;
    if ((ctl & FZ_CTL_MORE) && n >= 2) {
      plen = (size_t)in[0] | (size_t)in[1] << 8;
      in += 2;
      n -= 2;
      if (plen > n)
        plen = n;
    }
    live.n = 0;
    if (ctl & FZ_CTL_LIVE_ID)
      live_get(&live);
    size_t len = fz_shape(ctl, in, plen, &live, (unsigned char *)pkt,
                          ofi.buf_size);
    if (ofi_test_arrival(pkt, len, (ctl & FZ_CTL_DIRECT) != 0) == 0)
      runs++;
    in += plen;
    n -= plen;
    if (!(ctl & FZ_CTL_MORE))
      break;
    /* what the progress thread's next pass would do before the next
     * arrival: a sink's PULLs or reads go out */
    pthread_mutex_lock(&ofi.lock);
    ofi_sink_issue();
    pthread_mutex_unlock(&ofi.lock);
  }
}

/* ------------------------------------------------------------- the end */

/* What a wait that timed out left: every live transfer, and the
 * transport's state toward each peer (stderr). */
static void dump_live(void)
{
  pthread_mutex_lock(&ofi.lock);
  fprintf(stderr, "task %d: pulls out %ld (budget %ld), waiting for it "
          "%s, xlive %ld\n", ot.me, ofi.pulls_out, ofi.pull_budget,
          ofi.pwait_head ? "yes" : "no", (long)ofi.xlive);
  for (uint t = 0; t < ofi.ntasks; t++)
    fprintf(stderr, "task %d: peer %u: failed %d ref_off %d staged_off %d "
            "arena %s credits %d queued %d owed %d\n", ot.me, t,
            ofi.peers[t].failed, ofi.peers[t].ref_off,
            ofi.peers[t].staged_off, ofi.peers[t].arena ? "mapped" : "no",
            ofi.peers[t].credits, ofi.peers[t].queued, ofi.peers[t].owed);
  for (uint32_t k = 0; k < ofi.xcap; k++) {
    const struct ofi_xfer *x = ofi.xtab[k];
    if (x)
      fprintf(stderr, "task %d: xfer %llx peer %u role %d kind %d mode %d "
              "staged %d/%d want %zu issued %zu done %zu pulls %d pwait %d "
              "item %d failed %d\n", ot.me, (unsigned long long)x->id,
              x->peer, x->role, x->kind, x->mode, x->staged_whole,
              x->p_staged != NULL, x->want, x->issued, x->done,
              x->pulls_out, x->in_pwait, x->item_queued, x->failed);
  }
  pthread_mutex_unlock(&ofi.lock);
}

/* Waits until counter c reaches want, polling; 0, or -1 after secs. */
static int await_s(lapi_cntr_t *c, int want, const char *step, int secs)
{
  double end = ot_now_s() + secs;
  while (ot_cntr(c) < want) {
    if (ot_now_s() > end) {
      OT_CHECK(0, "%s: not done after %d s", step, secs);
      dump_live();
      return -1;
    }
    LAPI_Probe(ot.h);
    usleep(1000);
  }
  return 0;
}

static int await(lapi_cntr_t *c, int want, const char *step)
{
  return await_s(c, want, step, WAIT_S);
}

/* Is task t declared gone here? (then nothing from it is heard) */
static int peer_gone(uint t, char *why, size_t len)
{
  pthread_mutex_lock(&ofi.lock);
  int failed = ofi.peers[t].failed;
  snprintf(why, len, "%s", ofi.peers[t].fail_why);
  pthread_mutex_unlock(&ofi.lock);
  return failed;
}

/* The packets this task dropped as bad; drop: by class. */
static uint64_t dropped(uint64_t drop[OFI_BAD_N])
{
  uint64_t inj[OFI_BAD_N], bad = 0;
  ofi_fault_counts(inj, drop);
  for (int c = 0; c < OFI_BAD_N; c++)
    bad += drop[c];
  return bad;
}

/* The job's end: ot_finish, or with 3 tasks (task 2 gone) a Gfence that
 * must fail at once, then LAPI_Term. */
static int finish(void)
{
  if (sandbox_mr) {
    pthread_mutex_lock(&ofi.lock);
    ofi_mr_close(sandbox_mr);
    sandbox_mr = NULL;
    pthread_mutex_unlock(&ofi.lock);
  }
  if (ot.n == 2)
    return ot_finish("fuzz_wire");
  double t0 = ot_now_s();
  int rc = LAPI_Gfence(ot.h);
  OT_CHECK(rc == LAPI_ERR_TIMEOUT, "the last LAPI_Gfence returned %d, not "
           "LAPI_ERR_TIMEOUT (task %d is gone)", rc, FZ_FORGED);
  OT_CHECK(ot_now_s() - t0 < WAIT_S, "the last LAPI_Gfence took %.1f s",
           ot_now_s() - t0);
  OT_OK(LAPI_Term(ot.h));
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("fuzz_wire task %d of 3: %s\n", ot.me, bad ? "FAIL" : "PASS");
  fflush(stdout);
  return bad ? 1 : 0;
}

/* Task 2: serves until task 0 says leave, then leaves (fuzz_wire.h). */
static int serve_forged(int run_s)
{
  int told = await_s(&leave_cntr, 1, "task 2: task 0's word to leave",
                     run_s) == 0;
  char why[128];
  for (uint t = 0; t < 2; t++)
    if (peer_gone(t, why, sizeof why))
      OT_CHECK(0, "task 2 declared task %u gone (%s)", t, why);
  uint64_t drop[OFI_BAD_N];
  dropped(drop);
  /* Task 1 acknowledged numbers task 2 never used: from then on every
   * packet of task 1's is dropped here (and there were some: PONGs,
   * ACKs, NAKs, answers to forged GETs and RTSs). */
  if (fz_strict && told && leave_msg.forged_done > 0)
    OT_CHECK(drop[OFI_BAD_ACK] > 0, "task 1 completed %u no-FIN messages of "
             "task 2's, and task 2 dropped none of its packets",
             leave_msg.forged_done);
  int bad = __atomic_load_n(&ot.failures, __ATOMIC_SEQ_CST);
  printf("fuzz_wire task 2 of 3: %s (task 1 completed %u no-FIN messages "
         "it claimed; %llu of task 1's packets dropped, BAD_ACK); leaves "
         "without LAPI_Term\n", bad ? "FAIL" : "PASS", leave_msg.forged_done,
         (unsigned long long)drop[OFI_BAD_ACK]);
  fflush(stdout);
  fflush(stderr);
  _exit(bad ? 1 : 0);
}

int fz_serve(int run_s)
{
  if (ot.me == FZ_FORGED)
    return serve_forged(run_s);
  if (await_s(&over_cntr, 1, "task 0: task 1's end of the run", run_s) == 0) {
    static unsigned char am_data[CHECK_LEN], put_data[PUT_LEN];
    lapi_cntr_t done;
    LAPI_Setcntr(ot.h, &done, 0);
    if (ot.n == 3) {
      /* task 2 leaves; known gone here (the job's exchange says so)
       * before the final check */
      char why[128];
      OT_OK(LAPI_Amsend(ot.h, FZ_FORGED, (void *)(uintptr_t)FZ_HDL_LEAVE,
                        &over_msg, sizeof over_msg, NULL, 0,
                        peer_leave_cntr[FZ_FORGED], NULL, NULL));
      double end = ot_now_s() + WAIT_S;
      while (!peer_gone(FZ_FORGED, why, sizeof why) && ot_now_s() < end)
        usleep(1000);
      OT_CHECK(peer_gone(FZ_FORGED, why, sizeof why),
               "task 0: task 2 not known gone after %d s", WAIT_S);
    }
    ot_fill(am_data, sizeof am_data, CHECK_SEED);
    ot_fill(put_data, sizeof put_data, PUT_SEED);
    OT_OK(LAPI_Amsend(ot.h, 1, (void *)(uintptr_t)FZ_HDL_CHECK, NULL, 0,
                      am_data, sizeof am_data, peer_check_cntr[1], NULL,
                      &done));
    OT_OK(LAPI_Put(ot.h, 1, sizeof put_data, peer_put_box[1], put_data,
                   peer_put_cntr[1], NULL, &done));
    await(&done, 2, "task 0: the final Amsend and Put completing");
    printf("fuzz_wire task 0: task 1 ran %d packets\n", over_msg.runs);
  }
  return finish();
}

int fz_finish(void)
{
  char why[128];
  lapi_cntr_t sent;
  LAPI_Setcntr(ot.h, &sent, 0);
  sweep_all();
  struct over_msg m = {(int)runs, 0};
  if (fz_env.third) {
    pthread_mutex_lock(&ofi.lock);
    barrier_back();
    pthread_mutex_unlock(&ofi.lock);
    m.forged_done = forged_done();
    /* before task 2 leaves: the inputs claimed it, it never left */
    if (peer_gone(FZ_FORGED, why, sizeof why))
      OT_CHECK(0, "the inputs made task 1 declare task 2 gone (%s): it "
               "served throughout", why);
  }
  OT_OK(LAPI_Amsend(ot.h, 0, (void *)(uintptr_t)FZ_HDL_OVER, &m, sizeof m,
                    NULL, 0, peer_over_cntr[0], NULL, &sent));
  int ok = await(&sent, 1, "task 1: the end-of-run Amsend completing") == 0;
  ok = ok && await(&check_cntr, 1, "task 1: the final Amsend from task 0") == 0;
  ok = ok && await(&put_cntr, 1, "task 1: the final Put from task 0") == 0;
  if (ok) {
    OT_CHECK(ot_verify(check_box, CHECK_LEN, CHECK_SEED) == CHECK_LEN,
             "final Amsend: wrong bytes");
    OT_CHECK(ot_verify(put_box, PUT_LEN, PUT_SEED) == PUT_LEN,
             "final Put: wrong bytes");
  }
  if (peer_gone(0, why, sizeof why))
    OT_CHECK(0, "the inputs made task 1 declare task 0 gone (%s): the "
             "harness must not forge that (fuzz_shape.c)", why);
  uint64_t drop[OFI_BAD_N], bad = dropped(drop);
  OT_CHECK(bad > 0, "no input was counted as bad");
  pthread_mutex_lock(&ofi.lock);
  uint64_t direct = ofi.st.direct;
  pthread_mutex_unlock(&ofi.lock);
  if (fz_strict && fz_env.third) {
    /* what the 3-task job is for, reached by the seeds at least */
    OT_CHECK(m.forged_done > 0, "no no-FIN message of task 2's completed");
    OT_CHECK(direct > 0, "no SHORT was delivered directly");
    OT_CHECK(bar_broken > 0, "no BARRIER broke task 1's barrier");
  }
  printf("fuzz_wire task 1: %ld packets run, %llu dropped as bad (magic %llu "
         "len %llu short %llu type %llu hndl %llu ack %llu stale %llu rts "
         "%llu other %llu), %d AM and %d AMV handler calls, %llu SHORTs "
         "delivered directly, %d errors reported\n", runs,
         (unsigned long long)bad,
         (unsigned long long)drop[OFI_BAD_MAGIC],
         (unsigned long long)drop[OFI_BAD_LEN],
         (unsigned long long)drop[OFI_BAD_SHORT],
         (unsigned long long)drop[OFI_BAD_TYPE],
         (unsigned long long)drop[OFI_BAD_HNDL],
         (unsigned long long)drop[OFI_BAD_ACK],
         (unsigned long long)drop[OFI_BAD_STALE],
         (unsigned long long)drop[OFI_BAD_RTS],
         (unsigned long long)drop[OFI_BAD_OTHER], am_calls, amv_calls,
         (unsigned long long)direct,
         __atomic_load_n(&errs, __ATOMIC_RELAXED));
  if (fz_env.third)
    printf("fuzz_wire task 1: %u no-FIN messages of task 2's completed, %ld "
           "inputs broke the barrier\n", m.forged_done, bar_broken);
  fflush(stdout);
  return finish();
}
