/*
 * crts.h - the Sunway SW26010Pro common runtime (CRTS), emulated on Linux.
 *
 * openlapi's libcrts emulates one core group (CG) per process: the calling
 * process is the management core (MPE) and CRTS_athread_spawn runs work on up
 * to 64 compute cores (CPEs), each a thread with a 256 KiB local data memory
 * (LDM) that holds its stack, its __thread_local variables and its LDM heap.
 * DMA moves data between main memory and the caller's LDM, RMA between LDMs.
 *
 * Every function and name follows the CRTS external-interface manual; the
 * numeric failure codes are documented on each declaration.  Unless a
 * comment says otherwise a function returns 0 on success and non-zero on
 * failure, and a failure prints one line naming the CPE and the call
 * (silence it with CRTS_VERBOSE=0).  See docs/CRTS.md for every setting.
 */
#ifndef CRTS_H
#define CRTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- basics */

/** Number of CPEs in a core group (8 x 8 mesh). */
#define CRTS_MAX_SPE_NUM 64
/** Rows and columns of the CPE mesh. */
#define CRTS_ROW_NUM 8
#define CRTS_COL_NUM 8
/** Bytes of local data memory (LDM) per CPE. */
#define CRTS_MAX_LDM_SIZE (256 * 1024)

/*
 * Storage classes of real CPE code.  A __thread_local variable lives in the
 * LDM of the CPE that touches it; here it is a thread-local whose storage
 * the emulator places inside that CPE's LDM slice.
 */
#ifndef __thread_local
#define __thread_local __thread
#endif
#ifndef __thread_local_fix
#define __thread_local_fix __thread
#endif
#ifndef __thread_local_share
#define __thread_local_share __thread
#endif
#ifndef __ldm
#define __ldm __thread
#endif

/**
 * Reply word: counts completed DMA/RMA operations.  It must live in LDM at
 * the same address on both sides (declare it as a __thread_local global).
 */
typedef volatile int crts_rply_t;

/** Directions of CRTS_memcpy_sldm. */
#define MEM_TO_LDM 0
#define LDM_TO_MEM 1

/* --------------------------------------------------------- MPE: athread */
/* Each athread_X without the CRTS_ prefix is the old-API spelling of
 * CRTS_athread_X (CRTS_init: athread_init), with the same behaviour. */

/** Initialise the runtime; required before any other MPE or CPE call. */
int CRTS_init(void);
/** Old-API spelling of CRTS_init. */
int athread_init(void);

/**
 * Start fp(arg) on CPE id.  Returns 0, 1 if that CPE runs another thread,
 * 2 if it finished one that was not yet waited for, -1 on bad input
 * (id out of range, fp NULL, runtime not initialised or halted).
 */
int CRTS_athread_create(int id, void (*fp)(void), void *arg);
int athread_create(int id, void (*fp)(void), void *arg);
/** Block until the thread started on CPE id ends.  -1: nothing to wait for. */
int CRTS_athread_wait(int id);
int athread_wait(int id);
/** Shut CPE id down for the rest of the process (must be idle). */
int CRTS_athread_end(int id);
int athread_end(int id);

/**
 * Run fp(arg) on every available CPE; each CPE flushes its cache at the end.
 * Returns 0, 1 if the group is still running, 2 if it finished but was not
 * joined, -1 on bad input (fp NULL, not initialised, halted).
 */
int CRTS_athread_spawn(void (*fp)(void), void *arg);
int athread_spawn(void (*fp)(void), void *arg);
/** As CRTS_athread_spawn without the final cache flush. */
int CRTS_athread_spawn_noflush(void (*fp)(void), void *arg);
int athread_spawn_noflush(void (*fp)(void), void *arg);
/** Block until the spawned group ends.  -1: no group to join. */
int CRTS_athread_join(void);
int athread_join(void);
/** Release the CPE group for good (it must be idle). */
int CRTS_athread_halt(void);
int athread_halt(void);
/** Number of CPEs this process may use, 0..64 (CRTS_NUM_CPES); -1 on error. */
int CRTS_athread_get_max_threads(void);
int athread_get_max_threads(void);

/* ------------------------------------------------------- MPE: sync, mutex */

/** Barrier of the MPEs of every core group of this job on this host. */
void CRTS_sync_node(void);
/** MPE <-> CPE tid barrier; that CPE calls CRTS_ssync_master_spe(). */
void CRTS_sync_master_spe(int tid);
/** MPE <-> spawned group barrier; every CPE calls CRTS_ssync_master_array(). */
void CRTS_sync_master_array(void);

/** Lock shared by all processes of the job on this host. */
int CRTS_mutex_lock_node(void);
/** 0 if taken, non-zero (1) if the node lock is held elsewhere. */
int CRTS_mutex_trylock_node(void);
/** Release the node lock (held by this process). */
int CRTS_mutex_unlock_node(void);
/** Lock on a user word (zero = free); in shared memory it locks across
 *  processes. */
int CRTS_mutex_lock(volatile int64_t *lock);
/** 0 if taken, 1 if held elsewhere, -1 on a NULL or misaligned word. */
int CRTS_mutex_trylock(volatile int64_t *lock);
/** Release a lock taken with CRTS_mutex_lock or CRTS_mutex_trylock. */
int CRTS_mutex_unlock(volatile int64_t *lock);

/** The MPE cycle counter. */
unsigned long CRTS_time_cycle(void);

/**
 * Install the MPE handler of CPE signals: every CRTS_ssig_host(content)
 * runs funp(content) in MPE context, one at a time.
 */
void CRTS_sig_user_init(void *(*funp)(void *));

/* ---------------------------------------------------------- MPE: task */

/**
 * Dynamic task distribution over every core group (process) of the job.
 * Returns the next task id (0..task_num-1; each id goes to exactly one
 * process), handed out in blocks of block_size fetched from one job-wide
 * counter.  Collective: every process of the job calls it, in the loop
 *   while ((i = CRTS_task_fetch(file, n, block)) >= 0) { ... }
 * with a signed i.  mid_file_name is the checkpoint file: one byte per
 * block, '1' once the block is finished (recorded when its process fetches
 * its next block); a restarted job runs only the unfinished blocks.
 * Returns -1 when every task has been handed out (or after CRTS_task_quit),
 * -2 on bad arguments (NULL or empty name, task_num or block_size <= 0, a
 * call on a CPE, other arguments while a loop runs), -3 when the mid file
 * cannot be created, read or belongs to another loop, -4 when the other
 * processes of the job cannot be reached.  See docs/CRTS.md.
 */
long CRTS_task_fetch(char *mid_file_name, long task_num, long block_size);
/**
 * End the task loop of every process: the mid file marks all blocks
 * finished, this process's next CRTS_task_fetch returns -1 and so does
 * every other process's next block fetch.  0, or non-zero on failure.
 */
int CRTS_task_quit(void);

/* ------------------------------------------------------------ CPE: ids */

/* Read-only ids of the calling CPE (-1 on the MPE). */
extern __thread int CRTS_tid;      /**< CPE number 0..63 */
extern __thread int CRTS_rid;      /**< row 0..7 */
extern __thread int CRTS_cid;      /**< column 0..7 */
extern __thread int CRTS_row_size; /**< CPEs in this CPE's row, 1..8 */
extern __thread int CRTS_col_size; /**< CPEs in this CPE's column, 1..8 */
extern __thread int CRTS_cgn;      /**< core group number on the node */
extern __thread int CRTS_spc_tid;  /**< cluster-major CPE number 0..63 */
extern __thread int CRTS_spcn;     /**< cluster (2x2 CPEs) number 0..15 */

/* The same ids as calls; -1 when not called on a CPE. */
char CRTS_smng_get_tid(void);
char CRTS_smng_get_rid(void);
char CRTS_smng_get_spc_tid(void);
char CRTS_smng_get_cid(void);
char CRTS_smng_get_cgn(void);
char CRTS_smng_get_spcn(void);

/* ------------------------------------------------------------ CPE: ssync */
/*
 * Barriers of CPEs of the spawned group.  Each synchronises the caller
 * with the CPEs of its own set, named by the suffix: 2spe, 8spe, 16spe,
 * 32spe are tid/N equal; 1spc, 2spc, 4spc, 8spc that many 2x2 clusters;
 * row and col the caller's row or column.  Every present member of the
 * set must call the same one.
 */

/** Pairwise barrier: CPEs a and b call CRTS_ssync_peer(b) and (a). */
void CRTS_ssync_peer(int tid);
void CRTS_ssync_2spe(void);      /**< tid/2 equal */
void CRTS_ssync_1spc(void);      /**< one 2x2 cluster */
void CRTS_ssync_8spe(void);      /**< tid/8 equal (a row) */
void CRTS_ssync_row(void);      /**< the caller's row */
void CRTS_ssync_col(void);       /**< tid%8 equal (a column) */
void CRTS_ssync_col_left(void);  /**< one column (tid%8 equal) of cid < 4 */
void CRTS_ssync_col_right(void); /**< one column (tid%8 equal) of cid > 3 */
void CRTS_ssync_2spc(void);      /**< two clusters */
void CRTS_ssync_16spe(void);     /**< tid/16 equal */
void CRTS_ssync_4spc(void);     /**< four clusters (tid/16 equal) */
void CRTS_ssync_32spe(void);     /**< tid/32 equal */
void CRTS_ssync_8spc(void);     /**< eight clusters (tid/32 equal) */
void CRTS_ssync_array(void);     /**< every spawned CPE */
void CRTS_ssync_sldm(void);      /**< CPEs that share LDM (a cluster) */
/** This CPE's side of CRTS_sync_master_spe. */
void CRTS_ssync_master_spe(void);
/** The CPEs' side of CRTS_sync_master_array. */
void CRTS_ssync_master_array(void);
void CRTS_ssync_node(void);      /**< every CPE of the job on this host */

/* ----------------------------------------------------------- CPE: smutex */
/*
 * Locks of a set of CPEs, one lock per set, the sets named as the ssync
 * barriers' (2spe ... array; node: every CPE of the job on this host).
 * lock blocks until the calling CPE holds its set's lock, unlock releases
 * it; 0 on success, non-zero (reported) on misuse: a call on the MPE,
 * locking a lock this CPE holds, unlocking one it does not hold.
 */
int CRTS_smutex_lock_2spe(void);
int CRTS_smutex_unlock_2spe(void);
int CRTS_smutex_lock_1spc(void);
int CRTS_smutex_unlock_1spc(void);
int CRTS_smutex_lock_8spe(void);
int CRTS_smutex_unlock_8spe(void);
int CRTS_smutex_lock_row(void);
int CRTS_smutex_unlock_row(void);
int CRTS_smutex_lock_col(void);
int CRTS_smutex_unlock_col(void);
int CRTS_smutex_lock_2spc(void);
int CRTS_smutex_unlock_2spc(void);
int CRTS_smutex_lock_16spe(void);
int CRTS_smutex_unlock_16spe(void);
int CRTS_smutex_lock_4spc(void);
int CRTS_smutex_unlock_4spc(void);
int CRTS_smutex_lock_32spe(void);
int CRTS_smutex_unlock_32spe(void);
int CRTS_smutex_lock_8spc(void);
int CRTS_smutex_unlock_8spc(void);
int CRTS_smutex_lock_array(void);
int CRTS_smutex_unlock_array(void);
int CRTS_smutex_lock_node(void);
int CRTS_smutex_unlock_node(void);

/* ------------------------------------------------------------- CPE: pldm */

/** First free byte of the caller's LDM heap (NULL off a CPE). */
void *CRTS_get_free_addr(void);
/** Bytes left in the caller's LDM heap; -1 off a CPE. */
int CRTS_pldm_get_free_size(void);
/* Below, the names without CRTS_pldm_ are the old API's spellings. */
int get_allocatable_size(void);
/** Allocate from the caller's LDM heap; NULL when it does not fit. */
void *CRTS_pldm_malloc(size_t size);
void *ldm_malloc(size_t size);
/** Free the block p of size bytes (LIFO blocks are returned at once). */
void CRTS_pldm_free(void *p, size_t size);
void ldm_free(void *p, size_t size);
/** Allocate all that is left; *size receives its length. */
void *CRTS_pldm_malloc_max(size_t *size);
void *ldm_malloc_max(size_t *size);
/** Free the whole LDM heap of the caller. */
void CRTS_pldm_free_all(void);
void ldm_free_all(void);

/* -------------------------------------------------------------- CPE: dma */
/*
 * dst first, as memcpy.  Addresses and len must be multiples of 4.  With a
 * stride, main memory holds blocks of bsize bytes separated by gaps of
 * stride bytes (stride 0 = contiguous); the LDM side is contiguous.  get
 * moves main memory into the caller's LDM, put the LDM into main memory;
 * the blocking forms return when the data is in place, the i forms add 1
 * to the caller's reply word *rply once it is (wait with
 * CRTS_dma_wait_value).  Row and column broadcasts reach the CPEs of the
 * caller's row or column.
 */
int CRTS_dma_get(void *dst, void *src, int len);
int CRTS_dma_get_stride(void *dst, void *src, int len, int bsize, int stride);
int CRTS_dma_iget(void *dst, void *src, int len, crts_rply_t *rply);
int CRTS_dma_iget_stride(void *dst, void *src, int len, int bsize, int stride,
                         crts_rply_t *rply);
int CRTS_dma_put(void *dst, void *src, int len);
int CRTS_dma_put_stride(void *dst, void *src, int len, int bsize, int stride);
int CRTS_dma_iput(void *dst, void *src, int len, crts_rply_t *rply);
int CRTS_dma_iput_stride(void *dst, void *src, int len, int bsize, int stride,
                         crts_rply_t *rply);
/** One CPE loads src into dst of every CPE's LDM (non-collective). */
int CRTS_dma_ibcast(void *dst, void *src, int len, crts_rply_t *rply);
int CRTS_dma_ibcast_stride(void *dst, void *src, int len, int bsize, int stride,
                           crts_rply_t *rply);
/** Every CPE calls; each ends with src in its dst. */
int CRTS_dma_bcast_coll(void *dst, void *src, int len);
int CRTS_dma_bcast_stride_coll(void *dst, void *src, int len, int bsize,
                               int stride);
int CRTS_dma_row_ibcast(void *dst, void *src, int len, crts_rply_t *rply);
int CRTS_dma_row_ibcast_stride(void *dst, void *src, int len, int bsize,
                               int stride, crts_rply_t *rply);
int CRTS_dma_row_bcast_coll(void *dst, void *src, int len);
int CRTS_dma_row_bcast_stride_coll(void *dst, void *src, int len, int bsize,
                                   int stride);
int CRTS_dma_col_ibcast(void *dst, void *src, int len, crts_rply_t *rply);
int CRTS_dma_col_ibcast_stride(void *dst, void *src, int len, int bsize,
                               int stride, crts_rply_t *rply);
int CRTS_dma_col_bcast_coll(void *dst, void *src, int len);
int CRTS_dma_col_bcast_stride_coll(void *dst, void *src, int len, int bsize,
                                   int stride);
/** DMA between main memory and the LDM shared by a cluster (all call). */
int CRTS_memcpy_sldm(void *dst, void *src, int len, int direction);
/** Wait until *rply >= value. */
int CRTS_dma_wait_value(crts_rply_t *rply, int value);
/** Fences: the caller's DMAs issued so far are complete (all: every kind). */
int CRTS_dma_barrier(void);
int CRTS_dma_all_barrier(void);

/* -------------------------------------------------------------- CPE: rma */
/*
 * LDM to LDM between CPEs of the spawned group.  l_addr is in the caller's
 * LDM; r_addr and r_rply name the same LDM location on r_tid (pass the
 * address of one's own __thread_local variable).  put: r_rply on r_tid
 * rises by 1 once the data landed there; get: r_rply on r_tid rises once
 * its data was taken.  The i forms also add 1 to the caller's l_rply (put:
 * the buffer may be reused; get: the data is in l_addr).  bcast reaches
 * every CPE of the group, row_ and col_ the caller's row or column, mcast
 * the rows or columns whose bit is set in mask; the sender's own dst
 * receives too.  The _coll forms are collective: every CPE of the scope
 * calls with the same root (a tid, or a column or row number).  A NULL
 * reply word means no reply.
 */
int CRTS_rma_get(void *l_addr, int len, int r_tid, void *r_addr,
                 crts_rply_t *r_rply);
int CRTS_rma_iget(void *l_addr, crts_rply_t *l_rply, int len, int r_tid,
                  void *r_addr, crts_rply_t *r_rply);
int CRTS_rma_put(void *l_addr, int len, int r_tid, void *r_addr,
                 crts_rply_t *r_rply);
int CRTS_rma_iput(void *l_addr, crts_rply_t *l_rply, int len, int r_tid,
                  void *r_addr, crts_rply_t *r_rply);
int CRTS_rma_bcast(void *dst, void *src, int len, crts_rply_t *r_rply);
int CRTS_rma_ibcast(void *dst, void *src, crts_rply_t *l_rply, int len,
                    crts_rply_t *r_rply);
int CRTS_rma_bcast_coll(void *dst, void *src, int len, int root);
int CRTS_rma_row_bcast(void *dst, void *src, int len, crts_rply_t *r_rply);
int CRTS_rma_row_ibcast(void *dst, void *src, int len, crts_rply_t *l_rply,
                        crts_rply_t *r_rply);
int CRTS_rma_row_bcast_coll(void *dst, void *src, int len, int root);
int CRTS_rma_row_mcast(void *dst, void *src, int len, unsigned char mask,
                       crts_rply_t *r_rply);
int CRTS_rma_row_imcast(void *dst, void *src, int len, crts_rply_t *l_rply,
                        unsigned char mask, crts_rply_t *r_rply);
int CRTS_rma_col_bcast(void *dst, void *src, int len, crts_rply_t *r_rply);
int CRTS_rma_col_ibcast(void *dst, void *src, int len, crts_rply_t *l_rply,
                        crts_rply_t *r_rply);
int CRTS_rma_col_bcast_coll(void *dst, void *src, int len, int root);
int CRTS_rma_col_mcast(void *dst, void *src, int len, unsigned char mask,
                       crts_rply_t *r_rply);
int CRTS_rma_col_imcast(void *dst, void *src, int len, crts_rply_t *l_rply,
                        unsigned char mask, crts_rply_t *r_rply);
/** RMA within the LDM shared by a cluster (all of the cluster call). */
int CRTS_sldm_get(void *dst, void *src, int len);
/** Wait until *rply >= value. */
int CRTS_rma_wait_value(crts_rply_t *rply, int value);
/** Fences: the caller's RMAs issued so far are complete (all: every kind). */
int CRTS_rma_barrier(void);
int CRTS_rma_all_barrier(void);

/* ------------------------------------------------ CPE: ssig, sio, stime */

/** Run the MPE's CRTS_sig_user_init handler on content (main memory). */
int CRTS_ssig_host(void *content);
/** Ordered write: the spawned CPEs' blocks land in file in CPE order. */
void CRTS_sio_fwrite(char *filename, void *src, unsigned long size);
/** The calling CPE's cycle counter. */
unsigned long CRTS_stime_cycle(void);

/* ----------------------------------------------------------- CPE: scache */

/** CPE cache size in bytes: 0, 32768 or 131072 (CRTS_SCACHE_SIZE). */
long CRTS_scache_get_size(void);
long get_slave_cache_size(void); /**< old-API spelling */
/** Evict [start, end) from the CPE cache: later reads see main memory. */
void CRTS_scache_evict(void *start, void *end);
void evict_slave_cache_cont(void *start, void *end); /**< old-API spelling */
/** Write the whole CPE cache back: others then see this CPE's writes. */
void CRTS_scache_flush_all(void);
void flush_slave_cache(void); /**< old-API spelling */

/* ------------------------------------------------------------- CPE: ptab */

/** 16 lanes of 32-bit unsigned integers (a 512-bit SIMD register). */
typedef struct { unsigned int v[16]; } uintv16;

/*
 * Parallel tables: 16 copies of a table of 4-byte elements interleaved in
 * LDM (ptable[16 * k + i] is element k of copy i), so that 16 lanes look
 * up at once.  The copy calls fill ptable and return its parallel address
 * (lane i: the LDM address of copy i); lookup and write take that address
 * and one byte offset per lane.  A bad table returns all lanes 0xffffffff.
 */
/** The parallel address of a table already laid out at ptable. */
uintv16 CRTS_get_ptab_addr(unsigned int *ptable);
/** Fill ptable from num (1..16) tables of unit elements (copy i: i % num). */
uintv16 CRTS_ptab_cpy(unsigned int *orig_table_addr[16], int unit, int num,
                      unsigned int *ptable);
/** Fill ptable with 16 copies of one table of unit elements. */
uintv16 CRTS_ptab_cpy16(unsigned int *orig_table_addr, int unit,
                        unsigned int *ptable);
/** Lane i reads the element at offset voffset.v[i] of copy vbase_addr.v[i]. */
uintv16 CRTS_ptab_lookup(uintv16 voffset, uintv16 vbase_addr);
/** Lane i writes value.v[i] there. */
void CRTS_ptab_write(uintv16 voffset, uintv16 vbase_addr, uintv16 value);
/** Build a uintv16 from 16 lane values (lane 0 first). */
uintv16 simd_set_uintv16(unsigned int a0, unsigned int a1, unsigned int a2,
                         unsigned int a3, unsigned int a4, unsigned int a5,
                         unsigned int a6, unsigned int a7, unsigned int a8,
                         unsigned int a9, unsigned int a10, unsigned int a11,
                         unsigned int a12, unsigned int a13, unsigned int a14,
                         unsigned int a15);

/* ------------------------------------------------------------ CPE: scoll */

/** Reduction operations of CRTS_scoll_redurt. */
enum crts_redu_op { OP_add, OP_and, OP_or, OP_xor, OP_eqv, OP_min, OP_max };
/** Element types of CRTS_scoll_redurt. */
enum crts_redu_type {
  CRTS_int, CRTS_uint, CRTS_long, CRTS_ulong, CRTS_float, CRTS_double,
  CRTS_intv16, CRTS_uintv16, CRTS_int512, CRTS_uint512, CRTS_floatv8,
  CRTS_doublev8
};

/** All-to-all over the spawned CPEs: unit i of src goes to CPE i. */
int CRTS_scoll_alltoall(void *src_addr, void *dest_addr, int units_size);
/** As CRTS_scoll_alltoall within src_addr, through buf (buf_item units). */
int CRTS_scoll_alltoall_inplace(void *src_addr, int units_size, void *buf,
                                int buf_item);
/** Allreduce of units elements of dtype with optype over the spawned CPEs. */
int CRTS_scoll_redurt(void *src_addr, void *dest_addr, int units, int dtype,
                      int optype, void *redu_buf, int buf_item);

#ifdef __cplusplus
}
#endif

#endif /* CRTS_H */
