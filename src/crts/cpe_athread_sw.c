/*
 * cpe_athread_sw.c - the older SW26010 CPE calls of slave.h (athread_get,
 * athread_put, athread_syn, athread_get_id) and of dma.h (the descriptor
 * calls, dma(), dma_wait) on the CRTS engines.
 *
 * They are the same transfers and barriers as the CRTS_* forms, checked
 * and reported under their own names.  Two differences are the SW26010's:
 * the main-memory address comes first, and a BCAST_MODE get raises only
 * the issuer's reply word (SW26010 code waits on it on the issuer, then
 * meets the receivers in athread_syn), where CRTS_dma_ibcast raises every
 * receiver's.  Modes whose layout this emulator does not model (ROW_MODE,
 * BROW_MODE, RANK_MODE) and partial barrier masks fail with a report
 * rather than do something else.
 */
#include <dma.h>
#include <slave.h>

#include "crts_dma.h"
#include "crts_sync.h"

#define ROWS_ALL 0xff

static const char *mode_name(dma_mode mode)
{
  switch (mode) {
  case PE_MODE: return "PE_MODE";
  case BCAST_MODE: return "BCAST_MODE";
  case ROW_MODE: return "ROW_MODE";
  case BROW_MODE: return "BROW_MODE";
  case RANK_MODE: return "RANK_MODE";
  }
  return "an unknown mode";
}

/* The mesh mask of the rows whose bits are set in row_bits. */
static uint64_t rows_mask(int row_bits)
{
  uint64_t m = 0;
  for (int r = 0; r < CRTS_ROW_NUM; r++)
    if ((row_bits >> r) & 1)
      m |= (uint64_t)0xff << (r * CRTS_COL_NUM);
  return m;
}

/* A get as athread_get's, reported under call; rply NULL: no reply. */
static int sw_get(const char *call, dma_mode mode, void *src, void *dst,
                  int len, crts_rply_t *rply, int mask, int stride, int bsize)
{
  if (mode == PE_MODE)
    return crts_dma_single(call, CRTS_DMA_TO_LDM, dst, src, len, bsize,
                           stride, rply, rply != NULL);
  if (mode == BCAST_MODE) {
    if (mask <= 0 || mask > ROWS_ALL) {
      crts_report(call, "BCAST_MODE mask 0x%x: bits 0..7 name the rows that "
                  "receive (0xff: every row)", (unsigned)mask);
      return -1;
    }
    return crts_dma_ibcast_to(call, rows_mask(mask), dst, src, len, bsize,
                              stride, rply, 0);
  }
  crts_report(call, "%s is not emulated: use PE_MODE or BCAST_MODE (or the "
              "CRTS_dma_* row and column broadcasts)", mode_name(mode));
  return -1;
}

static int sw_put(const char *call, dma_mode mode, void *src, void *dst,
                  int len, crts_rply_t *rply, int stride, int bsize)
{
  if (mode != PE_MODE) {
    crts_report(call, "%s is not emulated: a put is PE_MODE (one CPE's LDM "
                "into main memory)", mode_name(mode));
    return -1;
  }
  return crts_dma_single(call, CRTS_DMA_TO_MEM, dst, src, len, bsize, stride,
                         rply, rply != NULL);
}

/* athread_get/put always count in a reply word (a descriptor may not). */
static int reply_given(const char *call, const void *reply)
{
  if (reply)
    return 1;
  crts_report(call, "reply is NULL: pass the address of a reply word in LDM");
  return 0;
}

int athread_get(dma_mode mode, void *src, void *dst, int len, void *reply,
                int mask, int stride, int bsize)
{
  if (!reply_given("athread_get", reply))
    return -1;
  return sw_get("athread_get", mode, src, dst, len, reply, mask, stride,
                bsize);
}

int athread_put(dma_mode mode, void *src, void *dst, int len, void *reply,
                int stride, int bsize)
{
  if (!reply_given("athread_put", reply))
    return -1;
  return sw_put("athread_put", mode, src, dst, len, reply, stride, bsize);
}

int athread_syn(athread_scope scope, int mask)
{
  static const char call[] = "athread_syn";
  enum ssync_kind kind;
  int full;
  switch (scope) {
  case ROW_SCOPE: kind = SSYNC_ROW, full = 0xff; break;
  case COL_SCOPE: kind = SSYNC_COL, full = 0xff; break;
  case ARRAY_SCOPE: kind = SSYNC_ARRAY, full = 0xffff; break;
  default:
    crts_report(call, "scope %d is not ROW_SCOPE, COL_SCOPE or ARRAY_SCOPE",
                (int)scope);
    return -1;
  }
  if (mask != full) {
    crts_report(call, "mask 0x%x: only the full mask of the scope (0x%x) is "
                "emulated; for part of a row or column use CRTS_ssync_peer "
                "or a CRTS_ssync_* group", (unsigned)mask, (unsigned)full);
    return -1;
  }
  return crts_ssync_group(call, kind);
}

int athread_get_id(int core)
{
  if (!crts_self) {
    crts_report("athread_get_id", "must be called on a CPE");
    return -1;
  }
  if (core == -1)
    return crts_self->tid;
  return core >= 0 && core < CRTS_MAX_SPE_NUM && crts_in_group(core) ? core
                                                                     : -1;
}

/* ------------------------------------------------------- descriptors */

/* Fields of a dma_desc: shift and width in bits. */
#define F_OP 0, 3
#define F_MODE 3, 3
#define F_MASK 6, 8
#define F_REPLY 14, 18 /* 0 none; else its LDM offset / 4 + 1 */
#define F_SIZE 32, 32
#define F_BSIZE 64, 32
#define F_STEP 96, 32
#define BAD_FIELD 7           /* an op or mode that was not one */
#define BAD_REPLY 0x3ffff     /* a reply word that was not usable */

static void field_set(dma_desc *d, int shift, int bits, uint64_t v)
{
  dma_desc m = (((dma_desc)1 << bits) - 1) << shift;
  *d = (*d & ~m) | (((dma_desc)v << shift) & m);
}

static uint64_t field_get(dma_desc d, int shift, int bits)
{
  return (uint64_t)((d >> shift) & (((dma_desc)1 << bits) - 1));
}

void dma_set_op(dma_desc *desc, dma_op op)
{
  field_set(desc, F_OP, op == DMA_PUT || op == DMA_GET ? op : BAD_FIELD);
}

void dma_set_mode(dma_desc *desc, dma_mode mode)
{
  field_set(desc, F_MODE,
            mode >= PE_MODE && mode <= RANK_MODE ? mode : BAD_FIELD);
}

void dma_set_size(dma_desc *desc, int size)
{
  field_set(desc, F_SIZE, (uint32_t)size);
}

void dma_set_bsize(dma_desc *desc, int bsize)
{
  field_set(desc, F_BSIZE, (uint32_t)bsize);
}

void dma_set_stepsize(dma_desc *desc, int stepsize)
{
  field_set(desc, F_STEP, (uint32_t)stepsize);
}

void dma_set_mask(dma_desc *desc, int mask)
{
  /* bits beyond the 8 rows: stored as no row, which dma() refuses (as
   * athread_get refuses the mask itself), not cut down to a valid one */
  field_set(desc, F_MASK, mask & ~ROWS_ALL ? 0 : (uint32_t)mask);
}

void dma_set_reply(dma_desc *desc, volatile void *reply)
{
  static const char call[] = "dma_set_reply";
  uint64_t v = 0;
  if (reply) {
    struct crts_cpe *self = crts_check_cpe(call);
    if (self && crts_dma_check_rply(call, (crts_rply_t *)reply, self) == 0)
      v = (uint64_t)((const char *)reply - self->ldm) / 4 + 1;
    else
      v = BAD_REPLY;
  }
  field_set(desc, F_REPLY, v);
}

int athread_dma(dma_desc desc, void *mem, void *ldm)
{
  static const char call[] = "dma";
  struct crts_cpe *self = crts_check_cpe(call);
  if (!self)
    return -1;
  uint64_t r = field_get(desc, F_REPLY);
  if (r == BAD_REPLY || (r && (r - 1) * 4 >= CRTS_MAX_LDM_SIZE)) {
    crts_report(call, "the descriptor's reply word is not usable (see "
                "dma_set_reply's report, or zero the descriptor first)");
    return -1;
  }
  crts_rply_t *rply = r ? (crts_rply_t *)(self->ldm + (r - 1) * 4) : NULL;
  int op = (int)field_get(desc, F_OP);
  int mode = (int)field_get(desc, F_MODE);
  int size = (int)(uint32_t)field_get(desc, F_SIZE);
  int bsize = (int)(uint32_t)field_get(desc, F_BSIZE);
  int step = (int)(uint32_t)field_get(desc, F_STEP);
  if (mode == BAD_FIELD || op == BAD_FIELD) {
    crts_report(call, "the descriptor's %s was not a known value: set it "
                "with dma_set_%s", op == BAD_FIELD ? "op" : "mode",
                op == BAD_FIELD ? "op (DMA_GET, DMA_PUT)" : "mode");
    return -1;
  }
  if (op == DMA_GET)
    return sw_get(call, (dma_mode)mode, mem, ldm, size, rply,
                  (int)field_get(desc, F_MASK), step, bsize);
  return sw_put(call, (dma_mode)mode, ldm, mem, size, rply, step, bsize);
}

int dma_wait(volatile void *reply, int count)
{
  static const char call[] = "dma_wait";
  struct crts_cpe *self = crts_check_cpe(call);
  crts_rply_t *rply = (crts_rply_t *)reply;
  if (!self || crts_dma_check_rply(call, rply, self) != 0)
    return -1;
  if (count < 0) {
    crts_report(call, "count %d is negative: it counts completed transfers",
                count);
    return -1;
  }
  crts_word_wait_ge(rply, count, &self->waiting_on);
  return 0;
}
