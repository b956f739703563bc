/*
 * cpe_ptab.c - parallel table lookup: 16 lanes each read their own copy.
 *
 * The chip's LDM serves a 16-lane lookup in one step when each lane reads
 * a different bank, so a parallel table interleaves its copies word by
 * word: a table of `unit` 4-byte elements becomes 16 * unit words where
 *
 *     ptable[16 * k + i] = element k of copy i        (i = lane 0..15)
 *
 * i.e. each 64-byte row k holds element k of all 16 copies (seed example:
 * uintv16 P_IPTAB1[16] holds element k of every copy in P_IPTAB1[k]).
 *
 * A "parallel address" (the uintv16 the copy calls return) holds in lane i
 * the LDM address of word 0 of copy i.  LDM addresses here are offsets in a
 * CPE's 256 KiB LDM - the same location on every CPE, as on the chip where
 * every CPE sees its LDM at the same addresses - so they fit 32 bits.
 * Lane i of a lookup or write at byte offset o in the table touches
 *
 *     base_i + 64 * (o / 4)     in the calling CPE's LDM
 *
 * (the low two bits of an offset are ignored, as the element is 4 bytes).
 * A lane that falls outside the caller's LDM is reported: it reads as 0,
 * and a write with such a lane writes no lane at all.  Calls that fail to
 * build a table report and return a vector whose lanes are all PTAB_BAD,
 * which later lookups reject.
 *
 * CRTS_ptab_cpy takes num (1..16; the manual names 2..16) source tables
 * for copies 0..num-1; the remaining copies repeat them cyclically (copy i
 * comes from table i % num) so that all 16 lanes stay usable.
 */
#include <stdint.h>
#include <string.h>

#include "crts_cg.h"

#define PTAB_LANES 16
#define PTAB_ROW (PTAB_LANES * 4) /* bytes per element row */
#define PTAB_BAD 0xffffffffu

static uintv16 bad_vector(void)
{
  uintv16 v;
  for (int i = 0; i < PTAB_LANES; i++)
    v.v[i] = PTAB_BAD;
  return v;
}

/* Lane addresses of a table at p, which lies in some CPE's LDM. */
static uintv16 lane_bases(const void *p)
{
  int owner = crts_ldm_owner(p);
  uint32_t off = (uint32_t)((const char *)p - crts_cg.cpe[owner].ldm);
  uintv16 v;
  for (int i = 0; i < PTAB_LANES; i++)
    v.v[i] = off + 4u * (uint32_t)i;
  return v;
}

uintv16 CRTS_get_ptab_addr(unsigned int *ptable)
{
  const char *call = "CRTS_get_ptab_addr";
  if (!crts_check_init(call) || !crts_check_cpe(call))
    return bad_vector();
  /* The manual passes an LDM "global" address: any CPE's slice will do. */
  if (!ptable || (uintptr_t)ptable % 4 != 0 ||
      !crts_ldm_range(ptable, PTAB_ROW, NULL)) {
    crts_report(call, "ptable %p is not a 4-byte aligned LDM address",
                (void *)ptable);
    return bad_vector();
  }
  return lane_bases(ptable);
}

static int check_table(const char *call, unsigned int *const orig[],
                       int unit, int num, const unsigned int *ptable)
{
  if (!crts_check_init(call) || !crts_check_cpe(call))
    return 0;
  if (unit <= 0) {
    crts_report(call, "unit %d: a table needs at least one element", unit);
    return 0;
  }
  if (num < 1 || num > PTAB_LANES) {
    crts_report(call, "num %d is outside 1..16", num);
    return 0;
  }
  size_t plen = (size_t)unit * PTAB_ROW;
  size_t tlen = (size_t)unit * 4;
  int owner = -1;
  if ((uintptr_t)ptable % 4 != 0 || !crts_ldm_range(ptable, plen, &owner) ||
      owner != crts_self->tid) {
    crts_report(call, "ptable %p must be 4-byte aligned and hold 16 * unit "
                "* 4 = %zu bytes of this CPE's LDM", (const void *)ptable,
                plen);
    return 0;
  }
  for (int c = 0; c < num; c++) {
    const char *t = (const char *)orig[c];
    const char *p = (const char *)ptable;
    if (!t || (uintptr_t)t % 4 != 0) {
      crts_report(call, "original table %d (%p) is NULL or not 4-byte "
                  "aligned", c, (const void *)t);
      return 0;
    }
    if (t < p + plen && p < t + tlen) {
      crts_report(call, "original table %d overlaps ptable", c);
      return 0;
    }
    int o = crts_ldm_owner(t);
    if (o >= 0 && (o != crts_self->tid || !crts_ldm_range(t, tlen, NULL))) {
      crts_report(call, "original table %d (%p, %zu bytes) is LDM but not "
                  "inside this CPE's own LDM", c, (const void *)t, tlen);
      return 0;
    }
  }
  return 1;
}

static void fill(unsigned int *const orig[], int unit, int num,
                 unsigned int *ptable)
{
  for (size_t k = 0; k < (size_t)unit; k++)
    for (int i = 0; i < PTAB_LANES; i++)
      ptable[k * PTAB_LANES + (size_t)i] = orig[i % num][k];
}

uintv16 CRTS_ptab_cpy(unsigned int *orig_table_addr[16], int unit, int num,
                      unsigned int *ptable)
{
  const char *call = "CRTS_ptab_cpy";
  if (!orig_table_addr) {
    crts_report(call, "orig_table_addr is NULL");
    return bad_vector();
  }
  if (!check_table(call, orig_table_addr, unit, num, ptable))
    return bad_vector();
  fill(orig_table_addr, unit, num, ptable);
  return lane_bases(ptable);
}

uintv16 CRTS_ptab_cpy16(unsigned int *orig_table_addr, int unit,
                        unsigned int *ptable)
{
  const char *call = "CRTS_ptab_cpy16";
  unsigned int *orig[PTAB_LANES];
  for (int i = 0; i < PTAB_LANES; i++)
    orig[i] = orig_table_addr;
  if (!check_table(call, orig, unit, PTAB_LANES, ptable))
    return bad_vector();
  fill(orig, unit, PTAB_LANES, ptable);
  return lane_bases(ptable);
}

/*
 * The word lane i addresses in the caller's LDM, or NULL when it lies
 * outside (counted in *bad).
 */
static unsigned int *lane_word(const struct crts_cpe *self, uint32_t base,
                               uint32_t offset, int *bad)
{
  uint64_t at = (uint64_t)base + (uint64_t)(offset / 4) * PTAB_ROW;
  if (base % 4 == 0 && at + 4 <= CRTS_MAX_LDM_SIZE) {
    unsigned int *w = (unsigned int *)(self->ldm + at);
    int owner = -1;
    if (crts_ldm_range(w, 4, &owner) && owner == self->tid)
      return w;
  }
  (*bad)++;
  return NULL;
}

static void report_bad(const char *call, int bad)
{
  crts_report(call, "%d lane(s) address outside this CPE's LDM: pass the "
              "vector from CRTS_ptab_cpy/cpy16/get_ptab_addr and offsets "
              "below 4 * unit", bad);
}

uintv16 CRTS_ptab_lookup(uintv16 voffset, uintv16 vbase_addr)
{
  const char *call = "CRTS_ptab_lookup";
  uintv16 r;
  memset(&r, 0, sizeof r);
  struct crts_cpe *self = crts_check_cpe(call);
  if (!self)
    return r;
  int bad = 0;
  for (int i = 0; i < PTAB_LANES; i++) {
    unsigned int *w = lane_word(self, vbase_addr.v[i], voffset.v[i], &bad);
    if (w)
      r.v[i] = *w;
  }
  if (bad)
    report_bad(call, bad);
  return r;
}

void CRTS_ptab_write(uintv16 voffset, uintv16 vbase_addr, uintv16 value)
{
  const char *call = "CRTS_ptab_write";
  struct crts_cpe *self = crts_check_cpe(call);
  if (!self)
    return;
  int bad = 0;
  unsigned int *w[PTAB_LANES];
  for (int i = 0; i < PTAB_LANES; i++)
    w[i] = lane_word(self, vbase_addr.v[i], voffset.v[i], &bad);
  if (bad) { /* write nothing rather than part of the vector */
    report_bad(call, bad);
    return;
  }
  for (int i = 0; i < PTAB_LANES; i++)
    *w[i] = value.v[i];
}

uintv16 simd_set_uintv16(unsigned int a0, unsigned int a1, unsigned int a2,
                         unsigned int a3, unsigned int a4, unsigned int a5,
                         unsigned int a6, unsigned int a7, unsigned int a8,
                         unsigned int a9, unsigned int a10, unsigned int a11,
                         unsigned int a12, unsigned int a13, unsigned int a14,
                         unsigned int a15)
{
  uintv16 v = { { a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13,
                  a14, a15 } };
  return v;
}
