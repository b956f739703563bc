! lapi.f90 - MODULE lapi: the LAPI Fortran binding for modern code.
!
!   use lapi
!
! The module holds everything lapif.h declares (constants, kinds, types,
! LAPI_ADDR_NULL and the explicit interfaces of every LAPI_* call), and
! adds abstract interfaces for the handlers a program writes and for the
! C functions LAPI_UTIL(LAPI_GET_THREAD_FUNC) returns.  It has no code of
! its own: a program links with -llapi only.
module lapi
  use, intrinsic :: iso_c_binding, only: c_int, c_intptr_t, c_long, &
       c_long_long, c_ptr
  implicit none
  private :: c_int, c_intptr_t, c_long, c_long_long, c_ptr

  include 'lapif.h'

  ! The kinds must be those of the C types (a division by zero here
  ! stops the compilation if one is not).
  integer, parameter, private :: lapif_addr_kind_ok = &
       1 / merge(1, 0, LAPI_ADDR_TYPE == c_intptr_t)
  integer, parameter, private :: lapif_long_kind_ok = &
       1 / merge(1, 0, LAPI_LONG_TYPE == c_long)
  integer, parameter, private :: lapif_long_long_kind_ok = &
       1 / merge(1, 0, LAPI_LONG_LONG_TYPE == c_long_long)

  ! Storage for a condition used with the LAPI_UTIL thread functions
  ! (a pthread_cond_t).
  type, bind(c) :: lapi_cond_t
    integer(c_long_long) :: opaque(6)
  end type lapi_cond_t

  abstract interface
    ! Header handler of LAPI_AMSENDV: returns the LAPI_ADDRESS of the
    ! target TYPE(LAPI_VEC_T) (LAPI_ADDR_NULL discards the data).  It may
    ! set comp_h to the LAPI_ADDRESS of a completion handler and
    ! user_info to the address that handler gets.  The handler of
    ! LAPI_AMSEND has the same form; its 4th argument is the message
    ! length, or a TYPE(LAPI_RETURN_INFO_T), and it returns the address
    ! of the buffer for the data.
    function lapi_vhdr_hndlr(hndl, uhdr, uhdr_len, len_vec, comp_h, &
         user_info) result(tgt_vec)
      import :: LAPI_ADDR_TYPE, LAPI_LONG_TYPE
      implicit none
      integer :: hndl, uhdr_len
      integer :: uhdr(*)
      integer(kind=LAPI_LONG_TYPE) :: len_vec(*)
      integer(kind=LAPI_ADDR_TYPE) :: comp_h, user_info
      integer(kind=LAPI_ADDR_TYPE) :: tgt_vec
    end function lapi_vhdr_hndlr

    function lapi_hdr_hndlr(hndl, uhdr, uhdr_len, ret_info, comp_h, &
         user_info) result(buf)
      import :: LAPI_ADDR_TYPE, LAPI_RETURN_INFO_T
      implicit none
      integer :: hndl, uhdr_len
      integer :: uhdr(*)
      type(LAPI_RETURN_INFO_T) :: ret_info
      integer(kind=LAPI_ADDR_TYPE) :: comp_h, user_info
      integer(kind=LAPI_ADDR_TYPE) :: buf
    end function lapi_hdr_hndlr

    ! Completion handler: user_info is the memory the header handler
    ! named (declare it as the type it is).
    subroutine lapi_compl_hndlr(hndl, user_info)
      implicit none
      integer :: hndl
      integer :: user_info(*)
    end subroutine lapi_compl_hndlr

    ! Send completion handler of the LAPI_XFER commands (SHDLR).
    subroutine lapi_scompl_hndlr(hndl, sinfo, info)
      import :: LAPI_SH_INFO_T
      implicit none
      integer :: hndl
      integer :: sinfo(*)
      type(LAPI_SH_INFO_T) :: info
    end subroutine lapi_scompl_hndlr

    ! Asynchronous error handler (LAPI_INFO_T%ERR_HNDLR).
    subroutine lapi_err_hndlr(hndl, error_code, err_type, task_id, src)
      implicit none
      integer :: hndl, error_code, err_type, task_id, src
    end subroutine lapi_err_hndlr

    ! The LAPI_THREAD_FUNC_T functions (C, handle by value).  Call one
    ! through a procedure pointer:
    !   procedure(lapi_mutex_lock_t), pointer :: lock
    !   call c_f_procpointer(transfer(tf%mutex_lock, c_null_funptr), lock)
    !   rc = lock(hndl)
    integer(c_int) function lapi_mutex_lock_t(hndl) bind(c)
      import :: c_int
      integer(c_int), value :: hndl
    end function lapi_mutex_lock_t

    integer(c_int) function lapi_mutex_getowner_t(hndl, tid) bind(c)
      import :: c_int, c_long
      integer(c_int), value :: hndl
      integer(c_long) :: tid
    end function lapi_mutex_getowner_t

    integer(c_int) function lapi_cond_op_t(hndl, cond) bind(c)
      import :: c_int, lapi_cond_t
      integer(c_int), value :: hndl
      type(lapi_cond_t) :: cond
    end function lapi_cond_op_t

    integer(c_int) function lapi_cond_timedwait_t(hndl, cond, abstime) &
         bind(c)
      import :: c_int, lapi_cond_t, c_ptr
      integer(c_int), value :: hndl
      type(lapi_cond_t) :: cond
      type(c_ptr), value :: abstime
    end function lapi_cond_timedwait_t
  end interface
end module lapi
