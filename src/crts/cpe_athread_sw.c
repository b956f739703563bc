/*
 * cpe_athread_sw.c - the older SW26010 CPE calls of slave.h (athread_get,
 * athread_put, athread_syn, athread_get_id) on the CRTS engines.
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

int athread_get(dma_mode mode, void *src, void *dst, int len, void *reply,
                int mask, int stride, int bsize)
{
  static const char call[] = "athread_get";
  crts_rply_t *rply = reply;
  if (mode == PE_MODE)
    return crts_dma_single(call, CRTS_DMA_TO_LDM, dst, src, len, bsize,
                           stride, rply, 1);
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

int athread_put(dma_mode mode, void *src, void *dst, int len, void *reply,
                int stride, int bsize)
{
  static const char call[] = "athread_put";
  if (mode != PE_MODE) {
    crts_report(call, "%s is not emulated: a put is PE_MODE (one CPE's LDM "
                "into main memory)", mode_name(mode));
    return -1;
  }
  return crts_dma_single(call, CRTS_DMA_TO_MEM, dst, src, len, bsize, stride,
                         (crts_rply_t *)reply, 1);
}

int athread_syn(athread_scope scope, int mask)
{
  static const char call[] = "athread_syn";
  int line, full;
  switch (scope) {
  case ROW_SCOPE: line = CRTS_SSYNC_LINE_ROW, full = 0xff; break;
  case COL_SCOPE: line = CRTS_SSYNC_LINE_COL, full = 0xff; break;
  case ARRAY_SCOPE: line = CRTS_SSYNC_LINE_ARRAY, full = 0xffff; break;
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
  if (!crts_self) {
    crts_report(call, "must be called on a CPE (inside a spawned function)");
    return -1;
  }
  crts_ssync_line(call, line);
  return 0;
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
