/*
 * header_cxx.cpp - compile-only check that lapi.h works from C++ (ctest
 * runs the C++ compiler with -fsyntax-only): extern "C" linkage, handler
 * typedefs, the xfer union, counters and an AIX-style handler exchanged as
 * void *.
 */
#include <lapi.h>
#include <lapi.h> // include guard

#include <cstddef>
#include <cstring>

static_assert(sizeof(uint) == sizeof(unsigned int), "uint");
static_assert(sizeof(ulong) == sizeof(unsigned long), "ulong");
static_assert(offsetof(lapi_return_info_t, msg_len) == 0, "msg_len first");
static_assert(offsetof(lapi_xfer_t, Am.Xfer_type) == 0, "Xfer_type first");
static_assert(LAPI_ERR_LASTCODE - LAPI_ERR_FIRSTCODE == 128, "400..528");
static_assert(LAST_QUERY == 37, "queries");
static_assert(sizeof(lapi_cntr_t) <= 32, "small counter");

// A C library provides these: redeclaring them with C linkage is an error
// if lapi.h had declared them with C++ linkage.
extern "C" int LAPI_Init(lapi_handle_t *hndl, lapi_info_t *lapi_info);
extern "C" int PLAPI_Msg_string(int error_code, void *buf);

namespace {

int done;

void on_complete(lapi_handle_t *hndl, void *param)
{
  (void)hndl;
  done = *static_cast<int *>(param);
}

void *on_header(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  static char landing[64];
  lapi_return_info_t *ri = reinterpret_cast<lapi_return_info_t *>(msg_len);
  (void)hndl;
  (void)uhdr;
  (void)uhdr_len;
  *comp_h = on_complete;
  *uinfo = &done;
  ri->ret_flags = LAPI_LOCAL_STATE | LAPI_SEND_REPLY;
  ri->ctl_flags = LAPI_DELIVER_MSG;
  return landing;
}

// The manual's spelling of the vector handler's length parameter.
lapi_vec_t *on_vheader(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                       ulong *len_vec[], compl_hndlr_t **comp_h, void **uinfo)
{
  static lapi_vec_t vec;
  (void)hndl;
  (void)uhdr;
  (void)uhdr_len;
  (void)len_vec;
  *comp_h = nullptr;
  *uinfo = nullptr;
  vec.vec_type = LAPI_GEN_IOVECTOR;
  return &vec;
}

void on_sent(lapi_handle_t *hndl, void *param, lapi_sh_info_t *info)
{
  (void)hndl;
  (void)param;
  done = static_cast<int>(info->reason);
}

void on_error(lapi_handle_t *hndl, int *error_code, lapi_err_t *type,
              int *task_id, int *src)
{
  char text[LAPI_MAX_ERR_STRING];
  (void)hndl;
  (void)type;
  (void)task_id;
  (void)src;
  LAPI_Msg_string(*error_code, text);
}

lapi_cntr_t counters[4];  // zero-initialised
lapi_cntr_t one_cntr = {}; // value-initialised

} // namespace

int main()
{
  hdr_hndlr_t *hdr = on_header;
  scompl_hndlr_t *sent = on_sent;
  lapi_handle_t hndl = LAPI_VOID_HANDLE;
  lapi_info_t info = {};
  lapi_cntr_t local = {};
  lapi_xfer_t xfer;
  lapi_util_t util;
  void *hdr_list[4];
  int data[8] = {}, cur = 0;
  int rc = 0;

  info.err_hndlr = on_error;
  info.protocol = LAPI_INTERRUPT_OFF;
  rc |= LAPI_Init(&hndl, &info);
  rc |= LAPI_Address_init(hndl, reinterpret_cast<void *>(on_vheader), hdr_list);
  rc |= LAPI_Amsend(hndl, 0, reinterpret_cast<void *>(hdr), data, 4, data,
                    sizeof data, &counters[0], &local, &one_cntr);
  rc |= LAPI_Waitcntr(hndl, &local, 1, &cur);

  std::memset(&xfer, 0, sizeof xfer);
  xfer.Am.Xfer_type = LAPI_AM_XFER;
  xfer.Am.hdr_hdl = reinterpret_cast<lapi_long_t>(hdr_list[0]);
  xfer.Am.shdlr = sent;
  xfer.Am.org_cntr = &local;
  rc |= LAPI_Xfer(hndl, &xfer);
  rc |= xfer.Xfer_type == LAPI_AM_XFER;

  std::memset(&util, 0, sizeof util);
  util.Util_type = LAPI_GET_THREAD_FUNC;
  rc |= PLAPI_Util(hndl, &util);
  if (util.ThreadFunc.mutex_lock != nullptr)
    rc |= util.ThreadFunc.mutex_lock(hndl);

  rc |= LAPI_Rmw64(hndl, FETCH_AND_ADD, 0, nullptr, nullptr, nullptr, nullptr);
  rc |= LAPI_Term(hndl);
  return rc + done + TRUE;
}
