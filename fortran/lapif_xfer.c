/*
 * lapif_xfer.c - Fortran binding: active messages, one-sided calls and
 * LAPI_XFER.
 *
 * TYPE(LAPI_VEC_T) has the layout of lapi_vec_t and is passed as it is.
 * The header handler of LAPI_AMSEND / LAPI_AMSENDV arrives either as a
 * procedure (gfortran passes its address) or as an INTEGER(KIND=
 * LAPI_ADDR_TYPE) value; lapif_am_prepare turns a Fortran handler into
 * the trampoline and envelope of lapif_handlers.c.
 */
#include <string.h>

#include "am/lapi_log.h"
#include "lapif_glue.h"

static int amsend(lapif_int *hndl, lapif_int *tgt, lapif_addr hdr,
                  void *uhdr, lapif_int *uhdr_len, void *udata,
                  lapif_long *udata_len, lapif_addr *tgt_cntr, void *org_cntr,
                  void *cmpl_cntr)
{
  struct lapif_am am;
  lapi_handle_t h = (lapi_handle_t)*hndl;
  lapif_am_prepare(h, hdr, lapif_ref(uhdr), (uint)*uhdr_len, &am);
  return LAPI_Amsend(h, (uint)*tgt, am.hdr_hdl, am.uhdr, am.uhdr_len,
                     lapif_ref(udata), (ulong)*udata_len, lapif_ptr(tgt_cntr),
                     lapif_ref(org_cntr), lapif_ref(cmpl_cntr));
}

/* LAPI_AMSEND(..., procedure, ...) */
void LAPIF_FN(lapi_amsend, LAPI_AMSEND)(lapif_int *hndl, lapif_int *tgt,
                                        void *hdr_hdl, void *uhdr,
                                        lapif_int *uhdr_len, void *udata,
                                        lapif_long *udata_len,
                                        lapif_addr *tgt_cntr, void *org_cntr,
                                        void *cmpl_cntr, lapif_int *ierror)
{
  lapif_addr hdr = (lapif_addr)(intptr_t)lapif_ref(hdr_hdl);
  lapif_set(ierror, amsend(hndl, tgt, hdr, uhdr, uhdr_len, udata, udata_len,
                           tgt_cntr, org_cntr, cmpl_cntr));
}

/* LAPI_AMSEND(..., index or address, ...) */
void LAPIF_FN(lapif_amsend_a, LAPIF_AMSEND_A)(lapif_int *hndl, lapif_int *tgt,
                                              lapif_addr *hdr_hdl, void *uhdr,
                                              lapif_int *uhdr_len, void *udata,
                                              lapif_long *udata_len,
                                              lapif_addr *tgt_cntr,
                                              void *org_cntr, void *cmpl_cntr,
                                              lapif_int *ierror)
{
  lapif_set(ierror, amsend(hndl, tgt, *hdr_hdl, uhdr, uhdr_len, udata,
                           udata_len, tgt_cntr, org_cntr, cmpl_cntr));
}

static int amsendv(lapif_int *hndl, lapif_int *tgt, lapif_addr hdr,
                   void *uhdr, lapif_int *uhdr_len, void *org_vec,
                   lapif_addr *tgt_cntr, void *org_cntr, void *cmpl_cntr)
{
  struct lapif_am am;
  lapi_handle_t h = (lapi_handle_t)*hndl;
  lapif_am_prepare(h, hdr, lapif_ref(uhdr), (uint)*uhdr_len, &am);
  return LAPI_Amsendv(h, (uint)*tgt, am.hdr_hdl, am.uhdr, am.uhdr_len,
                      lapif_ref(org_vec), lapif_ptr(tgt_cntr),
                      lapif_ref(org_cntr), lapif_ref(cmpl_cntr));
}

/* LAPI_AMSENDV(..., procedure, ...) */
void LAPIF_FN(lapi_amsendv, LAPI_AMSENDV)(lapif_int *hndl, lapif_int *tgt,
                                          void *hdr_hdl, void *uhdr,
                                          lapif_int *uhdr_len, void *org_vec,
                                          lapif_addr *tgt_cntr,
                                          void *org_cntr, void *cmpl_cntr,
                                          lapif_int *ierror)
{
  lapif_addr hdr = (lapif_addr)(intptr_t)lapif_ref(hdr_hdl);
  lapif_set(ierror, amsendv(hndl, tgt, hdr, uhdr, uhdr_len, org_vec,
                            tgt_cntr, org_cntr, cmpl_cntr));
}

/* LAPI_AMSENDV(..., index or address, ...) */
void LAPIF_FN(lapif_amsendv_a, LAPIF_AMSENDV_A)(lapif_int *hndl,
                                                lapif_int *tgt,
                                                lapif_addr *hdr_hdl,
                                                void *uhdr,
                                                lapif_int *uhdr_len,
                                                void *org_vec,
                                                lapif_addr *tgt_cntr,
                                                void *org_cntr,
                                                void *cmpl_cntr,
                                                lapif_int *ierror)
{
  lapif_set(ierror, amsendv(hndl, tgt, *hdr_hdl, uhdr, uhdr_len, org_vec,
                            tgt_cntr, org_cntr, cmpl_cntr));
}

void LAPIF_FN(lapi_put, LAPI_PUT)(lapif_int *hndl, lapif_int *tgt,
                                  lapif_long *len, lapif_addr *tgt_addr,
                                  void *org_addr, lapif_addr *tgt_cntr,
                                  void *org_cntr, void *cmpl_cntr,
                                  lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Put((lapi_handle_t)*hndl, (uint)*tgt, (ulong)*len,
                             lapif_ptr(tgt_addr), lapif_ref(org_addr),
                             lapif_ptr(tgt_cntr), lapif_ref(org_cntr),
                             lapif_ref(cmpl_cntr)));
}

void LAPIF_FN(lapi_get, LAPI_GET)(lapif_int *hndl, lapif_int *tgt,
                                  lapif_long *len, lapif_addr *tgt_addr,
                                  void *org_addr, lapif_addr *tgt_cntr,
                                  void *org_cntr, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Get((lapi_handle_t)*hndl, (uint)*tgt, (ulong)*len,
                             lapif_ptr(tgt_addr), lapif_ref(org_addr),
                             lapif_ptr(tgt_cntr), lapif_ref(org_cntr)));
}

void LAPIF_FN(lapi_putv, LAPI_PUTV)(lapif_int *hndl, lapif_int *tgt,
                                    void *tgt_vec, void *org_vec,
                                    lapif_addr *tgt_cntr, void *org_cntr,
                                    void *cmpl_cntr, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Putv((lapi_handle_t)*hndl, (uint)*tgt,
                              lapif_ref(tgt_vec), lapif_ref(org_vec),
                              lapif_ptr(tgt_cntr), lapif_ref(org_cntr),
                              lapif_ref(cmpl_cntr)));
}

void LAPIF_FN(lapi_getv, LAPI_GETV)(lapif_int *hndl, lapif_int *tgt,
                                    void *tgt_vec, void *org_vec,
                                    lapif_addr *tgt_cntr, void *org_cntr,
                                    lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Getv((lapi_handle_t)*hndl, (uint)*tgt,
                              lapif_ref(tgt_vec), lapif_ref(org_vec),
                              lapif_ptr(tgt_cntr), lapif_ref(org_cntr)));
}

void LAPIF_FN(lapi_rmw, LAPI_RMW)(lapif_int *hndl, lapif_int *op,
                                  lapif_int *tgt, lapif_addr *tgt_var,
                                  void *in_val, void *prev_tgt_val,
                                  void *org_cntr, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Rmw((lapi_handle_t)*hndl, (RMW_ops_t)*op,
                             (uint)*tgt, lapif_ptr(tgt_var), lapif_ref(in_val),
                             lapif_ref(prev_tgt_val), lapif_ref(org_cntr)));
}

void LAPIF_FN(lapi_rmw64, LAPI_RMW64)(lapif_int *hndl, lapif_int *op,
                                      lapif_int *tgt, lapif_addr *tgt_var,
                                      void *in_val, void *prev_tgt_val,
                                      void *org_cntr, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Rmw64((lapi_handle_t)*hndl, (RMW_ops_t)*op,
                               (uint)*tgt, lapif_ptr(tgt_var),
                               lapif_ref(in_val), lapif_ref(prev_tgt_val),
                               lapif_ref(org_cntr)));
}

/* ------------------------------------------------------------ LAPI_XFER */

/* Bytes of the Fortran command of this kind (its C member's size); a kind
 * LAPI refuses needs only XFER_TYPE. */
static size_t xfer_size(int type)
{
  switch (type) {
  case LAPI_GET_XFER:
    return sizeof(lapi_get_t);
  case LAPI_AM_XFER:
    return sizeof(lapi_am_t);
  case LAPI_PUT_XFER:
    return sizeof(lapi_put_t);
  case LAPI_GETV_XFER:
    return sizeof(lapi_getv_t);
  case LAPI_PUTV_XFER:
    return sizeof(lapi_putv_t);
  case LAPI_AMV_XFER:
    return sizeof(lapi_amv_t);
  case LAPI_RMW_XFER:
    return sizeof(lapi_rmw_t);
  default:
    return sizeof(lapi_xfer_type_t);
  }
}

/* A handler field holding a Fortran procedure's address: its trampoline.
 * Returns 0, or -1 when no trampoline is left. */
static int tramp_field(void *field, int send_completion)
{
  lapif_addr fn;
  memcpy(&fn, field, sizeof fn);
  if (fn == 0)
    return 0;
  if (send_completion) {
    scompl_hndlr_t *t = lapif_shdlr_tramp(fn);
    memcpy(field, &t, sizeof t);
    return t ? 0 : -1;
  }
  compl_hndlr_t *t = lapif_cmpl_tramp(fn);
  memcpy(field, &t, sizeof t);
  return t ? 0 : -1;
}

/*
 * The command is copied (its own size, not the C union's), its Fortran
 * handlers replaced by trampolines and an AM's header handler by the
 * binding's envelope; LAPI_Xfer does every check on the copy.
 */
void LAPIF_FN(lapi_xfer, LAPI_XFER)(lapif_int *hndl, void *xfer_cmd,
                                    lapif_int *ierror)
{
  lapi_handle_t h = (lapi_handle_t)*hndl;
  xfer_cmd = lapif_ref(xfer_cmd);
  if (xfer_cmd == NULL) {
    lapif_set(ierror, LAPI_Xfer(h, NULL));
    return;
  }
  lapi_xfer_t x;
  int type;
  memset(&x, 0, sizeof x);
  memcpy(&type, xfer_cmd, sizeof type);
  memcpy(&x, xfer_cmd, xfer_size(type));

  struct lapif_am am;
  int bad = 0;
  switch (type) {
  case LAPI_AM_XFER:
    lapif_am_prepare(h, (lapif_addr)x.Am.hdr_hdl, x.Am.uhdr, x.Am.uhdr_len,
                     &am);
    x.Am.hdr_hdl = (lapi_long_t)(uintptr_t)am.hdr_hdl;
    x.Am.uhdr = am.uhdr;
    x.Am.uhdr_len = am.uhdr_len;
    bad = tramp_field(&x.Am.shdlr, 1);
    break;
  case LAPI_AMV_XFER:
    lapif_am_prepare(h, (lapif_addr)x.Amv.hdr_hdl, x.Amv.uhdr,
                     x.Amv.uhdr_len, &am);
    x.Amv.hdr_hdl = (lapi_long_t)(uintptr_t)am.hdr_hdl;
    x.Amv.uhdr = am.uhdr;
    x.Amv.uhdr_len = am.uhdr_len;
    bad = tramp_field(&x.Amv.shdlr, 1);
    break;
  case LAPI_PUT_XFER:
    bad = tramp_field(&x.Put.shdlr, 1);
    break;
  case LAPI_PUTV_XFER:
    bad = tramp_field(&x.Putv.shdlr, 1);
    break;
  case LAPI_RMW_XFER:
    bad = tramp_field(&x.Rmw.shdlr, 1);
    break;
  case LAPI_GET_XFER:
    bad = tramp_field(&x.Get.chndlr, 0);
    break;
  case LAPI_GETV_XFER:
    bad = tramp_field(&x.Getv.chndlr, 0);
    break;
  default:
    break;
  }
  if (bad) {
    lapif_set(ierror, LAPI_FAIL(LAPI_ERR_MEMORY_EXHAUSTED,
                                "LAPI_XFER: no trampoline left for a Fortran "
                                "handler (%d Fortran handler procedures at "
                                "most)", LAPIF_SLOTS));
    return;
  }
  lapif_set(ierror, LAPI_Xfer(h, &x));
}
