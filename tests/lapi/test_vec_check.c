/*
 * test_vec_check.c - validation of LAPI vectors: every error code of an
 * origin, a target and a pair, the legal edge cases, the sizes, and the
 * messages lapi_vec_explain words for a report.
 *
 * The single-vector table is run twice, as an origin and as a target: a
 * row names the fault, and each side maps it to its own code.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "vec/lapi_vec.h"

#define MAXMSG ((ulong)LAPI_MAX_MSG_SZ)
#define IV(x) ((void *)(uintptr_t)(x))   /* an integer in an info slot */
#define TOP(x) IV(UINTPTR_MAX - (x))      /* near the end of the address space */

static char b0[64], b1[64], b2[64];

enum want { OK, E_NULL, E_TYPE, E_ADDR, E_LEN, E_SADDR, E_STRIDE, E_EXTENT };

struct row {
  const char *what;
  int is_null;       /* pass a NULL vector */
  lapi_vec_t v;
  enum want want;
  size_t bytes;      /* lapi_vec_bytes when valid */
};

static const struct row rows[] = {
  {"NULL vector", 1, {0}, E_NULL, 0},
  {"type 3", 0, {(lapi_vectype_t)3, 1, (void *[]){b0}, (ulong[]){1}}, E_TYPE, 0},
  {"type -1", 0, {(lapi_vectype_t)-1, 0, NULL, NULL}, E_TYPE, 0},
  /* empty vectors: nothing is read */
  {"iovector num 0", 0, {LAPI_GEN_IOVECTOR, 0, NULL, NULL}, OK, 0},
  {"generic num 0", 0, {LAPI_GEN_GENERIC, 0, NULL, NULL}, OK, 0},
  {"strided num 0", 0, {LAPI_GEN_STRIDED_XFER, 0, NULL, NULL}, OK, 0},
  /* IOVECTOR / GENERIC */
  {"iovector ok", 0, {LAPI_GEN_IOVECTOR, 3, (void *[]){b0, b1, b2},
                      (ulong[]){5, 10, 5}}, OK, 20},
  {"iovector info NULL", 0, {LAPI_GEN_IOVECTOR, 2, NULL, (ulong[]){1, 2}},
   E_ADDR, 0},
  {"generic info NULL", 0, {LAPI_GEN_GENERIC, 1, NULL, (ulong[]){0}},
   E_ADDR, 0},
  {"iovector len NULL", 0, {LAPI_GEN_IOVECTOR, 2, (void *[]){b0, b1}, NULL},
   E_LEN, 0},
  {"generic len NULL", 0, {LAPI_GEN_GENERIC, 1, (void *[]){b0}, NULL},
   E_LEN, 0},
  {"info[1] NULL with len 4", 0, {LAPI_GEN_IOVECTOR, 3,
   (void *[]){b0, NULL, b2}, (ulong[]){1, 4, 1}}, E_ADDR, 0},
  {"generic info[0] NULL with len 1", 0, {LAPI_GEN_GENERIC, 1,
   (void *[]){NULL}, (ulong[]){1}}, E_ADDR, 0},
  {"NULL address with len 0 is legal", 0, {LAPI_GEN_IOVECTOR, 3,
   (void *[]){b0, NULL, b2}, (ulong[]){3, 0, 4}}, OK, 7},
  {"all segments empty", 0, {LAPI_GEN_GENERIC, 2, (void *[]){NULL, NULL},
   (ulong[]){0, 0}}, OK, 0},
  {"segment wraps the address space", 0, {LAPI_GEN_IOVECTOR, 1,
   (void *[]){TOP(10)}, (ulong[]){100}}, E_ADDR, 0},
  {"segment ends at the top", 0, {LAPI_GEN_GENERIC, 1,
   (void *[]){TOP(99)}, (ulong[]){99}}, OK, 99},
  {"one length over LAPI_MAX_MSG_SZ", 0, {LAPI_GEN_IOVECTOR, 1,
   (void *[]){b0}, (ulong[]){MAXMSG + 1}}, E_LEN, 0},
  {"sum over LAPI_MAX_MSG_SZ", 0, {LAPI_GEN_GENERIC, 2, (void *[]){b0, b1},
   (ulong[]){MAXMSG, 1}}, E_LEN, 0},
  {"sum wraps ulong", 0, {LAPI_GEN_GENERIC, 3, (void *[]){b0, b1, b2},
   (ulong[]){MAXMSG, MAXMSG, 2}}, E_LEN, 0},
  {"sum exactly LAPI_MAX_MSG_SZ", 0, {LAPI_GEN_IOVECTOR, 2,
   (void *[]){b0, b1}, (ulong[]){MAXMSG - 5, 5}}, OK, (size_t)MAXMSG},
  {"address fault wins over an earlier length fault", 0, {LAPI_GEN_GENERIC,
   3, (void *[]){b0, b1, NULL}, (ulong[]){MAXMSG, 5, 1}}, E_ADDR, 0},
  /* STRIDED_XFER */
  {"strided seed 3 x 5 pitch 8", 0, {LAPI_GEN_STRIDED_XFER, 3,
   (void *[]){b0, IV(5), IV(8)}, NULL}, OK, 15},
  {"strided info NULL", 0, {LAPI_GEN_STRIDED_XFER, 2, NULL, NULL}, E_ADDR, 0},
  {"strided base NULL", 0, {LAPI_GEN_STRIDED_XFER, 3,
   (void *[]){NULL, IV(5), IV(8)}, NULL}, E_SADDR, 0},
  {"strided base NULL with block 0", 0, {LAPI_GEN_STRIDED_XFER, 3,
   (void *[]){NULL, IV(0), IV(8)}, NULL}, OK, 0},
  {"strided block 0 stride 0", 0, {LAPI_GEN_STRIDED_XFER, 4,
   (void *[]){b0, IV(0), IV(0)}, NULL}, OK, 0},
  {"strided stride < block", 0, {LAPI_GEN_STRIDED_XFER, 3,
   (void *[]){b0, IV(8), IV(4)}, NULL}, E_STRIDE, 0},
  {"strided stride < block with one block", 0, {LAPI_GEN_STRIDED_XFER, 1,
   (void *[]){b0, IV(5), IV(0)}, NULL}, E_STRIDE, 0},
  {"strided base NULL wins over stride", 0, {LAPI_GEN_STRIDED_XFER, 1,
   (void *[]){NULL, IV(5), IV(0)}, NULL}, E_SADDR, 0},
  {"strided dense stride == block", 0, {LAPI_GEN_STRIDED_XFER, 4,
   (void *[]){b0, IV(6), IV(6)}, NULL}, OK, 24},
  {"strided extent over the limit", 0, {LAPI_GEN_STRIDED_XFER, 2,
   (void *[]){b0, IV(1), IV((uint64_t)1 << 62)}, NULL}, E_EXTENT, 0},
  {"strided extent product wraps", 0, {LAPI_GEN_STRIDED_XFER, 2,
   (void *[]){b0, IV(1), IV(UINTPTR_MAX)}, NULL}, E_EXTENT, 0},
  {"strided extent huge count", 0, {LAPI_GEN_STRIDED_XFER, UINT_MAX,
   (void *[]){b0, IV(1), IV((uint64_t)1 << 32)}, NULL}, E_EXTENT, 0},
  {"strided extent exactly the limit", 0, {LAPI_GEN_STRIDED_XFER, 7,
   (void *[]){b0, IV(1), IV(MAXMSG / 7)}, NULL}, OK, 7},
  {"strided extent one block over", 0, {LAPI_GEN_STRIDED_XFER, 8,
   (void *[]){b0, IV(1), IV(MAXMSG / 7)}, NULL}, E_EXTENT, 0},
  {"strided blocks wrap the address space", 0, {LAPI_GEN_STRIDED_XFER, 2,
   (void *[]){TOP(100), IV(50), IV(64)}, NULL}, E_EXTENT, 0},
  {"strided last block ends at the top", 0, {LAPI_GEN_STRIDED_XFER, 2,
   (void *[]){TOP(114), IV(50), IV(64)}, NULL}, OK, 100},
};

static int code_for(enum want w, int origin)
{
  switch (w) {
  case OK: return LAPI_SUCCESS;
  case E_NULL: return origin ? LAPI_ERR_ORG_VEC_NULL : LAPI_ERR_TGT_VEC_NULL;
  case E_TYPE: return origin ? LAPI_ERR_ORG_VEC_TYPE : LAPI_ERR_TGT_VEC_TYPE;
  case E_ADDR: return origin ? LAPI_ERR_ORG_VEC_ADDR : LAPI_ERR_TGT_VEC_ADDR;
  case E_LEN: return origin ? LAPI_ERR_ORG_VEC_LEN : LAPI_ERR_TGT_VEC_LEN;
  case E_SADDR:
    return origin ? LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL
                  : LAPI_ERR_STRIDE_TGT_VEC_ADDR_NULL;
  case E_STRIDE: return origin ? LAPI_ERR_ORG_STRIDE : LAPI_ERR_TGT_STRIDE;
  case E_EXTENT: return origin ? LAPI_ERR_ORG_EXTENT : LAPI_ERR_TGT_EXTENT;
  }
  return -1;
}

#define NROWS (sizeof rows / sizeof rows[0])

Test(vec_check, origin_table)
{
  for (size_t i = 0; i < NROWS; i++) {
    const struct row *r = &rows[i];
    const lapi_vec_t *v = r->is_null ? NULL : &r->v;
    int got = lapi_vec_check_origin(v);
    cr_expect_eq(got, code_for(r->want, 1), "origin '%s': got %d, want %d",
                 r->what, got, code_for(r->want, 1));
  }
}

Test(vec_check, target_table)
{
  for (size_t i = 0; i < NROWS; i++) {
    const struct row *r = &rows[i];
    const lapi_vec_t *v = r->is_null ? NULL : &r->v;
    int got = lapi_vec_check_target(v);
    cr_expect_eq(got, code_for(r->want, 0), "target '%s': got %d, want %d",
                 r->what, got, code_for(r->want, 0));
  }
}

Test(vec_check, every_code_is_covered)
{
  int seen[E_EXTENT + 1] = {0};
  for (size_t i = 0; i < NROWS; i++)
    seen[rows[i].want]++;
  for (int w = OK; w <= E_EXTENT; w++)
    cr_expect(seen[w] > 0, "no row expects fault kind %d", w);
}

Test(vec_check, sizes_of_valid_vectors)
{
  for (size_t i = 0; i < NROWS; i++) {
    const struct row *r = &rows[i];
    if (r->want != OK)
      continue;
    cr_expect_eq(lapi_vec_bytes(&r->v), r->bytes, "'%s': %zu bytes, want %zu",
                 r->what, lapi_vec_bytes(&r->v), r->bytes);
  }
  cr_expect_eq(lapi_vec_bytes(NULL), 0);
}

Test(vec_check, checks_do_not_write_the_vector)
{
  void *info[] = {b0, NULL, b2};
  ulong len[] = {1, 4, 1};
  lapi_vec_t v = {LAPI_GEN_IOVECTOR, 3, info, len};
  lapi_vec_t copy = v;
  cr_assert_eq(lapi_vec_check_origin(&v), LAPI_ERR_ORG_VEC_ADDR);
  cr_assert_eq(memcmp(&v, &copy, sizeof v), 0);
  cr_assert(info[0] == b0 && info[1] == NULL && info[2] == b2);
  cr_assert(len[0] == 1 && len[1] == 4 && len[2] == 1);
}

/* ------------------------------------------------------------------ pairs */

struct pair_row {
  const char *what;
  int org_null, tgt_null;
  lapi_vec_t org, tgt;
  int want;
  size_t bytes;      /* lapi_vec_pair_bytes when the pair matches */
};

static const struct pair_row pairs[] = {
  {"origin NULL", 1, 0, {0}, {LAPI_GEN_GENERIC, 0, NULL, NULL},
   LAPI_ERR_ORG_VEC_NULL, 0},
  {"target NULL", 0, 1, {LAPI_GEN_GENERIC, 0, NULL, NULL}, {0},
   LAPI_ERR_TGT_VEC_NULL, 0},
  {"origin type invalid", 0, 0, {(lapi_vectype_t)7, 0, NULL, NULL},
   {(lapi_vectype_t)7, 0, NULL, NULL}, LAPI_ERR_ORG_VEC_TYPE, 0},
  {"target type invalid", 0, 0, {LAPI_GEN_GENERIC, 0, NULL, NULL},
   {(lapi_vectype_t)9, 0, NULL, NULL}, LAPI_ERR_TGT_VEC_TYPE, 0},
  {"iovector into generic", 0, 0,
   {LAPI_GEN_IOVECTOR, 1, (void *[]){b0}, (ulong[]){4}},
   {LAPI_GEN_GENERIC, 1, (void *[]){b1}, (ulong[]){4}},
   LAPI_ERR_VEC_TYPE_DIFF, 0},
  {"strided into iovector", 0, 0,
   {LAPI_GEN_STRIDED_XFER, 1, (void *[]){b0, IV(4), IV(4)}, NULL},
   {LAPI_GEN_IOVECTOR, 1, (void *[]){b1}, (ulong[]){4}},
   LAPI_ERR_VEC_TYPE_DIFF, 0},
  {"empty types differ", 0, 0, {LAPI_GEN_GENERIC, 0, NULL, NULL},
   {LAPI_GEN_IOVECTOR, 0, NULL, NULL}, LAPI_ERR_VEC_TYPE_DIFF, 0},
  {"iovector counts differ", 0, 0,
   {LAPI_GEN_IOVECTOR, 2, (void *[]){b0, b1}, (ulong[]){4, 4}},
   {LAPI_GEN_IOVECTOR, 1, (void *[]){b2}, (ulong[]){8}},
   LAPI_ERR_VEC_NUM_DIFF, 0},
  {"strided counts differ", 0, 0,
   {LAPI_GEN_STRIDED_XFER, 3, (void *[]){b0, IV(4), IV(8)}, NULL},
   {LAPI_GEN_STRIDED_XFER, 2, (void *[]){b1, IV(4), IV(8)}, NULL},
   LAPI_ERR_VEC_NUM_DIFF, 0},
  {"iovector len[2] differs", 0, 0,
   {LAPI_GEN_IOVECTOR, 3, (void *[]){b0, b1, b2}, (ulong[]){1, 2, 3}},
   {LAPI_GEN_IOVECTOR, 3, (void *[]){b2, b1, b0}, (ulong[]){1, 2, 4}},
   LAPI_ERR_VEC_LEN_DIFF, 0},
  {"iovector same total, other split", 0, 0,
   {LAPI_GEN_IOVECTOR, 2, (void *[]){b0, b1}, (ulong[]){2, 6}},
   {LAPI_GEN_IOVECTOR, 2, (void *[]){b2, b1}, (ulong[]){6, 2}},
   LAPI_ERR_VEC_LEN_DIFF, 0},
  {"strided blocks differ", 0, 0,
   {LAPI_GEN_STRIDED_XFER, 3, (void *[]){b0, IV(5), IV(8)}, NULL},
   {LAPI_GEN_STRIDED_XFER, 3, (void *[]){b1, IV(4), IV(8)}, NULL},
   LAPI_ERR_VEC_LEN_DIFF, 0},
  {"generic counts and lengths differ", 0, 0,
   {LAPI_GEN_GENERIC, 3, (void *[]){b0, b1, b2}, (ulong[]){5, 10, 5}},
   {LAPI_GEN_GENERIC, 4, (void *[]){b0, b1, b2, b0}, (ulong[]){12, 2, 4, 2}},
   LAPI_SUCCESS, 20},
  {"generic target smaller", 0, 0,
   {LAPI_GEN_GENERIC, 1, (void *[]){b0}, (ulong[]){20}},
   {LAPI_GEN_GENERIC, 2, (void *[]){b1, b2}, (ulong[]){5, 10}},
   LAPI_SUCCESS, 15},
  {"generic into empty target", 0, 0,
   {LAPI_GEN_GENERIC, 1, (void *[]){b0}, (ulong[]){20}},
   {LAPI_GEN_GENERIC, 0, NULL, NULL}, LAPI_SUCCESS, 0},
  {"iovector same shape", 0, 0,
   {LAPI_GEN_IOVECTOR, 2, (void *[]){b0, b1}, (ulong[]){3, 0}},
   {LAPI_GEN_IOVECTOR, 2, (void *[]){b2, NULL}, (ulong[]){3, 0}},
   LAPI_SUCCESS, 3},
  {"iovector both empty", 0, 0, {LAPI_GEN_IOVECTOR, 0, NULL, NULL},
   {LAPI_GEN_IOVECTOR, 0, NULL, NULL}, LAPI_SUCCESS, 0},
  {"strided strides may differ", 0, 0,
   {LAPI_GEN_STRIDED_XFER, 3, (void *[]){b0, IV(5), IV(8)}, NULL},
   {LAPI_GEN_STRIDED_XFER, 3, (void *[]){b1, IV(5), IV(5)}, NULL},
   LAPI_SUCCESS, 15},
  /* the target rebuilds the origin's shape without its addresses */
  {"origin shape without addresses", 0, 0,
   {LAPI_GEN_IOVECTOR, 2, NULL, (ulong[]){4, 4}},
   {LAPI_GEN_IOVECTOR, 2, (void *[]){b0, b1}, (ulong[]){4, 4}},
   LAPI_SUCCESS, 8},
};

#define NPAIRS (sizeof pairs / sizeof pairs[0])

Test(vec_check, pair_table)
{
  for (size_t i = 0; i < NPAIRS; i++) {
    const struct pair_row *p = &pairs[i];
    const lapi_vec_t *o = p->org_null ? NULL : &p->org;
    const lapi_vec_t *t = p->tgt_null ? NULL : &p->tgt;
    int got = lapi_vec_check_pair(o, t);
    cr_expect_eq(got, p->want, "pair '%s': got %d, want %d", p->what, got,
                 p->want);
    if (p->want == LAPI_SUCCESS)
      cr_expect_eq(lapi_vec_pair_bytes(o, t), p->bytes,
                   "pair '%s': %zu bytes, want %zu", p->what,
                   lapi_vec_pair_bytes(o, t), p->bytes);
  }
}

/* -------------------------------------------------------------- messages */

static void expect_explains(int code, const lapi_vec_t *o, const lapi_vec_t *t,
                            const char *needle)
{
  char buf[256];
  int n = lapi_vec_explain(code, o, t, buf, sizeof buf);
  cr_expect(n > 0 && (size_t)n < sizeof buf, "message length %d", n);
  cr_expect(strstr(buf, needle) != NULL, "'%s' lacks '%s'", buf, needle);
}

Test(vec_check, explain_names_the_field)
{
  const lapi_vec_t *bad = &rows[11].v;   /* info[1] NULL with len 4 */
  cr_assert_str_eq(rows[11].what, "info[1] NULL with len 4");
  expect_explains(LAPI_ERR_ORG_VEC_ADDR, bad, NULL, "org_vec->info[1] is NULL");
  expect_explains(LAPI_ERR_TGT_VEC_ADDR, NULL, bad, "tgt_vec->info[1] is NULL");
  expect_explains(LAPI_ERR_ORG_VEC_NULL, NULL, NULL, "org_vec is NULL");
  expect_explains(LAPI_ERR_TGT_VEC_NULL, &rows[3].v, NULL, "tgt_vec is NULL");

  lapi_vec_t strided = {LAPI_GEN_STRIDED_XFER, 3,
                        (void *[]){b0, IV(8), IV(4)}, NULL};
  expect_explains(LAPI_ERR_TGT_STRIDE, NULL, &strided, "info[2] = 4");

  const struct pair_row *ld = &pairs[9];   /* iovector len[2] differs */
  cr_assert_str_eq(ld->what, "iovector len[2] differs");
  expect_explains(LAPI_ERR_VEC_LEN_DIFF, &ld->org, &ld->tgt,
                  "org_vec->len[2] = 3 but tgt_vec->len[2] = 4");
  const struct pair_row *td = &pairs[5];   /* strided into iovector */
  expect_explains(LAPI_ERR_VEC_TYPE_DIFF, &td->org, &td->tgt,
                  "org_vec is LAPI_GEN_STRIDED_XFER but tgt_vec is "
                  "LAPI_GEN_IOVECTOR");
  const struct pair_row *tt = &pairs[3];   /* target type invalid */
  expect_explains(LAPI_ERR_TGT_VEC_TYPE, &tt->org, &tt->tgt,
                  "tgt_vec->vec_type is 9");
}

Test(vec_check, explain_with_a_code_that_does_not_fit)
{
  char buf[128], want[32];
  lapi_vec_t ok = {LAPI_GEN_GENERIC, 0, NULL, NULL};
  lapi_vec_explain(LAPI_ERR_ORG_STRIDE, &ok, &ok, buf, sizeof buf);
  snprintf(want, sizeof want, "code %d", LAPI_ERR_ORG_STRIDE);
  cr_expect(strstr(buf, want) != NULL, "%s", buf);
  /* snprintf rules: size 0 writes nothing and returns the full length. */
  char small[8] = "xxxxxxx";
  int n = lapi_vec_explain(LAPI_ERR_ORG_VEC_NULL, NULL, NULL, small, 0);
  cr_expect(n > 8);
  cr_expect_str_eq(small, "xxxxxxx");
  lapi_vec_explain(LAPI_ERR_ORG_VEC_NULL, NULL, NULL, small, sizeof small);
  cr_expect_eq(strlen(small), 7);
}
