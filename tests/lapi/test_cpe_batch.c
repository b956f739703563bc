/*
 * test_cpe_batch.c - the dispatcher completes a run of puts or gets of one
 * origin at once (crts_rma.c: same_run, complete); counters that alternate
 * or change in the middle of such a run must still move exactly.
 *
 * Every task plays the same script: a long sequence of Put, Get, Putv,
 * Getv, Rmw, Amsend and LAPI_Xfer puts/gets with handlers, each naming its
 * target by an offset (next, previous, +3) and its target, origin and
 * completion counters by pattern: A B A B, A A B, runs broken by a NULL
 * counter, by another target, by a handler or an Amsend, puts and gets
 * mixed.  Steps in lower case are issued by the even tasks only, so that
 * a completion booked to the wrong task (statistics, counters) does not
 * cancel out over the tasks.  Step k of the script writes slot k of its
 * target's receive buffer (or of the origin's get buffer), so every slot
 * has at most one writer and every byte has a known value; every
 * counter's final value, the Rmw totals and each task's received
 * operations and bytes (QUERY_SHM_STATISTICS) are counts over the script.
 *
 * For runs to form, the ops must reach the dispatcher in one batch.  A
 * "gated" wave holds the dispatcher in a header handler (the gate) until
 * every task has issued its whole script, so that the dispatcher pops
 * them all at once: "serial" has the tasks issue one after the other (one
 * long run per origin and pattern; the last step of one task and the
 * first of the next meet at one target with no counters, to be kept apart
 * by origin), "mixed" all at once (the origins interleave).  A free wave
 * just issues.  Waves re-use the counters without resetting them (with A
 * and B swapped on odd waves), so a late or doubled completion of an
 * earlier wave shows up in the next.  A completion booked to the wrong
 * origin leaves that origin's LAPI_Fence waiting: the test times out.
 */
#include "cpe_test_util.h" /* first: it defines _GNU_SOURCE */

#include <sched.h>
#include <time.h>

#include "transport/crts_tp.h" /* white box: crts_tp_rma_joined */

#define SLOT 32      /* bytes per step: a multiple of 4, more than SPLIT */
#define SPLIT 12     /* Putv/Getv: the halves [0, SPLIT) and [SPLIT, SLOT) */
#define MAX_STEPS 160
#define MAX_TASKS 8
#define DEADLINE_S 20 /* a wait that never ends fails instead of hanging */

/*
 * A step: "Kdtoc" - kind, target offset, tgt_cntr, org_cntr, cmpl_cntr.
 *   kind  P Put   G Get   V Putv   W Getv   R Rmw (fetch-and-add 1)
 *         M Amsend (completion handler at the target)
 *         X LAPI_Xfer put with a send completion handler
 *         Y LAPI_Xfer get with an origin completion handler
 *         lower case: issued by the even tasks only
 *   d     p the previous task; 1-7 the task d further (d mod NUM_TASKS,
 *         or the next task where that is 0)
 *   t o c A or B: that counter of the pair; -: none
 */
static const char *const script_text =
    /* Meets the last step of the previous task (serial waves). */
    "P2--- "
    /* A B A B: every counter alternates. */
    "P1AAA P1BBB P1AAA P1BBB P1AAA P1BBB P1AAA P1BBB "
    /* A A B: only the target counter changes. */
    "P1AAA P1AAA P1BAA P1AAA P1AAA P1BAA P1AAA P1AAA P1BAA "
    /* Only the origin counter, then only the completion counter. */
    "P1AAA P1ABA P1AAA P1ABA P1BBA P1BBB P1BBA P1BBB "
    /* Runs broken by a NULL counter. */
    "P1AAA P1AAA P1-AA P1AAA P1A-A P1AAA P1AA- P1AAA P1--- P1--- P1AAA "
    /* By a handler, then by active messages. */
    "P1AAA P1AAA X1AAA P1AAA P1AAA P1BBB M1BBB P1BBB M1AAA P1BBB "
    /* By another target: with other target counters, with none. */
    "P1AAA PpAAA P1AAA P3AAA P1AAA P1AAA PpBAA PpAAA "
    "p1-AA p3-AA p1-AA g1-A- g3-A- gp-A- "
    /* Puts and gets mixed on the same counters. */
    "G1AA- P1AA- G1AA- G1AA- P1AA- G1BA- G1AB- G1AA- P1AA- "
    "g1AA- p1AA- g1AA- p1-A- g1-A- "
    /* Vectors in between. */
    "V1AAA P1AAA V1AAA W1AA- G1AA- W1BB- W1BB- V1BAB v1-A- w1-A- "
    /* Atomics and a get with a handler in between. */
    "G1BB- R1-B- G1BB- R1-A- P1BBB Y1BB- G1BB- G1BB- r1-B- g1BB- "
    /* A A B of gets from the previous task. */
    "GpAA- GpAA- GpBB- GpAA- GpAA- GpBB- "
    /* Runs without counters around counted ones. */
    "P1--- P1--- P1AAA P1--- G1--- G1A-- G1--- P3B-- P3--- P3B-- "
    /* Long runs, then single ops of the other counters. */
    "P1AAA P1AAA P1AAA P1AAA P1AAA P1AAA P1BBB G1AA- G1AA- G1AA- G1AA- "
    "G1BB- P1ABA P1BAB "
    /* Meets the first step of the next task (serial waves). */
    "P3---";

struct step {
  char kind;    /* upper case */
  char evens;   /* issued by the even tasks only */
  char off;     /* 1-7, or -1: the previous task */
  char cntr[3]; /* tgt, org, cmpl: 0 (A), 1 (B), -1 (none) */
};

enum { C_TGT, C_ORG, C_CMPL };
enum wave_mode { FREE, GATED_SERIAL, GATED_MIXED };

static struct shared {
  struct step steps[MAX_STEPS];
  int nsteps, ncpes;
  unsigned char *expo[MAX_TASKS];   /* what gets read: main memory */
  unsigned char *recv_of[MAX_TASKS]; /* each task's LDM receive buffer */
  int rmw_var[MAX_TASKS];
  int wave;
  int gate_in, pushed, turn;        /* atomic: the gate of a wave */
  int am_calls, sh_calls, ch_calls; /* atomic */
} S;

/* What one task must see after one wave (A and B as in the script). */
struct expected {
  int cntr[3][2];
  int rmw;                /* Rmw hits on this task's variable */
  long recv_ops, recv_bytes; /* QUERY_SHM_STATISTICS, one wave */
};

static __thread_local _Alignas(64) unsigned char recv[MAX_STEPS * SLOT];
static __thread_local _Alignas(64) unsigned char getbuf[MAX_STEPS * SLOT];
static __thread_local lapi_cntr_t cntr[3][2];
static __thread_local void *tgt_tab[2][MAX_TASKS];
static __thread_local void *vinfo_o[2], *vinfo_t[2];
static __thread_local ulong vlen[2];

static void parse_script(void)
{
  memset(S.steps, 0, sizeof S.steps);
  S.nsteps = 0;
  for (const char *p = script_text; *p;) {
    while (*p == ' ')
      p++;
    if (!*p)
      break;
    cr_assert_lt(S.nsteps, MAX_STEPS);
    int k = S.nsteps++;
    struct step *s = &S.steps[k];
    s->evens = p[0] >= 'a' && p[0] <= 'z';
    s->kind = (char)(s->evens ? p[0] - 'a' + 'A' : p[0]);
    cr_assert(strchr("PGVWRMXY", s->kind) != NULL, "step %d: kind %c", k,
              p[0]);
    cr_assert(p[1] == 'p' || (p[1] >= '1' && p[1] <= '7'), "step %d", k);
    s->off = (char)(p[1] == 'p' ? -1 : p[1] - '0');
    for (int c = 0; c < 3; c++)
      s->cntr[c] = (char)(p[2 + c] == '-' ? -1 : p[2 + c] - 'A');
    /* Gets and atomics have no completion counter, atomics no target
     * counter: a script that gives them one is wrong. */
    if (strchr("GWYR", s->kind))
      cr_assert_eq(s->cntr[C_CMPL], -1, "step %d", k);
    if (s->kind == 'R')
      cr_assert_eq(s->cntr[C_TGT], -1, "step %d", k);
    p += 5;
  }
}

static int active(int task, const struct step *s)
{
  return !s->evens || task % 2 == 0;
}

static int puts_data(const struct step *s)
{
  return strchr("PVMX", s->kind) != NULL;
}

static int gets_data(const struct step *s)
{
  return strchr("GWY", s->kind) != NULL;
}

/* The target of step s issued by task `from` of n. */
static int target(int from, const struct step *s, int n)
{
  int d = s->off < 0 ? n - 1 : s->off % n;
  return (from + (d ? d : 1)) % n;
}

/* The task whose step s lands on task `at` of n. */
static int source(int at, const struct step *s, int n)
{
  int d = s->off < 0 ? n - 1 : s->off % n;
  return (at + n - (d ? d : 1)) % n;
}

/* What task `me` of n must see after one wave (A and B as in the
 * script); handler calls of the whole job into *am, *sh, *ch. */
static void expect_for(int me, int n, struct expected *e, int *am, int *sh,
                       int *ch)
{
  memset(e, 0, sizeof *e);
  *am = *sh = *ch = 0;
  for (int k = 0; k < S.nsteps; k++) {
    const struct step *s = &S.steps[k];
    for (int from = 0; from < n; from++) {
      if (!active(from, s))
        continue;
      int to = target(from, s, n);
      *am += s->kind == 'M';
      *sh += s->kind == 'X';
      *ch += s->kind == 'Y';
      if (from == me) {
        for (int c = C_ORG; c <= C_CMPL; c++)
          if (s->cntr[c] >= 0)
            e->cntr[c][(int)s->cntr[c]]++;
        if (gets_data(s)) { /* a get counts where its bytes land */
          e->recv_ops++;
          e->recv_bytes += SLOT;
        }
      }
      if (to == me) {
        if (s->cntr[C_TGT] >= 0)
          e->cntr[C_TGT][(int)s->cntr[C_TGT]]++;
        e->rmw += s->kind == 'R';
        if (!gets_data(s)) {
          e->recv_ops++;
          e->recv_bytes += s->kind == 'R' ? (long)sizeof(int) : SLOT;
        }
      }
    }
  }
}

/* Counter pair member of step k in wave w: A and B swap on odd waves. */
static int which(const struct step *s, int c, int wave)
{
  return s->cntr[c] < 0 ? -1 : s->cntr[c] ^ (wave & 1);
}

static uint32_t tag_of(int task, int k, int wave)
{
  return (uint32_t)((wave * MAX_TASKS + task) * MAX_STEPS + k + 1);
}

static uint tgt_of(const struct ct_task *t, const struct step *s)
{
  return (uint)target(t->me, s, t->n);
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Spin (yielding) until *v == want; 0, or -1 after DEADLINE_S. */
static int spin_until(int *v, int want)
{
  double end = now_s() + DEADLINE_S;
  while (__atomic_load_n(v, __ATOMIC_SEQ_CST) != want) {
    if (now_s() > end)
      return -1;
    sched_yield();
  }
  return 0;
}

/* ---------------------------------------------------------- handlers */

/* The gate: holds the dispatcher until every task issued its script. */
static void *gate_header(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                         ulong *msg_len, compl_hndlr_t **comp_h,
                         void **uinfo)
{
  ct_on_mpe();
  (void)hndl;
  (void)uhdr;
  (void)uhdr_len;
  (void)msg_len;
  *comp_h = NULL;
  *uinfo = NULL;
  __atomic_store_n(&S.gate_in, S.wave + 1, __ATOMIC_SEQ_CST);
  if (spin_until(&S.pushed, S.ncpes) != 0)
    ct_fail("wave %d: the tasks did not issue their scripts within %d s",
            S.wave, DEADLINE_S);
  return NULL;
}

static void am_done(lapi_handle_t *hndl, void *uinfo)
{
  ct_on_mpe();
  (void)hndl;
  (void)uinfo;
  __atomic_add_fetch(&S.am_calls, 1, __ATOMIC_SEQ_CST);
}

static void *am_header(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  ct_on_mpe();
  lapi_return_info_t *ri = (lapi_return_info_t *)msg_len;
  int me = -1;
  CT_OK(LAPI_Qenv(*hndl, TASK_ID, &me));
  const int *u = uhdr;
  CT_CHECK_EQ(*uhdr_len, 2 * sizeof(int));
  CT_CHECK_EQ(u[0], ri->src);
  CT_CHECK_EQ(ri->msg_len, SLOT);
  *comp_h = am_done;
  *uinfo = NULL;
  if (me < 0 || me >= MAX_TASKS || u[1] < 0 || u[1] >= S.nsteps)
    return NULL;
  return S.recv_of[me] + (size_t)u[1] * SLOT;
}

static void send_done(lapi_handle_t *hndl, void *sinfo, lapi_sh_info_t *info)
{
  ct_on_mpe();
  (void)hndl;
  CT_CHECK(sinfo == (void *)&S);
  CT_CHECK_EQ(info->reason, LAPI_SUCCESS);
  __atomic_add_fetch(&S.sh_calls, 1, __ATOMIC_SEQ_CST);
}

static void get_done(lapi_handle_t *hndl, void *cinfo)
{
  ct_on_mpe();
  (void)hndl;
  CT_CHECK(cinfo == (void *)&S);
  __atomic_add_fetch(&S.ch_calls, 1, __ATOMIC_SEQ_CST);
}

/* ----------------------------------------------------------- a step */

static lapi_cntr_t *local(const struct step *s, int c, int wave)
{
  int w = which(s, c, wave);
  return w < 0 ? NULL : &cntr[c][w];
}

static lapi_cntr_t *remote(const struct step *s, uint tgt, int wave)
{
  int w = which(s, C_TGT, wave);
  return w < 0 ? NULL : tgt_tab[w][tgt];
}

/* Origin and target pieces of a swapped-halves vector transfer: origin
 * [0, SPLIT) goes to [SLOT - SPLIT, SLOT), the rest to the front. */
static void halves(lapi_vec_t *ov, lapi_vec_t *tv, void *org, void *tgt)
{
  vinfo_o[0] = org;
  vinfo_o[1] = (char *)org + SPLIT;
  vinfo_t[0] = (char *)tgt + (SLOT - SPLIT);
  vinfo_t[1] = tgt;
  vlen[0] = SPLIT;
  vlen[1] = SLOT - SPLIT;
  *ov = (lapi_vec_t){LAPI_GEN_IOVECTOR, 2, vinfo_o, vlen};
  *tv = (lapi_vec_t){LAPI_GEN_IOVECTOR, 2, vinfo_t, vlen};
}

static void issue(struct ct_task *t, int k, unsigned char *src_mem, int wave)
{
  const struct step *s = &S.steps[k];
  uint tgt = tgt_of(t, s);
  lapi_cntr_t *tc = remote(s, tgt, wave), *oc = local(s, C_ORG, wave),
              *cc = local(s, C_CMPL, wave);
  unsigned char *from = src_mem + (size_t)k * SLOT;
  unsigned char *into = recv + (size_t)k * SLOT; /* ours names theirs */
  unsigned char *theirs = S.expo[tgt] + (size_t)k * SLOT;
  unsigned char *mine = getbuf + (size_t)k * SLOT;
  lapi_vec_t ov, tv;
  lapi_xfer_t x;
  switch (s->kind) {
  case 'P':
    CT_OK(LAPI_Put(t->h, tgt, SLOT, into, from, tc, oc, cc));
    break;
  case 'G':
    CT_OK(LAPI_Get(t->h, tgt, SLOT, theirs, mine, tc, oc));
    break;
  case 'V':
    halves(&ov, &tv, from, into);
    CT_OK(LAPI_Putv(t->h, tgt, &tv, &ov, tc, oc, cc));
    break;
  case 'W':
    halves(&ov, &tv, mine, theirs);
    CT_OK(LAPI_Getv(t->h, tgt, &tv, &ov, tc, oc));
    break;
  case 'R': {
    int one = 1;
    CT_OK(LAPI_Rmw(t->h, FETCH_AND_ADD, tgt, &S.rmw_var[tgt], &one, NULL,
                   oc));
    break;
  }
  case 'M': {
    int uhdr[2] = {t->me, k};
    CT_OK(LAPI_Amsend(t->h, tgt, (void *)am_header, uhdr, sizeof uhdr, from,
                      SLOT, tc, oc, cc));
    break;
  }
  case 'X':
    memset(&x, 0, sizeof x);
    x.Put.Xfer_type = LAPI_PUT_XFER;
    x.Put.tgt = tgt;
    x.Put.len = SLOT;
    x.Put.tgt_addr = (lapi_long_t)(uintptr_t)into;
    x.Put.org_addr = from;
    x.Put.shdlr = send_done;
    x.Put.sinfo = &S;
    x.Put.tgt_cntr = (lapi_long_t)(uintptr_t)tc;
    x.Put.org_cntr = oc;
    x.Put.cmpl_cntr = cc;
    CT_OK(LAPI_Xfer(t->h, &x));
    break;
  case 'Y':
    memset(&x, 0, sizeof x);
    x.Get.Xfer_type = LAPI_GET_XFER;
    x.Get.tgt = tgt;
    x.Get.len = SLOT;
    x.Get.tgt_addr = (lapi_long_t)(uintptr_t)theirs;
    x.Get.org_addr = mine;
    x.Get.chndlr = get_done;
    x.Get.cinfo = &S;
    x.Get.tgt_cntr = (lapi_long_t)(uintptr_t)tc;
    x.Get.org_cntr = oc;
    CT_OK(LAPI_Xfer(t->h, &x));
    break;
  }
}

/* --------------------------------------------------------- the checks */

static const char *const cntr_name[3] = {"tgt_cntr", "org_cntr", "cmpl_cntr"};

/* Wait (bounded) for every counter to reach its count, failing at once if
 * one goes past it; then LAPI_Waitcntr takes each count off and every
 * counter must read 0. */
static void check_counters(struct ct_task *t, const struct expected *e,
                           int wave)
{
  int want[3][2];
  for (int c = 0; c < 3; c++)
    for (int w = 0; w < 2; w++)
      want[c][w] = e->cntr[c][w ^ (wave & 1)];
  int v[3][2];
  double end = now_s() + DEADLINE_S;
  for (;;) {
    int short_of = 0, over = 0;
    for (int c = 0; c < 3; c++)
      for (int w = 0; w < 2; w++) {
        CT_OK(LAPI_Getcntr(t->h, &cntr[c][w], &v[c][w]));
        short_of += v[c][w] < want[c][w];
        over += v[c][w] > want[c][w];
      }
    if (over || !short_of || now_s() > end)
      break;
    sched_yield();
  }
  for (int c = 0; c < 3; c++)
    for (int w = 0; w < 2; w++)
      if (v[c][w] != want[c][w])
        ct_fail("CPE %d wave %d: %s %c is %d, expected %d", t->me, wave,
                cntr_name[c], 'A' + w, v[c][w], want[c][w]);
  for (int c = 0; c < 3; c++)
    for (int w = 0; w < 2; w++) {
      if (v[c][w] < want[c][w])
        continue; /* Waitcntr would hang: reported above */
      if (want[c][w])
        CT_OK(LAPI_Waitcntr(t->h, &cntr[c][w], want[c][w], NULL));
      int left = -1;
      CT_OK(LAPI_Getcntr(t->h, &cntr[c][w], &left));
      if (left != 0)
        ct_fail("CPE %d wave %d: %s %c reads %d after its wait", t->me,
                wave, cntr_name[c], 'A' + w, left);
    }
}

/* How slot bytes relate to the source bytes. */
enum layout { PLAIN, PUTV_SWAP, GETV_SWAP };

/* The source byte that lands at byte i of a slot. */
static size_t source_byte(size_t i, enum layout how)
{
  switch (how) {
  case PUTV_SWAP: /* origin [0, SPLIT) went to [SLOT - SPLIT, SLOT) */
    return i >= SLOT - SPLIT ? i - (SLOT - SPLIT) : i + SPLIT;
  case GETV_SWAP: /* target [SLOT - SPLIT, SLOT) came to [0, SPLIT) */
    return i < SPLIT ? i + (SLOT - SPLIT) : i - SPLIT;
  default:
    return i;
  }
}

static void check_slot(struct ct_task *t, const unsigned char *p,
                       uint32_t tag, enum layout how, int k,
                       const char *what, int wave)
{
  for (size_t i = 0; i < SLOT; i++) {
    unsigned char want = tag ? ct_byte(tag, source_byte(i, how)) : 0;
    if (p[i] != want) {
      ct_fail("CPE %d wave %d step %d (%c%d): %s byte %zu is %u, not %u",
              t->me, wave, k, S.steps[k].kind, (int)S.steps[k].off, what, i,
              p[i], want);
      return;
    }
  }
}

static void check_data(struct ct_task *t, int wave)
{
  for (int k = 0; k < S.nsteps; k++) {
    const struct step *s = &S.steps[k];
    int from = source(t->me, s, t->n);
    int puts = puts_data(s) && active(from, s);
    int gets = gets_data(s) && active(t->me, s);
    /* Slot k of our receive buffer: written by the task whose step k
     * targets us, or by nobody. */
    check_slot(t, recv + (size_t)k * SLOT, puts ? tag_of(from, k, wave) : 0,
               s->kind == 'V' ? PUTV_SWAP : PLAIN, k, "receive slot", wave);
    check_slot(t, getbuf + (size_t)k * SLOT,
               gets ? tag_of((int)tgt_of(t, s), k, wave) : 0,
               s->kind == 'W' ? GETV_SWAP : PLAIN, k, "get slot", wave);
  }
}

/* ------------------------------------------------------------ a wave */

static void stats(struct ct_task *t, long *ops, long *bytes)
{
  lapi_statistics_t st;
  CT_OK(LAPI_Qenv(t->h, QUERY_SHM_STATISTICS, (int *)(void *)&st));
  *ops = (long)st.Tot_pkt_recv_cnt;
  *bytes = (long)st.Tot_data_recv;
}

static void wave(struct ct_task *t, int w, enum wave_mode mode,
                 unsigned char *src_mem, const struct expected *e)
{
  long ops0, bytes0, ops1, bytes1;
  stats(t, &ops0, &bytes0); /* the last wave ended with a Gfence */
  memset(recv, 0, sizeof recv);
  memset(getbuf, 0, sizeof getbuf);
  for (int k = 0; k < S.nsteps; k++) {
    ct_fill(src_mem + (size_t)k * SLOT, SLOT, tag_of(t->me, k, w));
    ct_fill(S.expo[t->me] + (size_t)k * SLOT, SLOT, tag_of(t->me, k, w));
  }
  if (t->me == 0) {
    S.wave = w;
    __atomic_store_n(&S.pushed, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&S.turn, 0, __ATOMIC_SEQ_CST);
  }
  CT_OK(LAPI_Gfence(t->h));
  if (mode != FREE) {
    if (t->me == 0)
      CT_OK(LAPI_Amsend(t->h, 1, (void *)gate_header, NULL, 0, NULL, 0,
                        NULL, NULL, NULL));
    if (spin_until(&S.gate_in, w + 1) != 0)
      ct_fail("CPE %d wave %d: the gate did not close", t->me, w);
    if (mode == GATED_SERIAL && spin_until(&S.turn, t->me) != 0)
      ct_fail("CPE %d wave %d: no turn", t->me, w);
  }
  /* Mixed waves start each task elsewhere in the script, so that the
   * interleaved origins meet in different patterns. */
  int first = mode == GATED_MIXED ? (t->me * 7) % S.nsteps : 0;
  for (int i = 0; i < S.nsteps; i++) {
    int k = (first + i) % S.nsteps;
    if (active(t->me, &S.steps[k]))
      issue(t, k, src_mem, w);
  }
  if (mode == GATED_SERIAL)
    __atomic_store_n(&S.turn, t->me + 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&S.pushed, 1, __ATOMIC_SEQ_CST);
  CT_OK(LAPI_Fence(t->h));
  CT_OK(LAPI_Gfence(t->h));
  check_counters(t, e, w);
  check_data(t, w);
  CT_CHECK_EQ(__atomic_load_n(&S.rmw_var[t->me], __ATOMIC_SEQ_CST),
              e->rmw * (w + 1));
  /* Received operations and bytes: booked to the right task.  The gate
   * is an empty active message to task 1. */
  stats(t, &ops1, &bytes1);
  CT_CHECK_EQ(ops1 - ops0, e->recv_ops + (mode != FREE && t->me == 1));
  CT_CHECK_EQ(bytes1 - bytes0, e->recv_bytes);
  CT_OK(LAPI_Gfence(t->h));
}

static const enum wave_mode modes[] = {GATED_SERIAL, GATED_MIXED, FREE,
                                       GATED_SERIAL, FREE, GATED_MIXED};
#define NWAVES ((int)(sizeof modes / sizeof modes[0]))

static void batch_task(void *arg)
{
  (void)arg;
  struct ct_task t;
  ct_open(&t);
  CT_CHECK(t.n >= 2 && t.n <= MAX_TASKS);
  for (int c = 0; c < 3; c++)
    for (int w = 0; w < 2; w++)
      ct_zero(&t, &cntr[c][w]);
  ct_gather(&t, &cntr[C_TGT][0], tgt_tab[0]);
  ct_gather(&t, &cntr[C_TGT][1], tgt_tab[1]);
  unsigned char *src_mem = malloc((size_t)S.nsteps * SLOT);
  S.expo[t.me] = malloc((size_t)S.nsteps * SLOT);
  S.recv_of[t.me] = recv;
  S.rmw_var[t.me] = 0;
  struct expected e;
  int am, sh, ch;
  expect_for(t.me, t.n, &e, &am, &sh, &ch);
  CT_OK(LAPI_Gfence(t.h));
  for (int w = 0; w < NWAVES; w++)
    wave(&t, w, modes[w], src_mem, &e);
  ct_close(&t);
  free(src_mem);
  free(S.expo[t.me]);
}

static void run(int n)
{
  cr_assert(n >= 2 && n <= MAX_TASKS);
  parse_script();
  S.ncpes = n;
  unsigned long joined0 = crts_tp_rma_joined();
  ct_run(n, batch_task, NULL);
  CT_ASSERT_NO_FAILURE();
  /* The gated waves exist to form runs: without any, this test would
   * check nothing of same_run. */
  cr_assert_gt(crts_tp_rma_joined(), joined0,
               "no put or get was completed as part of a run");
  struct expected e;
  int am, sh, ch;
  expect_for(0, n, &e, &am, &sh, &ch);
  cr_assert_eq(S.am_calls, am * NWAVES);
  cr_assert_eq(S.sh_calls, sh * NWAVES);
  cr_assert_eq(S.ch_calls, ch * NWAVES);
}

Test(cpe_batch, two_tasks, .timeout = CT_TIMEOUT) { run(2); }
Test(cpe_batch, five_tasks, .timeout = CT_TIMEOUT) { run(5); }
Test(cpe_batch, eight_tasks, .timeout = CT_TIMEOUT) { run(8); }
