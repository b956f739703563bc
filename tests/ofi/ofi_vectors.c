/*
 * ofi_vectors.c - randomized vector conformance between core groups.
 *
 * Round r: task me sends to (me + 1) % n a pair of vectors drawn from a
 * generator seeded with (r, me), so the target draws the same pair:
 * IOVECTOR (same lengths, other offsets), GENERIC (independent pieces,
 * either side may be shorter) or STRIDED (same block and count, other
 * strides); eager sizes (up to 8 KiB) or rendezvous ones (64 KiB to
 * 1 MiB) in tiny pieces (8-64 B: the packed path) or large ones
 * (1-16 KiB: RMA reads).  The pair moves by LAPI_Amsendv, then LAPI_Putv
 * into the same target layout, then LAPI_Getv back into the origin
 * layout; every byte of the touched region is compared with what the
 * vector rules say (stream bytes inside the pieces, guard bytes around
 * them and past the shorter side), and every counter is waited on.
 *
 * Built a second time as ofi_vectors_wb (white box, lapi_static) with
 * OFI_VECTORS_WB: with OFI_TEST_CMA=used the job must have made RMA
 * reads by cross-memory attach (ofi_cma.c), with OFI_TEST_CMA=unused RMA
 * reads and none of them by CMA, so each test proves its path ran.
 * Where CMA cannot work (ptrace rules, Yama) "used" exits 77: skipped.
 * OFI_TEST_PACKREF (ofi_packref.c) likewise: "used", some packed chunks
 * were unpacked from a peer's stage arena; "fallback", none were and a
 * sink stopped asking a peer for references (its arena could not be
 * mapped); "off", none were and none was asked again.
 * OFI_TEST_PULL_BUDGET=N (with LAPI_OFI_PULL_BUDGET=N, off shm): some
 * sink waited for the budget, no sink had more than N PULLs in flight,
 * and none is left counted once every transfer is done.
 * OFI_TEST_PULL_BATCH=N (with LAPI_OFI_PULL_BATCH=N, off shm): PULLs
 * asked for several chunks each, up to N, none for more.
 * OFI_TEST_LANE (ofi_lane.c): "used", packets went through the
 * shared-memory lane and were read from it; "full", so did they, some
 * found a ring full (-FI_EAGAIN, retried) and some started a ring over
 * at 0 (a WRAP mark); "unused", none did.
 */
#include "ofi_test.h"

#ifdef OFI_VECTORS_WB
#include <string.h>

#include "transport/ofi/ofi.h"

/* The stage-reference path that OFI_TEST_PACKREF names ran; 1 if the
 * test is to be skipped (references wanted, no arena could be mapped
 * here: the same ptrace rules as CMA). */
static int check_packref_path(void)
{
  const char *want = getenv("OFI_TEST_PACKREF");
  if (want == NULL)
    return 0;
  pthread_mutex_lock(&ofi.lock);
  uint64_t chunks = ofi.st.ref_chunks, refused = 0;
  for (uint k = 0; k < ofi.ntasks; k++)
    refused += ofi.peers[k].ref_off != 0;
  pthread_mutex_unlock(&ofi.lock);
  chunks = ot_job_sum(chunks);
  refused = ot_job_sum(refused);
  if (strcmp(want, "used") == 0 && chunks == 0 && refused > 0) {
    if (ot.me == 0)
      printf("ofi_vectors: a peer's stage arena cannot be mapped here: "
             "SKIP\n");
    return 1;
  }
  if (strcmp(want, "used") == 0)
    OT_CHECK(chunks > 0 && refused == 0, "%llu chunks by reference, %llu "
             "peers refused: want some, none refused",
             (unsigned long long)chunks, (unsigned long long)refused);
  else if (strcmp(want, "fallback") == 0)
    OT_CHECK(chunks == 0 && refused > 0, "%llu chunks by reference, %llu "
             "peers refused: want none, some refused",
             (unsigned long long)chunks, (unsigned long long)refused);
  else
    OT_CHECK(chunks == 0 && refused == 0, "%llu chunks by reference, %llu "
             "peers refused: want none of either",
             (unsigned long long)chunks, (unsigned long long)refused);
  return 0;
}

/* The PULL budget (ofi_sink.c) held, and was reached. */
static void check_pull_budget(void)
{
  const char *want = getenv("OFI_TEST_PULL_BUDGET");
  if (want == NULL)
    return;
  long budget = atol(want);
  pthread_mutex_lock(&ofi.lock);
  uint64_t waits = ofi.st.pull_waits;
  long peak = ofi.st.pulls_peak, left = ofi.pulls_out;
  int queued = ofi.pwait_head != NULL;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(peak <= budget, "%ld PULLs in flight at once, budget %ld", peak,
           budget);
  OT_CHECK(left == 0 && !queued, "%ld PULLs still counted, %s sink waiting "
           "at the end", left, queued ? "a" : "no");
  waits = ot_job_sum(waits);
  OT_CHECK(waits > 0, "no sink ever waited for the budget of %ld", budget);
}

/* OFI_TEST_PULL_BATCH=N (with LAPI_OFI_PULL_BATCH=N, off shm): the
 * carried PULLs asked for more than one chunk each on average, some for
 * N, none for more (ofi_sink.c, pull_chunks). */
static void check_pull_batch(void)
{
  const char *want = getenv("OFI_TEST_PULL_BATCH");
  if (want == NULL)
    return;
  long batch = atol(want);
  pthread_mutex_lock(&ofi.lock);
  uint64_t pulls = ofi.st.batch_pulls, chunks = ofi.st.batch_chunks;
  long peak = ofi.st.batch_peak;
  pthread_mutex_unlock(&ofi.lock);
  OT_CHECK(peak <= batch, "a PULL asked for %ld chunks, batch %ld", peak,
           batch);
  uint64_t reached = ot_job_sum(peak == batch);
  pulls = ot_job_sum(pulls);
  chunks = ot_job_sum(chunks);
  OT_CHECK(pulls > 0 && chunks > pulls, "%llu carried PULLs asked for "
           "%llu chunks: want more chunks than PULLs",
           (unsigned long long)pulls, (unsigned long long)chunks);
  OT_CHECK(reached > 0, "no PULL asked for a batch of %ld chunks", batch);
}

/* The shared-memory lane carried the job's packets, or none of them. */
static void check_lane_path(void)
{
  const char *want = getenv("OFI_TEST_LANE");
  if (want == NULL)
    return;
  pthread_mutex_lock(&ofi.lock);
  uint64_t sent = ofi.st.lane_sent, got = ofi.st.lane_recv;
  uint64_t full = ofi.st.lane_full, wraps = ofi.st.lane_wraps;
  pthread_mutex_unlock(&ofi.lock);
  /* (sent and read are not compared: each task counts at its own
   * moment, and an acknowledgement may be on its way) */
  sent = ot_job_sum(sent);
  got = ot_job_sum(got);
  full = ot_job_sum(full);
  wraps = ot_job_sum(wraps);
  if (strcmp(want, "unused") == 0) {
    OT_CHECK(sent == 0 && got == 0, "%llu packets sent and %llu read "
             "through the lane: want none", (unsigned long long)sent,
             (unsigned long long)got);
    return;
  }
  OT_CHECK(sent > 0 && got > 0, "%llu packets sent and %llu read "
           "through the lane: want some of each",
           (unsigned long long)sent, (unsigned long long)got);
  if (strcmp(want, "full") == 0)
    OT_CHECK(full > 0 && wraps > 0, "%llu sends found a ring full, %llu "
             "records wrapped: want some of each", (unsigned long long)full,
             (unsigned long long)wraps);
}

/* 1 if the test is to be skipped (CMA wanted, not usable here). */
static int check_read_path(void)
{
  const char *want = getenv("OFI_TEST_CMA");
  if (want == NULL)
    return 0;
  pthread_mutex_lock(&ofi.lock);
  uint64_t reads = ofi.st.reads, cma = ofi.st.cma_reads;
  int on = ofi.cma; /* the same in every task */
  pthread_mutex_unlock(&ofi.lock);
  if (strcmp(want, "used") == 0 && !on) {
    if (ot.me == 0)
      printf("ofi_vectors: cross-memory attach is not usable here: "
             "SKIP\n");
    return 1;
  }
  reads = ot_job_sum(reads);
  cma = ot_job_sum(cma);
  if (strcmp(want, "used") == 0)
    OT_CHECK(cma > 0, "no RMA read went by CMA (%llu reads)",
             (unsigned long long)reads);
  else
    OT_CHECK(reads > 0 && cma == 0, "%llu RMA reads, %llu by CMA: want "
             "some, none by CMA", (unsigned long long)reads,
             (unsigned long long)cma);
  return 0;
}
#endif

#define ARENA (4u << 20)
#define MAXS 20000
#define GUARD 0xEE
#define ROUNDS 36

struct side {
  uint n;
  size_t off[MAXS], len[MAXS];
  size_t block, stride; /* STRIDED */
  size_t total, extent;
};

struct pair {
  int type;
  struct side o, t;
  size_t moved;
};

static unsigned char org_arena[ARENA], tgt_arena[ARENA];
static unsigned char expect[ARENA];
static lapi_cntr_t am_tgt, put_tgt, get_tgt;
static struct pair in_pair; /* what the header handler drew */
static void *in_info[MAXS];
static ulong in_len[MAXS];
static lapi_vec_t in_vec;
static int in_round, am_done_flag;

static size_t pick(uint64_t *s, size_t lo, size_t hi)
{
  return lo + ot_rand(s) % (hi - lo + 1);
}

static void lay_out(uint64_t *s, struct side *sd, size_t gap)
{
  size_t at = pick(s, 0, 64);
  for (uint i = 0; i < sd->n; i++) {
    sd->off[i] = at;
    at += sd->len[i] + pick(s, 0, gap);
  }
  sd->extent = at;
}

static void draw(int round, int from, struct pair *p)
{
  uint64_t s = 0x9e3779b97f4a7c15ull ^ ((uint64_t)round << 20) ^
               (uint64_t)from;
  for (int i = 0; i < 4; i++)
    ot_rand(&s);
  p->type = (int)(ot_rand(&s) % 3);
  int eager = ot_rand(&s) % 2, tiny = ot_rand(&s) % 2;
  size_t total = eager ? pick(&s, 1, 8192) : pick(&s, 65536, 1u << 20);
  size_t lo = eager || tiny ? 8 : 1024, hi = eager || tiny ? 64 : 16384;
  if (p->type == LAPI_GEN_STRIDED_XFER) {
    size_t block = pick(&s, lo, hi);
    size_t num = total / block ? total / block : 1;
    p->o.block = p->t.block = block;
    p->o.stride = block + pick(&s, 0, block);
    p->t.stride = block + pick(&s, 0, 64);
    size_t widest = p->o.stride > p->t.stride ? p->o.stride : p->t.stride;
    while (num > 1 && num * widest + 128 > ARENA)
      num /= 2;
    p->o.n = p->t.n = (uint)num;
    p->o.total = p->t.total = p->moved = num * block;
    p->o.extent = (num - 1) * p->o.stride + block + 64;
    p->t.extent = (num - 1) * p->t.stride + block + 64;
    p->o.off[0] = pick(&s, 0, 64);
    p->t.off[0] = pick(&s, 0, 64);
    return;
  }
  struct side *sides[2] = {&p->o, &p->t};
  for (int k = 0; k < 2; k++) {
    struct side *sd = sides[k];
    if (k == 1 && p->type == LAPI_GEN_IOVECTOR) {
      sd->n = p->o.n;
      memcpy(sd->len, p->o.len, sizeof(size_t) * sd->n);
      sd->total = p->o.total;
    } else {
      size_t want = k == 1 ? total + pick(&s, 0, 200) - 100 : total;
      if ((ssize_t)want < 1)
        want = 1;
      sd->n = 0;
      sd->total = 0;
      while (sd->total < want && sd->n < MAXS) {
        size_t l = pick(&s, lo, hi);
        if (ot_rand(&s) % 16 == 0)
          l = 0; /* empty pieces are legal */
        if (l > want - sd->total)
          l = want - sd->total;
        sd->len[sd->n++] = l;
        sd->total += l;
      }
    }
    lay_out(&s, sd, 64);
  }
  p->moved = p->o.total < p->t.total ? p->o.total : p->t.total;
}

/* Vector over base for one side. */
static void make_vec(const struct pair *p, const struct side *sd, void *base,
                     lapi_vec_t *v, void **info, ulong *len)
{
  v->vec_type = (lapi_vectype_t)p->type;
  v->num_vecs = sd->n;
  v->info = info;
  if (p->type == LAPI_GEN_STRIDED_XFER) {
    info[0] = (char *)base + sd->off[0];
    info[1] = (void *)(uintptr_t)sd->block;
    info[2] = (void *)(uintptr_t)sd->stride;
    v->len = NULL;
    return;
  }
  for (uint i = 0; i < sd->n; i++) {
    info[i] = (char *)base + sd->off[i];
    len[i] = sd->len[i];
  }
  v->len = len;
}

/* The bytes a side's region holds after `moved` stream bytes of seed
 * landed in it (guard elsewhere). */
static void expected(const struct pair *p, const struct side *sd,
                     uint32_t seed, unsigned char *img)
{
  memset(img, GUARD, sd->extent);
  size_t pos = 0;
  for (uint i = 0; i < sd->n && pos < p->moved; i++) {
    size_t off = p->type == LAPI_GEN_STRIDED_XFER
                     ? sd->off[0] + i * sd->stride : sd->off[i];
    size_t l = p->type == LAPI_GEN_STRIDED_XFER ? sd->block : sd->len[i];
    for (size_t b = 0; b < l && pos < p->moved; b++)
      img[off + b] = ot_byte(seed, pos++);
  }
}

static void fill_stream(const struct pair *p, const struct side *sd,
                        unsigned char *base, uint32_t seed)
{
  size_t pos = 0;
  for (uint i = 0; i < sd->n; i++) {
    size_t off = p->type == LAPI_GEN_STRIDED_XFER
                     ? sd->off[0] + i * sd->stride : sd->off[i];
    size_t l = p->type == LAPI_GEN_STRIDED_XFER ? sd->block : sd->len[i];
    for (size_t b = 0; b < l; b++)
      base[off + b] = ot_byte(seed, pos++);
  }
}

static void compare(const char *what, int round, const struct pair *p,
                    const struct side *sd, const unsigned char *got,
                    uint32_t seed)
{
  expected(p, sd, seed, expect);
  for (size_t i = 0; i < sd->extent; i++)
    if (got[i] != expect[i]) {
      OT_CHECK(0, "%s round %d type %d moved %zu: byte %zu is %02x, want "
               "%02x", what, round, p->type, p->moved, i, got[i], expect[i]);
      return;
    }
}

static void am_done(lapi_handle_t *h, void *info)
{
  (void)h;
  (void)info;
  compare("Amsendv", in_round, &in_pair, &in_pair.t, tgt_arena,
          (uint32_t)(in_round * 31 + ot.src));
  __atomic_store_n(&am_done_flag, 1, __ATOMIC_SEQ_CST);
}

static lapi_vec_t *vhdr(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                        ulong *len_vec, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr_len;
  in_round = *(int *)uhdr;
  draw(in_round, ot.src, &in_pair);
  if (in_pair.type != LAPI_GEN_STRIDED_XFER && in_pair.o.n)
    OT_CHECK(len_vec[0] == in_pair.o.len[0], "len_vec[0] %lu, want %zu",
             len_vec[0], in_pair.o.len[0]);
  make_vec(&in_pair, &in_pair.t, tgt_arena, &in_vec, in_info, in_len);
  *comp_h = am_done;
  *uinfo = NULL;
  return &in_vec;
}

static void *o_info[MAXS], *t_info[MAXS];
static ulong o_len[MAXS], t_len[MAXS];
static struct pair out_pair;

int main(void)
{
  ot_init(NULL, 170);
  LAPI_Setcntr(ot.h, &am_tgt, 0);
  LAPI_Setcntr(ot.h, &put_tgt, 0);
  LAPI_Setcntr(ot.h, &get_tgt, 0);
  void **am_cntrs = ot_addrs(&am_tgt);
  void **put_cntrs = ot_addrs(&put_tgt);
  void **get_cntrs = ot_addrs(&get_tgt);
  void **arenas = ot_addrs(tgt_arena);
  int rounds = getenv("OFI_VEC_ROUNDS") ? atoi(getenv("OFI_VEC_ROUNDS"))
                                        : ROUNDS;
  lapi_cntr_t org, cmpl;
  lapi_vec_t ov, tv;
  for (int r = 0; r < rounds; r++) {
    struct pair *p = &out_pair;
    draw(r, ot.me, p);
    uint32_t seed = (uint32_t)(r * 31 + ot.me);
    uint32_t in_seed = (uint32_t)(r * 31 + ot.src);
    struct pair src_pair;
    draw(r, ot.src, &src_pair);

    /* Amsendv */
    memset(org_arena, GUARD, p->o.extent);
    fill_stream(p, &p->o, org_arena, seed);
    memset(tgt_arena, GUARD, ARENA);
    __atomic_store_n(&am_done_flag, 0, __ATOMIC_SEQ_CST);
    OT_OK(LAPI_Gfence(ot.h));
    make_vec(p, &p->o, org_arena, &ov, o_info, o_len);
    LAPI_Setcntr(ot.h, &org, 0);
    LAPI_Setcntr(ot.h, &cmpl, 0);
    int uh = r;
    OT_OK(LAPI_Amsendv(ot.h, (uint)ot.tgt, (void *)vhdr, &uh, sizeof uh,
                       &ov, am_cntrs[ot.tgt], &org, &cmpl));
    OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
    OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
    OT_OK(LAPI_Waitcntr(ot.h, &am_tgt, 1, NULL));
    OT_CHECK(am_done_flag == 1, "round %d: no completion handler", r);
    OT_OK(LAPI_Gfence(ot.h));

    /* Putv into the same layout of the target's arena. */
    memset(tgt_arena, GUARD, ARENA);
    OT_OK(LAPI_Gfence(ot.h));
    make_vec(p, &p->t, arenas[ot.tgt], &tv, t_info, t_len);
    LAPI_Setcntr(ot.h, &org, 0);
    LAPI_Setcntr(ot.h, &cmpl, 0);
    OT_OK(LAPI_Putv(ot.h, (uint)ot.tgt, &tv, &ov, put_cntrs[ot.tgt], &org,
                    &cmpl));
    OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
    OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
    OT_OK(LAPI_Waitcntr(ot.h, &put_tgt, 1, NULL));
    compare("Putv", r, &src_pair, &src_pair.t, tgt_arena, in_seed);
    OT_OK(LAPI_Gfence(ot.h));

    /* Getv: the target's arena holds our stream in its layout. */
    memset(org_arena, GUARD, p->o.extent);
    LAPI_Setcntr(ot.h, &org, 0);
    OT_OK(LAPI_Getv(ot.h, (uint)ot.tgt, &tv, &ov, get_cntrs[ot.tgt], &org));
    OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
    OT_OK(LAPI_Waitcntr(ot.h, &get_tgt, 1, NULL));
    compare("Getv", r, p, &p->o, org_arena, seed);
    OT_OK(LAPI_Gfence(ot.h));
  }
  free(am_cntrs);
  free(put_cntrs);
  free(get_cntrs);
  free(arenas);
#ifdef OFI_VECTORS_WB
  check_pull_budget();
  check_pull_batch();
  check_lane_path();
  int skip = check_packref_path();
  skip |= check_read_path();
  int rc = ot_finish("ofi_vectors");
  return rc == 0 && skip ? 77 : rc;
#else
  return ot_finish("ofi_vectors");
#endif
}
