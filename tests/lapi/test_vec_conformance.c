/*
 * test_vec_conformance.c - random layouts of all three vector types
 * against a byte-by-byte reference model.
 *
 * The model flattens the origin into the list of addresses of its stream
 * bytes, does the same for the target, and copies byte k to byte k for
 * k < min(sizes).  lapi_vec_copy, the pair cursor and pack -> unpack in
 * random chunk sizes must leave the guard-filled target arena exactly as
 * the model does: right bytes in the segments, nothing outside them, and
 * the origin arena untouched.  Fixed seed, so a failure replays.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "vec/lapi_vec.h"

#define LAYOUTS 500          /* per vector type */
#define MAXSEG 12
#define MAXLEN 40
#define ARENA 1024
#define GUARD 0xEE

static uint64_t rng_state;

static uint64_t rnd(void)
{
  /* xorshift64*: small, deterministic, good enough for layouts */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1DULL;
}

static size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* One side of a layout: the vector and the arrays it points at. */
struct side {
  lapi_vec_t v;
  void *info[MAXSEG > 3 ? MAXSEG : 3];
  ulong len[MAXSEG];
};

static unsigned char org_arena[ARENA], tgt_arena[ARENA], ref_arena[ARENA];
static unsigned char wire[ARENA];

/* Random segment lengths, a quarter of them empty. */
static void random_lens(ulong *len, uint n)
{
  for (uint i = 0; i < n; i++)
    len[i] = below(4) == 0 ? 0 : 1 + below(MAXLEN);
}

/* Origin segments may sit anywhere, overlapping or touching (the origin
 * is only read); an empty one is often NULL. */
static void place_origin(struct side *s)
{
  for (uint i = 0; i < s->v.num_vecs; i++) {
    if (s->len[i] == 0 && below(2)) {
      s->info[i] = NULL;
    } else if (i > 0 && s->info[i - 1] && below(4) == 0 &&
               (size_t)((unsigned char *)s->info[i - 1] - org_arena) +
                       s->len[i - 1] + s->len[i] <= ARENA) {
      /* continue the previous segment: the walker must merge them */
      s->info[i] = (unsigned char *)s->info[i - 1] + s->len[i - 1];
    } else {
      s->info[i] = org_arena + below(ARENA - s->len[i] + 1);
    }
  }
}

/* Target segments must not overlap (LAPI leaves that undefined): lay them
 * out in a random order with random gaps, some of them zero. */
static void place_target(struct side *s)
{
  uint n = s->v.num_vecs, order[MAXSEG];
  for (uint i = 0; i < n; i++)
    order[i] = i;
  for (uint i = n; i > 1; i--) {
    uint j = (uint)below(i), t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
  size_t at = below(8);
  for (uint k = 0; k < n; k++) {
    uint i = order[k];
    if (s->len[i] == 0 && below(2))
      s->info[i] = NULL;
    else
      s->info[i] = tgt_arena + at;
    at += s->len[i] + (below(3) == 0 ? 0 : below(7));
  }
  cr_assert_leq(at, ARENA);
}

static void make_list(struct side *s, lapi_vectype_t type, uint n)
{
  s->v = (lapi_vec_t){type, n, s->info, s->len};
  random_lens(s->len, n);
}

static void make_strided(struct side *s, unsigned char *arena, uint n,
                         size_t block)
{
  size_t pitch = block + (below(3) == 0 ? 0 : below(9));
  size_t span = n ? (n - 1) * pitch + block : 0;
  s->v = (lapi_vec_t){LAPI_GEN_STRIDED_XFER, n, s->info, NULL};
  s->info[0] = (block == 0 && below(2)) ? NULL : arena + below(ARENA - span);
  s->info[1] = (void *)(uintptr_t)block;
  s->info[2] = (void *)(uintptr_t)pitch;
}

/* The model: addresses of the stream bytes, in stream order. */
static size_t flatten(const lapi_vec_t *v, unsigned char **at)
{
  size_t k = 0;
  if (v->vec_type == LAPI_GEN_STRIDED_XFER) {
    unsigned char *base = v->info[0];
    size_t block = (uintptr_t)v->info[1], pitch = (uintptr_t)v->info[2];
    for (uint b = 0; b < v->num_vecs; b++)
      for (size_t j = 0; j < block; j++)
        at[k++] = base + b * pitch + j;
    return k;
  }
  for (uint i = 0; i < v->num_vecs; i++)
    for (size_t j = 0; j < v->len[i]; j++)
      at[k++] = (unsigned char *)v->info[i] + j;
  return k;
}

static void fill_random(unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)rnd();
}

/* Pack the origin stream in random chunks; returns the bytes packed. */
static size_t pack_all(const lapi_vec_t *v)
{
  size_t off = 0, n;
  while ((n = lapi_vec_pack(v, wire + off, off, 1 + below(17))) > 0)
    off += n;
  return off;
}

static size_t unpack_all(const lapi_vec_t *v, size_t avail)
{
  size_t off = 0, n;
  while (off < avail &&
         (n = lapi_vec_unpack(v, wire + off, off,
                              1 + below(avail - off < 17 ? avail - off
                                                         : 17))) > 0)
    off += n;
  return off;
}

/* Check one origin/target pair against the model. */
static void conform(const lapi_vec_t *org, const lapi_vec_t *tgt, int layout)
{
  static unsigned char *oat[ARENA], *tat[ARENA];
  static unsigned char org_copy[ARENA];
  cr_assert_eq(lapi_vec_check_origin(org), LAPI_SUCCESS, "layout %d", layout);
  cr_assert_eq(lapi_vec_check_target(tgt), LAPI_SUCCESS, "layout %d", layout);
  cr_assert_eq(lapi_vec_check_pair(org, tgt), LAPI_SUCCESS, "layout %d",
               layout);

  size_t no = flatten(org, oat), nt = flatten(tgt, tat);
  size_t n = no < nt ? no : nt;
  cr_assert_eq(lapi_vec_bytes(org), no, "layout %d", layout);
  cr_assert_eq(lapi_vec_bytes(tgt), nt, "layout %d", layout);
  cr_assert_eq(lapi_vec_pair_bytes(org, tgt), n, "layout %d", layout);

  fill_random(org_arena, ARENA);
  memcpy(org_copy, org_arena, ARENA);
  memset(ref_arena, GUARD, ARENA);
  for (size_t k = 0; k < n; k++)
    ref_arena[tat[k] - tgt_arena] = *oat[k];

  /* 1. the loopback copy */
  memset(tgt_arena, GUARD, ARENA);
  cr_assert_eq(lapi_vec_copy(org, tgt), n, "layout %d", layout);
  cr_assert_arr_eq(tgt_arena, ref_arena, ARENA, "layout %d: copy", layout);
  cr_assert_arr_eq(org_arena, org_copy, ARENA, "layout %d: origin", layout);

  /* 2. the runs: positive, in stream order, maximal, n bytes in all */
  struct lapi_vec_cursor c;
  const void *src, *psrc = NULL;
  void *dst, *pdst = NULL;
  size_t len, plen = 0, sum = 0;
  lapi_vec_cursor_init(&c, org, tgt);
  while (lapi_vec_cursor_next(&c, &src, &dst, &len)) {
    cr_assert(len > 0 && sum + len <= n, "layout %d", layout);
    cr_assert(src == oat[sum] && dst == tat[sum], "layout %d: run at %zu",
              layout, sum);
    cr_assert(!(psrc && (const char *)psrc + plen == src &&
                (char *)pdst + plen == dst),
              "layout %d: run at %zu continues the previous one", layout,
              sum);
    psrc = src, pdst = dst, plen = len;
    sum += len;
  }
  cr_assert_eq(sum, n, "layout %d", layout);

  /* 3. pack at the origin, unpack at the target, in random chunks */
  memset(tgt_arena, GUARD, ARENA);
  memset(wire, GUARD, ARENA);
  cr_assert_eq(pack_all(org), no, "layout %d", layout);
  for (size_t k = 0; k < no; k++)
    cr_assert_eq(wire[k], *oat[k], "layout %d: wire byte %zu", layout, k);
  for (size_t k = no; k < ARENA; k++)
    cr_assert_eq(wire[k], GUARD, "layout %d: wire overrun", layout);
  cr_assert_eq(unpack_all(tgt, no), n, "layout %d", layout);
  cr_assert_arr_eq(tgt_arena, ref_arena, ARENA, "layout %d: unpack", layout);
  cr_assert_arr_eq(org_arena, org_copy, ARENA, "layout %d: origin", layout);
}

Test(vec_conformance, iovector)
{
  rng_state = 0x5eed0001;
  struct side o, t;
  for (int l = 0; l < LAYOUTS; l++) {
    uint n = (uint)below(MAXSEG + 1);
    make_list(&o, LAPI_GEN_IOVECTOR, n);
    place_origin(&o);
    t.v = (lapi_vec_t){LAPI_GEN_IOVECTOR, n, t.info, t.len};
    memcpy(t.len, o.len, sizeof t.len);   /* IOVECTOR: same lengths */
    place_target(&t);
    conform(&o.v, &t.v, l);
  }
}

Test(vec_conformance, generic)
{
  rng_state = 0x5eed0002;
  struct side o, t;
  for (int l = 0; l < LAYOUTS; l++) {
    make_list(&o, LAPI_GEN_GENERIC, (uint)below(MAXSEG + 1));
    place_origin(&o);
    make_list(&t, LAPI_GEN_GENERIC, (uint)below(MAXSEG + 1));
    place_target(&t);
    conform(&o.v, &t.v, l);
  }
}

Test(vec_conformance, strided)
{
  rng_state = 0x5eed0003;
  struct side o, t;
  for (int l = 0; l < LAYOUTS; l++) {
    uint n = (uint)below(11);
    size_t block = below(5) == 0 ? 0 : 1 + below(16);
    make_strided(&o, org_arena, n, block);
    make_strided(&t, tgt_arena, n, block);
    conform(&o.v, &t.v, l);
  }
}
