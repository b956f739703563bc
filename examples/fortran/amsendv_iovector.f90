! amsendv_iovector.f90 - LAPI_AMSENDV with an I/O vector, from Fortran.
!
! Every task sends three arrays of different types (INTEGER, REAL(8),
! CHARACTER) in one active message to the next task.  The header handler,
! a Fortran function, runs on the target: it builds the target vector
! (where each segment lands) and names a Fortran completion handler.
! Counters: org_cntr (our buffers are free again), cmpl_cntr (the target
! ran the completion handler) and tgt_cntr (a message reached us; its
! address is exchanged with LAPI_ADDRESS_INIT).
!
! Run:  ./build/examples/fortran_amsendv_iovector
!       lapirun -n 2 ./build/examples/fortran_amsendv_iovector
! Prints PASS or FAIL per task; exits with 1 on FAIL.

! What the handlers work with lives in a module: handlers are module (or
! external) procedures, and the data must outlive the calls.
module iov_recv
  use lapi
  implicit none
  integer, parameter :: NI = 8, NR = 5, NC = 12

  ! Where the data lands: the target vector describes these.
  integer :: recv_ints(NI) = 0
  real(8) :: recv_reals(NR) = 0
  character(len=NC) :: recv_text = ' '
  type(LAPI_VEC_T) :: tvec
  integer(LAPI_ADDR_TYPE) :: tinfo(3)
  integer(LAPI_LONG_TYPE) :: tlen(3)

  ! What the handlers saw (checked by the main program).
  integer :: sender = -1, lengths_ok = 0, hdr_hndl = -1
  integer :: cmpl_from = -1, cmpl_runs = 0, cmpl_hndl = -1

contains

  ! The header handler: its result is the address of the target vector.
  function vhdr_iov(hndl, uhdr, uhdr_len, len_vec, comp_h, user_info) &
       result(vec_addr)
    integer :: hndl, uhdr_len
    integer :: uhdr(*)
    integer(LAPI_LONG_TYPE) :: len_vec(*)
    integer(LAPI_ADDR_TYPE) :: comp_h, user_info, vec_addr
    integer :: ierr

    hdr_hndl = hndl
    sender = uhdr(1)
    ! len_vec holds the origin's segment lengths.
    if (uhdr_len == 4 .and. len_vec(1) == 4 * NI .and. &
         len_vec(2) == 8 * NR .and. len_vec(3) == NC) lengths_ok = 1

    call lapi_address(recv_ints, tinfo(1), ierr)
    call lapi_address(recv_reals, tinfo(2), ierr)
    call lapi_address(recv_text, tinfo(3), ierr)
    tlen = len_vec(1:3)
    tvec%vec_type = LAPI_GEN_IOVECTOR
    tvec%num_vecs = 3
    call lapi_address(tinfo, tvec%info, ierr)
    call lapi_address(tlen, tvec%len, ierr)

    ! Run compl_iov once the data is in, and give it `sender`.
    call lapi_address(compl_iov, comp_h, ierr)
    call lapi_address(sender, user_info, ierr)
    call lapi_address(tvec, vec_addr, ierr)
  end function vhdr_iov

  ! The completion handler: user_info is what the header handler named.
  subroutine compl_iov(hndl, user_info)
    integer :: hndl
    integer :: user_info(*)
    cmpl_hndl = hndl
    cmpl_from = user_info(1)
    cmpl_runs = cmpl_runs + 1
  end subroutine compl_iov
end module iov_recv

program amsendv_iovector
  use lapi
  use iov_recv
  implicit none
  type(LAPI_INFO_T) :: info
  type(LAPI_CNTR_T) :: tgt_cntr, org_cntr, cmpl_cntr
  type(LAPI_VEC_T) :: ovec
  integer(LAPI_ADDR_TYPE) :: oinfo(3), my_cntr
  integer(LAPI_ADDR_TYPE), allocatable :: cntrs(:)
  integer(LAPI_LONG_TYPE) :: olen(3)
  integer :: send_ints(NI), uhdr(1)
  real(8) :: send_reals(NR)
  character(len=NC) :: send_text
  integer :: hndl, ierr, me, ntasks, peer, from, i, cur
  logical :: ok

  call lapi_init(hndl, info, ierr)
  call check(ierr, 'LAPI_INIT')
  call lapi_qenv(hndl, TASK_ID, me, ierr)
  call lapi_qenv(hndl, NUM_TASKS, ntasks, ierr)
  peer = mod(me + 1, ntasks)
  from = mod(me + ntasks - 1, ntasks)

  call lapi_setcntr(hndl, tgt_cntr, 0, ierr)
  call lapi_setcntr(hndl, org_cntr, 0, ierr)
  call lapi_setcntr(hndl, cmpl_cntr, 0, ierr)
  ! The same handler under the same index on every task: passed by name
  ! below, it travels as that index.
  call lapi_addr_set(hndl, vhdr_iov, 1, ierr)
  call check(ierr, 'LAPI_ADDR_SET')
  ! Collective: every task learns every tgt_cntr address (and every task
  ! has registered its handler once this returns).
  allocate(cntrs(0:ntasks - 1))
  call lapi_address(tgt_cntr, my_cntr, ierr)
  call lapi_address_init(hndl, my_cntr, cntrs, ierr)
  call check(ierr, 'LAPI_ADDRESS_INIT')

  ! Three segments of three types, described by an I/O vector.
  send_ints = [(100 * me + i, i = 1, NI)]
  send_reals = [(me + i / 10d0, i = 1, NR)]
  write (send_text, '(a,i2.2)') 'from task ', me
  call lapi_address(send_ints, oinfo(1), ierr)
  call lapi_address(send_reals, oinfo(2), ierr)
  call lapi_address(send_text, oinfo(3), ierr)
  olen = [4 * NI, 8 * NR, NC]
  ovec%vec_type = LAPI_GEN_IOVECTOR
  ovec%num_vecs = 3
  call lapi_address(oinfo, ovec%info, ierr)
  call lapi_address(olen, ovec%len, ierr)
  uhdr(1) = me

  call lapi_amsendv(hndl, peer, vhdr_iov, uhdr, 4, ovec, cntrs(peer), &
       org_cntr, cmpl_cntr, ierr)
  call check(ierr, 'LAPI_AMSENDV')
  call lapi_waitcntr(hndl, org_cntr, 1, cur, ierr)
  call lapi_waitcntr(hndl, cmpl_cntr, 1, cur, ierr)
  call lapi_waitcntr(hndl, tgt_cntr, 1, cur, ierr)
  call check(ierr, 'LAPI_WAITCNTR')

  ! The message from the previous task is in: check every byte.
  ok = sender == from .and. lengths_ok == 1 .and. cmpl_runs == 1
  ok = ok .and. cmpl_from == from .and. hdr_hndl == hndl
  ok = ok .and. cmpl_hndl == hndl
  do i = 1, NI
    ok = ok .and. recv_ints(i) == 100 * from + i
  end do
  do i = 1, NR
    ok = ok .and. abs(recv_reals(i) - (from + i / 10d0)) < 1d-12
  end do
  write (send_text, '(a,i2.2)') 'from task ', from
  ok = ok .and. recv_text == send_text

  call lapi_gfence(hndl, ierr)
  call lapi_term(hndl, ierr)
  deallocate(cntrs)
  call check(ierr, 'LAPI_TERM')
  if (ok) then
    write (*, '(a,i0,a)') 'amsendv_iovector: task ', me, ': PASS'
  else
    write (*, '(a,i0,a)') 'amsendv_iovector: task ', me, ': FAIL'
    write (*, '(a,3i6)') '  sender, lengths_ok, completions:', sender, &
         lengths_ok, cmpl_runs
    stop 1
  end if

contains

  subroutine check(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    character(len=LAPI_MAX_ERR_STRING) :: msg
    integer :: ie
    if (code == LAPI_SUCCESS) return
    call lapi_msg_string(code, msg, ie)
    write (*, '(a,a,a,a)') 'amsendv_iovector: FAIL: ', what, ': ', trim(msg)
    stop 1
  end subroutine check
end program amsendv_iovector
