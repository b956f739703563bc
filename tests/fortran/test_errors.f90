! test_errors.f90 - every error code of the C error table, from Fortran.
!
! Each row is one call with one thing wrong (or, for precedence rows,
! several in a known order) and the code ierror must hold: the code C
! returns for the same call (tests/lapi/test_am_errors.c), plus the
! Fortran binding's own cases (a Fortran header handler's shorter user
! header, LAPI_ADDR_NULL where Fortran has no NULL).  After every row the
! harness fences and checks that nothing happened: origin data, target
! memory, user header, vectors, RMW variables, previous-value slots and
! counters untouched, no handler ran.  At the end a valid message still
! goes through.
!
! Written as a legacy program would be: INCLUDE 'lapif.h' (free form),
! external handlers, COMMON.  Plain program (not Criterion): prints each
! failing row, then "N passed, M failed"; exits with 1 on a failure.
! Runs as one task or under lapirun (the target is the next task).

! Header handler (Amsend form): the data goes to TMEM.
function e_hdr(hndl, uhdr, uhdr_len, msg_len, comp_h, user_info) result(buf)
  implicit none
  include 'lapif.h'
  integer :: hndl, uhdr_len, uhdr(*)
  integer(LAPI_LONG_TYPE) :: msg_len
  integer(LAPI_ADDR_TYPE) :: comp_h, user_info, buf
  integer, parameter :: SEG = 16
  integer(1) :: tmem(4 * SEG)
  integer :: hdr_runs, cmpl_runs, err_runs
  common /errmem/ tmem
  common /errrun/ hdr_runs, cmpl_runs, err_runs
  external e_cmpl
  integer :: ierr
  hdr_runs = hdr_runs + 1
  call lapi_address(e_cmpl, comp_h, ierr)
  buf = LAPI_ADDR_NULL
  if (msg_len <= 4 * SEG) call lapi_address(tmem, buf, ierr)
end function e_hdr

! Header handler (Amsendv form): two segments of TMEM.
function e_vhdr(hndl, uhdr, uhdr_len, len_vec, comp_h, user_info) &
     result(vec)
  implicit none
  include 'lapif.h'
  integer :: hndl, uhdr_len, uhdr(*)
  integer(LAPI_LONG_TYPE) :: len_vec(*)
  integer(LAPI_ADDR_TYPE) :: comp_h, user_info, vec
  integer, parameter :: SEG = 16
  integer(1) :: tmem(4 * SEG)
  integer :: hdr_runs, cmpl_runs, err_runs
  common /errmem/ tmem
  common /errrun/ hdr_runs, cmpl_runs, err_runs
  type(LAPI_VEC_T), save :: tv
  integer(LAPI_ADDR_TYPE), save :: info(2)
  integer(LAPI_LONG_TYPE), save :: lens(2)
  external e_cmpl
  integer :: ierr
  hdr_runs = hdr_runs + 1
  call lapi_address(tmem(1), info(1), ierr)
  call lapi_address(tmem(SEG + 1), info(2), ierr)
  lens = SEG
  tv%vec_type = LAPI_GEN_IOVECTOR
  tv%num_vecs = 2
  call lapi_address(info, tv%info, ierr)
  call lapi_address(lens, tv%len, ierr)
  call lapi_address(e_cmpl, comp_h, ierr)
  call lapi_address(tv, vec, ierr)
end function e_vhdr

subroutine e_cmpl(hndl, user_info)
  implicit none
  integer :: hndl, user_info(*)
  integer :: hdr_runs, cmpl_runs, err_runs
  common /errrun/ hdr_runs, cmpl_runs, err_runs
  cmpl_runs = cmpl_runs + 1
end subroutine e_cmpl

subroutine e_err(hndl, code, err_type, task_id, src)
  implicit none
  integer :: hndl, code, err_type, task_id, src
  integer :: hdr_runs, cmpl_runs, err_runs
  common /errrun/ hdr_runs, cmpl_runs, err_runs
  err_runs = err_runs + 1
end subroutine e_err

program test_errors
  implicit none
  include 'lapif.h'
  integer, parameter :: SEG = 16
  integer(1) :: tmem(4 * SEG)
  integer :: hdr_runs, cmpl_runs, err_runs
  common /errmem/ tmem
  common /errrun/ hdr_runs, cmpl_runs, err_runs
  ! What the rows may touch, in COMMON: LAPI writes it behind the
  ! compiler's back.
  integer(1) :: org(4 * SEG), omem(4 * SEG)
  integer :: uh(272), var32, in32(2), prev32
  integer(LAPI_LONG_LONG_TYPE) :: var64, in64(2), prev64
  type(LAPI_CNTR_T) :: recv_cntr, oc, cc
  common /errdata/ org, omem, uh, var32, in32, prev32, var64, in64, &
       prev64, recv_cntr, oc, cc
  integer(LAPI_LONG_TYPE), parameter :: LSEG = SEG
  integer(LAPI_LONG_TYPE), parameter :: MAXMSG = LAPI_MAX_MSG_SZ
  integer(LAPI_LONG_TYPE), parameter :: OVER = -huge(0_8) - 1  ! MAXMSG+1
  integer(LAPI_ADDR_TYPE), parameter :: IDX_HDR = 1, IDX_VHDR = 2
  integer(LAPI_ADDR_TYPE), parameter :: IDX_EMPTY = 7, NUL = 0

  integer(LAPI_ADDR_TYPE), external :: e_hdr, e_vhdr
  external :: e_cmpl, e_err

  ! vectors: o* describe origin memory, t* target memory (SELF)
  type(LAPI_VEC_T) :: o_ok, o_gen, t_ok, t_3, t_diff, t_gen, o_type, &
       t_type, o_type_neg, o_segnull, t_segnull, o_big, t_big, o_noinfo, &
       os, ts, ts_2, t_block, o_base, t_base, o_stride, t_stride, &
       o_extent, t_extent
  integer(LAPI_ADDR_TYPE) :: oi_ok(2), ti_ok(2), ti_3(3), oi_segnull(2), &
       ti_segnull(2), oi_big(2), ti_big(2), os_ok(3), ts_ok(3), &
       ts_block(3), os_base(3), ts_base(3), os_stride(3), ts_stride(3), &
       os_extent(3), ts_extent(3)
  integer(LAPI_LONG_TYPE) :: ol_ok(2), tl_3(3), tl_diff(2), ol_big(2)
  type(LAPI_VEC_T) :: vec_copy(24)

  type(LAPI_INFO_T) :: info
  type(LAPI_MSG_INFO_T) :: minfo
  type(LAPI_AM_T) :: xam
  type(LAPI_AMV_T) :: xamv
  type(LAPI_PUT_T) :: xput
  type(LAPI_GET_T) :: xget
  type(LAPI_PUTV_T) :: xputv
  type(LAPI_GETV_T) :: xgetv
  type(LAPI_RMW_T) :: xrmw
  type(LAPI_THREAD_FUNC_T) :: tf

  integer :: h, dead, t, self, nt, ierr, qout, max_uhdr, tbl_sz, fmax
  integer :: chk, intr, tmo, i, passed, failed, cur, code, nh
  integer(LAPI_ADDR_TYPE) :: a, tc, rm, rv32, rv64, got, tab(1), my
  integer(LAPI_ADDR_TYPE), allocatable :: all(:)
  integer(LAPI_LONG_LONG_TYPE) :: tab64(1)
  integer, allocatable :: extra(:)
  character(len=LAPI_MAX_ERR_STRING) :: msg
  logical :: listed_seen(LAPI_ERR_FIRSTCODE:LAPI_ERR_LASTCODE)
  integer, parameter :: LISTED(42) = [LAPI_ERR_HNDL_INVALID, LAPI_ERR_TGT, &
       LAPI_ERR_HDR_HNDLR_NULL, LAPI_ERR_UHDR_NULL, LAPI_ERR_UHDR_LEN, &
       LAPI_ERR_ORG_VEC_NULL, LAPI_ERR_ORG_VEC_TYPE, LAPI_ERR_ORG_VEC_ADDR, &
       LAPI_ERR_ORG_VEC_LEN, LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL, &
       LAPI_ERR_ORG_STRIDE, LAPI_ERR_ORG_EXTENT, LAPI_ERR_TGT_PURGED, &
       LAPI_ERR_ORG_ADDR_NULL, LAPI_ERR_TGT_ADDR_NULL, LAPI_ERR_DATA_LEN, &
       LAPI_ERR_TGT_VEC_NULL, LAPI_ERR_TGT_VEC_TYPE, LAPI_ERR_TGT_VEC_ADDR, &
       LAPI_ERR_TGT_VEC_LEN, LAPI_ERR_STRIDE_TGT_VEC_ADDR_NULL, &
       LAPI_ERR_TGT_STRIDE, LAPI_ERR_TGT_EXTENT, LAPI_ERR_VEC_TYPE_DIFF, &
       LAPI_ERR_VEC_NUM_DIFF, LAPI_ERR_VEC_LEN_DIFF, LAPI_ERR_CNTR_NULL, &
       LAPI_ERR_RET_PTR_NULL, LAPI_ERR_QUERY_TYPE, LAPI_ERR_SET_VAL, &
       LAPI_ERR_RMW_OP, LAPI_ERR_TGT_VAR_NULL, LAPI_ERR_IN_VAL_NULL, &
       LAPI_ERR_ADDR_HNDL_RANGE, LAPI_ERR_ADDR_TBL_NULL, &
       LAPI_ERR_MSG_INFO_NULL, LAPI_ERR_XFER_CMD, LAPI_ERR_OP_SZ, &
       LAPI_ERR_UTIL_CMD, LAPI_ERR_INFO_NULL, LAPI_ERR_INFO_NONZERO, &
       LAPI_ERR_CNTR_VAL]

  passed = 0
  failed = 0
  listed_seen = .false.
  hdr_runs = 0
  cmpl_runs = 0
  err_runs = 0

  ! ------------------------------------------------------------ set-up
  call lapi_address(e_err, info%err_hndlr, ierr)
  call lapi_init(h, info, ierr)
  if (ierr /= LAPI_SUCCESS) stop 'LAPI_INIT failed'
  call lapi_qenv(h, TASK_ID, self, ierr)
  call lapi_qenv(h, NUM_TASKS, nt, ierr)
  t = mod(self + 1, nt)
  call lapi_qenv(h, MAX_UHDR_SZ, max_uhdr, ierr)
  call lapi_qenv(h, LOC_ADDRTBL_SZ, tbl_sz, ierr)
  fmax = max_uhdr                        ! what Fortran handlers get
  max_uhdr = fmax + 16                   ! what C handlers get
  ! a handle that existed and was terminated
  info = LAPI_INFO_T()
  call lapi_init(dead, info, ierr)
  call lapi_term(dead, ierr)
  if (dead == h) stop 'the dead handle is the live one'

  tmem = -91
  omem = -91
  do i = 1, 4 * SEG
    org(i) = int(mod(7 * i + 3, 127), 1)
  end do
  do i = 1, size(uh)
    uh(i) = 321 + 5 * i
  end do
  var32 = 17
  var64 = 17
  in32 = [1000, 2000]
  in64 = [1000, 2000]
  prev32 = -3
  prev64 = -3
  call lapi_setcntr(h, recv_cntr, 0, ierr)
  call lapi_setcntr(h, oc, 0, ierr)
  call lapi_setcntr(h, cc, 0, ierr)
  call lapi_addr_set(h, e_hdr, int(IDX_HDR), ierr)
  call lapi_addr_set(h, e_vhdr, int(IDX_VHDR), ierr)
  if (ierr /= LAPI_SUCCESS) stop 'LAPI_ADDR_SET failed'
  ! the target's counter, memory and RMW variables
  allocate(all(0:nt - 1))
  call lapi_address(recv_cntr, my, ierr)
  call lapi_address_init(h, my, all, ierr)
  tc = all(t)
  call lapi_address(tmem, my, ierr)
  call lapi_address_init(h, my, all, ierr)
  rm = all(t)
  call lapi_address(var32, my, ierr)
  call lapi_address_init(h, my, all, ierr)
  rv32 = all(t)
  call lapi_address(var64, my, ierr)
  call lapi_address_init(h, my, all, ierr)
  rv64 = all(t)
  call build_vectors()
  vec_copy = [o_ok, o_gen, t_ok, t_3, t_diff, t_gen, o_type, t_type, &
       o_type_neg, o_segnull, t_segnull, o_big, t_big, o_noinfo, os, ts, &
       ts_2, t_block, o_base, t_base, o_stride, t_stride, o_extent, t_extent]
  call lapi_gfence(h, ierr)
  call lapi_qenv(h, ERROR_CHK, chk, ierr)
  call lapi_qenv(h, INTERRUPT_SET, intr, ierr)
  call lapi_qenv(h, TIMEOUT, tmo, ierr)

  ! -------------------------------------------------------- LAPI_AMSEND
  call lapi_amsend(dead, t, IDX_HDR, uh, 4, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_hndl_dead', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_amsend(LAPI_VOID_HANDLE, t, IDX_HDR, uh, 4, org, LSEG, tc, oc, &
       cc, ierr)
  call row('amsend_hndl_void', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_amsend(h, nt, IDX_HDR, uh, 4, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_tgt_ntasks', ierr, LAPI_ERR_TGT)
  call lapi_amsend(h, -1, IDX_HDR, uh, 4, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_tgt_neg', ierr, LAPI_ERR_TGT)
  call lapi_amsend(h, t, LAPI_ADDR_NULL, uh, 4, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_hdr_null', ierr, LAPI_ERR_HDR_HNDLR_NULL)
  call lapi_amsend(h, t, IDX_HDR, LAPI_ADDR_NULL, 4, org, LSEG, tc, oc, cc, &
       ierr)
  call row('amsend_uhdr_null', ierr, LAPI_ERR_UHDR_NULL)
  call lapi_amsend(h, t, IDX_HDR, uh, 6, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_uhdr_len_6', ierr, LAPI_ERR_UHDR_LEN)
  call lapi_amsend(h, t, IDX_HDR, uh, 2, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_uhdr_len_2', ierr, LAPI_ERR_UHDR_LEN)
  call lapi_amsend(h, t, IDX_HDR, uh, -4, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_uhdr_len_neg', ierr, LAPI_ERR_UHDR_LEN)
  call lapi_amsend(h, t, IDX_HDR, uh, max_uhdr + 4, org, LSEG, tc, oc, cc, &
       ierr)
  call row('amsend_uhdr_len_max', ierr, LAPI_ERR_UHDR_LEN)
  call lapi_amsend(h, t, IDX_HDR, uh, fmax + 4, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_uhdr_len_fortran_max', ierr, LAPI_ERR_UHDR_LEN)
  call lapi_amsend(h, t, IDX_HDR, uh, max_uhdr, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_uhdr_len_c_max', ierr, LAPI_ERR_UHDR_LEN)
  call lapi_amsend(h, t, IDX_HDR, uh, 4, LAPI_ADDR_NULL, LSEG, tc, oc, cc, &
       ierr)
  call row('amsend_udata_null', ierr, LAPI_ERR_ORG_ADDR_NULL)
  call lapi_amsend(h, t, IDX_HDR, uh, 4, org, OVER, tc, oc, cc, ierr)
  call row('amsend_data_len', ierr, LAPI_ERR_DATA_LEN)
  call lapi_purge_totask(h, t, ierr)
  call lapi_amsend(h, t, IDX_HDR, uh, 4, org, LSEG, tc, oc, cc, code)
  call lapi_resume_totask(h, t, ierr)
  call row('amsend_purged', code, LAPI_ERR_TGT_PURGED)
  call lapi_amsend(h, self, IDX_EMPTY, uh, 4, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_index_empty', ierr, LAPI_ERR_HDR_HNDLR_NULL)
  call lapi_amsend(dead, nt, NUL, LAPI_ADDR_NULL, 6, LAPI_ADDR_NULL, LSEG, &
       tc, oc, cc, ierr)
  call row('amsend_first_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_amsend(h, nt, NUL, LAPI_ADDR_NULL, 6, LAPI_ADDR_NULL, LSEG, tc, &
       oc, cc, ierr)
  call row('amsend_then_tgt', ierr, LAPI_ERR_TGT)
  call lapi_amsend(h, t, NUL, LAPI_ADDR_NULL, 6, LAPI_ADDR_NULL, LSEG, tc, &
       oc, cc, ierr)
  call row('amsend_then_hdr', ierr, LAPI_ERR_HDR_HNDLR_NULL)
  call lapi_amsend(h, t, IDX_HDR, LAPI_ADDR_NULL, 4, LAPI_ADDR_NULL, LSEG, &
       tc, oc, cc, ierr)
  call row('amsend_then_uhdr', ierr, LAPI_ERR_UHDR_NULL)
  ! the handler by name (the Fortran envelope path): C's order still
  call lapi_amsend(dead, nt, e_hdr, uh, fmax + 4, LAPI_ADDR_NULL, LSEG, &
       tc, oc, cc, ierr)
  call row('amsend_name_first_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_amsend(h, nt, e_hdr, uh, fmax + 4, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_name_then_tgt', ierr, LAPI_ERR_TGT)
  call lapi_amsend(h, t, e_hdr, LAPI_ADDR_NULL, 4, org, LSEG, tc, oc, cc, &
       ierr)
  call row('amsend_name_uhdr_null', ierr, LAPI_ERR_UHDR_NULL)
  call lapi_amsend(h, t, e_hdr, uh, 6, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_name_uhdr_len', ierr, LAPI_ERR_UHDR_LEN)
  call lapi_amsend(h, t, e_hdr, uh, fmax + 4, org, LSEG, tc, oc, cc, ierr)
  call row('amsend_name_fortran_max', ierr, LAPI_ERR_UHDR_LEN)
  call lapi_amsend(h, t, e_hdr, uh, 4, LAPI_ADDR_NULL, LSEG, tc, oc, cc, &
       ierr)
  call row('amsend_name_udata_null', ierr, LAPI_ERR_ORG_ADDR_NULL)
  call lapi_amsend(h, t, e_hdr, uh, 4, org, OVER, tc, oc, cc, ierr)
  call row('amsend_name_data_len', ierr, LAPI_ERR_DATA_LEN)

  ! ------------------------------------------------------- LAPI_AMSENDV
  call lapi_amsendv(dead, t, IDX_VHDR, uh, 4, o_ok, tc, oc, cc, ierr)
  call row('amsendv_hndl_dead', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_amsendv(h, nt, IDX_VHDR, uh, 4, o_ok, tc, oc, cc, ierr)
  call row('amsendv_tgt', ierr, LAPI_ERR_TGT)
  call lapi_amsendv(h, t, LAPI_ADDR_NULL, uh, 4, o_ok, tc, oc, cc, ierr)
  call row('amsendv_hdr_null', ierr, LAPI_ERR_HDR_HNDLR_NULL)
  call lapi_amsendv(h, t, IDX_VHDR, LAPI_ADDR_NULL, 8, o_ok, tc, oc, cc, &
       ierr)
  call row('amsendv_uhdr_null', ierr, LAPI_ERR_UHDR_NULL)
  call lapi_amsendv(h, t, IDX_VHDR, uh, 7, o_ok, tc, oc, cc, ierr)
  call row('amsendv_uhdr_len_odd', ierr, LAPI_ERR_UHDR_LEN)
  call lapi_amsendv(h, t, IDX_VHDR, uh, max_uhdr + 4, o_ok, tc, oc, cc, ierr)
  call row('amsendv_uhdr_len_max', ierr, LAPI_ERR_UHDR_LEN)
  call lapi_amsendv(h, t, e_vhdr, uh, fmax + 4, o_ok, tc, oc, cc, ierr)
  call row('amsendv_uhdr_len_fortran_max', ierr, LAPI_ERR_UHDR_LEN)
  call lapi_amsendv(h, t, IDX_VHDR, uh, 4, LAPI_ADDR_NULL, tc, oc, cc, ierr)
  call row('amsendv_vec_null', ierr, LAPI_ERR_ORG_VEC_NULL)
  call lapi_amsendv(h, t, IDX_VHDR, uh, 4, o_type, tc, oc, cc, ierr)
  call row('amsendv_vec_type', ierr, LAPI_ERR_ORG_VEC_TYPE)
  call lapi_amsendv(h, t, IDX_VHDR, uh, 4, o_type_neg, tc, oc, cc, ierr)
  call row('amsendv_vec_type_neg', ierr, LAPI_ERR_ORG_VEC_TYPE)
  call lapi_amsendv(h, t, IDX_VHDR, uh, 4, o_segnull, tc, oc, cc, ierr)
  call row('amsendv_vec_addr', ierr, LAPI_ERR_ORG_VEC_ADDR)
  call lapi_amsendv(h, t, IDX_VHDR, uh, 4, o_noinfo, tc, oc, cc, ierr)
  call row('amsendv_vec_info_null', ierr, LAPI_ERR_ORG_VEC_ADDR)
  call lapi_amsendv(h, t, IDX_VHDR, uh, 4, o_big, tc, oc, cc, ierr)
  call row('amsendv_vec_len', ierr, LAPI_ERR_ORG_VEC_LEN)
  call lapi_amsendv(h, t, IDX_VHDR, uh, 4, o_base, tc, oc, cc, ierr)
  call row('amsendv_stride_base', ierr, LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL)
  call lapi_amsendv(h, t, IDX_VHDR, uh, 4, o_stride, tc, oc, cc, ierr)
  call row('amsendv_stride', ierr, LAPI_ERR_ORG_STRIDE)
  call lapi_amsendv(h, t, IDX_VHDR, uh, 4, o_extent, tc, oc, cc, ierr)
  call row('amsendv_extent', ierr, LAPI_ERR_ORG_EXTENT)
  call lapi_purge_totask(h, t, ierr)
  call lapi_amsendv(h, t, IDX_VHDR, uh, 4, o_ok, tc, oc, cc, code)
  call lapi_resume_totask(h, t, ierr)
  call row('amsendv_purged', code, LAPI_ERR_TGT_PURGED)
  call lapi_amsendv(h, nt, NUL, LAPI_ADDR_NULL, 4, LAPI_ADDR_NULL, tc, oc, &
       cc, ierr)
  call row('amsendv_then_tgt', ierr, LAPI_ERR_TGT)
  call lapi_amsendv(h, t, NUL, LAPI_ADDR_NULL, 4, LAPI_ADDR_NULL, tc, oc, &
       cc, ierr)
  call row('amsendv_then_hdr', ierr, LAPI_ERR_HDR_HNDLR_NULL)
  call lapi_amsendv(h, t, IDX_VHDR, LAPI_ADDR_NULL, 4, LAPI_ADDR_NULL, tc, &
       oc, cc, ierr)
  call row('amsendv_then_uhdr', ierr, LAPI_ERR_UHDR_NULL)
  call lapi_amsendv(h, t, IDX_VHDR, uh, 6, LAPI_ADDR_NULL, tc, oc, cc, ierr)
  call row('amsendv_then_uhdr_len', ierr, LAPI_ERR_UHDR_LEN)
  call lapi_amsendv(h, t, e_vhdr, uh, 4, LAPI_ADDR_NULL, tc, oc, cc, ierr)
  call row('amsendv_name_vec_null', ierr, LAPI_ERR_ORG_VEC_NULL)

  ! ---------------------------------------------------- LAPI_PUT, LAPI_GET
  call lapi_put(dead, t, LSEG, rm, org, tc, oc, cc, ierr)
  call row('put_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_put(h, nt, LSEG, rm, org, tc, oc, cc, ierr)
  call row('put_tgt', ierr, LAPI_ERR_TGT)
  call lapi_put(h, t, LSEG, NUL, org, tc, oc, cc, ierr)
  call row('put_tgt_addr_null', ierr, LAPI_ERR_TGT_ADDR_NULL)
  call lapi_put(h, t, LSEG, LAPI_ADDR_NULL, org, tc, oc, cc, ierr)
  call row('put_tgt_addr_addr_null', ierr, LAPI_ERR_TGT_ADDR_NULL)
  call lapi_put(h, t, LSEG, rm, LAPI_ADDR_NULL, tc, oc, cc, ierr)
  call row('put_org_addr_null', ierr, LAPI_ERR_ORG_ADDR_NULL)
  call lapi_put(h, t, OVER, rm, org, tc, oc, cc, ierr)
  call row('put_data_len', ierr, LAPI_ERR_DATA_LEN)
  call lapi_purge_totask(h, t, ierr)
  call lapi_put(h, t, LSEG, rm, org, tc, oc, cc, code)
  call lapi_resume_totask(h, t, ierr)
  call row('put_purged', code, LAPI_ERR_TGT_PURGED)
  call lapi_get(dead, t, LSEG, rm, omem, tc, oc, ierr)
  call row('get_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_get(h, nt, LSEG, rm, omem, tc, oc, ierr)
  call row('get_tgt', ierr, LAPI_ERR_TGT)
  call lapi_get(h, t, LSEG, NUL, omem, tc, oc, ierr)
  call row('get_tgt_addr_null', ierr, LAPI_ERR_TGT_ADDR_NULL)
  call lapi_get(h, t, LSEG, rm, LAPI_ADDR_NULL, tc, oc, ierr)
  call row('get_org_addr_null', ierr, LAPI_ERR_ORG_ADDR_NULL)
  call lapi_get(h, t, OVER, rm, omem, tc, oc, ierr)
  call row('get_data_len', ierr, LAPI_ERR_DATA_LEN)
  call lapi_purge_totask(h, t, ierr)
  call lapi_get(h, t, LSEG, rm, omem, tc, oc, code)
  call lapi_resume_totask(h, t, ierr)
  call row('get_purged', code, LAPI_ERR_TGT_PURGED)

  ! ------------------------------------- LAPI_PUTV, LAPI_GETV (to SELF)
  call lapi_putv(dead, self, t_ok, o_ok, tc, oc, cc, ierr)
  call row('putv_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_putv(h, nt, t_ok, o_ok, tc, oc, cc, ierr)
  call row('putv_tgt', ierr, LAPI_ERR_TGT)
  call lapi_putv(h, self, t_ok, LAPI_ADDR_NULL, tc, oc, cc, ierr)
  call row('putv_org_null', ierr, LAPI_ERR_ORG_VEC_NULL)
  call lapi_putv(h, self, LAPI_ADDR_NULL, o_ok, tc, oc, cc, ierr)
  call row('putv_tgt_null', ierr, LAPI_ERR_TGT_VEC_NULL)
  call lapi_putv(h, self, t_ok, o_type, tc, oc, cc, ierr)
  call row('putv_org_type', ierr, LAPI_ERR_ORG_VEC_TYPE)
  call lapi_putv(h, self, t_type, o_ok, tc, oc, cc, ierr)
  call row('putv_tgt_type', ierr, LAPI_ERR_TGT_VEC_TYPE)
  call lapi_putv(h, self, t_gen, o_segnull, tc, oc, cc, ierr)
  call row('putv_org_addr', ierr, LAPI_ERR_ORG_VEC_ADDR)
  call lapi_putv(h, self, t_segnull, o_ok, tc, oc, cc, ierr)
  call row('putv_tgt_addr', ierr, LAPI_ERR_TGT_VEC_ADDR)
  call lapi_putv(h, self, t_gen, o_big, tc, oc, cc, ierr)
  call row('putv_org_len', ierr, LAPI_ERR_ORG_VEC_LEN)
  call lapi_putv(h, self, t_big, o_gen, tc, oc, cc, ierr)
  call row('putv_tgt_len', ierr, LAPI_ERR_TGT_VEC_LEN)
  call lapi_putv(h, self, ts, o_base, tc, oc, cc, ierr)
  call row('putv_org_stride_base', ierr, LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL)
  call lapi_putv(h, self, t_base, os, tc, oc, cc, ierr)
  call row('putv_tgt_stride_base', ierr, LAPI_ERR_STRIDE_TGT_VEC_ADDR_NULL)
  call lapi_putv(h, self, ts, o_stride, tc, oc, cc, ierr)
  call row('putv_org_stride', ierr, LAPI_ERR_ORG_STRIDE)
  call lapi_putv(h, self, t_stride, os, tc, oc, cc, ierr)
  call row('putv_tgt_stride', ierr, LAPI_ERR_TGT_STRIDE)
  call lapi_putv(h, self, ts, o_extent, tc, oc, cc, ierr)
  call row('putv_org_extent', ierr, LAPI_ERR_ORG_EXTENT)
  call lapi_putv(h, self, t_extent, os, tc, oc, cc, ierr)
  call row('putv_tgt_extent', ierr, LAPI_ERR_TGT_EXTENT)
  call lapi_putv(h, self, t_gen, o_ok, tc, oc, cc, ierr)
  call row('putv_type_diff', ierr, LAPI_ERR_VEC_TYPE_DIFF)
  call lapi_putv(h, self, t_3, o_ok, tc, oc, cc, ierr)
  call row('putv_num_diff', ierr, LAPI_ERR_VEC_NUM_DIFF)
  call lapi_putv(h, self, t_diff, o_ok, tc, oc, cc, ierr)
  call row('putv_len_diff', ierr, LAPI_ERR_VEC_LEN_DIFF)
  call lapi_putv(h, self, ts_2, os, tc, oc, cc, ierr)
  call row('putv_strided_num_diff', ierr, LAPI_ERR_VEC_NUM_DIFF)
  call lapi_putv(h, self, t_block, os, tc, oc, cc, ierr)
  call row('putv_strided_block_diff', ierr, LAPI_ERR_VEC_LEN_DIFF)
  call lapi_purge_totask(h, self, ierr)
  call lapi_putv(h, self, t_ok, o_ok, tc, oc, cc, code)
  call lapi_resume_totask(h, self, ierr)
  call row('putv_purged', code, LAPI_ERR_TGT_PURGED)
  call lapi_getv(dead, self, t_ok, o_ok, tc, oc, ierr)
  call row('getv_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_getv(h, nt, t_ok, o_ok, tc, oc, ierr)
  call row('getv_tgt', ierr, LAPI_ERR_TGT)
  call lapi_getv(h, self, t_ok, LAPI_ADDR_NULL, tc, oc, ierr)
  call row('getv_org_null', ierr, LAPI_ERR_ORG_VEC_NULL)
  call lapi_getv(h, self, LAPI_ADDR_NULL, o_ok, tc, oc, ierr)
  call row('getv_tgt_null', ierr, LAPI_ERR_TGT_VEC_NULL)
  call lapi_getv(h, self, t_ok, o_type, tc, oc, ierr)
  call row('getv_org_type', ierr, LAPI_ERR_ORG_VEC_TYPE)
  call lapi_getv(h, self, t_type, o_ok, tc, oc, ierr)
  call row('getv_tgt_type', ierr, LAPI_ERR_TGT_VEC_TYPE)
  call lapi_getv(h, self, t_gen, o_segnull, tc, oc, ierr)
  call row('getv_org_addr', ierr, LAPI_ERR_ORG_VEC_ADDR)
  call lapi_getv(h, self, t_segnull, o_ok, tc, oc, ierr)
  call row('getv_tgt_addr', ierr, LAPI_ERR_TGT_VEC_ADDR)
  call lapi_getv(h, self, ts, o_base, tc, oc, ierr)
  call row('getv_org_stride_base', ierr, LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL)
  call lapi_getv(h, self, t_stride, os, tc, oc, ierr)
  call row('getv_tgt_stride', ierr, LAPI_ERR_TGT_STRIDE)
  call lapi_getv(h, self, t_extent, os, tc, oc, ierr)
  call row('getv_tgt_extent', ierr, LAPI_ERR_TGT_EXTENT)
  call lapi_getv(h, self, t_3, o_ok, tc, oc, ierr)
  call row('getv_num_diff', ierr, LAPI_ERR_VEC_NUM_DIFF)
  call lapi_getv(h, self, t_diff, o_ok, tc, oc, ierr)
  call row('getv_len_diff', ierr, LAPI_ERR_VEC_LEN_DIFF)
  call lapi_getv(h, self, t_gen, o_ok, tc, oc, ierr)
  call row('getv_type_diff', ierr, LAPI_ERR_VEC_TYPE_DIFF)
  call lapi_purge_totask(h, self, ierr)
  call lapi_getv(h, self, t_ok, o_ok, tc, oc, code)
  call lapi_resume_totask(h, self, ierr)
  call row('getv_purged', code, LAPI_ERR_TGT_PURGED)

  ! ------------------------------------------------ LAPI_RMW, LAPI_RMW64
  call lapi_rmw(dead, SWAP, t, rv32, in32, prev32, oc, ierr)
  call row('rmw_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_rmw(h, SWAP, nt, rv32, in32, prev32, oc, ierr)
  call row('rmw_tgt', ierr, LAPI_ERR_TGT)
  call lapi_rmw(h, 4, t, rv32, in32, prev32, oc, ierr)
  call row('rmw_op_4', ierr, LAPI_ERR_RMW_OP)
  call lapi_rmw(h, -1, t, rv32, in32, prev32, oc, ierr)
  call row('rmw_op_neg', ierr, LAPI_ERR_RMW_OP)
  call lapi_rmw(h, SWAP, t, NUL, in32, prev32, oc, ierr)
  call row('rmw_tgt_var_null', ierr, LAPI_ERR_TGT_VAR_NULL)
  call lapi_rmw(h, FETCH_AND_ADD, t, rv32, LAPI_ADDR_NULL, prev32, oc, ierr)
  call row('rmw_in_val_null', ierr, LAPI_ERR_IN_VAL_NULL)
  call lapi_rmw(h, COMPARE_AND_SWAP, t, rv32, LAPI_ADDR_NULL, prev32, oc, &
       ierr)
  call row('rmw_cas_in_val_null', ierr, LAPI_ERR_IN_VAL_NULL)
  call lapi_purge_totask(h, t, ierr)
  call lapi_rmw(h, FETCH_AND_ADD, t, rv32, in32, prev32, oc, code)
  call lapi_resume_totask(h, t, ierr)
  call row('rmw_purged', code, LAPI_ERR_TGT_PURGED)
  call lapi_rmw64(dead, SWAP, t, rv64, in64, prev64, oc, ierr)
  call row('rmw64_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_rmw64(h, SWAP, -1, rv64, in64, prev64, oc, ierr)
  call row('rmw64_tgt', ierr, LAPI_ERR_TGT)
  call lapi_rmw64(h, 7, t, rv64, in64, prev64, oc, ierr)
  call row('rmw64_op', ierr, LAPI_ERR_RMW_OP)
  call lapi_rmw64(h, SWAP, t, NUL, in64, prev64, oc, ierr)
  call row('rmw64_tgt_var_null', ierr, LAPI_ERR_TGT_VAR_NULL)
  call lapi_rmw64(h, FETCH_AND_OR, t, rv64, LAPI_ADDR_NULL, prev64, oc, ierr)
  call row('rmw64_in_val_null', ierr, LAPI_ERR_IN_VAL_NULL)
  call lapi_purge_totask(h, t, ierr)
  call lapi_rmw64(h, SWAP, t, rv64, in64, prev64, oc, code)
  call lapi_resume_totask(h, t, ierr)
  call row('rmw64_purged', code, LAPI_ERR_TGT_PURGED)

  ! ----------------------------------------------------------- counters
  call lapi_setcntr(dead, oc, 5, ierr)
  call row('setcntr_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_setcntr(h, LAPI_ADDR_NULL, 5, ierr)
  call row('setcntr_null', ierr, LAPI_ERR_CNTR_NULL)
  call lapi_getcntr(dead, oc, qout, ierr)
  call row('getcntr_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_getcntr(h, LAPI_ADDR_NULL, qout, ierr)
  call row('getcntr_null', ierr, LAPI_ERR_CNTR_NULL)
  call lapi_waitcntr(dead, oc, 0, qout, ierr)
  call row('waitcntr_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_waitcntr(h, LAPI_ADDR_NULL, 0, qout, ierr)
  call row('waitcntr_null', ierr, LAPI_ERR_CNTR_NULL)
  call lapi_waitcntr(h, oc, -1, qout, ierr)
  call row('waitcntr_val_neg', ierr, LAPI_ERR_CNTR_VAL)
  call lapi_nopoll_wait(h, oc, -2, qout, ierr)
  call row('nopoll_val_neg', ierr, LAPI_ERR_CNTR_VAL)
  call lapi_nopoll_wait(dead, oc, 0, qout, ierr)
  call row('nopoll_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_nopoll_wait(h, LAPI_ADDR_NULL, 0, qout, ierr)
  call row('nopoll_null', ierr, LAPI_ERR_CNTR_NULL)
  allocate(extra(1))
  call lapi_setcntr_wstatus(dead, oc, 0, extra, extra, ierr)
  call row('wstatus_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_setcntr_wstatus(h, LAPI_ADDR_NULL, 0, extra, extra, ierr)
  call row('wstatus_null', ierr, LAPI_ERR_CNTR_NULL)

  ! --------------------------------------------------- LAPI_QENV, SENV
  call lapi_qenv(dead, TASK_ID, qout, ierr)
  call row('qenv_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_qenv(h, LAST_QUERY, qout, ierr)
  call row('qenv_last', ierr, LAPI_ERR_QUERY_TYPE)
  call lapi_qenv(h, -1, qout, ierr)
  call row('qenv_neg', ierr, LAPI_ERR_QUERY_TYPE)
  call lapi_qenv(h, TASK_ID, LAPI_ADDR_NULL, ierr)
  call row('qenv_ret_null', ierr, LAPI_ERR_RET_PTR_NULL)
  call lapi_senv(dead, INTERRUPT_SET, 0, ierr)
  call row('senv_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_senv(h, TASK_ID, 3, ierr)
  call row('senv_task_id', ierr, LAPI_ERR_QUERY_TYPE)
  call lapi_senv(h, MAX_UHDR_SZ, 8, ierr)
  call row('senv_max_uhdr', ierr, LAPI_ERR_QUERY_TYPE)
  call lapi_senv(h, LAST_QUERY, 0, ierr)
  call row('senv_last', ierr, LAPI_ERR_QUERY_TYPE)
  call lapi_senv(h, INTERRUPT_SET, -1, ierr)
  call row('senv_interrupt_val', ierr, LAPI_ERR_SET_VAL)
  call lapi_senv(h, ERROR_CHK, -1, ierr)
  call row('senv_error_chk_val', ierr, LAPI_ERR_SET_VAL)
  call lapi_senv(h, TIMEOUT, -1, ierr)
  call row('senv_timeout_val', ierr, LAPI_ERR_SET_VAL)

  ! ------------------------------- handler table, addresses, messages
  call lapi_addr_set(dead, e_hdr, 2, ierr)
  call row('addr_set_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_addr_set(h, e_hdr, 0, ierr)
  call row('addr_set_zero', ierr, LAPI_ERR_ADDR_HNDL_RANGE)
  call lapi_addr_set(h, e_hdr, -3, ierr)
  call row('addr_set_neg', ierr, LAPI_ERR_ADDR_HNDL_RANGE)
  call lapi_addr_set(h, e_hdr, tbl_sz, ierr)
  call row('addr_set_size', ierr, LAPI_ERR_ADDR_HNDL_RANGE)
  call lapi_addr_set(h, NUL, tbl_sz, ierr)
  call row('addr_set_addr_size', ierr, LAPI_ERR_ADDR_HNDL_RANGE)
  call lapi_addr_get(dead, got, 1, ierr)
  call row('addr_get_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_addr_get(h, got, tbl_sz, ierr)
  call row('addr_get_range', ierr, LAPI_ERR_ADDR_HNDL_RANGE)
  call lapi_addr_get(h, got, 0, ierr)
  call row('addr_get_zero', ierr, LAPI_ERR_ADDR_HNDL_RANGE)
  call lapi_addr_get(h, LAPI_ADDR_NULL, 1, ierr)
  call row('addr_get_null', ierr, LAPI_ERR_RET_PTR_NULL)
  call lapi_address(LAPI_ADDR_NULL, a, ierr)
  call row('address_my_null', ierr, LAPI_ERR_ORG_ADDR_NULL)
  call lapi_address(org, LAPI_ADDR_NULL, ierr)
  call row('address_ret_null', ierr, LAPI_ERR_TGT_ADDR_NULL)
  call lapi_address_init(dead, my, tab, ierr)
  call row('address_init_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_address_init(h, my, LAPI_ADDR_NULL, ierr)
  call row('address_init_tab_null', ierr, LAPI_ERR_ADDR_TBL_NULL)
  call lapi_address_init64(dead, 1_8, tab64, ierr)
  call row('address_init64_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_address_init64(h, 1_8, LAPI_ADDR_NULL, ierr)
  call row('address_init64_tab_null', ierr, LAPI_ERR_ADDR_TBL_NULL)
  call lapi_msg_string(9999, msg, ierr)
  call row('msg_string_unknown', ierr, LAPI_ERR_CODE_UNKNOWN)

  ! -------------------------- Msgpoll, Probe, Fence, Gfence, Purge, Term
  call lapi_msgpoll(dead, 1, minfo, ierr)
  call row('msgpoll_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_msgpoll(h, 1, LAPI_ADDR_NULL, ierr)
  call row('msgpoll_info_null', ierr, LAPI_ERR_MSG_INFO_NULL)
  call lapi_probe(dead, ierr)
  call row('probe_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_fence(dead, ierr)
  call row('fence_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_gfence(dead, ierr)
  call row('gfence_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_purge_totask(dead, t, ierr)
  call row('purge_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_purge_totask(h, nt, ierr)
  call row('purge_tgt', ierr, LAPI_ERR_TGT)
  call lapi_resume_totask(dead, t, ierr)
  call row('resume_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call lapi_resume_totask(h, -1, ierr)
  call row('resume_tgt', ierr, LAPI_ERR_TGT)
  call lapi_term(dead, ierr)
  call row('term_hndl', ierr, LAPI_ERR_HNDL_INVALID)

  ! ---------------------------------------------------------- LAPI_XFER
  call x_am()
  call lapi_xfer(dead, xam, ierr)
  call row('xfer_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  call x_am()
  xam%xfer_type = LAPI_DGSP_XFER
  call lapi_xfer(h, xam, ierr)
  call row('xfer_dgsp', ierr, LAPI_ERR_XFER_CMD)
  xam%xfer_type = LAPI_RDMA_XFER
  call lapi_xfer(h, xam, ierr)
  call row('xfer_rdma', ierr, LAPI_ERR_XFER_CMD)
  xam%xfer_type = LAPI_LAST_XFER
  call lapi_xfer(h, xam, ierr)
  call row('xfer_last', ierr, LAPI_ERR_XFER_CMD)
  call lapi_xfer(h, LAPI_ADDR_NULL, ierr)
  call row('xfer_null', ierr, LAPI_ERR_XFER_CMD)
  call x_am()
  xam%tgt = nt
  call lapi_xfer(h, xam, ierr)
  call row('xfer_am_tgt', ierr, LAPI_ERR_TGT)
  call x_am()
  xam%hdr_hdl = 0
  call lapi_xfer(h, xam, ierr)
  call row('xfer_am_hdr_null', ierr, LAPI_ERR_HDR_HNDLR_NULL)
  call x_am()
  xam%uhdr_len = 6
  call lapi_xfer(h, xam, ierr)
  call row('xfer_am_uhdr_len', ierr, LAPI_ERR_UHDR_LEN)
  call x_am()
  xam%uhdr_len = fmax + 4
  call lapi_xfer(h, xam, ierr)
  call row('xfer_am_uhdr_len_fortran_max', ierr, LAPI_ERR_UHDR_LEN)
  call x_am()
  xam%udata = 0
  call lapi_xfer(h, xam, ierr)
  call row('xfer_am_udata_null', ierr, LAPI_ERR_ORG_ADDR_NULL)
  xamv = LAPI_AMV_T()
  xamv%tgt = t
  xamv%hdr_hdl = IDX_VHDR
  call lapi_address(uh, xamv%uhdr, ierr)
  xamv%uhdr_len = 4
  xamv%tgt_cntr = tc
  call lapi_address(oc, xamv%org_cntr, ierr)
  call lapi_xfer(h, xamv, ierr)
  call row('xfer_amv_vec_null', ierr, LAPI_ERR_ORG_VEC_NULL)
  call lapi_address(o_stride, xamv%org_vec, ierr)
  call lapi_xfer(h, xamv, ierr)
  call row('xfer_amv_stride', ierr, LAPI_ERR_ORG_STRIDE)
  xput = LAPI_PUT_T()
  xput%tgt = t
  call lapi_address(org, xput%org_addr, ierr)
  xput%len = LSEG
  xput%tgt_cntr = tc
  call lapi_address(oc, xput%org_cntr, ierr)
  call lapi_xfer(h, xput, ierr)
  call row('xfer_put_tgt_addr', ierr, LAPI_ERR_TGT_ADDR_NULL)
  xget = LAPI_GET_T()
  xget%tgt = t
  xget%tgt_addr = rm
  xget%len = LSEG
  call lapi_address(oc, xget%org_cntr, ierr)
  call lapi_xfer(h, xget, ierr)
  call row('xfer_get_org_addr', ierr, LAPI_ERR_ORG_ADDR_NULL)
  xputv = LAPI_PUTV_T()
  xputv%tgt = self
  call lapi_address(o_ok, xputv%org_vec, ierr)
  call lapi_address(oc, xputv%org_cntr, ierr)
  call lapi_xfer(h, xputv, ierr)
  call row('xfer_putv_tgt_vec', ierr, LAPI_ERR_TGT_VEC_NULL)
  xgetv = LAPI_GETV_T()
  xgetv%tgt = self
  call lapi_address(o_ok, xgetv%org_vec, ierr)
  call lapi_address(t_diff, xgetv%tgt_vec, ierr)
  call lapi_address(oc, xgetv%org_cntr, ierr)
  call lapi_xfer(h, xgetv, ierr)
  call row('xfer_getv_len_diff', ierr, LAPI_ERR_VEC_LEN_DIFF)
  call x_rmw()
  xrmw%size = 16
  call lapi_xfer(h, xrmw, ierr)
  call row('xfer_rmw_size', ierr, LAPI_ERR_OP_SZ)
  call x_rmw()
  xrmw%op = 9
  call lapi_xfer(h, xrmw, ierr)
  call row('xfer_rmw_op', ierr, LAPI_ERR_RMW_OP)
  call x_rmw()
  xrmw%tgt_var = 0
  call lapi_xfer(h, xrmw, ierr)
  call row('xfer_rmw_var_null', ierr, LAPI_ERR_TGT_VAR_NULL)
  call x_rmw()
  xrmw%in_val = 0
  call lapi_xfer(h, xrmw, ierr)
  call row('xfer_rmw_in_null', ierr, LAPI_ERR_IN_VAL_NULL)

  ! ---------------------------------------------- LAPI_UTIL, LAPI_INIT
  tf = LAPI_THREAD_FUNC_T()
  call lapi_util(dead, tf, ierr)
  call row('util_hndl', ierr, LAPI_ERR_HNDL_INVALID)
  tf%util_type = LAPI_REGISTER_DGSP
  call lapi_util(h, tf, ierr)
  call row('util_dgsp', ierr, LAPI_ERR_UTIL_CMD)
  tf%util_type = LAPI_LAST_UTIL
  call lapi_util(h, tf, ierr)
  call row('util_last', ierr, LAPI_ERR_UTIL_CMD)
  call lapi_util(h, LAPI_ADDR_NULL, ierr)
  call row('util_null', ierr, LAPI_ERR_UTIL_CMD)
  nh = 77
  call lapi_init(nh, LAPI_ADDR_NULL, ierr)
  call row('init_info_null', ierr, LAPI_ERR_INFO_NULL)
  info = LAPI_INFO_T()
  info%info6 = 5
  call lapi_init(nh, info, ierr)
  call row('init_info_nonzero', ierr, LAPI_ERR_INFO_NONZERO)

  ! ------------------------------------------- every listed code is here
  do i = 1, size(LISTED)
    if (.not. listed_seen(LISTED(i))) then
      write (*, '(a,i0)') 'test_errors: no row for code ', LISTED(i)
      failed = failed + 1
    end if
  end do

  ! ------------------------------- the handle still works after all that
  call lapi_gfence(h, ierr)
  call lapi_amsend(h, t, IDX_HDR, uh, 4, org, LSEG, tc, oc, cc, ierr)
  call lapi_waitcntr(h, cc, 1, cur, ierr)
  call lapi_waitcntr(h, recv_cntr, 1, cur, ierr)
  if (ierr /= LAPI_SUCCESS .or. any(tmem(1:SEG) /= org(1:SEG)) .or. &
       hdr_runs /= 1 .or. cmpl_runs /= 1 .or. err_runs /= 0) then
    write (*, '(a)') 'test_errors: a valid LAPI_AMSEND failed afterwards'
    failed = failed + 1
  else
    passed = passed + 1
  end if
  call lapi_gfence(h, ierr)
  call lapi_term(h, ierr)
  if (ierr /= LAPI_SUCCESS) failed = failed + 1
  deallocate(all, extra)

  write (*, '(a,i0,a,i0,a,i0,a)') 'test_errors: task ', self, ': ', &
       passed, ' passed, ', failed, ' failed'
  if (failed /= 0) stop 1

contains

  subroutine build_vectors()
    integer(LAPI_LONG_TYPE), parameter :: HUGE_LEN = LAPI_MAX_MSG_SZ
    call addr(org(1), oi_ok(1))
    call addr(org(SEG + 1), oi_ok(2))
    ol_ok = SEG
    call vec(o_ok, LAPI_GEN_IOVECTOR, 2, oi_ok, ol_ok)
    call vec(o_gen, LAPI_GEN_GENERIC, 2, oi_ok, ol_ok)
    call addr(tmem(1), ti_ok(1))
    call addr(tmem(SEG + 1), ti_ok(2))
    call vec(t_ok, LAPI_GEN_IOVECTOR, 2, ti_ok, ol_ok)
    call addr(tmem(1), ti_3(1))
    call addr(tmem(SEG + 1), ti_3(2))
    call addr(tmem(2 * SEG + 1), ti_3(3))
    tl_3 = SEG
    call vec(t_3, LAPI_GEN_IOVECTOR, 3, ti_3, tl_3)
    tl_diff = [LSEG, LSEG - 1]
    call vec(t_diff, LAPI_GEN_IOVECTOR, 2, ti_ok, tl_diff)
    call vec(t_gen, LAPI_GEN_GENERIC, 2, ti_ok, ol_ok)
    call vec(o_type, 3, 2, oi_ok, ol_ok)
    call vec(t_type, 3, 2, ti_ok, ol_ok)
    call vec(o_type_neg, -1, 2, oi_ok, ol_ok)
    oi_segnull = [oi_ok(1), NUL]
    call vec(o_segnull, LAPI_GEN_GENERIC, 2, oi_segnull, ol_ok)
    ti_segnull = [NUL, ti_ok(1)]
    call vec(t_segnull, LAPI_GEN_IOVECTOR, 2, ti_segnull, ol_ok)
    ! lengths adding up past LAPI_MAX_MSG_SZ (refused before any read)
    oi_big = oi_ok(1)
    ol_big = [HUGE_LEN, 1_LAPI_LONG_TYPE]
    call vec(o_big, LAPI_GEN_GENERIC, 2, oi_big, ol_big)
    ti_big = ti_ok(1)
    call vec(t_big, LAPI_GEN_GENERIC, 2, ti_big, ol_big)
    call vec(o_noinfo, LAPI_GEN_IOVECTOR, 2, oi_ok, ol_ok)
    o_noinfo%info = LAPI_ADDR_NULL
    ! strided: 3 blocks of 5 bytes at pitch 8
    call stride(os_ok, oi_ok(1), 5, 8_LAPI_ADDR_TYPE)
    call vec(os, LAPI_GEN_STRIDED_XFER, 3, os_ok)
    call stride(ts_ok, ti_ok(1), 5, 8_LAPI_ADDR_TYPE)
    call vec(ts, LAPI_GEN_STRIDED_XFER, 3, ts_ok)
    call vec(ts_2, LAPI_GEN_STRIDED_XFER, 2, ts_ok)
    call stride(ts_block, ti_ok(1), 4, 8_LAPI_ADDR_TYPE)
    call vec(t_block, LAPI_GEN_STRIDED_XFER, 3, ts_block)
    call stride(os_base, NUL, 5, 8_LAPI_ADDR_TYPE)
    call vec(o_base, LAPI_GEN_STRIDED_XFER, 3, os_base)
    call stride(ts_base, NUL, 5, 8_LAPI_ADDR_TYPE)
    call vec(t_base, LAPI_GEN_STRIDED_XFER, 3, ts_base)
    call stride(os_stride, oi_ok(1), 5, 4_LAPI_ADDR_TYPE)
    call vec(o_stride, LAPI_GEN_STRIDED_XFER, 3, os_stride)
    call stride(ts_stride, ti_ok(1), 5, 4_LAPI_ADDR_TYPE)
    call vec(t_stride, LAPI_GEN_STRIDED_XFER, 3, ts_stride)
    ! 4 blocks of 1 byte, 2**62 apart: the extent passes LAPI_MAX_MSG_SZ
    call stride(os_extent, oi_ok(1), 1, 2_LAPI_ADDR_TYPE**62)
    call vec(o_extent, LAPI_GEN_STRIDED_XFER, 4, os_extent)
    call stride(ts_extent, ti_ok(1), 1, 2_LAPI_ADDR_TYPE**62)
    call vec(t_extent, LAPI_GEN_STRIDED_XFER, 4, ts_extent)
  end subroutine build_vectors

  subroutine addr(byte, out)
    integer(1) :: byte
    integer(LAPI_ADDR_TYPE) :: out
    integer :: ie
    call lapi_address(byte, out, ie)
  end subroutine addr

  subroutine vec(v, vtype, n, info_arr, len_arr)
    type(LAPI_VEC_T) :: v
    integer, intent(in) :: vtype, n
    integer(LAPI_ADDR_TYPE) :: info_arr(*)
    integer(LAPI_LONG_TYPE), optional :: len_arr(*)
    integer :: ie
    v%vec_type = vtype
    v%num_vecs = n
    call lapi_address(info_arr, v%info, ie)
    v%len = LAPI_ADDR_NULL
    if (present(len_arr)) call lapi_address(len_arr, v%len, ie)
  end subroutine vec

  subroutine stride(info_arr, base, block, pitch)
    integer(LAPI_ADDR_TYPE) :: info_arr(3), base, pitch
    integer, intent(in) :: block
    info_arr = [base, int(block, LAPI_ADDR_TYPE), pitch]
  end subroutine stride

  ! An AM command that is valid but for what the row changes.
  subroutine x_am()
    xam = LAPI_AM_T()
    xam%tgt = t
    xam%hdr_hdl = IDX_HDR
    call lapi_address(uh, xam%uhdr, ierr)
    xam%uhdr_len = 4
    call lapi_address(org, xam%udata, ierr)
    xam%udata_len = LSEG
    xam%tgt_cntr = tc
    call lapi_address(oc, xam%org_cntr, ierr)
    call lapi_address(cc, xam%cmpl_cntr, ierr)
  end subroutine x_am

  subroutine x_rmw()
    xrmw = LAPI_RMW_T()
    xrmw%op = FETCH_AND_ADD
    xrmw%tgt = t
    xrmw%size = 32
    xrmw%tgt_var = rv32
    call lapi_address(in32, xrmw%in_val, ierr)
    call lapi_address(prev32, xrmw%prev_tgt_val, ierr)
    call lapi_address(oc, xrmw%org_cntr, ierr)
  end subroutine x_rmw

  ! Record a row: the code, and that nothing happened.
  subroutine row(name, got_code, want)
    character(len=*), intent(in) :: name
    integer, intent(in) :: got_code, want
    character(len=64) :: why
    if (want >= LAPI_ERR_FIRSTCODE .and. want <= LAPI_ERR_LASTCODE) &
         listed_seen(want) = .true.
    call what_changed(why)
    if (got_code == want .and. why == ' ') then
      passed = passed + 1
      return
    end if
    failed = failed + 1
    write (*, '(a,a,a,i0,a,i0,a,a)') 'test_errors: ', name, ': got ', &
         got_code, ', expected ', want, '; changed: ', trim(why)
    call restore()
  end subroutine row

  subroutine what_changed(why)
    character(len=*), intent(out) :: why
    integer :: v, ie, k, c1, c2, c3
    call lapi_fence(h, ie)
    why = ' '
    do k = 1, 4 * SEG
      if (org(k) /= int(mod(7 * k + 3, 127), 1)) why = 'origin data'
      if (tmem(k) /= -91) why = 'target memory'
      if (omem(k) /= -91) why = 'get destination'
    end do
    do k = 1, size(uh)
      if (uh(k) /= 321 + 5 * k) why = 'uhdr'
    end do
    do k = 1, size(vec_copy)
      if (vec_copy(k)%vec_type /= vec_type_of(k) ) why = 'a vector'
    end do
    if (any(in32 /= [1000, 2000]) .or. any(in64 /= [1000, 2000])) &
         why = 'in_val'
    if (prev32 /= -3 .or. prev64 /= -3) why = 'prev_tgt_val'
    if (var32 /= 17 .or. var64 /= 17) why = 'the RMW variable'
    call lapi_getcntr(h, recv_cntr, c1, ie)
    call lapi_getcntr(h, oc, c2, ie)
    call lapi_getcntr(h, cc, c3, ie)
    if (c1 /= 0 .or. c2 /= 0 .or. c3 /= 0) why = 'a counter'
    if (hdr_runs /= 0 .or. cmpl_runs /= 0) why = 'a handler ran'
    if (err_runs /= 0) why = 'the error handler ran'
    call lapi_qenv(h, ERROR_CHK, v, ie)
    if (v /= chk) why = 'ERROR_CHK'
    call lapi_qenv(h, INTERRUPT_SET, v, ie)
    if (v /= intr) why = 'INTERRUPT_SET'
    call lapi_qenv(h, TIMEOUT, v, ie)
    if (v /= tmo) why = 'TIMEOUT'
    call lapi_addr_get(h, got, int(IDX_HDR), ie)
    call lapi_address(e_hdr, a, ie)
    if (got /= a) why = 'the handler table'
  end subroutine what_changed

  integer function vec_type_of(k)
    integer, intent(in) :: k
    type(LAPI_VEC_T) :: now(24)
    now = [o_ok, o_gen, t_ok, t_3, t_diff, t_gen, o_type, t_type, &
         o_type_neg, o_segnull, t_segnull, o_big, t_big, o_noinfo, os, ts, &
         ts_2, t_block, o_base, t_base, o_stride, t_stride, o_extent, &
         t_extent]
    vec_type_of = now(k)%vec_type
    if (now(k)%num_vecs /= vec_copy(k)%num_vecs .or. &
         now(k)%info /= vec_copy(k)%info .or. &
         now(k)%len /= vec_copy(k)%len) vec_type_of = -99
  end function vec_type_of

  ! Put everything back so later rows are judged on their own.
  subroutine restore()
    integer :: k, ie
    do k = 1, 4 * SEG
      org(k) = int(mod(7 * k + 3, 127), 1)
    end do
    tmem = -91
    omem = -91
    do k = 1, size(uh)
      uh(k) = 321 + 5 * k
    end do
    in32 = [1000, 2000]
    in64 = [1000, 2000]
    prev32 = -3
    prev64 = -3
    var32 = 17
    var64 = 17
    call lapi_setcntr(h, recv_cntr, 0, ie)
    call lapi_setcntr(h, oc, 0, ie)
    call lapi_setcntr(h, cc, 0, ie)
    hdr_runs = 0
    cmpl_runs = 0
    err_runs = 0
    call lapi_senv(h, ERROR_CHK, chk, ie)
    call lapi_senv(h, INTERRUPT_SET, intr, ie)
    call lapi_senv(h, TIMEOUT, tmo, ie)
    call lapi_addr_set(h, e_hdr, int(IDX_HDR), ie)
  end subroutine restore
end program test_errors
