! choice_buffers_mod.f90 - the same as choice_buffers.f with USE lapi, in
! free form, plus module variables and allocatable arrays.  Compiled, not
! run (ctest fortran_choice_buffers_mod).
module choice_bufs
  implicit none
  real(8), allocatable :: work(:, :)
  integer(2) :: shorts(7)
  character(len=3) :: words(4)
end module choice_bufs

subroutine mixed(h, t, ta, tc)
  use lapi
  use choice_bufs
  implicit none
  integer :: h, t, ierr
  integer(LAPI_ADDR_TYPE) :: ta, tc, a
  integer(LAPI_LONG_TYPE), parameter :: L = 8
  type(LAPI_CNTR_T) :: oc, cc
  integer :: i4(10)
  complex(8) :: z
  call lapi_put(h, t, L, ta, work, tc, oc, cc, ierr)
  call lapi_put(h, t, L, ta, shorts, tc, oc, cc, ierr)
  call lapi_put(h, t, L, ta, words, tc, oc, cc, ierr)
  call lapi_put(h, t, L, ta, i4, tc, oc, cc, ierr)
  call lapi_put(h, t, L, ta, z, tc, oc, cc, ierr)
  call lapi_get(h, t, L, ta, work(1, 2), tc, oc, ierr)
  call lapi_amsend(h, t, 1_LAPI_ADDR_TYPE, words, 12, shorts, L, tc, &
       oc, cc, ierr)
  call lapi_address(work, a, ierr)
  call lapi_address(shorts, a, ierr)
  call lapi_address(z, a, ierr)
end subroutine mixed
