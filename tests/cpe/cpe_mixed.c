/*
 * cpe_mixed.c - a mixed job: CPE tasks of several core groups, all-to-all
 * LAPI_Amsendv.  Run through lapirun, one core group per process:
 *
 *   CRTS_NUM_CPES=8 lapirun -n 2 -c 8 lapi_cpe_mixed [ROUNDS]
 *
 * Every round, every task sends one Amsendv to every task (itself
 * included): IOVECTOR, GENERIC or STRIDED by turns, from LDM or main
 * memory, into a receive slot of the target in LDM or main memory chosen
 * by the target's header handler (on the target's MPE), reshaped on the
 * way.  The completion handler checks every byte of the slot.  Tasks of
 * one core group reach each other through the crts transport, the others
 * over libfabric, oneself through the loopback: the statistics of every
 * transport must count exactly those messages.  Each process prints PASS
 * or FAIL for its core group (exit status 1 on FAIL).
 */
#include <crts.h>
#include <lapi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOT 192   /* bytes a source may write in a target's slot */
#define MAXT 64    /* tasks of the job at most (LDM slots) */

struct hdr {
  int src, round, type, len;
};

static struct {
  int rounds, me0, ntasks, tpc;
  unsigned char *ldm_slots[64];  /* [local task] its LDM slots */
  unsigned char *mem_slots[64];  /* [local task] its memory slots */
  /* Target vectors the header handlers return, per local task. */
  lapi_vec_t tv[64];
  void *ti[64][4];
  ulong tl[64][4];
  int failures;
  char first[256];
} G;

static __thread_local unsigned char ldm_slots[MAXT / 2 * SLOT];
static __thread_local unsigned char ldm_src[SLOT];
static __thread_local lapi_cntr_t tgt_c, cmpl_c;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
  if (__atomic_add_fetch(&G.failures, 1, __ATOMIC_SEQ_CST) == 1) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(G.first, sizeof G.first, fmt, ap);
    va_end(ap);
  }
}

static unsigned char pattern(int src, int tgt, int round, int i)
{
  return (unsigned char)(src * 29 + tgt * 11 + round * 5 + i * 3 + 1);
}

/* Where the slot of src in task me lies, and whether it is LDM. */
static unsigned char *slot_of(int me, int src, int round)
{
  int local = me - G.me0;
  int ldm = (src + round) % 2;
  return (ldm ? G.ldm_slots[local] : G.mem_slots[local]) +
         (size_t)src * SLOT;
}

static void check_done(lapi_handle_t *hndl, void *uinfo)
{
  const struct hdr *u = uinfo;
  int me = -1;
  LAPI_Qenv(*hndl, TASK_ID, &me);
  const unsigned char *slot = slot_of(me, u->src, u->round);
  /* The handlers wrote the stream in order into the slot (see below). */
  for (int i = 0; i < u->len; i++)
    if (slot[i] != pattern(u->src, me, u->round, i)) {
      fail("task %d from %d: byte %d", me, u->src, i);
      break;
    }
  free(uinfo);
}

/* The target side keeps the stream contiguous in the slot, in pieces of
 * another shape than the origin's: IOVECTOR with the origin's lengths,
 * GENERIC in pieces of 7 bytes, STRIDED as one dense block run. */
static lapi_vec_t *amv_header(lapi_handle_t *hndl, void *uhdr,
                              uint *uhdr_len, ulong *len_vec,
                              compl_hndlr_t **comp_h, void **uinfo)
{
  (void)uhdr_len;
  const struct hdr *u = uhdr;
  int me = -1;
  LAPI_Qenv(*hndl, TASK_ID, &me);
  int local = me - G.me0;
  unsigned char *slot = slot_of(me, u->src, u->round);
  lapi_vec_t *v = &G.tv[local];
  void **info = G.ti[local];
  ulong *len = G.tl[local];
  v->info = info;
  v->len = len;
  if (u->type == LAPI_GEN_STRIDED_XFER) {
    /* origin: blocks of len_vec[0] bytes; here dense */
    v->vec_type = LAPI_GEN_STRIDED_XFER;
    v->num_vecs = (uint)(u->len / (int)len_vec[0]);
    info[0] = slot;
    info[1] = (void *)(uintptr_t)len_vec[0];
    info[2] = (void *)(uintptr_t)len_vec[0];
    v->len = NULL;
  } else if (u->type == LAPI_GEN_IOVECTOR) {
    v->vec_type = LAPI_GEN_IOVECTOR;
    v->num_vecs = 3;
    size_t at = 0;
    for (int i = 0; i < 3; i++) {
      info[i] = slot + at;
      len[i] = len_vec[i];
      at += len_vec[i];
    }
  } else {
    v->vec_type = LAPI_GEN_GENERIC;
    int n = (u->len + 6) / 7;
    if (n > 4)
      n = 4;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
      size_t piece = i < n - 1 ? 7 : (size_t)u->len - at;
      info[i] = slot + at;
      len[i] = piece;
      at += piece;
    }
    v->num_vecs = (uint)n;
  }
  struct hdr *keep = malloc(sizeof *keep);
  if (keep)
    *keep = *u;
  *comp_h = keep ? check_done : NULL;
  *uinfo = keep;
  return v;
}

static void send_to(lapi_handle_t h, int me, int tgt, int round,
                    unsigned char *mem_src)
{
  int type = (me + tgt + round) % 3;
  unsigned char *src = (me + tgt + round) % 2 ? ldm_src : mem_src;
  struct hdr u = {me, round, 0, 0};
  static __thread_local void *oi[4];
  static __thread_local ulong ol[4];
  lapi_vec_t ov = {LAPI_GEN_IOVECTOR, 0, oi, ol};
  if (type == 0) { /* IOVECTOR: 3 pieces, every other byte run */
    int l[3] = {5 + tgt % 7, 16, 3 + round % 5};
    u.type = LAPI_GEN_IOVECTOR;
    u.len = l[0] + l[1] + l[2];
    ov.num_vecs = 3;
    for (int i = 0, at = 0, k = 0; i < 3; i++) {
      oi[i] = src + at;
      ol[i] = (ulong)l[i];
      for (int j = 0; j < l[i]; j++)
        src[at + j] = pattern(me, tgt, round, k++);
      at += l[i] + 4;
    }
  } else if (type == 1) { /* GENERIC: 2 pieces */
    u.type = LAPI_GEN_GENERIC;
    u.len = 20 + (me * 3 + tgt) % 9;
    ov.vec_type = LAPI_GEN_GENERIC;
    ov.num_vecs = 2;
    oi[0] = src;
    ol[0] = 9;
    oi[1] = src + 40;
    ol[1] = (ulong)u.len - 9;
    for (int k = 0; k < u.len; k++)
      src[k < 9 ? k : 40 + k - 9] = pattern(me, tgt, round, k);
  } else { /* STRIDED: 6 blocks of 8 bytes, pitch 12 */
    u.type = LAPI_GEN_STRIDED_XFER;
    u.len = 48;
    ov.vec_type = LAPI_GEN_STRIDED_XFER;
    ov.num_vecs = 6;
    oi[0] = src;
    oi[1] = (void *)(uintptr_t)8;
    oi[2] = (void *)(uintptr_t)12;
    ov.len = NULL;
    for (int b = 0; b < 6; b++)
      for (int j = 0; j < 8; j++)
        src[b * 12 + j] = pattern(me, tgt, round, b * 8 + j);
  }
  lapi_cntr_t org;
  LAPI_Setcntr(h, &org, 0);
  int rc = LAPI_Amsendv(h, (uint)tgt, (void *)amv_header, &u, sizeof u, &ov,
                        NULL, &org, &cmpl_c);
  if (rc != LAPI_SUCCESS) {
    fail("task %d -> %d: LAPI_Amsendv returned %d", me, tgt, rc);
    return;
  }
  /* The source buffer (and the vector) are reused for the next target. */
  LAPI_Waitcntr(h, &org, 1, NULL);
}

static void task(void *arg)
{
  (void)arg;
  lapi_handle_t h;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  if (LAPI_Init(&h, &info) != LAPI_SUCCESS) {
    fail("LAPI_Init failed on CPE %d", CRTS_tid);
    return;
  }
  int me, n, shm;
  LAPI_Qenv(h, TASK_ID, &me);
  LAPI_Qenv(h, NUM_TASKS, &n);
  LAPI_Qenv(h, QUERY_SHM_NUM_TASKS, &shm);
  if (CRTS_tid == 0) {
    G.me0 = me;
    G.ntasks = n;
    G.tpc = shm;
  }
  if (n > MAXT || shm > 64) {
    fail("job of %d tasks, %d per core group: too big", n, shm);
    return;
  }
  int local = me - (me / shm) * shm;
  G.ldm_slots[local] = ldm_slots;
  G.mem_slots[local] = calloc((size_t)n, SLOT);
  unsigned char *mem_src = malloc(SLOT);
  LAPI_Setcntr(h, &tgt_c, 0);
  LAPI_Setcntr(h, &cmpl_c, 0);
  LAPI_Gfence(h); /* every slot table is filled */
  lapi_statistics_t s0[3], s1[3];
  static const lapi_query_t q[3] = {QUERY_LOCAL_SEND_STATISTICS,
                                    QUERY_SHM_STATISTICS, QUERY_STATISTICS};
  for (int k = 0; k < 3; k++)
    LAPI_Qenv(h, q[k], (int *)(void *)&s0[k]);
  for (int r = 0; r < G.rounds; r++) {
    for (int i = 0; i < n; i++)
      send_to(h, me, (me + i) % n, r, mem_src);
    LAPI_Waitcntr(h, &cmpl_c, n, NULL);
    LAPI_Gfence(h); /* every slot of this round is checked */
  }
  for (int k = 0; k < 3; k++)
    LAPI_Qenv(h, q[k], (int *)(void *)&s1[k]);
  long long self = s1[0].Tot_pkt_sent_cnt - s0[0].Tot_pkt_sent_cnt;
  long long crts = s1[1].Tot_pkt_sent_cnt - s0[1].Tot_pkt_sent_cnt;
  long long all = s1[2].Tot_pkt_sent_cnt - s0[2].Tot_pkt_sent_cnt;
  if (self != G.rounds || crts != (long long)G.rounds * (shm - 1) ||
      all != (long long)G.rounds * n)
    fail("task %d: sent %d through crts, expected %d", me, (int)crts,
         G.rounds * (shm - 1));
  LAPI_Gfence(h);
  LAPI_Term(h);
  free(mem_src);
}

int main(int argc, char **argv)
{
  G.rounds = argc > 1 ? atoi(argv[1]) : 10;
  if (CRTS_init() != 0) {
    fprintf(stderr, "CRTS_init failed\n");
    return 2;
  }
  CRTS_athread_spawn((void (*)(void))task, NULL);
  CRTS_athread_join();
  for (int t = 0; t < 64; t++)
    free(G.mem_slots[t]);
  if (G.failures) {
    printf("cpe_mixed: FAIL (%d): %s\n", G.failures, G.first);
    return 1;
  }
  printf("cpe_mixed: tasks %d..%d of %d, %d rounds of all-to-all Amsendv: "
         "PASS\n", G.me0, G.me0 + G.tpc - 1, G.ntasks, G.rounds);
  return 0;
}
