/*
 * cpe_stress.c - CPE tasks of one core group hammer each other through the
 * crts transport: Amsend, Amsendv, Put, Get and Rmw between random pairs,
 * LDM and main memory, many origins on one target at once, fences, and a
 * few tasks in polling mode.  Every byte and every counter is checked.
 * A plain program (no Criterion), so it is also the ThreadSanitizer run of
 * CPE-task mode:
 *
 *   lapi_cpe_stress [ROUNDS [TASKS]]      (defaults 200 and 8)
 *
 * Each task owns, in every other task, one receive slot in LDM and one in
 * main memory (so no two origins write the same bytes); an origin checks
 * the target slot once its cmpl_cntr moved (the emulator's memory is one
 * address space), a get checks what it read against the target's
 * published bytes, and at the end every Rmw total is compared.  Prints
 * PASS or FAIL (exit status 1).
 */
#include <crts.h>
#include <lapi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOT 128 /* bytes of a receive slot */

static struct {
  int rounds, ntasks;
  unsigned char *ldm_slots[64];   /* [task] -> its LDM slots, SLOT each */
  unsigned char *mem_slots[64];   /* [task] -> its memory slots */
  unsigned char *published[64];   /* [task] -> bytes others Get */
  long long total[64];            /* Rmw64 targets */
  long long added[64];            /* what each task added, atomic */
  int failures;                   /* atomic */
  char first[256];
  void *amv_info[64][2];
  ulong amv_len[64][2];
  lapi_vec_t amv_vec[64];
} G;

static __thread_local unsigned char ldm_slots[64 * SLOT];
static __thread_local unsigned char ldm_src[SLOT];
static __thread_local lapi_cntr_t org_c, cmpl_c;

static void fail(const char *what, int task, int round)
{
  if (__atomic_add_fetch(&G.failures, 1, __ATOMIC_SEQ_CST) == 1)
    snprintf(G.first, sizeof G.first, "task %d round %d: %s", task, round,
             what);
}

static unsigned char pattern(int src, int round, int i)
{
  return (unsigned char)(src * 31 + round * 7 + i * 13 + 1);
}

static uint64_t next_rand(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* uhdr: who sends, which round, which slot kind. */
struct hdr {
  int src, round, ldm, len;
};

static void *am_header(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)uhdr_len;
  (void)msg_len;
  const struct hdr *u = uhdr;
  int me = -1;
  LAPI_Qenv(*hndl, TASK_ID, &me);
  *comp_h = NULL;
  *uinfo = NULL;
  unsigned char *base = u->ldm ? G.ldm_slots[me] : G.mem_slots[me];
  return base + (size_t)u->src * SLOT;
}

static lapi_vec_t *amv_header(lapi_handle_t *hndl, void *uhdr,
                              uint *uhdr_len, ulong *len_vec,
                              compl_hndlr_t **comp_h, void **uinfo)
{
  (void)uhdr_len;
  const struct hdr *u = uhdr;
  int me = -1;
  LAPI_Qenv(*hndl, TASK_ID, &me);
  unsigned char *base = (u->ldm ? G.ldm_slots[me] : G.mem_slots[me]) +
                        (size_t)u->src * SLOT;
  /* The two origin pieces swap places in the slot. */
  lapi_vec_t *v = &G.amv_vec[me];
  G.amv_info[me][0] = base + len_vec[1];
  G.amv_len[me][0] = len_vec[0];
  G.amv_info[me][1] = base;
  G.amv_len[me][1] = len_vec[1];
  v->vec_type = LAPI_GEN_IOVECTOR;
  v->num_vecs = 2;
  v->info = G.amv_info[me];
  v->len = G.amv_len[me];
  *comp_h = NULL;
  *uinfo = NULL;
  return v;
}

static void check_slot(const unsigned char *slot, const unsigned char *want,
                       int len, const char *what, int me, int r)
{
  if (memcmp(slot, want, (size_t)len) != 0)
    fail(what, me, r);
}

static void one_round(lapi_handle_t h, int me, int n, int r, uint64_t *rng,
                      unsigned char *mem_src)
{
  int tgt = (int)(next_rand(rng) % (uint64_t)n);
  int ldm = (int)(next_rand(rng) & 1);
  int len = 1 + (int)(next_rand(rng) % SLOT);
  int op = (int)(next_rand(rng) % 5);
  unsigned char *src = (next_rand(rng) & 1) ? ldm_src : mem_src;
  for (int i = 0; i < len; i++)
    src[i] = pattern(me, r, i);
  unsigned char *slot = (ldm ? G.ldm_slots[tgt] : G.mem_slots[tgt]) +
                        (size_t)me * SLOT;
  struct hdr u = {me, r, ldm, len};
  void *oi[2];
  ulong ol[2];
  lapi_vec_t ov = {LAPI_GEN_IOVECTOR, 2, oi, ol};
  int rc = LAPI_SUCCESS;
  LAPI_Setcntr(h, &cmpl_c, 0);
  LAPI_Setcntr(h, &org_c, 0);
  switch (op) {
  case 0:
    rc = LAPI_Amsend(h, (uint)tgt, (void *)am_header, &u, sizeof u, src,
                     (ulong)len, NULL, &org_c, &cmpl_c);
    break;
  case 1:
    /* The vector (in this frame) stays valid until org_cntr moves. */
    oi[0] = src;
    oi[1] = src + len / 2;
    ol[0] = (ulong)(len / 2);
    ol[1] = (ulong)(len - len / 2);
    rc = LAPI_Amsendv(h, (uint)tgt, (void *)amv_header, &u, sizeof u, &ov,
                      NULL, &org_c, &cmpl_c);
    break;
  case 2:
    rc = LAPI_Put(h, (uint)tgt, (ulong)len, slot, src, NULL, &org_c,
                  &cmpl_c);
    break;
  case 3: {
    unsigned char *dst = src == ldm_src ? ldm_src : mem_src;
    rc = LAPI_Get(h, (uint)tgt, (ulong)len, G.published[tgt], dst, NULL,
                  &org_c);
    break;
  }
  default: {
    long long add = r + 1;
    rc = LAPI_Rmw64(h, FETCH_AND_ADD, (uint)tgt, &G.total[tgt], &add, NULL,
                    &org_c);
    __atomic_add_fetch(&G.added[tgt], add, __ATOMIC_SEQ_CST);
    break;
  }
  }
  if (rc != LAPI_SUCCESS) {
    fail("a call failed", me, r);
    return;
  }
  LAPI_Waitcntr(h, &org_c, 1, NULL);
  if (op <= 2)
    LAPI_Waitcntr(h, &cmpl_c, 1, NULL);
  if (op == 0 || op == 2) {
    check_slot(slot, src, len, op ? "put slot" : "amsend slot", me, r);
  } else if (op == 1) {
    int a = len / 2, b = len - a;
    if (memcmp(slot + b, src, (size_t)a) != 0 ||
        memcmp(slot, src + a, (size_t)b) != 0)
      fail("amsendv slot", me, r);
  } else if (op == 3) {
    const unsigned char *dst = src;
    for (int i = 0; i < len; i++)
      if (dst[i] != (unsigned char)(tgt * 5 + i)) {
        fail("get bytes", me, r);
        break;
      }
  }
}

static void task(void *arg)
{
  (void)arg;
  lapi_handle_t h;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  if (LAPI_Init(&h, &info) != LAPI_SUCCESS) {
    fail("LAPI_Init", -1, -1);
    return;
  }
  int me = -1, n = -1;
  LAPI_Qenv(h, TASK_ID, &me);
  LAPI_Qenv(h, NUM_TASKS, &n);
  G.ldm_slots[me] = ldm_slots;
  G.mem_slots[me] = calloc((size_t)n, SLOT);
  G.published[me] = malloc(SLOT);
  for (int i = 0; i < SLOT; i++)
    G.published[me][i] = (unsigned char)(me * 5 + i);
  unsigned char *mem_src = malloc(SLOT);
  /* A few tasks serve their handle in polling mode (the MPE still does). */
  if (me % 4 == 3)
    LAPI_Senv(h, INTERRUPT_SET, 0);
  LAPI_Gfence(h);
  uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(me + 1);
  for (int r = 0; r < G.rounds; r++) {
    one_round(h, me, n, r, &rng, mem_src);
    if (r % 16 == 15 && LAPI_Fence(h) != LAPI_SUCCESS)
      fail("LAPI_Fence", me, r);
  }
  LAPI_Gfence(h);
  if (G.total[me] != G.added[me])
    fail("Rmw64 total", me, G.rounds);
  LAPI_Gfence(h);
  LAPI_Term(h);
  free(mem_src);
}

int main(int argc, char **argv)
{
  G.rounds = argc > 1 ? atoi(argv[1]) : 200;
  G.ntasks = argc > 2 ? atoi(argv[2]) : 8;
  if (G.rounds < 1 || G.ntasks < 2 || G.ntasks > 64) {
    fprintf(stderr, "usage: %s [ROUNDS [TASKS 2..64]]\n", argv[0]);
    return 2;
  }
  char nbuf[16];
  snprintf(nbuf, sizeof nbuf, "%d", G.ntasks);
  setenv("CRTS_NUM_CPES", nbuf, 1);
  if (CRTS_init() != 0) {
    fprintf(stderr, "CRTS_init failed\n");
    return 2;
  }
  CRTS_athread_spawn((void (*)(void))task, NULL);
  CRTS_athread_join();
  for (int t = 0; t < G.ntasks; t++) {
    free(G.mem_slots[t]);
    free(G.published[t]);
  }
  if (G.failures) {
    printf("FAIL: %d failure(s); first: %s\n", G.failures, G.first);
    return 1;
  }
  printf("PASS: %d tasks x %d rounds\n", G.ntasks, G.rounds);
  return 0;
}
