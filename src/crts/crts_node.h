/*
 * crts_node.h - the node scope: the core groups of one job on one host.
 *
 * Every CG is a process.  The node objects (the MPE barrier of
 * CRTS_sync_node, the lock of CRTS_mutex_*_node, the leaders' barrier of
 * CRTS_ssync_node and the lock of CRTS_smutex_*_node) live in one
 * struct crts_node_state:
 *
 *   - CRTS_JOB_KEY set: in the POSIX shared memory object "/crts-<key>",
 *     created by whichever process of the job comes first and shared by the
 *     CRTS_NODE_CGS processes of the job on this host (process-shared
 *     futexes);
 *   - CRTS_JOB_KEY unset: in process-private memory, a node of one CG.
 *
 * The state is attached lazily, once per process, by the first node call;
 * the last process to leave removes the shared object.  docs/CRTS-node.md
 * describes the settings.
 */
#ifndef CRTS_NODE_H
#define CRTS_NODE_H

#include <stdint.h>

#include "crts_wait.h"

/* Largest CRTS_NODE_CGS accepted. */
#define CRTS_NODE_MAX_CGS 64

/* The node objects; all-zero is the initial state of every member. */
struct crts_node_state {
  _Atomic uint32_t ready;   /* CRTS_NODE_MAGIC once initialised */
  uint32_t layout;          /* sizeof(struct crts_node_state) */
  uint32_t cgs;             /* CRTS_NODE_CGS of the creator */
  _Atomic uint32_t users;   /* attached processes (+ CLOSED bit) */
  _Atomic uint64_t cgn_seen; /* bit n: a process with CRTS_CGN=n attached */

  /* MPE side: CRTS_sync_node, CRTS_mutex_*_node. */
  struct crts_barrier mpe_barrier __attribute__((aligned(64)));
  struct crts_lock mpe_lock __attribute__((aligned(64)));
  _Atomic uint64_t mpe_owner; /* crts_node_whoami() of the holder, or 0 */

  /* CPE side: one leader per CG meets here in CRTS_ssync_node. */
  struct crts_barrier cpe_barrier __attribute__((aligned(64)));
  struct crts_lock cpe_lock __attribute__((aligned(64)));
  _Atomic uint64_t cpe_owner;
};

/* The attached node as seen by this process. */
struct crts_node {
  struct crts_node_state *st;
  uint32_t cgs;   /* CGs (processes) on this node; 1 without CRTS_JOB_KEY */
  int shared;     /* 1: st is in shared memory (process-shared futexes) */
};

/*
 * Attach to the node state on first use (thread-safe) and return it, or
 * NULL after reporting (under call's name) why the node is unusable; the
 * reason is reported once per call site and process.  Needs CRTS_init.
 */
const struct crts_node *crts_node_get(const char *call);

/* Identity of the calling thread in node lock owners: pid and CPE (or MPE). */
uint64_t crts_node_whoami(void);

/*
 * Leave the node: the last process to leave removes the shared object.
 * Runs at exit; calling it earlier is allowed (afterwards this process must
 * make no node call).  Idempotent.
 */
void crts_node_detach(void);

#endif /* CRTS_NODE_H */
