/*
 * crts_cg.h - internal state of the emulated core group (CG).
 *
 * One process is one CG.  The MPE is whichever thread calls the MPE API
 * (normally main).  CPEs are pool threads whose stack is their LDM slice, so
 * that their stack, their static thread-locals (placed by glibc at the top of
 * the stack memory) and their LDM heap all live in the 256 KiB slice:
 *
 *   slice i:  [ heap ... | guard page | stack ...  TLS + TCB ]
 *             ^ldm_base(i)                                    ^ +256 KiB
 *
 * Slices sit a power-of-two stride apart in one arena with an inaccessible
 * gap after each, so "is this LDM?" is a range check and translating an
 * LDM address between CPEs is one offset, as on the hardware where every CPE
 * sees its own LDM at the same addresses.
 */
#ifndef CRTS_CG_H
#define CRTS_CG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "crts.h"
#include "crts_wait.h"

/* Life of one CPE slot. */
enum crts_cpe_state {
  CRTS_CPE_IDLE = 0,  /* free for create/spawn */
  CRTS_CPE_RUNNING,   /* running a thread */
  CRTS_CPE_DONE,      /* finished a create()d thread, not yet waited for */
  CRTS_CPE_ENDED      /* shut down by athread_end / athread_halt */
};

/* Engine statistics kinds (one counter pair per kind and CPE). */
enum crts_stat_kind {
  CRTS_STAT_DMA_GET = 0, /* main memory -> LDM */
  CRTS_STAT_DMA_PUT,     /* LDM -> main memory */
  CRTS_STAT_RMA,         /* LDM -> LDM */
  CRTS_STAT_MPE_COPY,    /* copied by the MPE itself (crts_engine.h) */
  CRTS_STAT_KINDS
};

struct crts_cpe {
  int tid;
  char *ldm;              /* slice base: first byte of the LDM heap */
  char *heap_limit;       /* end of the heap area (start of the guard) */
  char *heap_top;         /* first free heap byte */
  struct { char *p; size_t len; } holes[16]; /* freed blocks below top */
  int nholes;
  char *stack_lo;         /* first byte of the stack area */
  size_t static_ldm;      /* bytes of TLS + TCB measured at the slice top */
  pthread_t thread;
  int thread_started;

  /* Work handed over by the MPE (create or spawn). */
  void (*fn)(void *);
  void *arg;
  int flush_on_exit;      /* spawn (not spawn_noflush): flush scache at end */
  int in_group;           /* the work is part of a spawned group */
  _Atomic int quit;       /* athread_end/halt: leave the pool loop */
  _Atomic uint32_t state; /* enum crts_cpe_state; futex word for wait() */

  /* Reply word this CPE is blocked on (NULL when not waiting). */
  struct crts_waiter waiting_on;

  /* Engine statistics, written only by this CPE's thread. */
  _Atomic uint64_t stat_ops[CRTS_STAT_KINDS];
  _Atomic uint64_t stat_bytes[CRTS_STAT_KINDS];
} __attribute__((aligned(64)));

struct crts_cg {
  _Atomic int initialized;
  int halted;
  int ncpes;              /* usable CPEs (CRTS_NUM_CPES), 1..64 */
  int cgn;                /* CG number on the node (CRTS_CGN) */
  size_t slice_stride;    /* distance between slices (LDM + guard), 2^19 */
  size_t stack_size;      /* stack reserve inside each slice */
  char *arena;            /* 64 slices */
  size_t arena_len;
  int verbose;            /* CRTS_VERBOSE */
  long scache_size;       /* CRTS_SCACHE_SIZE */

  pthread_mutex_t mpe_lock; /* serialises MPE-side create/spawn/join */

  /* Doorbell every idle pool thread sleeps on (bitset futex per CPE). */
  _Atomic uint32_t doorbell;

  /* Spawned group. */
  int group_active;       /* a spawn happened and was not joined yet */
  int group_size;         /* CPEs in the current group */
  uint64_t group_mask;    /* bit tid set: CPE tid is in the current group */
  _Atomic uint32_t group_running; /* CPEs of the group still running */

  struct crts_cpe cpe[CRTS_MAX_SPE_NUM];
};

extern struct crts_cg crts_cg;

/* The calling thread's CPE, or NULL on the MPE / any non-CPE thread. */
extern __thread struct crts_cpe *crts_self;

/* ---- LDM geometry (crts_ldm.c) */

/* Map the arena and carve the slices; 0 or -1. */
int crts_ldm_arena_init(void);
/* tid whose LDM slice holds p, or -1 if p is not LDM. */
int crts_ldm_owner(const void *p);
/* 1 if [p, p+len) lies in the usable part of one slice; *owner set. */
int crts_ldm_range(const void *p, size_t len, int *owner);
/* The same LDM location as p (in any slice) in CPE tid's slice. */
void *crts_ldm_translate(const void *p, int tid);
/* Reset a CPE's LDM heap (at the start of each spawn). */
void crts_ldm_heap_reset(struct crts_cpe *cpe);

/* ---- CPE lifecycle (mpe_athread.c, cpe_ids.c) */

/* Bind the calling pool thread to cpe: crts_self and the CRTS_* ids. */
void crts_ids_set(struct crts_cpe *cpe);

/* Start the pool threads of CPEs 0..ncpes-1 (CRTS_init); 0 or -1. */
int crts_pool_start(void);
/* 1 if CPE tid takes part in the current spawned group. */
static inline int crts_in_group(int tid)
{
  return tid >= 0 && tid < CRTS_MAX_SPE_NUM &&
         ((crts_cg.group_mask >> tid) & 1u);
}
/* Read an environment setting as a size ("32768", "32K", "1M"). */
long crts_env_size(const char *name, long fallback);

/* ---- checks and reports (crts_report.c) */

/*
 * Print one line "crts: CPE <tid>: <call>: <message>" (or "MPE") when
 * CRTS_VERBOSE >= 1.  Returns nothing; callers return their own code.
 */
void crts_report(const char *call, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* As crts_report, then abort: for void calls that cannot continue. */
void crts_fatal(const char *call, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* 1 if the runtime is initialised; reports and returns 0 otherwise. */
int crts_check_init(const char *call);
/* The calling CPE, or NULL after reporting that call needs a CPE. */
struct crts_cpe *crts_check_cpe(const char *call);

/* ---- scache hook run by every CPE at the end of a flushing spawn */
void crts_scache_exit_flush(void);

/* Count one engine operation of len bytes for the calling CPE. */
static inline void crts_stat_add(struct crts_cpe *cpe, enum crts_stat_kind k,
                                 uint64_t len)
{
  atomic_store_explicit(&cpe->stat_ops[k],
                        atomic_load_explicit(&cpe->stat_ops[k],
                                             memory_order_relaxed) + 1,
                        memory_order_relaxed);
  atomic_store_explicit(&cpe->stat_bytes[k],
                        atomic_load_explicit(&cpe->stat_bytes[k],
                                             memory_order_relaxed) + len,
                        memory_order_relaxed);
}

#endif /* CRTS_CG_H */
