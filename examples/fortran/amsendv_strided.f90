! amsendv_strided.f90 - a block of a 2-D array sent as LAPI_GEN_STRIDED_XFER.
!
! Fortran stores arrays by column, so the rows R0..R0+NROW-1 of columns
! C0..C0+NCOL-1 of A(LDA, *) are NCOL blocks of NROW elements, LDA
! elements apart: one strided vector {base, block, stride} describes
! them.  Every task sends that block of its A to the next task, whose
! header handler places it, by another strided vector, at rows 2.. of
! columns 1..NCOL of its B(LDB, *): same blocks, a different stride.
!
! The header handler is registered under index 2 with LAPI_ADDR_SET and
! named by that index in LAPI_AMSENDV.  It sets no completion handler:
! tgt_cntr moves when the data has landed.
!
! Run:  ./build/examples/fortran_amsendv_strided
!       lapirun -n 2 ./build/examples/fortran_amsendv_strided
! Prints PASS or FAIL per task; exits with 1 on FAIL.

module strided_recv
  use lapi
  implicit none
  integer, parameter :: LDA = 10, NA = 6    ! A(LDA, NA) at the origin
  integer, parameter :: LDB = 8, NB = 5     ! B(LDB, NB) at the target
  integer, parameter :: R0 = 3, C0 = 2      ! the block: A(R0:, C0:)
  integer, parameter :: NROW = 5, NCOL = 4
  integer, parameter :: DBL = 8             ! bytes of a REAL(8)

  real(8) :: b(LDB, NB) = -1d0
  type(LAPI_VEC_T) :: tvec
  integer(LAPI_ADDR_TYPE) :: tinfo(3)
  integer :: sender = -1, shape_ok = 0

contains

  function vhdr_strided(hndl, uhdr, uhdr_len, len_vec, comp_h, user_info) &
       result(vec_addr)
    integer :: hndl, uhdr_len
    integer :: uhdr(*)
    integer(LAPI_LONG_TYPE) :: len_vec(*)
    integer(LAPI_ADDR_TYPE) :: comp_h, user_info, vec_addr
    integer :: ierr

    ! uhdr = (sender, number of columns); for a strided origin len_vec is
    ! (block, block, stride).
    sender = uhdr(1)
    if (uhdr_len == 8 .and. uhdr(2) == NCOL .and. hndl >= 0 .and. &
         len_vec(1) == NROW * DBL .and. len_vec(3) == LDA * DBL) shape_ok = 1

    call lapi_address(b(2, 1), tinfo(1), ierr)     ! base
    tinfo(2) = NROW * DBL                           ! block bytes
    tinfo(3) = LDB * DBL                            ! stride bytes
    tvec%vec_type = LAPI_GEN_STRIDED_XFER
    tvec%num_vecs = NCOL
    call lapi_address(tinfo, tvec%info, ierr)
    tvec%len = LAPI_ADDR_NULL                       ! unused when strided
    comp_h = LAPI_ADDR_NULL                         ! no completion handler
    user_info = LAPI_ADDR_NULL
    call lapi_address(tvec, vec_addr, ierr)
  end function vhdr_strided
end module strided_recv

program amsendv_strided
  use lapi
  use strided_recv
  implicit none
  type(LAPI_INFO_T) :: info
  type(LAPI_CNTR_T) :: tgt_cntr, org_cntr, cmpl_cntr
  type(LAPI_VEC_T) :: ovec
  real(8) :: a(LDA, NA)
  integer(LAPI_ADDR_TYPE) :: oinfo(3), my_cntr
  integer(LAPI_ADDR_TYPE), allocatable :: cntrs(:)
  integer(LAPI_ADDR_TYPE), parameter :: HDR_INDEX = 2
  integer :: hndl, ierr, me, ntasks, peer, from, i, j, cur, uhdr(2)
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
  call lapi_addr_set(hndl, vhdr_strided, int(HDR_INDEX), ierr)
  call check(ierr, 'LAPI_ADDR_SET')
  allocate(cntrs(0:ntasks - 1))
  call lapi_address(tgt_cntr, my_cntr, ierr)
  call lapi_address_init(hndl, my_cntr, cntrs, ierr)   ! collective
  call check(ierr, 'LAPI_ADDRESS_INIT')

  ! A(i, j) = 1000 * me + 10 * i + j: every element tells where it was.
  do j = 1, NA
    do i = 1, LDA
      a(i, j) = 1000 * me + 10 * i + j
    end do
  end do
  call lapi_address(a(R0, C0), oinfo(1), ierr)
  oinfo(2) = NROW * DBL
  oinfo(3) = LDA * DBL
  ovec%vec_type = LAPI_GEN_STRIDED_XFER
  ovec%num_vecs = NCOL
  call lapi_address(oinfo, ovec%info, ierr)
  ovec%len = LAPI_ADDR_NULL
  uhdr = [me, NCOL]

  call lapi_amsendv(hndl, peer, HDR_INDEX, uhdr, 8, ovec, cntrs(peer), &
       org_cntr, cmpl_cntr, ierr)
  call check(ierr, 'LAPI_AMSENDV')
  call lapi_waitcntr(hndl, org_cntr, 1, cur, ierr)
  call lapi_waitcntr(hndl, cmpl_cntr, 1, cur, ierr)
  call lapi_waitcntr(hndl, tgt_cntr, 1, cur, ierr)
  call check(ierr, 'LAPI_WAITCNTR')

  ! B(2:1+NROW, 1:NCOL) holds the block of the previous task's A; every
  ! other element of B is untouched.
  ok = sender == from .and. shape_ok == 1
  do j = 1, NB
    do i = 1, LDB
      if (i >= 2 .and. i <= 1 + NROW .and. j <= NCOL) then
        ok = ok .and. nint(b(i, j)) == &
             1000 * from + 10 * (i - 2 + R0) + (j - 1 + C0)
      else
        ok = ok .and. nint(b(i, j)) == -1
      end if
    end do
  end do

  call lapi_gfence(hndl, ierr)
  call lapi_term(hndl, ierr)
  deallocate(cntrs)
  call check(ierr, 'LAPI_TERM')
  if (ok) then
    write (*, '(a,i0,a)') 'amsendv_strided: task ', me, ': PASS'
  else
    write (*, '(a,i0,a)') 'amsendv_strided: task ', me, ': FAIL; B ='
    write (*, '(5f9.0)') (b(i, 1:NB), i = 1, LDB)
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
    write (*, '(a,a,a,a)') 'amsendv_strided: FAIL: ', what, ': ', trim(msg)
    stop 1
  end subroutine check
end program amsendv_strided
