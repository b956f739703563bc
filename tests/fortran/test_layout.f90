! test_layout.f90 - every TYPE of lapif.h has the size and field offsets of
! its C struct, and MODULE lapi's kinds are the C types' (checked at
! compile time in the module; here at run time too).
!
! The C side (test_layout_c.c) answers sizeof/offsetof by name; this
! program measures the same with LAPI_ADDRESS.  Prints each mismatch,
! then "N passed, M failed"; exits with 1 on a failure.
program test_layout
  use, intrinsic :: iso_c_binding
  use lapi
  implicit none
  interface
    integer(c_long) function c_layout(name) bind(c, name='lapif_test_layout')
      import :: c_long, c_char
      character(kind=c_char) :: name(*)
    end function c_layout
    integer(c_int) function c_count() bind(c, name='lapif_test_layout_count')
      import :: c_int
    end function c_count
  end interface
  type(LAPI_CNTR_T) :: x_cntr
  type(LAPI_VEC_T) :: x_vec
  type(LAPI_INFO_T) :: x_info
  type(LAPI_RETURN_INFO_T) :: x_ri
  type(LAPI_MSG_INFO_T) :: x_mi
  type(LAPI_STATISTICS_T) :: x_st
  type(LAPI_SH_INFO_T) :: x_sh
  type(LAPI_GET_T) :: x_get
  type(LAPI_AM_T) :: x_am
  type(LAPI_PUT_T) :: x_put
  type(LAPI_GETV_T) :: x_getv
  type(LAPI_PUTV_T) :: x_putv
  type(LAPI_AMV_T) :: x_amv
  type(LAPI_RMW_T) :: x_rmw
  type(LAPI_THREAD_FUNC_T) :: x_tf
  type(lapi_cond_t) :: x_cond
  integer :: passed = 0, failed = 0, checked = 0

  call size_of('lapi_cntr_t', storage_size(x_cntr))
  call off('lapi_cntr_t.cntr', x_cntr, x_cntr%cntr)

  call size_of('lapi_vec_t', storage_size(x_vec))
  call off('lapi_vec_t.vec_type', x_vec, x_vec%vec_type)
  call off('lapi_vec_t.num_vecs', x_vec, x_vec%num_vecs)
  call off('lapi_vec_t.info', x_vec, x_vec%info)
  call off('lapi_vec_t.len', x_vec, x_vec%len)

  call size_of('lapi_info_t', storage_size(x_info))
  call off('lapi_info_t.protocol', x_info, x_info%protocol)
  call off('lapi_info_t.lib_vers', x_info, x_info%lib_vers)
  call off('lapi_info_t.epoch_num', x_info, x_info%epoch_num)
  call off('lapi_info_t.num_compl_hndlr_thr', x_info, &
       x_info%num_compl_hndlr_thr)
  call off('lapi_info_t.instance_no', x_info, x_info%instance_no)
  call off('lapi_info_t.info6', x_info, x_info%info6)
  call off('lapi_info_t.err_hndlr', x_info, x_info%err_hndlr)
  call off('lapi_info_t.lapi_thread_attr', x_info, x_info%lapi_thread_attr)
  call off('lapi_info_t.adapter_name', x_info, x_info%adapter_name)
  call off('lapi_info_t.add_info', x_info, x_info%add_info)

  call size_of('lapi_return_info_t', storage_size(x_ri))
  call off('lapi_return_info_t.msg_len', x_ri, x_ri%msg_len)
  call off('lapi_return_info_t.MAGIC', x_ri, x_ri%magic)
  call off('lapi_return_info_t.ret_flags', x_ri, x_ri%ret_flags)
  call off('lapi_return_info_t.ctl_flags', x_ri, x_ri%ctl_flags)
  call off('lapi_return_info_t.dgsp_handle', x_ri, x_ri%dgsp_handle)
  call off('lapi_return_info_t.bytes', x_ri, x_ri%bytes)
  call off('lapi_return_info_t.src', x_ri, x_ri%src)
  call off('lapi_return_info_t.udata_one_pkt_ptr', x_ri, &
       x_ri%udata_one_pkt_ptr)
  call off('lapi_return_info_t.recv_offset_dgsp_bytes', x_ri, &
       x_ri%recv_offset_dgsp_bytes)

  call size_of('lapi_msg_info_t', storage_size(x_mi))
  call off('lapi_msg_info_t.status', x_mi, x_mi%status)
  call off('lapi_msg_info_t.reserve', x_mi, x_mi%reserve(1))

  call size_of('lapi_statistics_t', storage_size(x_st))
  call off('lapi_statistics_t.Tot_dup_pkt_cnt', x_st, x_st%tot_dup_pkt_cnt)
  call off('lapi_statistics_t.Tot_pkt_sent_cnt', x_st, x_st%tot_pkt_sent_cnt)
  call off('lapi_statistics_t.Tot_data_sent', x_st, x_st%tot_data_sent)
  call off('lapi_statistics_t.Tot_ack_recv_cnt', x_st, x_st%tot_ack_recv_cnt)

  call size_of('lapi_sh_info_t', storage_size(x_sh))
  call off('lapi_sh_info_t.src', x_sh, x_sh%src)
  call off('lapi_sh_info_t.reason', x_sh, x_sh%reason)
  call off('lapi_sh_info_t.reserve', x_sh, x_sh%reserve(1))

  call size_of('lapi_get_t', storage_size(x_get))
  call off('lapi_get_t.Xfer_type', x_get, x_get%xfer_type)
  call off('lapi_get_t.flags', x_get, x_get%flags)
  call off('lapi_get_t.tgt', x_get, x_get%tgt)
  call off('lapi_get_t.tgt_addr', x_get, x_get%tgt_addr)
  call off('lapi_get_t.org_addr', x_get, x_get%org_addr)
  call off('lapi_get_t.len', x_get, x_get%len)
  call off('lapi_get_t.tgt_cntr', x_get, x_get%tgt_cntr)
  call off('lapi_get_t.org_cntr', x_get, x_get%org_cntr)
  call off('lapi_get_t.chndlr', x_get, x_get%chndlr)
  call off('lapi_get_t.cinfo', x_get, x_get%cinfo)

  call size_of('lapi_am_t', storage_size(x_am))
  call off('lapi_am_t.Xfer_type', x_am, x_am%xfer_type)
  call off('lapi_am_t.flags', x_am, x_am%flags)
  call off('lapi_am_t.tgt', x_am, x_am%tgt)
  call off('lapi_am_t.hdr_hdl', x_am, x_am%hdr_hdl)
  call off('lapi_am_t.uhdr_len', x_am, x_am%uhdr_len)
  call off('lapi_am_t.uhdr', x_am, x_am%uhdr)
  call off('lapi_am_t.udata', x_am, x_am%udata)
  call off('lapi_am_t.udata_len', x_am, x_am%udata_len)
  call off('lapi_am_t.shdlr', x_am, x_am%shdlr)
  call off('lapi_am_t.sinfo', x_am, x_am%sinfo)
  call off('lapi_am_t.tgt_cntr', x_am, x_am%tgt_cntr)
  call off('lapi_am_t.org_cntr', x_am, x_am%org_cntr)
  call off('lapi_am_t.cmpl_cntr', x_am, x_am%cmpl_cntr)

  call size_of('lapi_put_t', storage_size(x_put))
  call off('lapi_put_t.Xfer_type', x_put, x_put%xfer_type)
  call off('lapi_put_t.flags', x_put, x_put%flags)
  call off('lapi_put_t.tgt', x_put, x_put%tgt)
  call off('lapi_put_t.tgt_addr', x_put, x_put%tgt_addr)
  call off('lapi_put_t.org_addr', x_put, x_put%org_addr)
  call off('lapi_put_t.len', x_put, x_put%len)
  call off('lapi_put_t.shdlr', x_put, x_put%shdlr)
  call off('lapi_put_t.sinfo', x_put, x_put%sinfo)
  call off('lapi_put_t.tgt_cntr', x_put, x_put%tgt_cntr)
  call off('lapi_put_t.org_cntr', x_put, x_put%org_cntr)
  call off('lapi_put_t.cmpl_cntr', x_put, x_put%cmpl_cntr)

  call size_of('lapi_getv_t', storage_size(x_getv))
  call off('lapi_getv_t.Xfer_type', x_getv, x_getv%xfer_type)
  call off('lapi_getv_t.flags', x_getv, x_getv%flags)
  call off('lapi_getv_t.tgt', x_getv, x_getv%tgt)
  call off('lapi_getv_t.org_vec', x_getv, x_getv%org_vec)
  call off('lapi_getv_t.tgt_vec', x_getv, x_getv%tgt_vec)
  call off('lapi_getv_t.tgt_cntr', x_getv, x_getv%tgt_cntr)
  call off('lapi_getv_t.org_cntr', x_getv, x_getv%org_cntr)
  call off('lapi_getv_t.chndlr', x_getv, x_getv%chndlr)
  call off('lapi_getv_t.cinfo', x_getv, x_getv%cinfo)

  call size_of('lapi_putv_t', storage_size(x_putv))
  call off('lapi_putv_t.Xfer_type', x_putv, x_putv%xfer_type)
  call off('lapi_putv_t.flags', x_putv, x_putv%flags)
  call off('lapi_putv_t.tgt', x_putv, x_putv%tgt)
  call off('lapi_putv_t.shdlr', x_putv, x_putv%shdlr)
  call off('lapi_putv_t.sinfo', x_putv, x_putv%sinfo)
  call off('lapi_putv_t.org_vec', x_putv, x_putv%org_vec)
  call off('lapi_putv_t.tgt_vec', x_putv, x_putv%tgt_vec)
  call off('lapi_putv_t.tgt_cntr', x_putv, x_putv%tgt_cntr)
  call off('lapi_putv_t.org_cntr', x_putv, x_putv%org_cntr)
  call off('lapi_putv_t.cmpl_cntr', x_putv, x_putv%cmpl_cntr)

  call size_of('lapi_amv_t', storage_size(x_amv))
  call off('lapi_amv_t.Xfer_type', x_amv, x_amv%xfer_type)
  call off('lapi_amv_t.flags', x_amv, x_amv%flags)
  call off('lapi_amv_t.tgt', x_amv, x_amv%tgt)
  call off('lapi_amv_t.hdr_hdl', x_amv, x_amv%hdr_hdl)
  call off('lapi_amv_t.uhdr_len', x_amv, x_amv%uhdr_len)
  call off('lapi_amv_t.uhdr', x_amv, x_amv%uhdr)
  call off('lapi_amv_t.shdlr', x_amv, x_amv%shdlr)
  call off('lapi_amv_t.sinfo', x_amv, x_amv%sinfo)
  call off('lapi_amv_t.org_vec', x_amv, x_amv%org_vec)
  call off('lapi_amv_t.tgt_cntr', x_amv, x_amv%tgt_cntr)
  call off('lapi_amv_t.org_cntr', x_amv, x_amv%org_cntr)
  call off('lapi_amv_t.cmpl_cntr', x_amv, x_amv%cmpl_cntr)

  call size_of('lapi_rmw_t', storage_size(x_rmw))
  call off('lapi_rmw_t.Xfer_type', x_rmw, x_rmw%xfer_type)
  call off('lapi_rmw_t.op', x_rmw, x_rmw%op)
  call off('lapi_rmw_t.tgt', x_rmw, x_rmw%tgt)
  call off('lapi_rmw_t.size', x_rmw, x_rmw%size)
  call off('lapi_rmw_t.tgt_var', x_rmw, x_rmw%tgt_var)
  call off('lapi_rmw_t.in_val', x_rmw, x_rmw%in_val)
  call off('lapi_rmw_t.prev_tgt_val', x_rmw, x_rmw%prev_tgt_val)
  call off('lapi_rmw_t.org_cntr', x_rmw, x_rmw%org_cntr)
  call off('lapi_rmw_t.shdlr', x_rmw, x_rmw%shdlr)
  call off('lapi_rmw_t.sinfo', x_rmw, x_rmw%sinfo)

  call size_of('lapi_thread_func_t', storage_size(x_tf))
  call off('lapi_thread_func_t.Util_type', x_tf, x_tf%util_type)
  call off('lapi_thread_func_t.mutex_lock', x_tf, x_tf%mutex_lock)
  call off('lapi_thread_func_t.mutex_unlock', x_tf, x_tf%mutex_unlock)
  call off('lapi_thread_func_t.mutex_trylock', x_tf, x_tf%mutex_trylock)
  call off('lapi_thread_func_t.mutex_getowner', x_tf, x_tf%mutex_getowner)
  call off('lapi_thread_func_t.cond_wait', x_tf, x_tf%cond_wait)
  call off('lapi_thread_func_t.cond_timedwait', x_tf, x_tf%cond_timedwait)
  call off('lapi_thread_func_t.cond_signal', x_tf, x_tf%cond_signal)
  call off('lapi_thread_func_t.cond_init', x_tf, x_tf%cond_init)
  call off('lapi_thread_func_t.cond_destroy', x_tf, x_tf%cond_destroy)

  call size_of('lapi_cond_t', storage_size(x_cond))

  ! every entry of the C table was looked at; the kinds are C's
  call expect('entries checked', checked, int(c_count()))
  call expect('LAPI_ADDR_TYPE', LAPI_ADDR_TYPE, c_intptr_t)
  call expect('LAPI_LONG_TYPE', LAPI_LONG_TYPE, c_long)
  call expect('LAPI_LONG_LONG_TYPE', LAPI_LONG_LONG_TYPE, c_long_long)
  call expect('default INTEGER', storage_size(0), 32)

  write (*, '(a,i0,a,i0,a)') 'test_layout: ', passed, ' passed, ', failed, &
       ' failed'
  if (failed /= 0) stop 1

contains

  subroutine size_of(name, bits)
    character(len=*), intent(in) :: name
    integer, intent(in) :: bits
    call expect(name, bits / 8, int(c_layout(name // c_null_char)))
    checked = checked + 1
  end subroutine size_of

  subroutine off(name, base, field)
    character(len=*), intent(in) :: name
    type(*) :: base, field
    integer(LAPI_ADDR_TYPE) :: b, f
    integer :: ie
    call lapi_address(base, b, ie)
    call lapi_address(field, f, ie)
    call expect(name, int(f - b), int(c_layout(name // c_null_char)))
    checked = checked + 1
  end subroutine off

  subroutine expect(name, fortran, c)
    character(len=*), intent(in) :: name
    integer, intent(in) :: fortran, c
    if (fortran == c) then
      passed = passed + 1
    else
      failed = failed + 1
      write (*, '(a,a,a,i0,a,i0)') 'test_layout: ', name, ': Fortran ', &
           fortran, ', C ', c
    end if
  end subroutine expect
end program test_layout
