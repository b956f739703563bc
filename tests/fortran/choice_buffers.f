! choice_buffers.f - one program unit passes buffers of many types,
! kinds and ranks (scalars, arrays, elements, derived types) to the
! same LAPI calls.  With INCLUDE 'lapif.h' this must compile with -Wall
! -Werror and without -fallow-argument-mismatch (ctest
! fortran_choice_buffers; compiled, not run).  Without lapif.h's
! interfaces gfortran 12 refuses it.
      SUBROUTINE MIXED(H, T, TA, TC)
      IMPLICIT NONE
      INCLUDE 'lapif.h'
      INTEGER H, T, IERR
      INTEGER(KIND=LAPI_ADDR_TYPE) TA, TC, A
      INTEGER(KIND=LAPI_LONG_TYPE) L
      TYPE(LAPI_CNTR_T) OC, CC
      TYPE(LAPI_VEC_T) V
      INTEGER I4(10), I4S
      INTEGER(KIND=8) I8(3, 4)
      REAL R4(5)
      DOUBLE PRECISION D2(4, 4)
      COMPLEX Z(2)
      CHARACTER*16 S
      LOGICAL LG(3)
      COMMON /BUFS/ I8, D2, Z, I4, I4S, R4, S, LG
      L = 8
      CALL LAPI_PUT(H, T, L, TA, I4, TC, OC, CC, IERR)
      CALL LAPI_PUT(H, T, L, TA, I4S, TC, OC, CC, IERR)
      CALL LAPI_PUT(H, T, L, TA, I8, TC, OC, CC, IERR)
      CALL LAPI_PUT(H, T, L, TA, I8(2, 3), TC, OC, CC, IERR)
      CALL LAPI_PUT(H, T, L, TA, R4, TC, OC, CC, IERR)
      CALL LAPI_PUT(H, T, L, TA, D2, TC, LAPI_ADDR_NULL, CC, IERR)
      CALL LAPI_PUT(H, T, L, TA, D2(1, 3), TC, OC, CC, IERR)
      CALL LAPI_PUT(H, T, L, TA, Z, TC, OC, CC, IERR)
      CALL LAPI_PUT(H, T, L, TA, S, TC, OC, CC, IERR)
      CALL LAPI_PUT(H, T, L, TA, LG, TC, OC, CC, IERR)
      CALL LAPI_GET(H, T, L, TA, D2, TC, OC, IERR)
      CALL LAPI_GET(H, T, L, TA, S, TC, OC, IERR)
      CALL LAPI_GET(H, T, L, TA, I4S, TC, OC, IERR)
      CALL LAPI_AMSEND(H, T, 1_LAPI_ADDR_TYPE, I4, 4, D2, L, TC,
     &                 OC, CC, IERR)
      CALL LAPI_AMSEND(H, T, 1_LAPI_ADDR_TYPE, S, 16, Z, L, TC,
     &                 OC, CC, IERR)
      CALL LAPI_AMSENDV(H, T, 2_LAPI_ADDR_TYPE, R4, 4, V, TC,
     &                  OC, CC, IERR)
      CALL LAPI_ADDRESS(I4, A, IERR)
      CALL LAPI_ADDRESS(D2, A, IERR)
      CALL LAPI_ADDRESS(S, A, IERR)
      CALL LAPI_ADDRESS(OC, A, IERR)
      CALL LAPI_ADDRESS(V, A, IERR)
      CALL LAPI_QENV(H, TASK_ID, I4S, IERR)
      CALL LAPI_QENV(H, QUERY_SHM_TASKS, I4, IERR)
      CALL LAPI_RMW(H, SWAP, T, TA, I4, I4S, OC, IERR)
      CALL LAPI_RMW64(H, SWAP, T, TA, I8, I8(1, 1), OC, IERR)
      END
