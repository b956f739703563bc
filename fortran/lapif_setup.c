/*
 * lapif_setup.c - Fortran binding: handles, settings, messages, progress,
 * fences, purges, addresses, the handler table and LAPI_UTIL.
 *
 * Each LAPI_X here is the Fortran form of the C call: arguments by
 * reference, INTEGER handles, ierror last.  The C call does every check,
 * so ierror gets exactly the C code.  LAPI_ADDR_NULL in place of an
 * object becomes NULL (lapif_ref); an INTEGER(KIND=LAPI_ADDR_TYPE)
 * address is passed on as a pointer (lapif_ptr).
 */
#include <string.h>

#include "am/lapi_log.h"
#include "lapif_glue.h"

/* LAPI_ADDR_NULL (COMMON /LAPIFN/, BIND(C)): never written, always 0. */
lapif_addr lapif_addr_null;

void LAPIF_FN(lapi_init, LAPI_INIT)(lapif_int *hndl, void *info,
                                    lapif_int *ierror)
{
  lapi_info_t copy, *cinfo = NULL;
  info = lapif_ref(info);
  if (info != NULL) {
    /* LAPI_INFO_T has the layout of lapi_info_t; the copy lets the error
     * handler become its trampoline without touching the program's. */
    memcpy(&copy, info, sizeof copy);
    lapif_addr eh;
    memcpy(&eh, &copy.err_hndlr, sizeof eh);
    copy.err_hndlr = lapif_err_tramp(eh);
    if (eh != 0 && copy.err_hndlr == NULL) {
      lapif_set(ierror, LAPI_FAIL(LAPI_ERR_MEMORY_EXHAUSTED,
                                  "LAPI_INIT: no trampoline left for the "
                                  "Fortran error handler (%d Fortran "
                                  "handler procedures at most)",
                                  LAPIF_SLOTS));
      return;
    }
    cinfo = &copy;
  }
  lapi_handle_t h = 0;
  int rc = LAPI_Init(hndl ? &h : NULL, cinfo);
  if (rc == LAPI_SUCCESS) {
    lapif_handle_reset(h);
    *hndl = (lapif_int)h;
  }
  lapif_set(ierror, rc);
}

void LAPIF_FN(lapi_term, LAPI_TERM)(lapif_int *hndl, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Term((lapi_handle_t)*hndl));
}

void LAPIF_FN(lapi_qenv, LAPI_QENV)(lapif_int *hndl, lapif_int *query,
                                    void *ret_val, lapif_int *ierror)
{
  int *ret = lapif_ref(ret_val);
  int rc = LAPI_Qenv((lapi_handle_t)*hndl, (lapi_query_t)*query, ret);
  /* Fortran header handlers lose the envelope's bytes of the header. */
  if (rc == LAPI_SUCCESS && *query == MAX_UHDR_SZ && *ret > lapif_max_uhdr())
    *ret = lapif_max_uhdr();
  lapif_set(ierror, rc);
}

void LAPIF_FN(lapi_senv, LAPI_SENV)(lapif_int *hndl, lapif_int *query,
                                    lapif_int *set_val, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Senv((lapi_handle_t)*hndl, (lapi_query_t)*query,
                              *set_val));
}

/* The text of code, blank padded into len characters. */
static int msg_string(lapif_int *code, char *buf, size_t len)
{
  char text[LAPI_MAX_ERR_STRING];
  buf = lapif_ref(buf);
  int rc = LAPI_Msg_string(*code, buf ? text : NULL);
  if (buf == NULL)
    return rc;
  size_t n = strnlen(text, sizeof text);
  if (n > len)
    n = len;
  memcpy(buf, text, n);
  memset(buf + n, ' ', len - n);
  return rc;
}

/* CHARACTER(LEN=*) BUF: gfortran passes the length last, as a size_t. */
void LAPIF_FN(lapi_msg_string, LAPI_MSG_STRING)(lapif_int *code, char *buf,
                                                lapif_int *ierror,
                                                size_t buf_len)
{
  lapif_set(ierror, msg_string(code, buf, buf_len));
}

/* CHARACTER BUF(*): an array of LAPI_MAX_ERR_STRING characters, as in C. */
void LAPIF_FN(lapif_msg_string_a, LAPIF_MSG_STRING_A)(lapif_int *code,
                                                      char *buf,
                                                      lapif_int *ierror,
                                                      size_t elem_len)
{
  (void)elem_len;
  lapif_set(ierror, msg_string(code, buf, LAPI_MAX_ERR_STRING));
}

void LAPIF_FN(lapi_probe, LAPI_PROBE)(lapif_int *hndl, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Probe((lapi_handle_t)*hndl));
}

void LAPIF_FN(lapi_msgpoll, LAPI_MSGPOLL)(lapif_int *hndl, lapif_int *cnt,
                                          void *info, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Msgpoll((lapi_handle_t)*hndl, (uint)*cnt,
                                 lapif_ref(info)));
}

void LAPIF_FN(lapi_fence, LAPI_FENCE)(lapif_int *hndl, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Fence((lapi_handle_t)*hndl));
}

void LAPIF_FN(lapi_gfence, LAPI_GFENCE)(lapif_int *hndl, lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Gfence((lapi_handle_t)*hndl));
}

void LAPIF_FN(lapi_purge_totask, LAPI_PURGE_TOTASK)(lapif_int *hndl,
                                                    lapif_int *dest,
                                                    lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Purge_totask((lapi_handle_t)*hndl, (uint)*dest));
}

void LAPIF_FN(lapi_resume_totask, LAPI_RESUME_TOTASK)(lapif_int *hndl,
                                                      lapif_int *dest,
                                                      lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Resume_totask((lapi_handle_t)*hndl, (uint)*dest));
}

/* ---------------------------------------------------------- addresses */

static int address(void *my_addr, lapif_addr *ret_addr)
{
  return LAPI_Address(lapif_ref(my_addr), (ulong *)lapif_ref(ret_addr));
}

/* LAPI_ADDRESS(variable, ...) */
void LAPIF_FN(lapi_address, LAPI_ADDRESS)(void *my_addr, lapif_addr *ret_addr,
                                          lapif_int *ierror)
{
  lapif_set(ierror, address(my_addr, ret_addr));
}

/* LAPI_ADDRESS(subroutine, ...): the procedure's address. */
void LAPIF_FN(lapif_address_p, LAPIF_ADDRESS_P)(void *proc,
                                                lapif_addr *ret_addr,
                                                lapif_int *ierror)
{
  lapif_set(ierror, address(proc, ret_addr));
}

/* LAPI_ADDRESS(header handler function, ...) */
void LAPIF_FN(lapif_address_f, LAPIF_ADDRESS_F)(void *proc,
                                                lapif_addr *ret_addr,
                                                lapif_int *ierror)
{
  lapif_set(ierror, address(proc, ret_addr));
}

static int address_init(lapif_int *hndl, lapif_addr *my_tab, void *add_tab)
{
  return LAPI_Address_init((lapi_handle_t)*hndl, lapif_ptr(my_tab),
                           lapif_ref(add_tab));
}

void LAPIF_FN(lapi_address_init, LAPI_ADDRESS_INIT)(lapif_int *hndl,
                                                    lapif_addr *my_tab,
                                                    lapif_addr *add_tab,
                                                    lapif_int *ierror)
{
  lapif_set(ierror, address_init(hndl, my_tab, add_tab));
}

/* A scalar TAB: LAPI_ADDR_NULL, or the first entry of the table. */
void LAPIF_FN(lapif_address_init_s, LAPIF_ADDRESS_INIT_S)(lapif_int *hndl,
                                                          lapif_addr *my_tab,
                                                          lapif_addr *add_tab,
                                                          lapif_int *ierror)
{
  lapif_set(ierror, address_init(hndl, my_tab, add_tab));
}

static int address_init64(lapif_int *hndl, lapif_addr *my_tab, void *add_tab)
{
  return LAPI_Address_init64((lapi_handle_t)*hndl, (lapi_long_t)*my_tab,
                             lapif_ref(add_tab));
}

void LAPIF_FN(lapi_address_init64, LAPI_ADDRESS_INIT64)(lapif_int *hndl,
                                                        lapif_addr *my_tab,
                                                        lapif_addr *add_tab,
                                                        lapif_int *ierror)
{
  lapif_set(ierror, address_init64(hndl, my_tab, add_tab));
}

void LAPIF_FN(lapif_address_init64_s, LAPIF_ADDRESS_INIT64_S)(
    lapif_int *hndl, lapif_addr *my_tab, lapif_addr *add_tab,
    lapif_int *ierror)
{
  lapif_set(ierror, address_init64(hndl, my_tab, add_tab));
}

/* LAPI_ADDR_SET(hndl, procedure, idx, ierror) */
void LAPIF_FN(lapi_addr_set, LAPI_ADDR_SET)(lapif_int *hndl, void *proc,
                                            lapif_int *idx, lapif_int *ierror)
{
  lapif_addr fn = (lapif_addr)(intptr_t)lapif_ref(proc);
  lapif_set(ierror, lapif_addr_set((lapi_handle_t)*hndl, fn, *idx));
}

/* LAPI_ADDR_SET(hndl, address, idx, ierror) */
void LAPIF_FN(lapif_addr_set_a, LAPIF_ADDR_SET_A)(lapif_int *hndl,
                                                  lapif_addr *addr,
                                                  lapif_int *idx,
                                                  lapif_int *ierror)
{
  lapif_set(ierror, lapif_addr_set((lapi_handle_t)*hndl, *addr, *idx));
}

void LAPIF_FN(lapi_addr_get, LAPI_ADDR_GET)(lapif_int *hndl, lapif_addr *addr,
                                            lapif_int *idx, lapif_int *ierror)
{
  lapif_set(ierror, lapif_addr_get((lapi_handle_t)*hndl, lapif_ref(addr),
                                   *idx));
}

/* LAPI_THREAD_FUNC_T has the layout of lapi_thread_func_t: LAPI fills it
 * in place with the addresses of its C functions. */
void LAPIF_FN(lapi_util, LAPI_UTIL)(lapif_int *hndl, void *util_cmd,
                                    lapif_int *ierror)
{
  lapif_set(ierror, LAPI_Util((lapi_handle_t)*hndl, lapif_ref(util_cmd)));
}
