/*
 * test_cpe_conformance.c - randomized conformance of vector transfers
 * between CPE tasks: Amsendv, Putv and Getv, with IOVECTOR, GENERIC and
 * STRIDED vectors, every side in LDM or in main memory, at any alignment,
 * with 2, 8 and 64 tasks.
 *
 * Every round, each task moves one random vector pair to (or, for Getv,
 * from) the next task.  Both ends are regions filled with known bytes; the
 * task computes what the destination region must hold with a reference
 * model written here (the origin stream scattered over the target vector
 * until either ends) and compares the whole region, so a byte written
 * outside the vector fails as well.  The first 36 rounds of every task
 * cover the 3 x 3 x 4 combinations of call, vector type and placement;
 * Putv and Getv target addresses in LDM are given either as the target's
 * own address or as the same location in the origin's LDM (translated).
 */
#include "cpe_test_util.h"

#define R 1536    /* bytes of a region */
#define MAXSEG 8

enum { OP_AMSENDV, OP_PUTV, OP_GETV, NOPS };
static const lapi_vectype_t types[3] = {LAPI_GEN_IOVECTOR, LAPI_GEN_GENERIC,
                                        LAPI_GEN_STRIDED_XFER};

/* A vector as offsets into a region. */
struct shape {
  lapi_vectype_t type;
  uint n;
  size_t off[MAXSEG], len[MAXSEG]; /* IOVECTOR, GENERIC */
  size_t base, block, pitch;       /* STRIDED */
};

struct round {
  uint64_t seed;
  int op, type;
  int org_ldm, tgt_ldm; /* where the origin and the target region lie */
  int translate;        /* LDM target address given as our own */
};

static struct {
  int ncpes, rounds;
  unsigned char *ldm_org[64], *ldm_tgt[64];
  unsigned char *mem_org[64], *mem_tgt[64];
  /* Amsendv target vectors, built by the header handler of each task. */
  lapi_vec_t hvec[64];
  void *hinfo[64][MAXSEG];
  ulong hlen[64][MAXSEG];
} S;

static __thread_local unsigned char ldm_org[R], ldm_tgt[R];
static __thread_local lapi_cntr_t org_c, cmpl_c;
static __thread_local void *oinfo[MAXSEG], *tinfo[MAXSEG];
static __thread_local ulong olen[MAXSEG], tlen[MAXSEG];

/* ------------------------------------------------------------ shapes */

static void gen_strided(uint64_t *s, size_t block, uint n, struct shape *v)
{
  v->type = LAPI_GEN_STRIDED_XFER;
  v->n = n;
  v->block = block;
  size_t room = n > 1 ? (R - block) / (n - 1) : R;
  size_t extra = room > block ? room - block : 0;
  v->pitch = block + ct_below(s, (extra < 64 ? extra : 64) + 1);
  size_t span = (size_t)(n - 1) * v->pitch + block;
  v->base = ct_below(s, R - span + 1);
}

/* Segment i of n in slot i (or slot n-1-i) of the region. */
static void place(uint64_t *s, struct shape *v, uint i, int reverse,
                  size_t len)
{
  size_t slot = R / v->n;
  size_t at = (reverse ? v->n - 1 - i : i) * slot;
  v->len[i] = len;
  v->off[i] = at + ct_below(s, slot - len + 1);
}

static void gen_pair(uint64_t seed, int type, struct shape *o,
                     struct shape *t)
{
  uint64_t s = seed;
  memset(o, 0, sizeof *o);
  memset(t, 0, sizeof *t);
  o->type = t->type = types[type];
  if (types[type] == LAPI_GEN_STRIDED_XFER) {
    size_t block = 1 + ct_below(&s, 64);
    uint n = 1 + (uint)ct_below(&s, MAXSEG);
    gen_strided(&s, block, n, o);
    gen_strided(&s, block, n, t);
    return;
  }
  o->n = 1 + (uint)ct_below(&s, MAXSEG);
  t->n = types[type] == LAPI_GEN_IOVECTOR ? o->n
                                          : 1 + (uint)ct_below(&s, MAXSEG);
  for (uint i = 0; i < o->n; i++)
    place(&s, o, i, 0, ct_below(&s, R / o->n / 2 + 1));
  for (uint i = 0; i < t->n; i++)
    place(&s, t, i, 1,
          types[type] == LAPI_GEN_IOVECTOR ? o->len[i]
                                           : ct_below(&s, R / t->n / 2 + 1));
}

/* The lapi_vec_t of a shape on a region starting at base. */
static void make_vec(const struct shape *v, unsigned char *base,
                     lapi_vec_t *out, void **info, ulong *len)
{
  out->vec_type = v->type;
  out->num_vecs = v->n;
  out->info = info;
  out->len = len;
  if (v->type == LAPI_GEN_STRIDED_XFER) {
    info[0] = base + v->base;
    info[1] = (void *)(uintptr_t)v->block;
    info[2] = (void *)(uintptr_t)v->pitch;
    out->len = NULL;
    return;
  }
  for (uint i = 0; i < v->n; i++) {
    info[i] = base + v->off[i];
    len[i] = v->len[i];
  }
}

/* ------------------------------------------------- reference model */

/* Bytes of the stream of v. */
static size_t stream_size(const struct shape *v)
{
  if (v->type == LAPI_GEN_STRIDED_XFER)
    return v->n * v->block;
  size_t n = 0;
  for (uint i = 0; i < v->n; i++)
    n += v->len[i];
  return n;
}

/* Region offset of byte `pos` (below stream_size) of the stream of v. */
static size_t stream_at(const struct shape *v, size_t pos)
{
  if (v->type == LAPI_GEN_STRIDED_XFER)
    return v->base + (pos / v->block) * v->pitch + pos % v->block;
  for (uint i = 0;; i++) {
    if (pos < v->len[i])
      return v->off[i] + pos;
    pos -= v->len[i];
  }
}

/* dst_region after the src stream flowed into the dst stream. */
static void reference(const struct shape *src, const unsigned char *sreg,
                      const struct shape *dst, unsigned char *dreg)
{
  size_t n = stream_size(src), m = stream_size(dst);
  for (size_t p = 0; p < n && p < m; p++)
    dreg[stream_at(dst, p)] = sreg[stream_at(src, p)];
}

/* ------------------------------------------------------------ round */

static uint32_t tag(int r, int task, int what)
{
  return (uint32_t)((r * 64 + task) * 4 + what);
}

static unsigned char *region(int task, int tgt_side, int ldm)
{
  if (ldm)
    return tgt_side ? S.ldm_tgt[task] : S.ldm_org[task];
  return tgt_side ? S.mem_tgt[task] : S.mem_org[task];
}

static void choose(int r, int me, struct round *rd)
{
  uint64_t s = ((uint64_t)r << 32) ^ (uint64_t)(me + 1) * 0x9e3779b97f4a7c15ull;
  rd->seed = ct_rand(&s);
  int combo = (r + me) % 36;
  if (r >= 36)
    combo = (int)ct_below(&s, 36);
  rd->op = combo % 3;
  rd->type = combo / 3 % 3;
  rd->org_ldm = combo / 9 % 2;
  rd->tgt_ldm = combo / 18 % 2;
  rd->translate = (int)ct_below(&s, 2);
}

/* uhdr of an Amsendv: how the handler rebuilds the target side. */
struct amv_hdr {
  uint64_t seed;
  int type, tgt_ldm;
};

static lapi_vec_t *amv_header(lapi_handle_t *hndl, void *uhdr,
                              uint *uhdr_len, ulong *len_vec,
                              compl_hndlr_t **comp_h, void **uinfo)
{
  ct_on_mpe();
  (void)len_vec;
  CT_CHECK_EQ(*uhdr_len, sizeof(struct amv_hdr));
  const struct amv_hdr *u = uhdr;
  int me = -1;
  CT_OK(LAPI_Qenv(*hndl, TASK_ID, &me));
  struct shape o, t;
  gen_pair(u->seed, u->type, &o, &t);
  make_vec(&t, region(me, 1, u->tgt_ldm), &S.hvec[me], S.hinfo[me],
           S.hlen[me]);
  *comp_h = NULL;
  *uinfo = NULL;
  return &S.hvec[me];
}

static void one_round(struct ct_task *t, int r, unsigned char *expect)
{
  for (int ldm = 0; ldm < 2; ldm++) {
    ct_fill(region(t->me, 0, ldm), R, tag(r, t->me, 0));
    ct_fill(region(t->me, 1, ldm), R, tag(r, t->me, 1));
  }
  CT_OK(LAPI_Gfence(t->h));

  struct round rd;
  choose(r, t->me, &rd);
  struct shape so, st; /* origin side (ours), target side (next's) */
  gen_pair(rd.seed, rd.type, &so, &st);
  int next = (int)t->next;
  unsigned char *org = region(t->me, 0, rd.org_ldm);
  unsigned char *tgt = region(next, 1, rd.tgt_ldm);
  /* Putv/Getv: an LDM target may be named by our own LDM address. */
  unsigned char *tgt_named = tgt;
  if (rd.tgt_ldm && rd.translate)
    tgt_named = ldm_tgt;
  lapi_vec_t ov, tv;
  make_vec(&so, org, &ov, oinfo, olen);
  make_vec(&st, tgt_named, &tv, tinfo, tlen);
  ct_zero(t, &org_c);
  ct_zero(t, &cmpl_c);

  const unsigned char *check;
  switch (rd.op) {
  case OP_AMSENDV: {
    struct amv_hdr u = {rd.seed, rd.type, rd.tgt_ldm};
    CT_OK(LAPI_Amsendv(t->h, t->next, (void *)amv_header, &u, sizeof u, &ov,
                       NULL, &org_c, &cmpl_c));
    ct_wait(t, &cmpl_c, 1);
    ct_wait(t, &org_c, 1);
    ct_fill(expect, R, tag(r, next, 1));
    reference(&so, org, &st, expect);
    check = tgt;
    break;
  }
  case OP_PUTV:
    CT_OK(LAPI_Putv(t->h, t->next, &tv, &ov, NULL, &org_c, &cmpl_c));
    ct_wait(t, &cmpl_c, 1);
    ct_wait(t, &org_c, 1);
    ct_fill(expect, R, tag(r, next, 1));
    reference(&so, org, &st, expect);
    check = tgt;
    break;
  default: /* Getv: next's target region flows into our origin region */
    CT_OK(LAPI_Getv(t->h, t->next, &tv, &ov, NULL, &org_c));
    ct_wait(t, &org_c, 1);
    ct_fill(expect, R, tag(r, t->me, 0));
    unsigned char *src = malloc(R);
    ct_fill(src, R, tag(r, next, 1));
    reference(&st, src, &so, expect);
    free(src);
    check = org;
    break;
  }
  for (size_t i = 0; i < R; i++)
    if (check[i] != expect[i]) {
      ct_fail("task %d round %d: op %d type %d org %s tgt %s%s: byte %zu "
              "is %u, not %u", t->me, r, rd.op, rd.type,
              rd.org_ldm ? "LDM" : "mem", rd.tgt_ldm ? "LDM" : "mem",
              rd.translate ? " (translated)" : "", i, check[i], expect[i]);
      break;
    }
  CT_OK(LAPI_Gfence(t->h));
}

static void conformance(void *arg)
{
  (void)arg;
  struct ct_task t;
  ct_open(&t);
  int me = t.me;
  S.ldm_org[me] = ldm_org;
  S.ldm_tgt[me] = ldm_tgt;
  S.mem_org[me] = malloc(R);
  S.mem_tgt[me] = malloc(R);
  unsigned char *expect = malloc(R);
  CT_OK(LAPI_Gfence(t.h)); /* every region is published */
  for (int r = 0; r < S.rounds; r++)
    one_round(&t, r, expect);
  ct_close(&t);
  free(expect);
  free(S.mem_org[me]);
  free(S.mem_tgt[me]);
}

static void run(int n, int rounds)
{
  S.ncpes = n;
  S.rounds = rounds;
  ct_run(n, conformance, NULL);
  CT_ASSERT_NO_FAILURE();
}

Test(cpe_conformance, two_tasks, .timeout = CT_TIMEOUT) { run(2, 108); }
Test(cpe_conformance, eight_tasks, .timeout = CT_TIMEOUT) { run(8, 72); }
Test(cpe_conformance, sixty_four_tasks, .timeout = CT_TIMEOUT)
{
  run(64, 36);
}
