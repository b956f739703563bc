! put_get.f - LAPI_PUT, LAPI_GET and LAPI_RMW from fixed-form Fortran.
!
! Every task puts an array into the next task's WIN (whose address it
! learned with LAPI_ADDRESS_INIT), gets back what it put there, and adds
! (ME+1) to task 0's TOTAL with FETCH_AND_ADD.  Memory LAPI writes
! after a call has returned must not be a plain local the compiler may
! keep in registers: the windows live in COMMON, as in classic LAPI
! programs, and the other buffers are ASYNCHRONOUS.
!
! Run:  ./build/examples/fortran_put_get
!       lapirun -n 2 ./build/examples/fortran_put_get
! Prints PASS or FAIL per task; exits with 1 on FAIL.
      PROGRAM PUTGET
      IMPLICIT NONE
      INCLUDE 'lapif.h'
      INTEGER N
      PARAMETER (N = 16)
      DOUBLE PRECISION WIN(N), SRC(N), BACK(N)
      INTEGER TOTAL
      COMMON /WINDOW/ WIN, TOTAL
      TYPE(LAPI_INFO_T) INFO
      TYPE(LAPI_CNTR_T) TCNTR, OCNTR, CCNTR
      INTEGER(KIND=LAPI_ADDR_TYPE) MYADDR
      INTEGER(KIND=LAPI_ADDR_TYPE), ALLOCATABLE :: WINS(:), TOTS(:)
      INTEGER(KIND=LAPI_ADDR_TYPE), ALLOCATABLE :: CNTS(:)
      INTEGER(KIND=LAPI_LONG_TYPE) NBYTES
      INTEGER HNDL, IERR, ME, NT, PEER, FROM, I, CUR, INC, PREV
      LOGICAL OK
! LAPI writes BACK and PREV after LAPI_GET / LAPI_RMW have returned:
! ASYNCHRONOUS makes the compiler read them again after the wait.
      ASYNCHRONOUS BACK, PREV

      CALL LAPI_INIT(HNDL, INFO, IERR)
      CALL CHECK(IERR, 'LAPI_INIT')
      CALL LAPI_QENV(HNDL, TASK_ID, ME, IERR)
      CALL LAPI_QENV(HNDL, NUM_TASKS, NT, IERR)
      PEER = MOD(ME + 1, NT)
      FROM = MOD(ME + NT - 1, NT)
      CALL LAPI_SETCNTR(HNDL, TCNTR, 0, IERR)
      CALL LAPI_SETCNTR(HNDL, OCNTR, 0, IERR)
      CALL LAPI_SETCNTR(HNDL, CCNTR, 0, IERR)
      DO I = 1, N
        WIN(I) = -1D0
        SRC(I) = 100 * ME + I
        BACK(I) = 0D0
      END DO
      TOTAL = 0

! Every task's WIN, TOTAL and TCNTR addresses (collective calls).
      ALLOCATE(WINS(0:NT-1), TOTS(0:NT-1), CNTS(0:NT-1))
      CALL LAPI_ADDRESS(WIN, MYADDR, IERR)
      CALL LAPI_ADDRESS_INIT(HNDL, MYADDR, WINS, IERR)
      CALL LAPI_ADDRESS(TOTAL, MYADDR, IERR)
      CALL LAPI_ADDRESS_INIT(HNDL, MYADDR, TOTS, IERR)
      CALL LAPI_ADDRESS(TCNTR, MYADDR, IERR)
      CALL LAPI_ADDRESS_INIT(HNDL, MYADDR, CNTS, IERR)
      CALL CHECK(IERR, 'LAPI_ADDRESS_INIT')

! Put SRC into the next task's WIN; its TCNTR counts the arrival.
      NBYTES = 8 * N
      CALL LAPI_PUT(HNDL, PEER, NBYTES, WINS(PEER), SRC, CNTS(PEER),
     &              OCNTR, CCNTR, IERR)
      CALL CHECK(IERR, 'LAPI_PUT')
      CALL LAPI_WAITCNTR(HNDL, OCNTR, 1, CUR, IERR)
      CALL LAPI_WAITCNTR(HNDL, CCNTR, 1, CUR, IERR)
      CALL LAPI_WAITCNTR(HNDL, TCNTR, 1, CUR, IERR)
      OK = .TRUE.
      DO I = 1, N
        OK = OK .AND. NINT(WIN(I)) .EQ. 100 * FROM + I
      END DO

! Everyone's put has landed: get back what we put into the next task.
      CALL LAPI_GFENCE(HNDL, IERR)
      CALL LAPI_GET(HNDL, PEER, NBYTES, WINS(PEER), BACK,
     &              LAPI_ADDR_NULL, OCNTR, IERR)
      CALL CHECK(IERR, 'LAPI_GET')
      CALL LAPI_WAITCNTR(HNDL, OCNTR, 1, CUR, IERR)
      DO I = 1, N
        OK = OK .AND. NINT(BACK(I)) .EQ. 100 * ME + I
      END DO

! TOTAL of task 0 becomes 1 + 2 + ... + NT.
      INC = ME + 1
      CALL LAPI_RMW(HNDL, FETCH_AND_ADD, 0, TOTS(0), INC, PREV,
     &              OCNTR, IERR)
      CALL CHECK(IERR, 'LAPI_RMW')
      CALL LAPI_WAITCNTR(HNDL, OCNTR, 1, CUR, IERR)
      OK = OK .AND. PREV .GE. 0 .AND. PREV .LT. NT * (NT + 1) / 2
      CALL LAPI_GFENCE(HNDL, IERR)
      IF (ME .EQ. 0) OK = OK .AND. TOTAL .EQ. NT * (NT + 1) / 2

      CALL LAPI_GFENCE(HNDL, IERR)
      CALL LAPI_TERM(HNDL, IERR)
      DEALLOCATE(WINS, TOTS, CNTS)
      CALL CHECK(IERR, 'LAPI_TERM')
      IF (OK) THEN
        WRITE (*, '(A,I0,A)') 'put_get: task ', ME, ': PASS'
      ELSE
        WRITE (*, '(A,I0,A)') 'put_get: task ', ME, ': FAIL'
        STOP 1
      END IF
      END

! Stop with the text of a LAPI error code.
      SUBROUTINE CHECK(CODE, WHAT)
      IMPLICIT NONE
      INCLUDE 'lapif.h'
      INTEGER CODE, IE
      CHARACTER*(*) WHAT
      CHARACTER*(LAPI_MAX_ERR_STRING) MSG
      IF (CODE .EQ. LAPI_SUCCESS) RETURN
      CALL LAPI_MSG_STRING(CODE, MSG, IE)
      WRITE (*, '(A,A,A,A)') 'put_get: FAIL: ', WHAT, ': ', TRIM(MSG)
      STOP 1
      END
