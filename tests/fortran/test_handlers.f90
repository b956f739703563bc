! test_handlers.f90 - Fortran handlers run by the dispatcher, and the calls
! the examples do not make.
!
! Header handlers reached every way the binding offers: by name and
! registered (travels as its index), by index, by an address exchanged
! with LAPI_ADDRESS_INIT, by name and not registered, through LAPI_XFER;
! the Amsend form with TYPE(LAPI_RETURN_INFO_T) (src, msg_len,
! LAPI_BURY_MSG), the largest user header a Fortran handler gets,
! completion handlers with
! their user_info, send completion and get completion handlers, the error
! handler of LAPI_INFO_T (a bad target vector), polling mode.  Then
! ADDR_GET/SET, MSG_STRING, UTIL's thread functions, SETCNTR_WSTATUS,
! MSGPOLL, PROBE, RMW64, PUTV/GETV, ADDRESS_INIT64 and the statistics.
!
! Plain program: prints each failed check, then "N passed, M failed";
! exits with 1 on a failure.  Runs as one task or under lapirun (every
! task sends to the next, so each one receives what the checks expect).
module hstate
  use lapi
  implicit none
  integer, parameter :: NB = 64, BURY = 77
  integer :: am_buf(NB), am_uhdr(256), am_ulen = -1, am_runs = 0
  integer :: am_src = -1, cmpl_runs = 0, cmpl_seen = -1, cmpl_hndl = -1
  integer(LAPI_LONG_TYPE) :: am_len = -1
  integer :: cinfo(2) = [4242, 0]
  ! the vector handler's target
  integer :: v_a(4), v_b(6)
  type(LAPI_VEC_T) :: tvec
  integer(LAPI_ADDR_TYPE) :: tinfo(2)
  integer(LAPI_LONG_TYPE) :: tlen(2)
  integer :: v_runs = 0, bad_runs = 0
  ! error, send completion, get completion handlers
  integer :: err_runs = 0, err_code = -1, err_type = -1, err_src = -1
  integer :: sh_runs = 0, sh_src = -1, sh_reason = -1, sh_seen = -1
  integer :: gc_runs = 0, gc_seen = -1

contains

  ! Amsend form: the 4th argument is the lapi_return_info_t.
  function am_hdr(hndl, uhdr, uhdr_len, ri, comp_h, user_info) result(buf)
    integer :: hndl, uhdr_len, uhdr(*)
    type(LAPI_RETURN_INFO_T) :: ri
    integer(LAPI_ADDR_TYPE) :: comp_h, user_info, buf
    integer :: ierr, n
    am_runs = am_runs + 1
    am_src = ri%src
    am_len = ri%msg_len
    am_ulen = uhdr_len
    n = min(uhdr_len / 4, size(am_uhdr))
    am_uhdr(1:n) = uhdr(1:n)
    if (n > 0) then
      if (uhdr(1) == BURY) ri%ctl_flags = LAPI_BURY_MSG
    end if
    call lapi_address(am_cmpl, comp_h, ierr)
    call lapi_address(cinfo, user_info, ierr)
    call lapi_address(am_buf, buf, ierr)
  end function am_hdr

  subroutine am_cmpl(hndl, user_info)
    integer :: hndl, user_info(*)
    cmpl_runs = cmpl_runs + 1
    cmpl_seen = user_info(1)
    cmpl_hndl = hndl
  end subroutine am_cmpl

  ! Amsendv form: 16 bytes into v_a(1:4), 24 into v_b(1:6); no
  ! completion handler.
  function v_hdr(hndl, uhdr, uhdr_len, len_vec, comp_h, user_info) &
       result(vec)
    integer :: hndl, uhdr_len, uhdr(*)
    integer(LAPI_LONG_TYPE) :: len_vec(*)
    integer(LAPI_ADDR_TYPE) :: comp_h, user_info, vec
    integer :: ierr
    v_runs = v_runs + 1
    call lapi_address(v_a, tinfo(1), ierr)
    call lapi_address(v_b, tinfo(2), ierr)
    tlen = len_vec(1:2)
    tvec = LAPI_VEC_T(LAPI_GEN_IOVECTOR, 2, 0, 0)
    call lapi_address(tinfo, tvec%info, ierr)
    call lapi_address(tlen, tvec%len, ierr)
    call lapi_address(tvec, vec, ierr)
  end function v_hdr

  ! Returns a vector LAPI must refuse: the error handler hears of it.
  function bad_hdr(hndl, uhdr, uhdr_len, len_vec, comp_h, user_info) &
       result(vec)
    integer :: hndl, uhdr_len, uhdr(*)
    integer(LAPI_LONG_TYPE) :: len_vec(*)
    integer(LAPI_ADDR_TYPE) :: comp_h, user_info, vec
    integer :: ierr
    type(LAPI_VEC_T), save :: wrong
    bad_runs = bad_runs + 1
    wrong = LAPI_VEC_T(9, 2, 0, 0)
    call lapi_address(am_cmpl, comp_h, ierr)    ! must not run
    call lapi_address(wrong, vec, ierr)
  end function bad_hdr

  subroutine err_hndlr(hndl, code, etype, task, src)
    integer :: hndl, code, etype, task, src
    err_runs = err_runs + 1
    err_code = code
    err_type = etype
    err_src = src
  end subroutine err_hndlr

  subroutine send_done(hndl, sinfo, info)
    integer :: hndl, sinfo(*)
    type(LAPI_SH_INFO_T) :: info
    sh_runs = sh_runs + 1
    sh_src = info%src
    sh_reason = info%reason
    sh_seen = sinfo(1)
  end subroutine send_done

  subroutine get_done(hndl, cinfo_arg)
    integer :: hndl, cinfo_arg(*)
    gc_runs = gc_runs + 1
    gc_seen = cinfo_arg(1)
  end subroutine get_done
end module hstate

program test_handlers
  use, intrinsic :: iso_c_binding, only: c_null_funptr, c_f_procpointer, &
       c_funptr
  use lapi
  use hstate
  implicit none
  type(LAPI_INFO_T) :: info
  type(LAPI_CNTR_T) :: tc_local, oc, cc
  type(LAPI_VEC_T) :: ovec
  type(LAPI_AM_T) :: xam
  type(LAPI_GET_T) :: xget
  type(LAPI_THREAD_FUNC_T) :: tf
  type(LAPI_MSG_INFO_T) :: minfo
  type(LAPI_STATISTICS_T) :: stats
  integer(LAPI_ADDR_TYPE) :: my, oinfo(2), a, b
  integer(LAPI_ADDR_TYPE), allocatable :: cntrs(:), addrs(:)
  integer(LAPI_LONG_LONG_TYPE), allocatable :: tab64(:)
  integer(LAPI_LONG_TYPE) :: olen(2)
  integer(LAPI_LONG_LONG_TYPE) :: var64, in64(1), prev64
  integer(LAPI_ADDR_TYPE), parameter :: IDX_AM = 3, IDX_V = 4, IDX_BAD = 5
  integer :: h, ierr, me, nt, peer, from, cur, fmax, i, passed, failed
  integer :: want_err
  integer :: uh(256), data(NB), val, dest(1), dstat(1)
  integer :: sinfo(1) = [99], gcinfo(1) = [55]
  ! LAPI writes these after the call that names them has returned.
  integer, asynchronous :: src_a(4), src_b(6), getbuf(NB)
  integer :: rc_lock, rc_unlock
  character(len=LAPI_MAX_ERR_STRING) :: msg
  character(len=1) :: msg_a(LAPI_MAX_ERR_STRING)
  procedure(lapi_mutex_lock_t), pointer :: lock, unlock
  common /h64/ var64

  passed = 0
  failed = 0
  call lapi_address(err_hndlr, info%err_hndlr, ierr)
  call lapi_init(h, info, ierr)
  call ok(ierr == LAPI_SUCCESS, 'LAPI_INIT with a Fortran error handler')
  call lapi_qenv(h, TASK_ID, me, ierr)
  call lapi_qenv(h, NUM_TASKS, nt, ierr)
  peer = mod(me + 1, nt)
  from = mod(me + nt - 1, nt)
  call lapi_qenv(h, MAX_UHDR_SZ, fmax, ierr)
  call ok(fmax == 1008, 'MAX_UHDR_SZ is 1024 less the 16 of the binding')
  call lapi_setcntr(h, tc_local, 0, ierr)
  call lapi_setcntr(h, oc, 0, ierr)
  call lapi_setcntr(h, cc, 0, ierr)
  call lapi_addr_set(h, am_hdr, int(IDX_AM), ierr)
  call lapi_addr_set(h, v_hdr, int(IDX_V), ierr)
  call lapi_addr_set(h, bad_hdr, int(IDX_BAD), ierr)
  call ok(ierr == LAPI_SUCCESS, 'LAPI_ADDR_SET')
  allocate(cntrs(0:nt - 1), addrs(0:nt - 1))
  allocate(tab64(0:nt - 1))
  call lapi_address(tc_local, my, ierr)
  call lapi_address_init(h, my, cntrs, ierr)
  call lapi_address(v_hdr, my, ierr)
  call lapi_address_init(h, my, addrs, ierr)

  ! --------------------------------------- ADDR_GET gives the procedure
  call lapi_addr_get(h, a, int(IDX_AM), ierr)
  call lapi_address(am_hdr, b, ierr)
  call ok(ierr == LAPI_SUCCESS .and. a == b, 'LAPI_ADDR_GET: the function')

  ! ---- Amsend by name (registered): the largest header, then counters
  do i = 1, size(uh)
    uh(i) = 1000 * me + i
  end do
  data = [(7 * me + i, i = 1, NB)]
  call lapi_amsend(h, peer, am_hdr, uh, fmax, data, int(4 * NB, 8), &
       cntrs(peer), oc, cc, ierr)
  call ok(ierr == LAPI_SUCCESS, 'LAPI_AMSEND of a 1008-byte header')
  call lapi_waitcntr(h, cc, 1, cur, ierr)
  call lapi_waitcntr(h, tc_local, 1, cur, ierr)
  call lapi_waitcntr(h, oc, 1, cur, ierr)
  call ok(am_runs == 1 .and. am_src == from .and. am_len == 4 * NB, &
       'the Amsend handler got src and msg_len')
  call ok(am_ulen == fmax .and. am_uhdr(1) == 1000 * from + 1 .and. &
       am_uhdr(fmax / 4) == 1000 * from + fmax / 4, &
       'the Amsend handler got the whole user header, no envelope')
  call ok(all(am_buf == [(7 * from + i, i = 1, NB)]), 'the data landed')
  call ok(cmpl_runs == 1 .and. cmpl_seen == 4242 .and. cmpl_hndl == h, &
       'the completion handler got user_info and the handle')
  call lapi_gfence(h, ierr)

  ! ---- by index, LAPI_BURY_MSG: no data, the completion handler runs
  am_buf = 0
  uh(1) = BURY
  call lapi_amsend(h, peer, IDX_AM, uh, 4, data, int(4 * NB, 8), &
       cntrs(peer), oc, cc, ierr)
  call lapi_waitcntr(h, cc, 1, cur, ierr)
  call lapi_waitcntr(h, tc_local, 1, cur, ierr)
  call ok(ierr == LAPI_SUCCESS .and. am_runs == 2 .and. cmpl_runs == 2 &
       .and. all(am_buf == 0), 'LAPI_BURY_MSG from a Fortran handler')
  call lapi_waitcntr(h, oc, 1, cur, ierr)
  call lapi_gfence(h, ierr)

  ! ---- by name, not registered: the envelope carries the handler as a
  ! module and an offset, so each process finds its own copy
  call lapi_addr_set(h, LAPI_ADDR_NULL, int(IDX_AM), ierr)
  call lapi_addr_get(h, a, int(IDX_AM), ierr)
  call ok(a == 0, 'LAPI_ADDR_SET with LAPI_ADDR_NULL clears the slot')
  call lapi_gfence(h, ierr)
  uh(1) = 5
  call lapi_amsend(h, peer, am_hdr, uh, 8, data, int(4 * NB, 8), &
       cntrs(peer), oc, cc, ierr)
  call lapi_waitcntr(h, cc, 1, cur, ierr)
  call lapi_waitcntr(h, tc_local, 1, cur, ierr)
  call lapi_waitcntr(h, oc, 1, cur, ierr)
  call ok(ierr == LAPI_SUCCESS .and. am_runs == 3 .and. am_ulen == 8 &
       .and. am_uhdr(1) == 5 .and. cmpl_runs == 3, &
       'an unregistered handler passed by name')
  call lapi_addr_set(h, am_hdr, int(IDX_AM), ierr)
  call lapi_gfence(h, ierr)

  ! ---- Amsendv to the peer's address of v_hdr (LAPI_ADDRESS_INIT)
  src_a = [(100 * me + i, i = 1, 4)]
  src_b = [(200 * me + i, i = 1, 6)]
  call lapi_address(src_a, oinfo(1), ierr)
  call lapi_address(src_b, oinfo(2), ierr)
  olen = [16, 24]
  ovec = LAPI_VEC_T(LAPI_GEN_IOVECTOR, 2, 0, 0)
  call lapi_address(oinfo, ovec%info, ierr)
  call lapi_address(olen, ovec%len, ierr)
  call lapi_amsendv(h, peer, addrs(peer), LAPI_ADDR_NULL, 0, ovec, &
       cntrs(peer), oc, cc, ierr)
  call lapi_waitcntr(h, cc, 1, cur, ierr)
  call lapi_waitcntr(h, tc_local, 1, cur, ierr)
  call lapi_waitcntr(h, oc, 1, cur, ierr)
  call ok(ierr == LAPI_SUCCESS .and. v_runs == 1 .and. &
       all(v_a == [(100 * from + i, i = 1, 4)]) .and. &
       all(v_b == [(200 * from + i, i = 1, 6)]), &
       'LAPI_AMSENDV to an exchanged handler address')
  call lapi_gfence(h, ierr)

  ! ---- a bad target vector: the error handler, no completion, no tgt_cntr
  ! (between two tasks twice, both from the peer: at the target, and at
  ! the origin from the target's FIN; one task: once, at the target)
  call lapi_amsendv(h, peer, IDX_BAD, LAPI_ADDR_NULL, 0, ovec, &
       cntrs(peer), oc, cc, ierr)
  call lapi_waitcntr(h, oc, 1, cur, ierr)
  call lapi_gfence(h, ierr)
  want_err = merge(2, 1, nt > 1)
  do while (err_runs < want_err)   ! the origin's report runs as an item
    call lapi_probe(h, ierr)
  end do
  call lapi_gfence(h, ierr)
  call lapi_getcntr(h, tc_local, val, ierr)
  call ok(bad_runs == 1 .and. err_runs == want_err .and. &
       err_code == LAPI_ERR_TGT_VEC_TYPE .and. err_type == AM_ERR .and. &
       err_src == from, 'the Fortran error handler heard of a bad vector')
  call ok(val == 0 .and. cmpl_runs == 3, &
       'a refused vector moves no tgt_cntr and runs no completion')
  call lapi_getcntr(h, cc, val, ierr)
  call ok(val == 0, 'a refused vector moves no cmpl_cntr')
  ! The next section sends again: nobody may start it before every task
  ! has read its counters here (else the next AM lands in between).
  call lapi_gfence(h, ierr)

  ! ---- LAPI_XFER: AM by index with a send completion handler
  xam = LAPI_AM_T()
  xam%tgt = peer
  xam%hdr_hdl = IDX_AM
  uh(1) = 8
  call lapi_address(uh, xam%uhdr, ierr)
  xam%uhdr_len = 12
  call lapi_address(data, xam%udata, ierr)
  xam%udata_len = 4 * NB
  call lapi_address(send_done, xam%shdlr, ierr)
  call lapi_address(sinfo, xam%sinfo, ierr)
  xam%tgt_cntr = cntrs(peer)
  call lapi_address(oc, xam%org_cntr, ierr)
  call lapi_address(cc, xam%cmpl_cntr, ierr)
  call lapi_xfer(h, xam, ierr)
  call lapi_waitcntr(h, cc, 1, cur, ierr)
  call lapi_waitcntr(h, tc_local, 1, cur, ierr)
  call lapi_waitcntr(h, oc, 1, cur, ierr)
  call ok(ierr == LAPI_SUCCESS .and. am_runs == 4 .and. am_ulen == 12 &
       .and. am_uhdr(1) == 8, 'LAPI_XFER(LAPI_AM_XFER) to a Fortran handler')
  call ok(sh_runs == 1 .and. sh_src == peer .and. sh_reason == 0 .and. &
       sh_seen == 99, 'the Fortran send completion handler')
  call lapi_gfence(h, ierr)

  ! ---- LAPI_XFER: GET with a completion handler at the origin
  xget = LAPI_GET_T()
  xget%tgt = peer
  call lapi_address(am_buf, my, ierr)
  call lapi_address_init(h, my, addrs, ierr)
  xget%tgt_addr = addrs(peer)
  call lapi_address(getbuf, xget%org_addr, ierr)
  xget%len = 4 * NB
  call lapi_address(oc, xget%org_cntr, ierr)
  call lapi_address(get_done, xget%chndlr, ierr)
  call lapi_address(gcinfo, xget%cinfo, ierr)
  call lapi_xfer(h, xget, ierr)
  call lapi_waitcntr(h, oc, 1, cur, ierr)
  call ok(ierr == LAPI_SUCCESS .and. gc_runs == 1 .and. gc_seen == 55 .and. &
       all(getbuf == [(7 * me + i, i = 1, NB)]), &
       'LAPI_XFER(LAPI_GET_XFER) with a Fortran completion handler')
  call lapi_gfence(h, ierr)

  ! ---- polling mode: the handlers run in LAPI_WAITCNTR on this thread
  call lapi_senv(h, INTERRUPT_SET, 0, ierr)
  call lapi_gfence(h, ierr)
  uh(1) = 6
  call lapi_amsend(h, peer, am_hdr, uh, 4, data, int(4 * NB, 8), &
       cntrs(peer), oc, cc, ierr)
  call lapi_waitcntr(h, cc, 1, cur, ierr)
  call lapi_waitcntr(h, tc_local, 1, cur, ierr)
  call lapi_waitcntr(h, oc, 1, cur, ierr)
  call ok(ierr == LAPI_SUCCESS .and. am_runs == 5 .and. cmpl_runs == 5, &
       'handlers in polling mode')
  call lapi_gfence(h, ierr)
  call lapi_senv(h, INTERRUPT_SET, 1, ierr)

  ! ---- the other calls
  call lapi_msg_string(LAPI_ERR_TGT, msg, ierr)
  call ok(ierr == LAPI_SUCCESS .and. index(msg, 'LAPI_ERR_TGT') == 1, &
       'LAPI_MSG_STRING into a string')
  msg_a = '#'
  call lapi_msg_string(LAPI_ERR_TGT, msg_a, ierr)
  call ok(ierr == LAPI_SUCCESS .and. msg_a(1) == 'L' .and. &
       msg_a(LAPI_MAX_ERR_STRING) == ' ', 'LAPI_MSG_STRING into an array')

  call lapi_util(h, tf, ierr)
  call ok(ierr == LAPI_SUCCESS .and. tf%mutex_lock /= 0, 'LAPI_UTIL')
  call c_f_procpointer(transfer(tf%mutex_lock, c_null_funptr), lock)
  call c_f_procpointer(transfer(tf%mutex_unlock, c_null_funptr), unlock)
  rc_lock = lock(h)
  rc_unlock = unlock(h)
  call ok(rc_lock == 0 .and. rc_unlock == 0, 'the UTIL mutex functions')

  dest(1) = from
  call lapi_setcntr_wstatus(h, cc, 1, dest, dstat, ierr)
  call ok(ierr == LAPI_SUCCESS .and. dstat(1) == LAPI_MSG_INITIAL, &
       'LAPI_SETCNTR_WSTATUS')
  call lapi_setcntr(h, cc, 0, ierr)
  call lapi_msgpoll(h, 1, minfo, ierr)
  call lapi_probe(h, ierr)
  call ok(ierr == LAPI_SUCCESS, 'LAPI_MSGPOLL, LAPI_PROBE')

  var64 = 0
  call lapi_address(var64, my, ierr)
  call lapi_address_init(h, my, addrs, ierr)
  call lapi_gfence(h, ierr)
  in64(1) = 2_8**40 + me
  call lapi_rmw64(h, FETCH_AND_ADD, peer, addrs(peer), in64, prev64, oc, &
       ierr)
  call lapi_waitcntr(h, oc, 1, cur, ierr)
  call lapi_gfence(h, ierr)
  call ok(ierr == LAPI_SUCCESS .and. var64 == 2_8**40 + from, &
       'LAPI_RMW64 with a value above 32 bits')

  call lapi_address_init64(h, int(1000 + me, 8), tab64, ierr)
  call ok(ierr == LAPI_SUCCESS .and. &
       all(tab64 == [(1000 + i, i = 0, nt - 1)]), 'LAPI_ADDRESS_INIT64')

  ! PUTV to ourselves, GENERIC: 40 bytes (src_a, src_b) into 32 (v_b(1:4),
  ! v_a); the rest is dropped.  GETV brings the 32 back.
  v_a = 0
  v_b = 0
  call lapi_address(v_b, tinfo(1), ierr)
  call lapi_address(v_a, tinfo(2), ierr)
  tlen = [16, 16]
  tvec = LAPI_VEC_T(LAPI_GEN_GENERIC, 2, 0, 0)
  call lapi_address(tinfo, tvec%info, ierr)
  call lapi_address(tlen, tvec%len, ierr)
  ovec%vec_type = LAPI_GEN_GENERIC
  call lapi_putv(h, me, tvec, ovec, LAPI_ADDR_NULL, oc, cc, ierr)
  call lapi_waitcntr(h, cc, 1, cur, ierr)
  call ok(ierr == LAPI_SUCCESS .and. all(v_b(1:4) == src_a) .and. &
       all(v_a == src_b(1:4)) .and. all(v_b(5:6) == 0), &
       'LAPI_PUTV of a GENERIC pair')
  src_a = 0
  src_b = 0
  call lapi_getv(h, me, tvec, ovec, LAPI_ADDR_NULL, oc, ierr)
  call lapi_waitcntr(h, oc, 2, cur, ierr)
  call ok(ierr == LAPI_SUCCESS .and. &
       all(src_a == [(100 * me + i, i = 1, 4)]) .and. &
       all(src_b(1:4) == [(200 * me + i, i = 1, 4)]), 'LAPI_GETV back')

  call lapi_qenv(h, QUERY_STATISTICS, stats, ierr)
  call ok(ierr == LAPI_SUCCESS .and. stats%tot_pkt_sent_cnt > 0 .and. &
       stats%tot_data_sent > 0, 'QUERY_STATISTICS into LAPI_STATISTICS_T')

  call lapi_gfence(h, ierr)
  call lapi_term(h, ierr)
  call ok(ierr == LAPI_SUCCESS, 'LAPI_TERM')
  deallocate(cntrs, addrs, tab64)
  write (*, '(a,i0,a,i0,a,i0,a)') 'test_handlers: task ', me, ': ', passed, &
       ' passed, ', failed, ' failed'
  if (failed /= 0) stop 1

contains

  subroutine ok(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (cond) then
      passed = passed + 1
    else
      failed = failed + 1
      write (*, '(a,i0,a,a)') 'test_handlers: task ', me, ': FAILED: ', what
    end if
  end subroutine ok
end program test_handlers
