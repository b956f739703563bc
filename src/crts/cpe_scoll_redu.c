/*
 * cpe_scoll_redu.c - the element operations of CRTS_scoll_redurt.
 *
 * Element types and their sizes (bytes):
 *   CRTS_int, CRTS_uint      4   32-bit integer
 *   CRTS_long, CRTS_ulong    sizeof(long) (8 on LP64 Linux)
 *   CRTS_float               4   IEEE binary32
 *   CRTS_double              8   IEEE binary64
 *   CRTS_intv16, CRTS_uintv16  64  16 lanes of 32-bit integers
 *   CRTS_floatv8             32  8 lanes of float
 *   CRTS_doublev8            64  8 lanes of double
 *   CRTS_int512, CRTS_uint512  64  one 512-bit two's complement integer,
 *                              little endian (8 64-bit words, low first)
 * Vector types combine lane by lane.  OP_add wraps around on integers;
 * OP_eqv is NOT XOR; OP_min/OP_max compare signed for int, long, intv16 and
 * int512, unsigned for the others.  The bitwise ops (and, or, xor, eqv) do
 * not exist for the floating types.  On floats OP_min keeps the current
 * value unless the new one compares smaller (OP_max: larger), so a NaN in
 * the running value stays and a new NaN is ignored.
 *
 * Data may be only 4-byte aligned (the CRTS rule), so every lane is moved
 * with memcpy, which the compiler turns into plain loads and stores.
 */
#include <stdint.h>
#include <string.h>

#include "crts.h"
#include "crts_scoll.h"

enum lane_kind { LANE_INT, LANE_FLOAT, LANE_DOUBLE, LANE_WIDE };

struct type_info {
  const char *name;
  enum lane_kind kind;
  unsigned lane_bytes; /* 4 or 8 for LANE_INT */
  int is_signed;       /* LANE_INT and LANE_WIDE */
  unsigned lanes;
};

static const struct type_info types[] = {
  [CRTS_int] = { "CRTS_int", LANE_INT, 4, 1, 1 },
  [CRTS_uint] = { "CRTS_uint", LANE_INT, 4, 0, 1 },
  [CRTS_long] = { "CRTS_long", LANE_INT, sizeof(long), 1, 1 },
  [CRTS_ulong] = { "CRTS_ulong", LANE_INT, sizeof(long), 0, 1 },
  [CRTS_float] = { "CRTS_float", LANE_FLOAT, 4, 0, 1 },
  [CRTS_double] = { "CRTS_double", LANE_DOUBLE, 8, 0, 1 },
  [CRTS_intv16] = { "CRTS_intv16", LANE_INT, 4, 1, 16 },
  [CRTS_uintv16] = { "CRTS_uintv16", LANE_INT, 4, 0, 16 },
  [CRTS_int512] = { "CRTS_int512", LANE_WIDE, 64, 1, 1 },
  [CRTS_uint512] = { "CRTS_uint512", LANE_WIDE, 64, 0, 1 },
  [CRTS_floatv8] = { "CRTS_floatv8", LANE_FLOAT, 4, 0, 8 },
  [CRTS_doublev8] = { "CRTS_doublev8", LANE_DOUBLE, 8, 0, 8 },
};

static const char *const op_names[] = {
  [OP_add] = "OP_add", [OP_and] = "OP_and", [OP_or] = "OP_or",
  [OP_xor] = "OP_xor", [OP_eqv] = "OP_eqv", [OP_min] = "OP_min",
  [OP_max] = "OP_max",
};

#define NTYPES (int)(sizeof types / sizeof types[0])
#define NOPS (int)(sizeof op_names / sizeof op_names[0])

size_t crts_redu_elem_size(int dtype)
{
  if (dtype < 0 || dtype >= NTYPES)
    return 0;
  return (size_t)types[dtype].lane_bytes * types[dtype].lanes;
}

int crts_redu_op_valid(int dtype, int optype)
{
  if (dtype < 0 || dtype >= NTYPES || optype < 0 || optype >= NOPS)
    return 0;
  enum lane_kind k = types[dtype].kind;
  if (k == LANE_FLOAT || k == LANE_DOUBLE)
    return optype == OP_add || optype == OP_min || optype == OP_max;
  return 1;
}

const char *crts_redu_type_name(int dtype)
{
  return dtype >= 0 && dtype < NTYPES ? types[dtype].name : "?";
}

const char *crts_redu_op_name(int optype)
{
  return optype >= 0 && optype < NOPS ? op_names[optype] : "?";
}

/* ---------------------------------------------------- 32/64-bit integers */

static uint64_t load_int(const char *p, unsigned w)
{
  if (w == 4) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
  }
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static void store_int(char *p, unsigned w, uint64_t v)
{
  if (w == 4) {
    uint32_t t = (uint32_t)v;
    memcpy(p, &t, 4);
  } else {
    memcpy(p, &v, 8);
  }
}

/* Sign-extend a w-byte value held zero-extended in v. */
static int64_t as_signed(uint64_t v, unsigned w)
{
  return w == 4 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
}

/* 1 if b < a in the lane's signedness. */
static int int_less(uint64_t b, uint64_t a, unsigned w, int sgn)
{
  return sgn ? as_signed(b, w) < as_signed(a, w) : b < a;
}

static void apply_int(int op, unsigned w, int sgn, char *acc, const char *in,
                      size_t lanes)
{
  for (size_t i = 0; i < lanes; i++, acc += w, in += w) {
    uint64_t a = load_int(acc, w), b = load_int(in, w), r;
    switch (op) {
    case OP_add: r = a + b; break; /* unsigned: wraps, no UB */
    case OP_and: r = a & b; break;
    case OP_or: r = a | b; break;
    case OP_xor: r = a ^ b; break;
    case OP_eqv: r = ~(a ^ b); break;
    case OP_min: r = int_less(b, a, w, sgn) ? b : a; break;
    default: r = int_less(a, b, w, sgn) ? b : a; break; /* OP_max */
    }
    store_int(acc, w, r);
  }
}

/* ----------------------------------------------------------- floating */

static void apply_float(int op, char *acc, const char *in, size_t lanes)
{
  for (size_t i = 0; i < lanes; i++, acc += 4, in += 4) {
    float a, b;
    memcpy(&a, acc, 4);
    memcpy(&b, in, 4);
    if (op == OP_add)
      a = a + b;
    else if (op == OP_min ? b < a : b > a)
      a = b;
    memcpy(acc, &a, 4);
  }
}

static void apply_double(int op, char *acc, const char *in, size_t lanes)
{
  for (size_t i = 0; i < lanes; i++, acc += 8, in += 8) {
    double a, b;
    memcpy(&a, acc, 8);
    memcpy(&b, in, 8);
    if (op == OP_add)
      a = a + b;
    else if (op == OP_min ? b < a : b > a)
      a = b;
    memcpy(acc, &a, 8);
  }
}

/* ------------------------------------------------------ 512-bit integers */

#define WIDE_WORDS 8

/* -1, 0, 1 as a <, ==, > b; the top word decides the sign when signed. */
static int wide_cmp(const uint64_t *a, const uint64_t *b, int sgn)
{
  int top = WIDE_WORDS - 1;
  if (sgn && a[top] != b[top])
    return (int64_t)a[top] < (int64_t)b[top] ? -1 : 1;
  for (int i = top; i >= 0; i--)
    if (a[i] != b[i])
      return a[i] < b[i] ? -1 : 1;
  return 0;
}

static void apply_wide(int op, int sgn, char *acc, const char *in, size_t n)
{
  for (size_t e = 0; e < n; e++, acc += 64, in += 64) {
    uint64_t a[WIDE_WORDS], b[WIDE_WORDS];
    memcpy(a, acc, sizeof a);
    memcpy(b, in, sizeof b);
    if (op == OP_add) {
      unsigned carry = 0;
      for (int i = 0; i < WIDE_WORDS; i++) {
        uint64_t s = a[i] + b[i];
        unsigned c1 = s < a[i];
        a[i] = s + carry;
        carry = c1 | (a[i] < s);
      }
    } else if (op == OP_min || op == OP_max) {
      int c = wide_cmp(b, a, sgn);
      if (op == OP_min ? c < 0 : c > 0)
        memcpy(a, b, sizeof a);
    } else {
      for (int i = 0; i < WIDE_WORDS; i++) {
        switch (op) {
        case OP_and: a[i] &= b[i]; break;
        case OP_or: a[i] |= b[i]; break;
        case OP_xor: a[i] ^= b[i]; break;
        default: a[i] = ~(a[i] ^ b[i]); break; /* OP_eqv */
        }
      }
    }
    memcpy(acc, a, sizeof a);
  }
}

void crts_redu_apply(int dtype, int optype, void *acc, const void *in,
                     size_t n)
{
  const struct type_info *t = &types[dtype];
  size_t lanes = n * t->lanes;
  switch (t->kind) {
  case LANE_INT:
    apply_int(optype, t->lane_bytes, t->is_signed, acc, in, lanes);
    break;
  case LANE_FLOAT:
    apply_float(optype, acc, in, lanes);
    break;
  case LANE_DOUBLE:
    apply_double(optype, acc, in, lanes);
    break;
  case LANE_WIDE:
    apply_wide(optype, t->is_signed, acc, in, n);
    break;
  }
}
