/*
 * test_am_conformance.c - random layouts of the three vector types through
 * LAPI_Amsendv, LAPI_Putv and LAPI_Getv, against a byte-by-byte reference.
 *
 * A layout is a pair (source side, destination side) of segment offsets in
 * two 1 KiB arenas, drawn from a generator seeded by (type, layout number)
 * alone, so any task can rebuild any layout: the sender builds its origin
 * vector, the receiver's header handler builds the target vector from the
 * number carried in uhdr.  The reference lists the arena offsets of the
 * source stream's bytes and of the destination stream's bytes and copies
 * byte k to byte k for k < min(sizes): IOVECTOR and STRIDED pairs have equal
 * sizes, GENERIC drops the source's extra bytes.  The destination arena is
 * guard-filled first and must end exactly as the reference: right bytes in
 * the segments, guard everywhere else.  Zero-length segments (some with a
 * NULL address), empty vectors, adjacent and overlapping source segments,
 * strided blocks of 0 bytes and strides that differ between the sides are
 * all drawn.  Fixed seeds: a failure names its layout and replays.
 *
 * Amsendv goes to tgt = (me + 1) % n and the receiver checks in its
 * completion handler.  Putv/Getv target this task itself (their target
 * vector describes memory this task checks), which is the loopback today
 * and stays a valid local test with more tasks.
 */
#include "lapi_test_util.h"

TestSuite(am_conformance, .timeout = LT_TIMEOUT);

#define LAYOUTS 300 /* per type and per call */
#define MAXSEG 12
#define MAXLEN 48
#define ARENA 1024
#define NOADDR ((size_t)-1) /* an empty segment with a NULL address */

struct seg_side {
  lapi_vectype_t type;
  uint n;                  /* segments, or strided blocks */
  size_t off[MAXSEG];      /* arena offsets (NOADDR: NULL) */
  ulong len[MAXSEG];
  size_t base, block, pitch; /* strided */
};

struct layout {
  struct seg_side src, dst;
};

/* ------------------------------------------------------------ layouts */

static void random_lens(uint64_t *r, ulong *len, uint n)
{
  for (uint i = 0; i < n; i++)
    len[i] = lt_below(r, 4) == 0 ? 0 : (ulong)(1 + lt_below(r, MAXLEN));
}

/* Source segments are only read: anywhere, overlapping, sometimes right
 * after the previous one (a transport may merge those). */
static void place_source(uint64_t *r, struct seg_side *s)
{
  for (uint i = 0; i < s->n; i++) {
    if (s->len[i] == 0 && lt_below(r, 2)) {
      s->off[i] = NOADDR;
    } else if (i > 0 && s->off[i - 1] != NOADDR && lt_below(r, 4) == 0 &&
               s->off[i - 1] + s->len[i - 1] + s->len[i] <= ARENA) {
      s->off[i] = s->off[i - 1] + s->len[i - 1];
    } else {
      s->off[i] = (size_t)lt_below(r, ARENA - s->len[i] + 1);
    }
  }
}

/* Destination segments must not overlap (undefined in LAPI): a random
 * order, random gaps. */
static void place_dest(uint64_t *r, struct seg_side *s)
{
  uint order[MAXSEG];
  size_t total = 0;
  for (uint i = 0; i < s->n; i++) {
    order[i] = i;
    total += s->len[i];
  }
  for (uint i = s->n; i > 1; i--) {
    uint k = (uint)lt_below(r, i), t = order[i - 1];
    order[i - 1] = order[k];
    order[k] = t;
  }
  size_t slack = ARENA - total, at = 0;
  for (uint i = 0; i < s->n; i++) {
    uint sgi = order[i];
    size_t gap = (size_t)lt_below(r, slack / (s->n - i) + 1);
    slack -= gap;
    at += gap;
    if (s->len[sgi] == 0 && lt_below(r, 2))
      s->off[sgi] = NOADDR;
    else
      s->off[sgi] = at;
    at += s->len[sgi];
  }
}

static void random_strided(uint64_t *r, struct seg_side *s, uint n,
                           size_t block)
{
  s->type = LAPI_GEN_STRIDED_XFER;
  s->n = n;
  s->block = block;
  s->pitch = block + (size_t)lt_below(r, 24);
  if (lt_below(r, 5) == 0)
    s->pitch = block; /* contiguous blocks */
  size_t extent = n ? (n - 1) * s->pitch + block : 0;
  s->base = (size_t)lt_below(r, ARENA - extent + 1);
}

/* Layout `id` of `type`: a pure function of both. */
static void make_layout(lapi_vectype_t type, uint id, struct layout *L)
{
  uint64_t r = 0x1234567ULL + (uint64_t)type * 1000003ULL + id * 7919ULL;
  for (int i = 0; i < 4; i++)
    lt_rand(&r);
  memset(L, 0, sizeof *L);
  L->src.type = L->dst.type = type;
  switch (type) {
  case LAPI_GEN_IOVECTOR:
    L->src.n = L->dst.n = (uint)lt_below(&r, MAXSEG + 1);
    random_lens(&r, L->src.len, L->src.n);
    memcpy(L->dst.len, L->src.len, sizeof L->src.len);
    break;
  case LAPI_GEN_GENERIC:
    L->src.n = (uint)lt_below(&r, MAXSEG + 1);
    L->dst.n = (uint)lt_below(&r, MAXSEG + 1);
    random_lens(&r, L->src.len, L->src.n);
    random_lens(&r, L->dst.len, L->dst.n);
    break;
  case LAPI_GEN_STRIDED_XFER: {
    uint n = (uint)lt_below(&r, 8);
    size_t block = lt_below(&r, 5) == 0 ? 0 : (size_t)(1 + lt_below(&r, 40));
    random_strided(&r, &L->src, n, block);
    random_strided(&r, &L->dst, n, block);
    return;
  }
  }
  place_source(&r, &L->src);
  place_dest(&r, &L->dst);
}

/* A lapi_vec_t over `arena` for one side (arrays owned by the caller). */
struct built {
  lapi_vec_t v;
  void *info[MAXSEG];
  ulong len[MAXSEG];
};

static void build_vec(const struct seg_side *s, unsigned char *arena,
                      struct built *b)
{
  memset(b, 0, sizeof *b);
  b->v.vec_type = s->type;
  b->v.num_vecs = s->n;
  b->v.info = b->info;
  if (s->type == LAPI_GEN_STRIDED_XFER) {
    b->info[0] = arena + s->base;
    b->info[1] = (void *)(uintptr_t)s->block;
    b->info[2] = (void *)(uintptr_t)s->pitch;
    b->v.len = NULL;
    return;
  }
  b->v.len = b->len;
  for (uint i = 0; i < s->n; i++) {
    b->info[i] = s->off[i] == NOADDR ? NULL : arena + s->off[i];
    b->len[i] = s->len[i];
  }
}

/* Arena offsets of the side's stream bytes, in stream order. */
static size_t flatten(const struct seg_side *s, size_t *out)
{
  size_t k = 0;
  if (s->type == LAPI_GEN_STRIDED_XFER) {
    for (uint b = 0; b < s->n; b++)
      for (size_t i = 0; i < s->block; i++)
        out[k++] = s->base + b * s->pitch + i;
    return k;
  }
  for (uint i = 0; i < s->n; i++)
    for (size_t j = 0; j < s->len[i]; j++)
      out[k++] = s->off[i] + j;
  return k;
}

/* The reference: what the destination arena must hold when the source
 * arena holds pattern `seed`. */
static void reference(const struct layout *L, uint64_t seed,
                      unsigned char *ref)
{
  static __thread size_t so[ARENA], dof[ARENA];
  size_t ns = flatten(&L->src, so), nd = flatten(&L->dst, dof);
  memset(ref, LT_GUARD, ARENA);
  for (size_t k = 0; k < ns && k < nd; k++)
    ref[dof[k]] = lt_byte(seed, so[k]);
}

static const char *type_name(lapi_vectype_t t)
{
  return t == LAPI_GEN_IOVECTOR ? "IOVECTOR"
       : t == LAPI_GEN_GENERIC  ? "GENERIC" : "STRIDED";
}

/* Where the destination differs from the reference, or -1. */
static long first_mismatch(const unsigned char *got, const unsigned char *ref)
{
  for (size_t i = 0; i < ARENA; i++)
    if (got[i] != ref[i])
      return (long)i;
  return -1;
}

static uint64_t stream_seed(uint task, lapi_vectype_t t, uint id)
{
  return ((uint64_t)task << 40) ^ ((uint64_t)t << 32) ^ id ^ 0xC0FFEEULL;
}

/* ------------------------------------------------------------ Amsendv */

static unsigned char recv_arena[ARENA]; /* target side */
static unsigned char send_arena[ARENA]; /* origin side */
static unsigned char ref_arena[ARENA];
static struct built recv_vec;
static struct layout recv_layout;
static lapi_cntr_t recv_cntr;
static int hdr_runs, cmpl_runs, checked;

struct msg_hdr {
  uint32_t id, type, src, pad;
};

static void conf_cmpl(lapi_handle_t *hndl, void *param)
{
  (void)hndl;
  const struct msg_hdr *m = param;
  reference(&recv_layout, stream_seed(m->src, m->type, m->id), ref_arena);
  long d = first_mismatch(recv_arena, ref_arena);
  if (d >= 0)
    lt_fail("Amsendv %s layout %u: target arena byte %ld is 0x%02x, "
            "expected 0x%02x", type_name(m->type), m->id, d, recv_arena[d],
            ref_arena[d]);
  lt_inc(&checked);
  lt_inc(&cmpl_runs);
}

static lapi_vec_t *conf_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                            ulong *len_vec, compl_hndlr_t **comp_h,
                            void **uinfo)
{
  (void)hndl;
  static struct msg_hdr m;
  lt_inc(&hdr_runs);
  LT_CHECK_EQ(*uhdr_len, sizeof m);
  memcpy(&m, uhdr, sizeof m);
  make_layout(m.type, m.id, &recv_layout);
  /* the origin's lengths travel in len_vec */
  if (m.type != LAPI_GEN_STRIDED_XFER)
    for (uint i = 0; i < recv_layout.src.n; i++)
      if (!len_vec || len_vec[i] != recv_layout.src.len[i]) {
        lt_fail("%s layout %u: len_vec[%u] is %lu, origin len %lu",
                type_name(m.type), m.id, i, len_vec ? len_vec[i] : 0UL,
                recv_layout.src.len[i]);
        break;
      }
  memset(recv_arena, LT_GUARD, sizeof recv_arena);
  build_vec(&recv_layout.dst, recv_arena, &recv_vec);
  *comp_h = conf_cmpl;
  *uinfo = &m;
  return &recv_vec.v;
}

static void amsendv_layouts(lapi_vectype_t type)
{
  struct lt_job j;
  lt_open(&j);
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hdr = lt_at_tgt(&j, (void *)conf_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  lapi_cntr_t org, cmpl;
  LT_OK(LAPI_Setcntr(j.h, &org, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  struct layout L;
  struct built ob;
  for (uint id = 0; id < LAYOUTS; id++) {
    make_layout(type, id, &L);
    lt_fill(send_arena, ARENA, stream_seed((uint)j.me, type, id));
    build_vec(&L.src, send_arena, &ob);
    struct msg_hdr m = {id, (uint32_t)type, (uint32_t)j.me, 0};
    LT_OK(LAPI_Amsendv(j.h, j.tgt, hdr, &m, sizeof m, &ob.v, tc, &org,
                       &cmpl));
    /* the target's completion handler has returned: the next message
     * may reuse its arena */
    cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
    cr_assert_eq(lt_wait(&j, &org, 1), 0);
    /* the origin arena was only read */
    long d = lt_find_diff(send_arena, ARENA, stream_seed((uint)j.me, type,
                                                        id), 0);
    cr_assert_lt(d, 0, "layout %u: origin arena byte %ld changed", id, d);
    if (lt_failure_count())
      LT_ASSERT_HANDLERS_OK(); /* stop at the first bad layout */
  }
  cr_assert_eq(lt_wait(&j, &recv_cntr, LAYOUTS), 0);
  LT_ASSERT_HANDLERS_OK();
  cr_assert_eq(lt_load(&checked), LAYOUTS);
  cr_assert_eq(lt_load(&hdr_runs), LAYOUTS);
  cr_assert_eq(lt_load(&cmpl_runs), LAYOUTS);
  lt_close(&j);
}

Test(am_conformance, amsendv_iovector) { amsendv_layouts(LAPI_GEN_IOVECTOR); }
Test(am_conformance, amsendv_generic) { amsendv_layouts(LAPI_GEN_GENERIC); }
Test(am_conformance, amsendv_strided)
{
  amsendv_layouts(LAPI_GEN_STRIDED_XFER);
}

/* ------------------------------------------------------- Putv and Getv */

static unsigned char src_arena[ARENA], dst_arena[ARENA];

/* put: source = origin vector, destination = target vector;
 * get: source = target vector, destination = origin vector. */
static void putv_getv_layouts(lapi_vectype_t type, int get)
{
  struct lt_job j;
  lt_open(&j);
  uint self = (uint)j.me;
  lapi_cntr_t tgt_c, org_c, cmpl_c;
  LT_OK(LAPI_Setcntr(j.h, &tgt_c, 0));
  LT_OK(LAPI_Setcntr(j.h, &org_c, 0));
  LT_OK(LAPI_Setcntr(j.h, &cmpl_c, 0));
  struct layout L;
  struct built sb, db;
  for (uint id = 0; id < LAYOUTS; id++) {
    uint64_t seed = stream_seed(self, type, id) ^ (get ? 0x9e37ULL : 0);
    make_layout(type, id, &L);
    lt_fill(src_arena, ARENA, seed);
    memset(dst_arena, LT_GUARD, ARENA);
    build_vec(&L.src, src_arena, &sb);
    build_vec(&L.dst, dst_arena, &db);
    if (get) {
      LT_OK(LAPI_Getv(j.h, self, &sb.v, &db.v, &tgt_c, &org_c));
    } else {
      LT_OK(LAPI_Putv(j.h, self, &db.v, &sb.v, &tgt_c, &org_c, &cmpl_c));
      cr_assert_eq(lt_wait(&j, &cmpl_c, 1), 0);
    }
    cr_assert_eq(lt_wait(&j, &org_c, 1), 0);
    cr_assert_eq(lt_wait(&j, &tgt_c, 1), 0);
    reference(&L, seed, ref_arena);
    long d = first_mismatch(dst_arena, ref_arena);
    cr_assert_lt(d, 0, "%s %s layout %u: destination byte %ld is 0x%02x, "
                 "expected 0x%02x", get ? "Getv" : "Putv", type_name(type),
                 id, d, d >= 0 ? dst_arena[d] : 0, d >= 0 ? ref_arena[d] : 0);
    d = lt_find_diff(src_arena, ARENA, seed, 0);
    cr_assert_lt(d, 0, "layout %u: source arena byte %ld changed", id, d);
  }
  cr_assert_eq(lt_get(&j, &cmpl_c), 0);
  lt_close(&j);
}

Test(am_conformance, putv_iovector) { putv_getv_layouts(LAPI_GEN_IOVECTOR, 0); }
Test(am_conformance, putv_generic) { putv_getv_layouts(LAPI_GEN_GENERIC, 0); }
Test(am_conformance, putv_strided)
{
  putv_getv_layouts(LAPI_GEN_STRIDED_XFER, 0);
}
Test(am_conformance, getv_iovector) { putv_getv_layouts(LAPI_GEN_IOVECTOR, 1); }
Test(am_conformance, getv_generic) { putv_getv_layouts(LAPI_GEN_GENERIC, 1); }
Test(am_conformance, getv_strided)
{
  putv_getv_layouts(LAPI_GEN_STRIDED_XFER, 1);
}

/* One long vector: 50000 segments of 0..3 bytes, scattered, through
 * Amsendv (IOVECTOR and GENERIC reshaped into 7-byte segments). */
#define LONGV 50000
static void *lv_oinfo[LONGV], *lv_tinfo[LONGV];
static ulong lv_olen[LONGV], lv_tlen[LONGV];
static unsigned char lv_org[4 * LONGV], lv_tgt[8 * LONGV];
static lapi_vec_t lv_tvec;
static int lv_generic;

static lapi_vec_t *long_hdr(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                            ulong *len_vec, compl_hndlr_t **comp_h,
                            void **uinfo)
{
  (void)hndl, (void)uhdr, (void)uhdr_len, (void)uinfo;
  lt_inc(&hdr_runs);
  size_t at = 0, total = 0;
  if (!lv_generic) {
    /* same lengths, every segment one byte further apart */
    for (uint i = 0; i < LONGV; i++) {
      lv_tinfo[i] = lv_tgt + at;
      lv_tlen[i] = len_vec[i];
      at += len_vec[i] + 1;
    }
    lv_tvec = (lapi_vec_t){LAPI_GEN_IOVECTOR, LONGV, lv_tinfo, lv_tlen};
  } else {
    for (uint i = 0; i < LONGV; i++)
      total += len_vec[i];
    uint n = (uint)((total + 6) / 7);
    for (uint i = 0; i < n; i++) {
      lv_tinfo[i] = lv_tgt + 8 * (size_t)i;
      lv_tlen[i] = 7;
    }
    lv_tvec = (lapi_vec_t){LAPI_GEN_GENERIC, n, lv_tinfo, lv_tlen};
  }
  *comp_h = NULL;
  return &lv_tvec;
}

static void long_vector(int generic)
{
  struct lt_job j;
  lt_open(&j);
  lv_generic = generic;
  LT_OK(LAPI_Setcntr(j.h, &recv_cntr, 0));
  void *hdr = lt_at_tgt(&j, (void *)long_hdr);
  lapi_cntr_t *tc = lt_cntr_at_tgt(&j, &recv_cntr);
  memset(lv_tgt, LT_GUARD, sizeof lv_tgt);
  uint64_t r = 99, seed = 4242 + (uint64_t)j.me;
  lt_fill(lv_org, sizeof lv_org, seed);
  size_t total = 0;
  for (uint i = 0; i < LONGV; i++) {
    lv_olen[i] = (ulong)lt_below(&r, 4);
    /* segment i starts at 4 * (LONGV - 1 - i): reversed order */
    lv_oinfo[i] = lv_org + 4 * (size_t)(LONGV - 1 - i);
    total += lv_olen[i];
  }
  lapi_vec_t ov = {generic ? LAPI_GEN_GENERIC : LAPI_GEN_IOVECTOR, LONGV,
                   lv_oinfo, lv_olen};
  lapi_cntr_t cmpl;
  LT_OK(LAPI_Setcntr(j.h, &cmpl, 0));
  LT_OK(LAPI_Gfence(j.h));
  LT_OK(LAPI_Amsendv(j.h, j.tgt, hdr, NULL, 0, &ov, tc, NULL, &cmpl));
  cr_assert_eq(lt_wait(&j, &recv_cntr, 1), 0);
  cr_assert_eq(lt_wait(&j, &cmpl, 1), 0);
  /* the origin stream of my source, rebuilt with the same lengths */
  uint64_t sseed = 4242 + (uint64_t)j.src;
  size_t k = 0, at = 0;
  r = 99;
  for (uint i = 0; i < LONGV; i++) {
    size_t len = (size_t)lt_below(&r, 4), from = 4 * (size_t)(LONGV - 1 - i);
    for (size_t b = 0; b < len; b++, k++) {
      size_t t = generic ? 8 * (k / 7) + k % 7 : at + b;
      cr_assert_eq(lv_tgt[t], lt_byte(sseed, from + b),
                   "%s: stream byte %zu (segment %u) wrong",
                   generic ? "GENERIC" : "IOVECTOR", k, i);
      lv_tgt[t] = LT_GUARD; /* checked: back to guard */
    }
    at += len + 1;
  }
  cr_assert_eq(k, total);
  cr_assert_eq(lt_find_nonguard(lv_tgt, sizeof lv_tgt), -1,
               "a byte outside the target segments was written");
  lt_close(&j);
}

Test(am_conformance, long_iovector) { long_vector(0); }
Test(am_conformance, long_generic_reshaped) { long_vector(1); }

/* The generator itself: every type draws empty vectors, empty segments
 * (with and without an address) and, for GENERIC, both shorter and longer
 * targets; so the runs above do cover those cases. */
Test(am_conformance, layouts_cover_the_corner_cases)
{
  int empty[3] = {0}, zero_seg = 0, zero_null = 0, shorter = 0, longer = 0;
  int block0 = 0, pitch_diff = 0;
  struct layout L;
  static size_t a[ARENA], b[ARENA];
  for (int t = 0; t < 3; t++)
    for (uint id = 0; id < LAYOUTS; id++) {
      make_layout((lapi_vectype_t)t, id, &L);
      size_t ns = flatten(&L.src, a), nd = flatten(&L.dst, b);
      cr_assert(nd <= ARENA && ns <= ARENA);
      if (L.src.n == 0)
        empty[t]++;
      for (uint i = 0; t != LAPI_GEN_STRIDED_XFER && i < L.src.n; i++) {
        zero_seg += L.src.len[i] == 0;
        zero_null += L.src.off[i] == NOADDR;
      }
      if (t == LAPI_GEN_GENERIC) {
        shorter += nd < ns;
        longer += nd > ns;
      }
      if (t == LAPI_GEN_IOVECTOR || t == LAPI_GEN_STRIDED_XFER)
        cr_assert_eq(ns, nd, "type %d layout %u: sizes differ", t, id);
      if (t == LAPI_GEN_STRIDED_XFER) {
        block0 += L.src.block == 0 && L.src.n > 0;
        pitch_diff += L.src.pitch != L.dst.pitch;
      }
    }
  for (int t = 0; t < 3; t++)
    cr_assert_gt(empty[t], 0, "no empty vector of type %d", t);
  cr_assert_gt(zero_seg, 0);
  cr_assert_gt(zero_null, 0);
  cr_assert_gt(shorter, 0);
  cr_assert_gt(longer, 0);
  cr_assert_gt(block0, 0);
  cr_assert_gt(pitch_diff, 0);
}
