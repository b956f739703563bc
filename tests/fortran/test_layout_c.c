/*
 * test_layout_c.c - the C side of test_layout.f90: sizeof and offsetof of
 * every struct the Fortran binding mirrors, looked up by name
 * ("lapi_am_t" for a size, "lapi_am_t.hdr_hdl" for an offset).
 */
#include <stddef.h>
#include <string.h>

#include <lapi.h>

struct layout {
  const char *name;
  long value;
};

#define SZ(t) {#t, (long)sizeof(t)}
#define OF(t, f) {#t "." #f, (long)offsetof(t, f)}

static const struct layout table[] = {
  SZ(lapi_cntr_t), OF(lapi_cntr_t, cntr),
  SZ(lapi_vec_t), OF(lapi_vec_t, vec_type), OF(lapi_vec_t, num_vecs),
  OF(lapi_vec_t, info), OF(lapi_vec_t, len),
  SZ(lapi_info_t), OF(lapi_info_t, protocol), OF(lapi_info_t, lib_vers),
  OF(lapi_info_t, epoch_num), OF(lapi_info_t, num_compl_hndlr_thr),
  OF(lapi_info_t, instance_no), OF(lapi_info_t, info6),
  OF(lapi_info_t, err_hndlr), OF(lapi_info_t, lapi_thread_attr),
  OF(lapi_info_t, adapter_name), OF(lapi_info_t, add_info),
  SZ(lapi_return_info_t), OF(lapi_return_info_t, msg_len),
  OF(lapi_return_info_t, MAGIC), OF(lapi_return_info_t, ret_flags),
  OF(lapi_return_info_t, ctl_flags), OF(lapi_return_info_t, dgsp_handle),
  OF(lapi_return_info_t, bytes), OF(lapi_return_info_t, src),
  OF(lapi_return_info_t, udata_one_pkt_ptr),
  OF(lapi_return_info_t, recv_offset_dgsp_bytes),
  SZ(lapi_msg_info_t), OF(lapi_msg_info_t, status),
  OF(lapi_msg_info_t, reserve),
  SZ(lapi_statistics_t), OF(lapi_statistics_t, Tot_dup_pkt_cnt),
  OF(lapi_statistics_t, Tot_pkt_sent_cnt),
  OF(lapi_statistics_t, Tot_data_sent),
  OF(lapi_statistics_t, Tot_ack_recv_cnt),
  SZ(lapi_sh_info_t), OF(lapi_sh_info_t, src), OF(lapi_sh_info_t, reason),
  OF(lapi_sh_info_t, reserve),
  SZ(lapi_get_t), OF(lapi_get_t, Xfer_type), OF(lapi_get_t, flags),
  OF(lapi_get_t, tgt), OF(lapi_get_t, tgt_addr), OF(lapi_get_t, org_addr),
  OF(lapi_get_t, len), OF(lapi_get_t, tgt_cntr), OF(lapi_get_t, org_cntr),
  OF(lapi_get_t, chndlr), OF(lapi_get_t, cinfo),
  SZ(lapi_am_t), OF(lapi_am_t, Xfer_type), OF(lapi_am_t, flags),
  OF(lapi_am_t, tgt), OF(lapi_am_t, hdr_hdl), OF(lapi_am_t, uhdr_len),
  OF(lapi_am_t, uhdr), OF(lapi_am_t, udata), OF(lapi_am_t, udata_len),
  OF(lapi_am_t, shdlr), OF(lapi_am_t, sinfo), OF(lapi_am_t, tgt_cntr),
  OF(lapi_am_t, org_cntr), OF(lapi_am_t, cmpl_cntr),
  SZ(lapi_put_t), OF(lapi_put_t, Xfer_type), OF(lapi_put_t, flags),
  OF(lapi_put_t, tgt), OF(lapi_put_t, tgt_addr), OF(lapi_put_t, org_addr),
  OF(lapi_put_t, len), OF(lapi_put_t, shdlr), OF(lapi_put_t, sinfo),
  OF(lapi_put_t, tgt_cntr), OF(lapi_put_t, org_cntr),
  OF(lapi_put_t, cmpl_cntr),
  SZ(lapi_getv_t), OF(lapi_getv_t, Xfer_type), OF(lapi_getv_t, flags),
  OF(lapi_getv_t, tgt), OF(lapi_getv_t, org_vec), OF(lapi_getv_t, tgt_vec),
  OF(lapi_getv_t, tgt_cntr), OF(lapi_getv_t, org_cntr),
  OF(lapi_getv_t, chndlr), OF(lapi_getv_t, cinfo),
  SZ(lapi_putv_t), OF(lapi_putv_t, Xfer_type), OF(lapi_putv_t, flags),
  OF(lapi_putv_t, tgt), OF(lapi_putv_t, shdlr), OF(lapi_putv_t, sinfo),
  OF(lapi_putv_t, org_vec), OF(lapi_putv_t, tgt_vec),
  OF(lapi_putv_t, tgt_cntr), OF(lapi_putv_t, org_cntr),
  OF(lapi_putv_t, cmpl_cntr),
  SZ(lapi_amv_t), OF(lapi_amv_t, Xfer_type), OF(lapi_amv_t, flags),
  OF(lapi_amv_t, tgt), OF(lapi_amv_t, hdr_hdl), OF(lapi_amv_t, uhdr_len),
  OF(lapi_amv_t, uhdr), OF(lapi_amv_t, shdlr), OF(lapi_amv_t, sinfo),
  OF(lapi_amv_t, org_vec), OF(lapi_amv_t, tgt_cntr),
  OF(lapi_amv_t, org_cntr), OF(lapi_amv_t, cmpl_cntr),
  SZ(lapi_rmw_t), OF(lapi_rmw_t, Xfer_type), OF(lapi_rmw_t, op),
  OF(lapi_rmw_t, tgt), OF(lapi_rmw_t, size), OF(lapi_rmw_t, tgt_var),
  OF(lapi_rmw_t, in_val), OF(lapi_rmw_t, prev_tgt_val),
  OF(lapi_rmw_t, org_cntr), OF(lapi_rmw_t, shdlr), OF(lapi_rmw_t, sinfo),
  SZ(lapi_thread_func_t), OF(lapi_thread_func_t, Util_type),
  OF(lapi_thread_func_t, mutex_lock), OF(lapi_thread_func_t, mutex_unlock),
  OF(lapi_thread_func_t, mutex_trylock),
  OF(lapi_thread_func_t, mutex_getowner),
  OF(lapi_thread_func_t, cond_wait), OF(lapi_thread_func_t, cond_timedwait),
  OF(lapi_thread_func_t, cond_signal), OF(lapi_thread_func_t, cond_init),
  OF(lapi_thread_func_t, cond_destroy),
  SZ(lapi_cond_t),
};

/* The size or offset called name, or -1. */
long lapif_test_layout(const char *name);

long lapif_test_layout(const char *name)
{
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, name) == 0)
      return table[i].value;
  return -1;
}

/* How many entries the table has (the Fortran side checks them all). */
int lapif_test_layout_count(void);

int lapif_test_layout_count(void)
{
  return (int)(sizeof table / sizeof table[0]);
}
