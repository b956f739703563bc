/*
 * lapi.h - the LAPI (Low-level Application Programming Interface) C API.
 *
 * openlapi implements IBM's LAPI active-message and one-sided library on
 * Linux.  Every type, constant and prototype keeps the name and numeric value
 * of the AIX/RSCT library, so a program written for AIX LAPI compiles against
 * this header unchanged and runs as one task per process (or per emulated
 * compute core), between nodes over libfabric.
 *
 * The header compiles as C99, C11 and C++, with or without _GNU_SOURCE.
 * Clients use the BSD names `uint` and `ulong`; glibc's <sys/types.h> hides
 * them in strict ISO modes, and then this header declares them itself (see
 * below).  Every function returns LAPI_SUCCESS (0) or one of the LAPI_ERR_*
 * codes; LAPI_Msg_string turns a code into a sentence.  Every LAPI_X also
 * exists as PLAPI_X, the profiling entry point a tool calls after
 * intercepting LAPI_X.
 *
 * Implementation notes that differ from AIX (layout only, not meaning):
 * lapi_cntr_t is a small struct of our own, and the DGSP/RDMA members of
 * lapi_xfer_t and lapi_util_t are declared for source compatibility but
 * answer LAPI_ERR_XFER_CMD / LAPI_ERR_UTIL_CMD.
 */
#ifndef OPENLAPI_LAPI_H
#define OPENLAPI_LAPI_H

#include <limits.h>
#include <pthread.h>
#include <sys/types.h>

/** Defined by openlapi's lapi.h, so a client can tell it from IBM's. */
#define OPENLAPI_LAPI 1

/*
 * uint and ulong.  glibc's <sys/types.h> (included above, so its choice is
 * final) declares them only when __USE_MISC is on: _DEFAULT_SOURCE,
 * _GNU_SOURCE, _BSD_SOURCE or no strict -std option.  When it did not, they
 * are declared here with exactly glibc's types, so nothing can conflict
 * later.  Other C libraries: macOS and the BSDs have their own visibility
 * macros; musl declares them under _GNU_SOURCE/_BSD_SOURCE; elsewhere C11
 * and C++ allow a typedef to be repeated, so they are declared anyway.  A
 * program that declares its own uint/ulong before this header defines
 * LAPI_HAVE_UINT_ULONG; a macro named uint or ulong is left alone.
 */
#if !defined(LAPI_HAVE_UINT_ULONG)
#if defined(__GLIBC__)
#if !defined(__USE_MISC)
#define LAPI_DECLARE_UINT_ULONG_ 1
#endif
#elif defined(__APPLE__)
#if defined(_POSIX_C_SOURCE) && !defined(_DARWIN_C_SOURCE)
#define LAPI_DECLARE_UINT_ULONG_ 1
#endif
#elif defined(__BSD_VISIBLE)
#if !__BSD_VISIBLE
#define LAPI_DECLARE_UINT_ULONG_ 1
#endif
#elif defined(__cplusplus) || \
    (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L)
#define LAPI_DECLARE_UINT_ULONG_ 1
#elif !defined(_GNU_SOURCE) && !defined(_BSD_SOURCE) && \
    !defined(_DEFAULT_SOURCE)
#define LAPI_DECLARE_UINT_ULONG_ 1
#endif
#endif
#ifdef LAPI_DECLARE_UINT_ULONG_
#ifndef uint
typedef unsigned int uint;   /**< BSD name used throughout the LAPI API. */
#endif
#ifndef ulong
typedef unsigned long ulong; /**< BSD name used throughout the LAPI API. */
#endif
#undef LAPI_DECLARE_UINT_ULONG_
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ========================================================== return codes */

/* One line each here; LAPI_Msg_string returns the full explanation. */

#define LAPI_SUCCESS                 (0)   /**< The call succeeded. */
#define LAPI_ERR_UNKNOWN             (400) /**< Internal/communication error. */
#define LAPI_ERR_ALL_HNDL_IN_USE     (401) /**< All LAPI instances in use. */
#define LAPI_ERR_BOTH_NETSTR_SET     (402) /**< Both network statements set. */
#define LAPI_ERR_CKPT_LOAD_FAILED    (403) /**< Checkpoint support missing. */
#define LAPI_ERR_CSS_LOAD_FAILED     (404) /**< User-space library missing. */
#define LAPI_ERR_INFO_NULL           (405) /**< lapi_info pointer is NULL. */
#define LAPI_ERR_MSG_API             (406) /**< MP_MSG_API setting is wrong. */
#define LAPI_ERR_NO_NETSTR_SET       (407) /**< No network statement is set. */
#define LAPI_ERR_NO_UDP_HNDLR        (408) /**< UDP handler is NULL. */
#define LAPI_ERR_HDR_HNDLR_NULL      (409) /**< Header handler is NULL. */
#define LAPI_ERR_PSS_NON_ROOT        (410) /**< PSS needs root. */
#define LAPI_WARN_PARM_NULL          (411) /**< Warning: NULL address. */
#define LAPI_ERR_PARM_NULL           (411) /**< Other spelling of 411. */
#define LAPI_ERR_SHM_KE_NOT_LOADED   (412) /**< Shm kernel ext. missing. */
#define LAPI_ERR_TIMEOUT             (413) /**< Communication timeout. */
#define LAPI_ERR_REG_TIMER           (414) /**< Timer re-registration failed. */
#define LAPI_ERR_UDP_PKT_SZ          (415) /**< UDP packet size out of range. */
#define LAPI_ERR_USER_UDP_HNDLR_FAIL (416) /**< User UDP handler failed. */
#define LAPI_ERR_HNDL_INVALID        (417) /**< Handle not valid. */
#define LAPI_ERR_RET_PTR_NULL        (418) /**< Pointer for a result is NULL. */
#define LAPI_ERR_ADDR_HNDL_RANGE     (419) /**< Addr_set index bad. */
#define LAPI_ERR_ADDR_TBL_NULL       (420) /**< Address table is NULL. */
#define LAPI_ERR_TGT_PURGED          (421) /**< Target task purged. */
#define LAPI_ERR_MULTIPLE_WAITERS    (422) /**< Waiters on one counter. */
#define LAPI_ERR_MEMORY_EXHAUSTED    (423) /**< Out of memory. */
#define LAPI_ERR_INFO_NONZERO        (424) /**< lapi_info_t not zeroed. */
#define LAPI_ERR_ORG_ADDR_NULL       (425) /**< Origin address NULL. */
#define LAPI_ERR_TGT_ADDR_NULL       (426) /**< Target address NULL. */
#define LAPI_ERR_DATA_LEN            (427) /**< Data length too large. */
#define LAPI_ERR_TGT                 (428) /**< Target task out of range. */
#define LAPI_ERR_UHDR_NULL           (429) /**< uhdr NULL but uhdr_len != 0. */
#define LAPI_ERR_UHDR_LEN            (430) /**< uhdr_len not valid. */
#define LAPI_ERR_HDR_LEN             (431) /**< uhdr_len not aligned. */
#define LAPI_ERR_ORG_EXTENT          (432) /**< Origin extent too large. */
#define LAPI_ERR_ORG_STRIDE          (433) /**< Origin stride < block size. */
#define LAPI_ERR_NO_CONNECTIVITY     (434) /**< No connectivity to the task. */
#define LAPI_ERR_ADAPTERS_DOWN       (435) /**< All adapters are down. */
#define LAPI_ERR_RECV_INCOMP         (436) /**< A receive did not complete. */
#define LAPI_ERR_SEND_INCOMP         (437) /**< A send did not complete. */
#define LAPI_ERR_SEND_TIMEOUT        (438) /**< A send timed out. */
#define LAPI_ERR_SHM_SETUP           (439) /**< Shared-memory setup failed. */
#define LAPI_ERR_ORG_VEC_ADDR        (440) /**< Origin info[i] NULL. */
#define LAPI_ERR_ORG_VEC_LEN         (441) /**< Origin vector too long. */
#define LAPI_ERR_ORG_VEC_NULL        (442) /**< Origin vector is NULL. */
#define LAPI_ERR_ORG_VEC_TYPE        (443) /**< Origin vec_type not valid. */
#define LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL (444) /**< Origin base NULL. */
#define LAPI_ERR_STRIDE_TGT_VEC_ADDR_NULL (445) /**< Target base NULL. */
#define LAPI_ERR_TGT_EXTENT          (446) /**< Target extent too large. */
#define LAPI_ERR_TGT_STRIDE          (447) /**< Target stride < block size. */
#define LAPI_ERR_TGT_VEC_ADDR        (448) /**< Target info[i] NULL. */
#define LAPI_ERR_TGT_VEC_LEN         (449) /**< Target vector too long. */
#define LAPI_ERR_CKPT                (450) /**< Checkpoint error. */
#define LAPI_ERR_TGT_VEC_NULL        (451) /**< Target vector is NULL. */
#define LAPI_ERR_TGT_VEC_TYPE        (452) /**< Target vec_type not valid. */
#define LAPI_ERR_VEC_NUM_DIFF        (453) /**< Vectors differ in num_vecs. */
#define LAPI_ERR_VEC_TYPE_DIFF       (454) /**< Vectors differ in vec_type. */
#define LAPI_ERR_VEC_LEN_DIFF        (455) /**< Vectors differ in lengths. */
#define LAPI_ERR_MSG_INFO_NULL       (456) /**< LAPI_Msgpoll info is NULL. */
#define LAPI_ERR_POLLING_NET         (457) /**< Another thread is polling. */
#define LAPI_ERR_CNTR_NULL           (458) /**< Counter pointer is NULL. */
#define LAPI_ERR_CNTR_VAL            (459) /**< Counter value not valid. */
#define LAPI_ERR_QUERY_TYPE          (460) /**< Query not valid here. */
#define LAPI_ERR_IN_VAL_NULL         (461) /**< RMW in_val is NULL. */
#define LAPI_ERR_RMW_OP              (462) /**< RMW operation not valid. */
#define LAPI_ERR_TGT_VAR_NULL        (463) /**< RMW tgt_var is NULL. */
#define LAPI_ERR_SET_VAL             (464) /**< LAPI_Senv value not valid. */
#define LAPI_ERR_DGSP                (465) /**< DGSP NULL or not registered. */
#define LAPI_ERR_DGSP_ATOM           (466) /**< DGSP atom_size not valid. */
#define LAPI_ERR_DGSP_BRANCH         (467) /**< DGSP branch outside its code. */
#define LAPI_ERR_DGSP_CTL            (468) /**< DGSP control block error. */
#define LAPI_ERR_DGSP_COPY_SZ        (469) /**< DGSP copy length not valid. */
#define LAPI_ERR_DGSP_FREE           (470) /**< DGSP free not valid. */
#define LAPI_ERR_DGSP_OPC            (471) /**< DGSP opcode not valid. */
#define LAPI_ERR_DGSP_REPS           (472) /**< DGSP repetition count < 0. */
#define LAPI_ERR_DGSP_STACK          (473) /**< DGSP stack depth not valid. */
#define LAPI_ERR_OP_SZ               (474) /**< RMW size is not 32 or 64. */
#define LAPI_ERR_UDP_PORT_INFO       (475) /**< UDP port info is NULL. */
#define LAPI_ERR_XFER_CMD            (476) /**< LAPI_Xfer type not valid. */
#define LAPI_ERR_UTIL_CMD            (477) /**< LAPI_Util command not valid. */
#define LAPI_ERR_CATALOG_FAIL        (478) /**< Message catalog missing. */
#define LAPI_ERR_PACK_SZ             (479) /**< Pack buffer too small. */
#define LAPI_ERR_DGSP_OTHER          (480) /**< Other DGSP error. */
#define LAPI_ERR_UDP_SOCKET          (481) /**< UDP socket operation failed. */
#define LAPI_ERR_COLLECTIVE_PSS      (482) /**< Collective on PSS. */
#define LAPI_ERR_DMA_HNDL            (483) /**< Kernel DMA handle error. */
#define LAPI_ERR_DMA_TAG             (484) /**< Kernel DMA posted-tag error. */
#define LAPI_ATT_FR_SETUP_INTERNAL   (485) /**< Failover setup failed. */
#define LAPI_ATT_FR_SETUP_NONAM      (486) /**< Failover: no network matrix. */
#define LAPI_ATT_FR_SETUP_NOHAGS     (487) /**< Failover: no group services. */
#define LAPI_ATT_FR_SETUP_BADPOE     (488) /**< Failover: old POE. */
#define LAPI_ATT_FR_SETUP_NOPOE      (489) /**< Failover: no POE. */
#define LAPI_ATT_FR_SETUP_NONSNX     (490) /**< Failover: bad device. */
#define LAPI_ATT_FR_HALTED           (491) /**< Failover halted. */
#define LAPI_ERR_TGT_CONTEXT         (492) /**< Target context not valid. */
#define LAPI_ERR_SRC_CONTEXT         (493) /**< Source context not valid. */
#define LAPI_ERR_TGT_BUFHNDL         (494) /**< Target buffer bad. */
#define LAPI_ERR_SRC_BUFHNDL         (495) /**< Source buffer bad. */
#define LAPI_ERR_TGT_OFFSET          (496) /**< Target offset not valid. */
#define LAPI_ERR_SRC_OFFSET          (497) /**< Source offset not valid. */
#define LAPI_ERR_NO_RDMA_RESOURCE    (498) /**< No RDMA resources. */
#define LAPI_ATT_BULK_ENABLED        (499) /**< Bulk transfer is enabled. */
#define LAPI_ATT_COMM_TIMEOUT        (500) /**< Timeout between tasks. */
#define LAPI_ATT_VERSION             (501) /**< Version information. */
#define LAPI_ATT_SHMINIT_FAIL        (502) /**< Shared memory init failed. */
#define LAPI_ATT_SHMINIT_CKPT_FAIL   (503) /**< Shm init failed (ckpt). */
#define LAPI_ATT_SHM_SINGLE_TASK     (504) /**< One task per node: no shm. */
#define LAPI_ATT_SHM_CREATE_FAIL     (505) /**< Shm segment not created. */
#define LAPI_ATT_SHM_GET_FAIL        (506) /**< Shm segment not attached. */
#define LAPI_ATT_SHM_ATT_FAIL        (507) /**< Cross-memory attach failed. */
#define LAPI_ATT_SHM_NO_SEGATT       (508) /**< No cross-memory copy segment. */
#define LAPI_ATT_PORT_START          (509) /**< Port starts message passing. */
#define LAPI_ERR_NO_ENV_VAR          (510) /**< Environment var unset. */
#define LAPI_ERR_NO_CALLBACK_REG     (511) /**< No callback registered. */
#define LAPI_ERR_NO_CNTR_REG         (512) /**< No counter registered. */
#define LAPI_ERR_XLATE_FAILED        (513) /**< RDMA translation failed. */
#define LAPI_ERR_RDMA_RESOURCES      (514) /**< RDMA resources exhausted. */
#define LAPI_ERR_LW_DATA_LEN         (515) /**< AM_LW length too large. */
#define LAPI_ERR_NO_HNDLR_SET        (516) /**< AM_LW handler missing. */
#define LAPI_ERR_OFFSET_LEN          (517) /**< AMX DGSP offset out of range. */
#define LAPI_ERR_RCXT_CANCEL         (518) /**< Remote context not cancelled. */
#define LAPI_ERR_CODE_UNKNOWN        (519) /**< Error code unknown to LAPI. */
#define LAPI_ATT_PREEMPT_SETUP_INTERNAL (520) /**< Preemption setup failed. */
#define LAPI_ERR_DUP_TRIGGER         (521) /**< Trigger already registered. */
#define LAPI_ERR_TRIGGER_UNKNOWN     (522) /**< Trigger not registered. */
#define LAPI_ERR_TASK_NUM            (523) /**< Task number not valid. */
#define LAPI_ERR_NULL_LIST           (524) /**< Task list is NULL. */
#define LAPI_ERR_GRP_MEMBER          (525) /**< Group member id not valid. */
#define LAPI_ERR_NULL_GRP            (526) /**< Group handle is NULL. */
#define LAPI_ERR_GRP                 (527) /**< Group handle not valid. */
#define LAPI_ERR_STAT_SAVE_FAIL      (528) /**< Saving statistics failed. */

/** Lowest LAPI error code (400). */
#define LAPI_ERR_FIRSTCODE LAPI_ERR_UNKNOWN
/** Highest LAPI error code (528). */
#define LAPI_ERR_LASTCODE LAPI_ERR_STAT_SAVE_FAIL

/*
 * Obsolete names of older LAPI generations.  LAPI no longer returns them
 * with these meanings; clients test them with #ifdef, so they stay.
 */
#define LAPI_ERR_UNKNOWN_DEVICE      (401) /**< Obsolete alias of 401. */
#define LAPI_ERR_UNKNOWN_FUNCTION    (402) /**< Obsolete alias of 402. */
#define LAPI_ERR_NOMORE_PORTS        (403) /**< Obsolete alias of 403. */
#define LAPI_ERR_INIT_FAILED         (404) /**< Obsolete alias of 404. */
#define LAPI_ERR_OPEN_FAILED         (405) /**< Obsolete alias of 405. */
#define LAPI_ERR_CLOSE_FAILED        (406) /**< Obsolete alias of 406. */
#define LAPI_ERR_SWITCH_FAULT        (407) /**< Obsolete alias of 407. */
#define LAPI_ERR_INTR_HNDLR          (408) /**< Obsolete alias of 408. */
#define LAPI_ERR_NO_HD_HNDLR         (409) /**< Obsolete alias of 409. */
#define LAPI_ERR_BAD_PARAMETER       (410) /**< Obsolete alias of 410. */
#define LAPI_ERR_RETRANSMISSION      (412) /**< Obsolete alias of 412. */
#define LAPI_ERR_QUEUE_FULL          (414) /**< Obsolete alias of 414. */
#define LAPI_ERR_INIT_LOCK_FAILED    (415) /**< Obsolete alias of 415. */
#define LAPI_ERR_GET_LOCK_FAILED     (416) /**< Obsolete alias of 416. */
#define LAPI_ERR_REL_LOCK_FAILED     (417) /**< Obsolete alias of 417. */
#define LAPI_ERR_TRY_LOCK_FAILED     (418) /**< Obsolete alias of 418. */
#define LAPI_ERR_INVALID_OPTIONS     (419) /**< Obsolete alias of 419. */
#define LAPI_WAIT_INTERRUPTED        (420) /**< Obsolete alias of 420. */
#define LAPI_ERR_PURGED_TASK         (421) /**< Obsolete alias of 421. */
#define LAPI_ERR_EXHAUSTED_MEMORY    (423) /**< Obsolete alias of 423. */
#define LAPI_ERR_NONZERO_INFO        (424) /**< Obsolete alias of 424. */
#define LAPI_ERR_BAD_FIRST_PARM      (425) /**< Obsolete alias of 425. */
#define LAPI_ERR_BAD_SECOND_PARM     (426) /**< Obsolete alias of 426. */
#define LAPI_ERR_BAD_THIRD_PARM      (427) /**< Obsolete alias of 427. */
#define LAPI_ERR_BAD_FOURTH_PARM     (428) /**< Obsolete alias of 428. */
#define LAPI_ERR_BAD_FIFTH_PARM      (429) /**< Obsolete alias of 429. */
#define LAPI_ERR_BAD_SIXTH_PARM      (430) /**< Obsolete alias of 430. */
#define LAPI_ERR_BAD_SEVENTH_PARM    (431) /**< Obsolete alias of 431. */
#define LAPI_ERR_BAD_EIGHTH_PARM     (432) /**< Obsolete alias of 432. */
#define LAPI_ERR_BAD_NINTH_PARM      (433) /**< Obsolete alias of 433. */
#define LAPI_ERR_SHM_CLEANUP         (440) /**< Obsolete alias of 440. */
#define LAPI_ERR_SHM_REGISTER        (441) /**< Obsolete alias of 441. */
#define LAPI_ERR_SHM_RELEASE         (442) /**< Obsolete alias of 442. */
#define LAPI_ERR_SHM_ATTDET          (443) /**< Obsolete alias of 443. */
#define LAPI_ERR_SHM_ATTACH          (444) /**< Obsolete alias of 444. */
#define LAPI_ERR_SHM_DETACH          (445) /**< Obsolete alias of 445. */
#define LAPI_ERR_SHM_ENV_SET         (446) /**< Obsolete alias of 446. */
#define LAPI_ERR_SHM_NOCOMM_TASK     (447) /**< Obsolete alias of 447. */
#define LAPI_ERR_SHM_SETSHM          (448) /**< Obsolete alias of 448. */
#define LAPI_ERR_SHM_LOAD            (449) /**< Obsolete alias of 449. */
#define LAPI_ERR_CHECKPOINT          (450) /**< Obsolete alias of 450. */

/* ============================================================= constants */

/** Largest message length in bytes (the largest positive ulong). */
#if ULONG_MAX > 0xffffffffUL
#define LAPI_MAX_MSG_SZ 0x7fffffffffffffffLL
#else
#define LAPI_MAX_MSG_SZ 0x7fffffff
#endif

/** Size of the buffer LAPI_Msg_string writes, terminating NUL included. */
#define LAPI_MAX_ERR_STRING (160)
/** NULL address (the Fortran binding's spelling). */
#define LAPI_ADDR_NULL ((void *)0)

/** lapi_info_t.protocol flag: share one protocol instance with MPI. */
#define LAPI_SHARE_PROTOCOL 0x80000000u
/** lapi_info_t.protocol flag: start in polling mode (INTERRUPT_SET = 0). */
#define LAPI_INTERRUPT_OFF  0x20000000u

#ifndef TRUE
#define TRUE 1  /**< COMPARE_AND_SWAP result: the swap happened. */
#endif
#ifndef FALSE
#define FALSE 0 /**< COMPARE_AND_SWAP result: the values differed. */
#endif

/* ========================================================== scalar types */

/** A LAPI instance, returned by LAPI_Init. */
typedef unsigned int lapi_handle_t;
/** A task group (multicast), same representation as a handle. */
typedef unsigned int lapi_group_t;
/** Additional status returned by some commands. */
typedef unsigned int lapi_status_t;
/** Message state bits returned by LAPI_Msgpoll (LAPI_SEND_COMPLETE, ...). */
typedef unsigned int lapi_msg_state_t;
/** 64 bits in every data model: remote addresses and long arguments. */
typedef unsigned long long lapi_long_t;

/** Handle value that names no instance. */
#define LAPI_VOID_HANDLE ((lapi_handle_t)-1)

/**
 * A LAPI counter.  Users declare counters anywhere (stack, globals, arrays,
 * zero-initialised statics) and only touch them through LAPI_Setcntr,
 * LAPI_Getcntr, LAPI_Waitcntr and the communication calls; the address of a
 * counter may be sent to another task and used there as its tgt_cntr.  As
 * in IBM's LAPI a counter is zero-initialised or set with LAPI_Setcntr
 * before its first use.  The fields after cntr belong to the implementation
 * (waiter bookkeeping); LAPI_Setcntr wakes any waiter, clears _impl, and
 * clears _wait unless threads sleep on the counter (it may hold garbage).
 */
typedef struct {
  volatile int cntr; /**< Current value. */
  int _wait;         /**< Implementation: waiter bookkeeping. */
  void *_impl;       /**< Implementation: per-counter state. */
} lapi_cntr_t;

/* ================================================================= enums */

/** What LAPI_Qenv reports and LAPI_Senv sets (numbered from 0). */
typedef enum {
  TASK_ID = 0,                 /**< Task id of the caller. */
  NUM_TASKS,                   /**< Number of tasks in the job. */
  MAX_UHDR_SZ,                 /**< Largest user header (uhdr_len). */
  MAX_DATA_SZ,                 /**< Largest data length of one call. */
  ERROR_CHK,                   /**< Argument checks on (1)/off (0); settable. */
  TIMEOUT,                     /**< Timeout in seconds; settable. */
  MIN_TIMEOUT,                 /**< Smallest allowed TIMEOUT. */
  MAX_TIMEOUT,                 /**< Largest allowed TIMEOUT. */
  INTERRUPT_SET,               /**< Interrupt (1)/polling (0); settable. */
  MAX_PORTS,                   /**< Available communication ports. */
  MAX_PKT_SZ,                  /**< Payload bytes of one packet. */
  NUM_REX_BUFS,                /**< Number of retransmission buffers. */
  REX_BUF_SZ,                  /**< Bytes of one retransmission buffer. */
  LOC_ADDRTBL_SZ,              /**< Entries of the LAPI_Addr_set table. */
  EPOCH_NUM,                   /**< Epoch number given to LAPI_Init. */
  USE_THRESH,                  /**< One (1)/several (0) progress threads. */
  RCV_FIFO_SIZE,               /**< Bytes of the receive FIFO. */
  MAX_ATOM_SIZE,               /**< Largest DGSP atom. */
  BUF_CP_SIZE,                 /**< Largest message copied into a buffer. */
  MAX_PKTS_OUT,                /**< Packets in flight per destination. */
  ACK_THRESHOLD,               /**< Packets per acknowledgement; settable. */
  QUERY_SHM_ENABLED,           /**< Shared memory (core group) in use. */
  QUERY_SHM_NUM_TASKS,         /**< Tasks in the caller's core group. */
  QUERY_SHM_TASKS,             /**< Their ids, into int[QUERY_SHM_NUM_TASKS]. */
  QUERY_STATISTICS,            /**< ret_val is a lapi_statistics_t *. */
  PRINT_STATISTICS,            /**< Print the statistics to stderr. */
  QUERY_SHM_STATISTICS,        /**< QUERY_STATISTICS of shared memory. */
  QUERY_LOCAL_SEND_STATISTICS, /**< Like QUERY_STATISTICS, local copies. */
  BULK_XFER,                   /**< Bulk (RDMA) transfer in use. */
  BULK_MIN_MSG_SIZE,           /**< Smallest message sent by bulk transfer. */
  RDMA_REMOTE_RCXT_AVAIL,      /**< Remote RDMA contexts available. */
  RDMA_REMOTE_RCXT_TOTAL,      /**< Remote RDMA contexts in total. */
  RC_MAX_QP,                   /**< Most reliable-connection queue pairs. */
  RC_QP_IN_USE,                /**< Queue pairs in use. */
  RC_QP_USE_LRU,               /**< Queue pairs replaced LRU. */
  RC_QP_USE_LMC,               /**< One queue pair per path. */
  RC_QP_INIT_SETUP,            /**< Queue pairs set up in LAPI_Init. */
  LAST_QUERY                   /**< Number of queries. */
} lapi_query_t;

/** Read-modify-write operations of LAPI_Rmw / LAPI_Rmw64. */
typedef enum {
  FETCH_AND_ADD = 0, /**< *tgt_var += *in_val. */
  FETCH_AND_OR,      /**< *tgt_var |= *in_val. */
  SWAP,              /**< *tgt_var = *in_val. */
  COMPARE_AND_SWAP   /**< in_val = {compare, swap}; prev = TRUE/FALSE. */
} RMW_ops_t;

/** Kinds of lapi_vec_t. */
typedef enum {
  LAPI_GEN_IOVECTOR = 0, /**< info[i]/len[i] pairs, same shape on both sides. */
  LAPI_GEN_STRIDED_XFER, /**< info = {base, block bytes, stride bytes}. */
  LAPI_GEN_GENERIC       /**< Pairs; bytes flow in order, shapes may differ. */
} lapi_vectype_t;

/** Kind of an asynchronous error passed to the LAPI_err_hndlr. */
typedef enum {
  GET_ERR = 0, /**< In a get. */
  PUT_ERR,     /**< In a put. */
  RMW_ERR,     /**< In a read-modify-write. */
  AM_ERR,      /**< In an active message (e.g. a bad target vector). */
  INT_ERR,     /**< Internal. */
  TMR_ERR      /**< Timer / timeout. */
} lapi_err_t;

/** LAPI library level requested in lapi_info_t.lib_vers. */
typedef enum { L1_LIB = 0, L2_LIB, L3_LIB, L4_LIB, LAST_LIB } lapi_lib_t;

/** Header-handler instruction in lapi_return_info_t.ctl_flags. */
typedef enum {
  LAPI_DELIVER_MSG = 0, /**< Deliver the data (default). */
  LAPI_BURY_MSG,        /**< Discard the data; the message is complete. */
  LAPI_DROP_PKT         /**< Drop this packet. */
} lapi_ctl_flags_t;

/** Transfer kinds of LAPI_Xfer (lapi_xfer_t.Xfer_type). */
typedef enum {
  LAPI_GET_XFER = 0, /**< lapi_get_t. */
  LAPI_AM_XFER,      /**< lapi_am_t. */
  LAPI_PUT_XFER,     /**< lapi_put_t. */
  LAPI_GETV_XFER,    /**< lapi_getv_t. */
  LAPI_PUTV_XFER,    /**< lapi_putv_t. */
  LAPI_AMV_XFER,     /**< lapi_amv_t. */
  LAPI_RMW_XFER,     /**< lapi_rmw_t. */
  LAPI_DGSP_XFER,    /**< lapi_amdgsp_t (not supported). */
  LAPI_RDMA_XFER,    /**< lapi_hwxfer_t (not supported). */
  LAPI_AM_LW_XFER,   /**< Lightweight AM (not supported). */
  LAPI_AMX_XFER,     /**< lapi_amx_t (not supported). */
  LAPI_MC_XFER,      /**< lapi_mc_t (not supported). */
  LAPI_LAST_XFER     /**< Number of transfer kinds. */
} lapi_xfer_type_t;

/** Commands of LAPI_Util (lapi_util_t.Util_type). */
typedef enum {
  LAPI_REGISTER_DGSP = 0,     /**< lapi_reg_dgsp_t (not supported). */
  LAPI_RESERVE_DGSP,          /**< lapi_resv_dgsp_t (not supported). */
  LAPI_UNRESERVE_DGSP,        /**< lapi_dref_dgsp_t (not supported). */
  LAPI_REG_DDM_FUNC,          /**< Not supported. */
  LAPI_DGSP_PACK,             /**< Not supported. */
  LAPI_DGSP_UNPACK,           /**< Not supported. */
  LAPI_ADD_UDP_DEST_PORT,     /**< Not supported. */
  LAPI_GET_THREAD_FUNC,       /**< lapi_thread_func_t. */
  LAPI_REMOTE_RCXT,           /**< Not supported. */
  LAPI_XLATE_ADDRESS,         /**< Not supported. */
  LAPI_REGISTER_NOTIFICATION, /**< Not supported. */
  LAPI_TRIGGER_ADD,           /**< Not supported. */
  LAPI_TRIGGER_REMOVE,        /**< Not supported. */
  LAPI_ADD_UDP_DEST_EXT,      /**< Not supported. */
  LAPI_STAT_SAVE,             /**< Not supported. */
  LAPI_LAST_UTIL              /**< Number of commands. */
} lapi_util_type_t;

/** Where a DGSP utility request is made from. */
typedef enum {
  LAPI_NORMAL_CALL = 0,   /**< From ordinary code. */
  LAPI_SEND_COMPL_HNDLR,  /**< From a send completion handler. */
  LAPI_RECV_INLINE_HNDLR  /**< From an inline receive handler. */
} lapi_usr_fcall_t;

/* ========================================================= flag values */

/** lapi_return_info_t.ret_flags bits set by a header handler. */
typedef int lapi_ret_flags_t;
#define LAPI_NORMAL      0x0 /**< Default: no promise about the handler. */
#define LAPI_LOCAL_STATE 0x1 /**< Completion handler only touches local data. */
#define LAPI_SEND_REPLY  0x2 /**< Completion handler replies to the origin. */

/** lapi_msg_info_t.status bits from LAPI_Msgpoll. */
#define LAPI_SEND_COMPLETE 0x1 /**< A send completed. */
#define LAPI_RECV_COMPLETE 0x2 /**< A receive completed. */
#define LAPI_BOTH_COMPLETE 0x3 /**< A send and a receive completed. */
#define LAPI_POLLING_NET   0x4 /**< Another thread is polling. */

/** dest_status values of LAPI_Setcntr_wstatus. */
#define LAPI_MSG_INITIAL     0 /**< Nothing heard from the destination yet. */
#define LAPI_MSG_RECVD       1 /**< The destination's message arrived. */
#define LAPI_MSG_PURGED      2 /**< The destination was purged. */
#define LAPI_MSG_PURGED_RCVD 3 /**< Purged after its message arrived. */
#define LAPI_MSG_INVALID     4 /**< Not a valid destination. */

/** lapi_xfer_t flags: hints, accepted and ignored. */
#define USE_TGT_VEC_TYPE       0x02 /**< Use the target vector type. */
#define BUFFER_BOTH_CONTIGUOUS 0x10 /**< Both buffers are contiguous. */
#define LAPI_NOT_USE_BULK_XFER 0x20 /**< Do not use bulk transfer. */
#define LAPI_USE_BULK_XFER     0x40 /**< Use bulk transfer. */

/* ============================================================= structures */

/** A data description: I/O vector, strided blocks or generic pairs. */
typedef struct {
  lapi_vectype_t vec_type; /**< Kind of description. */
  uint num_vecs;           /**< Segments (or strided blocks). */
  void **info;             /**< Addresses (strided: base, block, stride). */
  ulong *len;              /**< Lengths (unused for strided; may be NULL). */
} lapi_vec_t;

/** Completion handler: runs at the target after the data has landed. */
typedef void (compl_hndlr_t)(lapi_handle_t *hndl, void *completion_param);

/**
 * Header handler of LAPI_Amsend: returns the buffer for msg_len bytes
 * (NULL discards them).  msg_len points to the first member of a
 * lapi_return_info_t and may be cast to it.
 */
typedef void *(hdr_hndlr_t)(lapi_handle_t *hndl, void *uhdr, uint *uhdr_len,
                            ulong *msg_len, compl_hndlr_t **comp_h,
                            void **uinfo);

/**
 * Header handler of LAPI_Amsendv: returns the target vector.  len_vec
 * points to the origin vector's lengths.  (IBM's manual spells the
 * parameter `ulong *len_vec[]`; handlers are passed as void *, so either
 * spelling works for a handler definition.)
 */
typedef lapi_vec_t *(vhdr_hndlr_t)(lapi_handle_t *hndl, void *uhdr,
                                   uint *uhdr_len, ulong *len_vec,
                                   compl_hndlr_t **comp_h, void **uinfo);

/** What a send completion handler learns. */
typedef struct {
  uint src;          /**< Target task of the message. */
  uint reason;       /**< LAPI_SUCCESS or the error code of the send. */
  ulong reserve[6];  /**< Reserved. */
} lapi_sh_info_t;

/** Send completion handler: runs at the origin when a send completed. */
typedef void (scompl_hndlr_t)(lapi_handle_t *hndl, void *completion_param,
                              lapi_sh_info_t *info);

/** Asynchronous error handler registered in lapi_info_t. */
typedef void (LAPI_err_hndlr)(lapi_handle_t *hndl, int *error_code,
                              lapi_err_t *err_type, int *task_id, int *src);

/** Device and protocol flags of lapi_info_t (LAPI_SHARE_PROTOCOL, ...). */
typedef unsigned int lapi_dev_t;

/** One UDP endpoint (accepted for source compatibility). */
typedef struct {
  unsigned int ip_addr;   /**< IPv4 address, network order. */
  unsigned short port_no; /**< Port, network order. */
} lapi_udp_t;

/** What a UDP initialisation handler is told. */
typedef struct {
  uint task_id;       /**< This task. */
  uint tot_num_tasks; /**< Tasks in the job. */
  uint num_tasks;     /**< Tasks to initialise. */
  uint instance_no;   /**< LAPI instance. */
  ulong reserve[10];  /**< Reserved. */
} lapi_udpinfo_t;

/** User handler that fills the UDP address list. */
typedef int (udp_init_hndlr)(lapi_handle_t *hndl, lapi_udp_t *add_udp_addrs,
                             lapi_udpinfo_t *info);

/** Extended LAPI_Init information (UDP device; this library has none). */
typedef struct {
  udp_init_hndlr *udp_hndlr; /**< Fills the address list. */
  lapi_udp_t *add_udp_addrs; /**< Or: every task's address. */
  uint num_udp_addr;         /**< Entries of add_udp_addrs. */
  uint pad;                  /**< Alignment. */
  ulong reserve[8];          /**< Reserved. */
} lapi_extend_t;

/** LAPI_Init argument: zero it, then set the fields you need. */
typedef struct {
  lapi_dev_t protocol;        /**< In: LAPI_SHARE_PROTOCOL ... flags. */
  lapi_lib_t lib_vers;        /**< In: library level. */
  uint epoch_num;             /**< In: epoch number (see EPOCH_NUM). */
  int num_compl_hndlr_thr;    /**< Ignored. */
  uint instance_no;           /**< In: instance to initialise. */
  int info6;                  /**< Reserved, must be 0. */
  LAPI_err_hndlr *err_hndlr;  /**< In: asynchronous error handler or NULL. */
  void *lapi_thread_attr;     /**< In: progress-thread attributes or NULL. */
  void *adapter_name;         /**< In: adapter to use or NULL. */
  lapi_extend_t *add_info;    /**< In: extended information or NULL. */
} lapi_info_t;

/** Result of LAPI_Msgpoll. */
typedef struct {
  lapi_msg_state_t status; /**< LAPI_SEND_COMPLETE | LAPI_RECV_COMPLETE ... */
  ulong reserve[10];       /**< Reserved. */
} lapi_msg_info_t;

/** Counters returned by LAPI_Qenv(QUERY_STATISTICS and friends). */
typedef struct {
  lapi_long_t Tot_dup_pkt_cnt;     /**< Duplicate packets. */
  lapi_long_t Tot_retrans_pkt_cnt; /**< Retransmitted packets. */
  lapi_long_t Tot_gho_pkt_cnt;     /**< Ghost packets. */
  lapi_long_t Tot_pkt_sent_cnt;    /**< Packets sent. */
  lapi_long_t Tot_pkt_recv_cnt;    /**< Packets received. */
  lapi_long_t Tot_data_sent;       /**< Bytes sent. */
  lapi_long_t Tot_data_recv;       /**< Bytes received. */
  lapi_long_t Tot_ack_send_cnt;    /**< Acknowledgements sent. */
  lapi_long_t Tot_ack_recv_cnt;    /**< Acknowledgements received. */
} lapi_statistics_t;

/* ------------------------------------------------------------------ DGSP */

/** DGSM instruction opcodes. */
typedef enum {
  LAPI_DGSM_COPY = 0, /**< Copy bytes. */
  LAPI_DGSM_MCOPY,    /**< Copy several blocks. */
  LAPI_DGSM_GOSUB,    /**< Call a subprogram. */
  LAPI_DGSM_ITERATE,  /**< Loop. */
  LAPI_DGSM_CONTROL   /**< Enter/leave control mode. */
} lapi_dgsm_opcode_t;

/** DGSM copy instruction. */
typedef struct {
  lapi_dgsm_opcode_t opcode; /**< LAPI_DGSM_COPY. */
  long bytes;                /**< Bytes to copy. */
  long offset;               /**< Byte offset. */
} lapi_dgsm_copy_t;

/** Size of a copy instruction in ints of a DGSP code array. */
#define LAPI_DGSM_COPY_SIZE (sizeof(lapi_dgsm_copy_t) / sizeof(int))

/** Density of a DGSP datatype. */
typedef enum {
  LAPI_DGSM_SPARSE = 0, /**< Holes. */
  LAPI_DGSM_CONTIG,     /**< Contiguous. */
  LAPI_DGSM_UNIT        /**< Contiguous and unit size. */
} lapi_dgsp_density_t;

/** A data gather/scatter program (DGSP). */
typedef struct {
  int *code;                   /**< Program. */
  int code_size;               /**< Ints in code. */
  int depth;                   /**< Stack depth it needs. */
  lapi_dgsp_density_t density; /**< Density. */
  long size;                   /**< Packed bytes. */
  long extent;                 /**< Distance between repetitions. */
  long lext;                   /**< Leftmost byte. */
  long rext;                   /**< Rightmost byte. */
  int atom_size;               /**< 0 or packet-filling unit. */
} lapi_dgsp_descr_t;

/** Handle of a registered DGSP (pointer sized). */
typedef lapi_dgsp_descr_t *lapi_dg_handle_t;

/* ------------------------------------------------- header handler result */

/**
 * What a header handler reads and writes through its msg_len pointer: the
 * first member is the message length, so (lapi_return_info_t *)msg_len is
 * how a client reaches the rest.
 */
typedef struct {
  ulong msg_len;                 /**< Bytes of data in the message. */
  int MAGIC;                     /**< Internal, do not change. */
  lapi_ret_flags_t ret_flags;    /**< Out: LAPI_NORMAL, LAPI_LOCAL_STATE ... */
  lapi_ctl_flags_t ctl_flags;    /**< Out: LAPI_DELIVER_MSG or LAPI_BURY_MSG. */
  lapi_dg_handle_t dgsp_handle;  /**< Out: scatter DGSP (unsupported). */
  ulong bytes;                   /**< Out: bytes processed by the DGSP. */
  int src;                       /**< Origin task of the message. */
  void *udata_one_pkt_ptr;       /**< The data if it came with the header. */
  ulong recv_offset_dgsp_bytes;  /**< Out: DGSP start offset. */
} lapi_return_info_t;

/* ------------------------------------------------------------- transfers */

/*
 * Every transfer struct begins with Xfer_type, the union's first member, so
 * a client sets xfer.Am.Xfer_type (or xfer.Xfer_type) and LAPI_Xfer reads
 * xfer.Xfer_type.  Remote addresses and target counters are lapi_long_t.
 */

/** LAPI_GET_XFER: like LAPI_Get. */
typedef struct {
  lapi_xfer_type_t Xfer_type; /**< LAPI_GET_XFER. */
  int flags;                  /**< Hints (BUFFER_BOTH_CONTIGUOUS ...). */
  uint tgt;                   /**< Target task. */
  uint pad;                   /**< Alignment. */
  lapi_long_t tgt_addr;       /**< Remote source address. */
  void *org_addr;             /**< Local destination. */
  ulong len;                  /**< Bytes. */
  lapi_long_t tgt_cntr;       /**< Remote counter address or 0. */
  lapi_cntr_t *org_cntr;      /**< +1 when the data has arrived. */
  compl_hndlr_t *chndlr;      /**< Runs at the origin after arrival, or NULL. */
  void *cinfo;                /**< Argument of chndlr. */
} lapi_get_t;

/** LAPI_AM_XFER: like LAPI_Amsend, plus a send completion handler. */
typedef struct {
  lapi_xfer_type_t Xfer_type; /**< LAPI_AM_XFER. */
  int flags;                  /**< Hints. */
  uint tgt;                   /**< Target task. */
  uint pad;                   /**< Alignment. */
  lapi_long_t hdr_hdl;        /**< Header handler address or Addr_set index. */
  uint uhdr_len;              /**< User header bytes. */
  void *uhdr;                 /**< User header. */
  void *udata;                /**< Data. */
  ulong udata_len;            /**< Data bytes. */
  scompl_hndlr_t *shdlr;      /**< Runs at the origin when sent, or NULL. */
  void *sinfo;                /**< Argument of shdlr. */
  lapi_long_t tgt_cntr;       /**< Remote counter address or 0. */
  lapi_cntr_t *org_cntr;      /**< +1 when the origin buffers are free. */
  lapi_cntr_t *cmpl_cntr;     /**< +1 when the target completed. */
} lapi_am_t;

/** LAPI_PUT_XFER: like LAPI_Put, plus a send completion handler. */
typedef struct {
  lapi_xfer_type_t Xfer_type; /**< LAPI_PUT_XFER. */
  int flags;                  /**< Hints. */
  uint tgt;                   /**< Target task. */
  uint pad;                   /**< Alignment. */
  lapi_long_t tgt_addr;       /**< Remote destination. */
  void *org_addr;             /**< Local source. */
  ulong len;                  /**< Bytes. */
  scompl_hndlr_t *shdlr;      /**< Runs at the origin when sent, or NULL. */
  void *sinfo;                /**< Argument of shdlr. */
  lapi_long_t tgt_cntr;       /**< Remote counter address or 0. */
  lapi_cntr_t *org_cntr;      /**< +1 when the origin buffer is free. */
  lapi_cntr_t *cmpl_cntr;     /**< +1 when the data landed. */
} lapi_put_t;

/** LAPI_GETV_XFER: like LAPI_Getv. */
typedef struct {
  lapi_xfer_type_t Xfer_type; /**< LAPI_GETV_XFER. */
  int flags;                  /**< Hints. */
  uint tgt;                   /**< Target task. */
  uint pad;                   /**< Alignment. */
  lapi_vec_t *org_vec;        /**< Local destination vector. */
  void *tgt_vec;              /**< lapi_vec_t * of remote source addresses. */
  lapi_long_t tgt_cntr;       /**< Remote counter address or 0. */
  lapi_cntr_t *org_cntr;      /**< +1 when the data has arrived. */
  compl_hndlr_t *chndlr;      /**< Runs at the origin after arrival, or NULL. */
  void *cinfo;                /**< Argument of chndlr. */
} lapi_getv_t;

/** LAPI_PUTV_XFER: like LAPI_Putv. */
typedef struct {
  lapi_xfer_type_t Xfer_type; /**< LAPI_PUTV_XFER. */
  int flags;                  /**< Hints. */
  uint tgt;                   /**< Target task. */
  uint pad;                   /**< Alignment. */
  scompl_hndlr_t *shdlr;      /**< Runs at the origin when sent, or NULL. */
  void *sinfo;                /**< Argument of shdlr. */
  lapi_vec_t *org_vec;        /**< Local source vector. */
  void *tgt_vec;              /**< lapi_vec_t * of remote destinations. */
  lapi_long_t tgt_cntr;       /**< Remote counter address or 0. */
  lapi_cntr_t *org_cntr;      /**< +1 when the origin buffers are free. */
  lapi_cntr_t *cmpl_cntr;     /**< +1 when the data landed. */
} lapi_putv_t;

/** LAPI_AMV_XFER: like LAPI_Amsendv. */
typedef struct {
  lapi_xfer_type_t Xfer_type; /**< LAPI_AMV_XFER. */
  int flags;                  /**< Hints. */
  uint tgt;                   /**< Target task. */
  uint pad;                   /**< Alignment. */
  lapi_long_t hdr_hdl;        /**< Header handler address or Addr_set index. */
  uint uhdr_len;              /**< User header bytes. */
  void *uhdr;                 /**< User header. */
  scompl_hndlr_t *shdlr;      /**< Runs at the origin when sent, or NULL. */
  void *sinfo;                /**< Argument of shdlr. */
  lapi_vec_t *org_vec;        /**< Origin vector. */
  lapi_long_t tgt_cntr;       /**< Remote counter address or 0. */
  lapi_cntr_t *org_cntr;      /**< +1 when the origin buffers are free. */
  lapi_cntr_t *cmpl_cntr;     /**< +1 when the target completed. */
} lapi_amv_t;

/** LAPI_RMW_XFER: LAPI_Rmw (size 32) or LAPI_Rmw64 (size 64). */
typedef struct {
  lapi_xfer_type_t Xfer_type; /**< LAPI_RMW_XFER. */
  RMW_ops_t op;               /**< Operation. */
  uint tgt;                   /**< Target task. */
  uint size;                  /**< Operand bits: 32 or 64. */
  lapi_long_t tgt_var;        /**< Remote variable address. */
  void *in_val;               /**< Operand(s): int or long long. */
  void *prev_tgt_val;         /**< Out: previous value, or NULL. */
  lapi_cntr_t *org_cntr;      /**< +1 when prev_tgt_val is valid. */
  scompl_hndlr_t *shdlr;      /**< Runs at the origin when done, or NULL. */
  void *sinfo;                /**< Argument of shdlr. */
} lapi_rmw_t;

/** LAPI_DGSP_XFER: an active message scattered by a DGSP (not supported). */
typedef struct {
  lapi_xfer_type_t Xfer_type; /**< LAPI_DGSP_XFER. */
  int flags;                  /**< Hints. */
  uint tgt;                   /**< Target task. */
  uint pad;                   /**< Alignment. */
  lapi_long_t hdr_hdl;        /**< Header handler. */
  uint uhdr_len;              /**< User header bytes. */
  void *uhdr;                 /**< User header. */
  void *udata;                /**< Data, laid out by dgsp. */
  ulong udata_len;            /**< Data bytes. */
  scompl_hndlr_t *shdlr;      /**< Send completion handler. */
  void *sinfo;                /**< Argument of shdlr. */
  lapi_long_t tgt_cntr;       /**< Remote counter address or 0. */
  lapi_cntr_t *org_cntr;      /**< Origin counter. */
  lapi_cntr_t *cmpl_cntr;     /**< Completion counter. */
  lapi_dg_handle_t dgsp;      /**< Layout of udata. */
  lapi_status_t status;       /**< Out: status. */
} lapi_amdgsp_t;

/** LAPI_RDMA_XFER: hardware RDMA (not supported; placeholder). */
typedef struct {
  lapi_xfer_type_t Xfer_type; /**< LAPI_RDMA_XFER. */
  uint tgt;                   /**< Target task. */
  lapi_long_t reserve[10];    /**< Reserved. */
} lapi_hwxfer_t;

/** LAPI_AMX_XFER: DGSP active message with an offset (not supported). */
typedef struct {
  lapi_xfer_type_t Xfer_type;   /**< LAPI_AMX_XFER. */
  int flags;                    /**< Hints. */
  uint tgt;                     /**< Target task. */
  uint pad;                     /**< Alignment. */
  lapi_long_t hdr_hdl;          /**< Header handler. */
  uint uhdr_len;                /**< User header bytes. */
  void *uhdr;                   /**< User header. */
  void *udata;                  /**< Data, laid out by dgsp. */
  ulong udata_len;              /**< Data bytes. */
  scompl_hndlr_t *shdlr;        /**< Send completion handler. */
  void *sinfo;                  /**< Argument of shdlr. */
  lapi_long_t tgt_cntr;         /**< Remote counter address or 0. */
  lapi_cntr_t *org_cntr;        /**< Origin counter. */
  lapi_cntr_t *cmpl_cntr;       /**< Completion counter. */
  lapi_dg_handle_t dgsp;        /**< Layout of udata. */
  lapi_status_t status;         /**< Out: status. */
  ulong send_offset_dgsp_bytes; /**< DGSP start offset. */
} lapi_amx_t;

/** LAPI_MC_XFER: active message to a group (not supported). */
typedef struct {
  lapi_xfer_type_t Xfer_type; /**< LAPI_MC_XFER. */
  int flags;                  /**< Hints. */
  lapi_group_t group;         /**< Target group. */
  uint pad;                   /**< Alignment. */
  lapi_long_t hdr_hdl;        /**< Header handler. */
  uint uhdr_len;              /**< User header bytes. */
  void *uhdr;                 /**< User header. */
  void *udata;                /**< Data. */
  ulong udata_len;            /**< Data bytes. */
  scompl_hndlr_t *shdlr;      /**< Send completion handler. */
  void *sinfo;                /**< Argument of shdlr. */
} lapi_mc_t;

/** Argument of LAPI_Xfer: one transfer, chosen by Xfer_type. */
typedef union {
  lapi_xfer_type_t Xfer_type; /**< Selects the member. */
  lapi_get_t Get;             /**< LAPI_GET_XFER. */
  lapi_am_t Am;               /**< LAPI_AM_XFER. */
  lapi_rmw_t Rmw;             /**< LAPI_RMW_XFER. */
  lapi_put_t Put;             /**< LAPI_PUT_XFER. */
  lapi_getv_t Getv;           /**< LAPI_GETV_XFER. */
  lapi_putv_t Putv;           /**< LAPI_PUTV_XFER. */
  lapi_amv_t Amv;             /**< LAPI_AMV_XFER. */
  lapi_amdgsp_t Dgsp;         /**< LAPI_DGSP_XFER. */
  lapi_hwxfer_t HwXfer;       /**< LAPI_RDMA_XFER. */
  lapi_amx_t Amx;             /**< LAPI_AMX_XFER. */
  lapi_mc_t Mc;               /**< LAPI_MC_XFER. */
  lapi_long_t Reserve[16];    /**< Room for later kinds. */
} lapi_xfer_t;

/* -------------------------------------------------------------- utilities */

/** LAPI_REGISTER_DGSP (not supported). */
typedef struct {
  lapi_util_type_t Util_type;   /**< LAPI_REGISTER_DGSP. */
  lapi_dgsp_descr_t *idgsp;     /**< In: program. */
  lapi_dg_handle_t dgsp_handle; /**< Out: handle. */
  lapi_usr_fcall_t in_usr_func; /**< In: calling context. */
  lapi_status_t status;         /**< Out: status. */
} lapi_reg_dgsp_t;

/** LAPI_RESERVE_DGSP (not supported). */
typedef struct {
  lapi_util_type_t Util_type;   /**< LAPI_RESERVE_DGSP. */
  lapi_dg_handle_t dgsp_handle; /**< In: handle. */
  lapi_usr_fcall_t in_usr_func; /**< In: calling context. */
  lapi_status_t status;         /**< Out: status. */
} lapi_resv_dgsp_t;

/** LAPI_UNRESERVE_DGSP (not supported). */
typedef struct {
  lapi_util_type_t Util_type;   /**< LAPI_UNRESERVE_DGSP. */
  lapi_dg_handle_t dgsp_handle; /**< In: handle. */
  lapi_usr_fcall_t in_usr_func; /**< In: calling context. */
  lapi_status_t status;         /**< Out: status. */
} lapi_dref_dgsp_t;

/** Condition variable used with the LAPI_GET_THREAD_FUNC functions. */
typedef pthread_cond_t lapi_cond_t;

/** Owner reported by mutex_getowner when nobody holds the lock. */
#define LAPI_NULL_THREAD_ID ((pthread_t)-1)

/* For lapi_cond_timedwait_t, whatever <time.h> declared. */
struct timespec;

/** Acquire the handle's lock (the lock LAPI holds while it dispatches). */
typedef int (*lapi_mutex_lock_t)(lapi_handle_t hndl);
/** Release the handle's lock. */
typedef int (*lapi_mutex_unlock_t)(lapi_handle_t hndl);
/** Try to acquire the handle's lock: 0 or EBUSY. */
typedef int (*lapi_mutex_trylock_t)(lapi_handle_t hndl);
/** Thread holding the handle's lock, or LAPI_NULL_THREAD_ID. */
typedef int (*lapi_mutex_getowner_t)(lapi_handle_t hndl, pthread_t *tid);
/** Initialise a condition for use with the handle's lock. */
typedef int (*lapi_cond_init_t)(lapi_handle_t hndl, lapi_cond_t *cond);
/** Destroy a condition. */
typedef int (*lapi_cond_destroy_t)(lapi_handle_t hndl, lapi_cond_t *cond);
/** Wait on cond, releasing the handle's lock meanwhile (caller holds it). */
typedef int (*lapi_cond_wait_t)(lapi_handle_t hndl, lapi_cond_t *cond);
/** As cond_wait, until the absolute CLOCK_REALTIME time: 0 or ETIMEDOUT. */
typedef int (*lapi_cond_timedwait_t)(lapi_handle_t hndl, lapi_cond_t *cond,
                                     struct timespec *abstime);
/** Wake one waiter of cond. */
typedef int (*lapi_cond_signal_t)(lapi_handle_t hndl, lapi_cond_t *cond);

/**
 * LAPI_GET_THREAD_FUNC: LAPI_Util fills in functions that lock the
 * handle's internal lock and wait on conditions with it, so a program can
 * synchronise with its handlers.  Each returns 0 or an errno value.
 */
typedef struct {
  lapi_util_type_t Util_type;           /**< In: LAPI_GET_THREAD_FUNC. */
  lapi_mutex_lock_t mutex_lock;         /**< Out. */
  lapi_mutex_unlock_t mutex_unlock;     /**< Out. */
  lapi_mutex_trylock_t mutex_trylock;   /**< Out. */
  lapi_mutex_getowner_t mutex_getowner; /**< Out. */
  lapi_cond_wait_t cond_wait;           /**< Out. */
  lapi_cond_timedwait_t cond_timedwait; /**< Out. */
  lapi_cond_signal_t cond_signal;       /**< Out. */
  lapi_cond_init_t cond_init;           /**< Out. */
  lapi_cond_destroy_t cond_destroy;     /**< Out. */
} lapi_thread_func_t;

/** Argument of LAPI_Util: one command, chosen by Util_type. */
typedef union {
  lapi_util_type_t Util_type;   /**< Selects the member. */
  lapi_reg_dgsp_t RegDgsp;      /**< LAPI_REGISTER_DGSP. */
  lapi_dref_dgsp_t DrefDgsp;    /**< LAPI_UNRESERVE_DGSP. */
  lapi_resv_dgsp_t ResvDgsp;    /**< LAPI_RESERVE_DGSP. */
  lapi_thread_func_t ThreadFunc; /**< LAPI_GET_THREAD_FUNC. */
  lapi_long_t Reserve[16];      /**< Room for later commands. */
} lapi_util_t;

/* ============================================================= functions */

/** Start a LAPI instance; lapi_info must be zeroed except the fields set. */
int LAPI_Init(lapi_handle_t *hndl, lapi_info_t *lapi_info);
/** End a LAPI instance (collective). */
int LAPI_Term(lapi_handle_t hndl);
/** Read a setting or property (see lapi_query_t). */
int LAPI_Qenv(lapi_handle_t hndl, lapi_query_t query, int *ret_val);
/** Change ERROR_CHK, TIMEOUT, INTERRUPT_SET or ACK_THRESHOLD. */
int LAPI_Senv(lapi_handle_t hndl, lapi_query_t query, int set_val);
/** Write the text of error_code into buf (>= LAPI_MAX_ERR_STRING bytes). */
int LAPI_Msg_string(int error_code, void *buf);
/** Set a counter. */
int LAPI_Setcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val);
/** Read a counter. */
int LAPI_Getcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int *val);
/** Wait until cntr >= val, subtract val; cur_cntr_val gets the rest. */
int LAPI_Waitcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val,
                  int *cur_cntr_val);
/** As LAPI_Waitcntr, without polling (interrupt mode). */
int LAPI_Nopoll_wait(lapi_handle_t hndl, lapi_cntr_t *cntr, int val,
                     int *cur_cntr_val);
/** Set a counter and track which destinations answered (dest_status). */
int LAPI_Setcntr_wstatus(lapi_handle_t hndl, lapi_cntr_t *cntr, int val,
                         uint *dest, int *dest_status);
/** Make progress once (polling mode). */
int LAPI_Probe(lapi_handle_t hndl);
/** Make progress up to cnt times or until something completed. */
int LAPI_Msgpoll(lapi_handle_t hndl, uint cnt, lapi_msg_info_t *info);
/** Active message: header handler at tgt, then udata_len bytes of udata. */
int LAPI_Amsend(lapi_handle_t hndl, uint tgt, void *hdr_hdl, void *uhdr,
                uint uhdr_len, void *udata, ulong udata_len,
                lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr,
                lapi_cntr_t *cmpl_cntr);
/** Vector active message: the header handler returns the target vector. */
int LAPI_Amsendv(lapi_handle_t hndl, uint tgt, void *hdr_hdl, void *uhdr,
                 uint uhdr_len, lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
                 lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr);
/** Copy len bytes from org_addr to tgt_addr in task tgt. */
int LAPI_Put(lapi_handle_t hndl, uint tgt, ulong len, void *tgt_addr,
             void *org_addr, lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr,
             lapi_cntr_t *cmpl_cntr);
/** Copy len bytes from tgt_addr in task tgt to org_addr. */
int LAPI_Get(lapi_handle_t hndl, uint tgt, ulong len, void *tgt_addr,
             void *org_addr, lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr);
/** Vector put: org_vec here into tgt_vec (target addresses). */
int LAPI_Putv(lapi_handle_t hndl, uint tgt, lapi_vec_t *tgt_vec,
              lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
              lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr);
/** Vector get: tgt_vec (target addresses) into org_vec here. */
int LAPI_Getv(lapi_handle_t hndl, uint tgt, lapi_vec_t *tgt_vec,
              lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
              lapi_cntr_t *org_cntr);
/** Atomic 32-bit read-modify-write of *tgt_var in task tgt. */
int LAPI_Rmw(lapi_handle_t hndl, RMW_ops_t op, uint tgt, int *tgt_var,
             int *in_val, int *prev_tgt_val, lapi_cntr_t *org_cntr);
/** Atomic 64-bit read-modify-write of *tgt_var in task tgt. */
int LAPI_Rmw64(lapi_handle_t hndl, RMW_ops_t op, uint tgt,
               long long *tgt_var, long long *in_val, long long *prev_tgt_val,
               lapi_cntr_t *org_cntr);
/** Wait until this task's operations on hndl completed at their targets. */
int LAPI_Fence(lapi_handle_t hndl);
/** Barrier of all tasks plus a fence (collective). */
int LAPI_Gfence(lapi_handle_t hndl);
/** An address as a ulong (for Fortran). */
int LAPI_Address(void *my_addr, ulong *ret_addr);
/** Exchange one address per task: add_tab[i] = my_tab of task i. */
int LAPI_Address_init(lapi_handle_t hndl, void *my_tab, void *add_tab[]);
/** As LAPI_Address_init with 64-bit addresses. */
int LAPI_Address_init64(lapi_handle_t hndl, lapi_long_t my_tab,
                        lapi_long_t *add_tab);
/** Register a header handler (or address) under index addr_hndl. */
int LAPI_Addr_set(lapi_handle_t hndl, void *addr, int addr_hndl);
/** Read the address registered under addr_hndl. */
int LAPI_Addr_get(lapi_handle_t hndl, void **addr, int addr_hndl);
/** Cancel the messages to task dest and refuse new ones. */
int LAPI_Purge_totask(lapi_handle_t hndl, uint dest);
/** Accept messages to task dest again after LAPI_Purge_totask. */
int LAPI_Resume_totask(lapi_handle_t hndl, uint dest);
/** Any transfer, described by xfer_cmd->Xfer_type. */
int LAPI_Xfer(lapi_handle_t hndl, lapi_xfer_t *xfer_cmd);
/** Utility command, described by util_p->Util_type. */
int LAPI_Util(lapi_handle_t hndl, lapi_util_t *util_p);

/* Profiling interface: the same calls under PLAPI_ names. */

/** Profiling entry of LAPI_Init. */
int PLAPI_Init(lapi_handle_t *hndl, lapi_info_t *lapi_info);
/** Profiling entry of LAPI_Term. */
int PLAPI_Term(lapi_handle_t hndl);
/** Profiling entry of LAPI_Qenv. */
int PLAPI_Qenv(lapi_handle_t hndl, lapi_query_t query, int *ret_val);
/** Profiling entry of LAPI_Senv. */
int PLAPI_Senv(lapi_handle_t hndl, lapi_query_t query, int set_val);
/** Profiling entry of LAPI_Msg_string. */
int PLAPI_Msg_string(int error_code, void *buf);
/** Profiling entry of LAPI_Setcntr. */
int PLAPI_Setcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val);
/** Profiling entry of LAPI_Getcntr. */
int PLAPI_Getcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int *val);
/** Profiling entry of LAPI_Waitcntr. */
int PLAPI_Waitcntr(lapi_handle_t hndl, lapi_cntr_t *cntr, int val,
                   int *cur_cntr_val);
/** Profiling entry of LAPI_Nopoll_wait. */
int PLAPI_Nopoll_wait(lapi_handle_t hndl, lapi_cntr_t *cntr, int val,
                      int *cur_cntr_val);
/** Profiling entry of LAPI_Setcntr_wstatus. */
int PLAPI_Setcntr_wstatus(lapi_handle_t hndl, lapi_cntr_t *cntr, int val,
                          uint *dest, int *dest_status);
/** Profiling entry of LAPI_Probe. */
int PLAPI_Probe(lapi_handle_t hndl);
/** Profiling entry of LAPI_Msgpoll. */
int PLAPI_Msgpoll(lapi_handle_t hndl, uint cnt, lapi_msg_info_t *info);
/** Profiling entry of LAPI_Amsend. */
int PLAPI_Amsend(lapi_handle_t hndl, uint tgt, void *hdr_hdl, void *uhdr,
                 uint uhdr_len, void *udata, ulong udata_len,
                 lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr,
                 lapi_cntr_t *cmpl_cntr);
/** Profiling entry of LAPI_Amsendv. */
int PLAPI_Amsendv(lapi_handle_t hndl, uint tgt, void *hdr_hdl, void *uhdr,
                  uint uhdr_len, lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
                  lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr);
/** Profiling entry of LAPI_Put. */
int PLAPI_Put(lapi_handle_t hndl, uint tgt, ulong len, void *tgt_addr,
              void *org_addr, lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr,
              lapi_cntr_t *cmpl_cntr);
/** Profiling entry of LAPI_Get. */
int PLAPI_Get(lapi_handle_t hndl, uint tgt, ulong len, void *tgt_addr,
              void *org_addr, lapi_cntr_t *tgt_cntr, lapi_cntr_t *org_cntr);
/** Profiling entry of LAPI_Putv. */
int PLAPI_Putv(lapi_handle_t hndl, uint tgt, lapi_vec_t *tgt_vec,
               lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
               lapi_cntr_t *org_cntr, lapi_cntr_t *cmpl_cntr);
/** Profiling entry of LAPI_Getv. */
int PLAPI_Getv(lapi_handle_t hndl, uint tgt, lapi_vec_t *tgt_vec,
               lapi_vec_t *org_vec, lapi_cntr_t *tgt_cntr,
               lapi_cntr_t *org_cntr);
/** Profiling entry of LAPI_Rmw. */
int PLAPI_Rmw(lapi_handle_t hndl, RMW_ops_t op, uint tgt, int *tgt_var,
              int *in_val, int *prev_tgt_val, lapi_cntr_t *org_cntr);
/** Profiling entry of LAPI_Rmw64. */
int PLAPI_Rmw64(lapi_handle_t hndl, RMW_ops_t op, uint tgt,
                long long *tgt_var, long long *in_val,
                long long *prev_tgt_val, lapi_cntr_t *org_cntr);
/** Profiling entry of LAPI_Fence. */
int PLAPI_Fence(lapi_handle_t hndl);
/** Profiling entry of LAPI_Gfence. */
int PLAPI_Gfence(lapi_handle_t hndl);
/** Profiling entry of LAPI_Address. */
int PLAPI_Address(void *my_addr, ulong *ret_addr);
/** Profiling entry of LAPI_Address_init. */
int PLAPI_Address_init(lapi_handle_t hndl, void *my_tab, void *add_tab[]);
/** Profiling entry of LAPI_Address_init64. */
int PLAPI_Address_init64(lapi_handle_t hndl, lapi_long_t my_tab,
                         lapi_long_t *add_tab);
/** Profiling entry of LAPI_Addr_set. */
int PLAPI_Addr_set(lapi_handle_t hndl, void *addr, int addr_hndl);
/** Profiling entry of LAPI_Addr_get. */
int PLAPI_Addr_get(lapi_handle_t hndl, void **addr, int addr_hndl);
/** Profiling entry of LAPI_Purge_totask. */
int PLAPI_Purge_totask(lapi_handle_t hndl, uint dest);
/** Profiling entry of LAPI_Resume_totask. */
int PLAPI_Resume_totask(lapi_handle_t hndl, uint dest);
/** Profiling entry of LAPI_Xfer. */
int PLAPI_Xfer(lapi_handle_t hndl, lapi_xfer_t *xfer_cmd);
/** Profiling entry of LAPI_Util. */
int PLAPI_Util(lapi_handle_t hndl, lapi_util_t *util_p);

#ifdef __cplusplus
}
#endif

#endif /* OPENLAPI_LAPI_H */
