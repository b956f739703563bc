/*
 * lapif_cntr.c - Fortran binding: counters.
 *
 * TYPE(LAPI_CNTR_T) has the layout of lapi_cntr_t, so a Fortran counter
 * is the C counter itself: its address may be sent to another task as a
 * tgt_cntr, and LAPI updates it while the program runs.  LAPI_ADDR_NULL
 * in place of a counter is NULL (LAPI_ERR_CNTR_NULL).
 */
#include "lapif_glue.h"

void LAPIF_FN(lapi_setcntr, LAPI_SETCNTR)(lapif_int *hndl, void *cntr,
                                          lapif_int *val, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Setcntr((lapi_handle_t)*hndl, lapif_ref(cntr),
                                 *val));
}

void LAPIF_FN(lapi_getcntr, LAPI_GETCNTR)(lapif_int *hndl, void *cntr,
                                          lapif_int *val, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Getcntr((lapi_handle_t)*hndl, lapif_ref(cntr),
                                 lapif_ref(val)));
}

void LAPIF_FN(lapi_waitcntr, LAPI_WAITCNTR)(lapif_int *hndl, void *cntr,
                                            lapif_int *val, lapif_int *cur,
                                            lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Waitcntr((lapi_handle_t)*hndl, lapif_ref(cntr),
                                  *val, lapif_ref(cur)));
}

void LAPIF_FN(lapi_nopoll_wait, LAPI_NOPOLL_WAIT)(lapif_int *hndl, void *cntr,
                                                  lapif_int *val,
                                                  lapif_int *cur,
                                                  lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Nopoll_wait((lapi_handle_t)*hndl, lapif_ref(cntr),
                                     *val, lapif_ref(cur)));
}

/* DEST and STAT are INTEGER arrays of num_dest entries. */
void LAPIF_FN(lapi_setcntr_wstatus, LAPI_SETCNTR_WSTATUS)(
    lapif_int *hndl, void *cntr, lapif_int *num_dest, lapif_int *dest,
    lapif_int *dest_status, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Setcntr_wstatus((lapi_handle_t)*hndl,
                                         lapif_ref(cntr), *num_dest,
                                         (uint *)lapif_ref(dest),
                                         lapif_ref(dest_status)));
}
