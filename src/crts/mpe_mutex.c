/*
 * mpe_mutex.c - the node lock (CRTS_mutex_*_node) and locks on a user word
 * (CRTS_mutex_lock/trylock/unlock).
 *
 * A user lock is the low 32 bits of the int64_t the caller names (0 free,
 * 1 held, 2 held with sleepers; the high bits are left alone), driven by
 * the crts_lockword algorithm with process-shared futexes: the manual lets
 * a word in memory shared between processes serve as a node lock.
 */
#include <stdint.h>

#include "crts_cg.h"
#include "crts_node.h"

/* ------------------------------------------------------------- node lock */

int CRTS_mutex_lock_node(void)
{
  const char *call = "CRTS_mutex_lock_node";
  const struct crts_node *node = crts_node_get(call);
  if (!node)
    return -1;
  struct crts_node_state *st = node->st;
  uint64_t me = crts_node_whoami();
  if (atomic_load_explicit(&st->mpe_owner, memory_order_relaxed) == me) {
    crts_report(call, "this process already holds the node lock (it is not "
                "recursive): unlock it first");
    return 1;
  }
  crts_lock_acquire(&st->mpe_lock, node->shared);
  atomic_store_explicit(&st->mpe_owner, me, memory_order_relaxed);
  return 0;
}

int CRTS_mutex_trylock_node(void)
{
  const struct crts_node *node = crts_node_get("CRTS_mutex_trylock_node");
  if (!node)
    return -1;
  struct crts_node_state *st = node->st;
  if (crts_lock_try(&st->mpe_lock) != 0)
    return 1; /* busy is an answer, not an error: no report */
  atomic_store_explicit(&st->mpe_owner, crts_node_whoami(),
                        memory_order_relaxed);
  return 0;
}

int CRTS_mutex_unlock_node(void)
{
  const char *call = "CRTS_mutex_unlock_node";
  const struct crts_node *node = crts_node_get(call);
  if (!node)
    return -1;
  struct crts_node_state *st = node->st;
  if (atomic_load_explicit(&st->mpe_owner, memory_order_relaxed) !=
      crts_node_whoami()) {
    crts_report(call, "this process does not hold the node lock");
    return 1;
  }
  atomic_store_explicit(&st->mpe_owner, 0, memory_order_relaxed);
  crts_lock_release(&st->mpe_lock, node->shared);
  return 0;
}

/* ------------------------------------------------------- user word lock */

/* The futex word inside *lock (its low 32 bits), or NULL after a report. */
static _Atomic uint32_t *lock_word(const char *call, volatile int64_t *lock)
{
  if (!lock) {
    crts_report(call, "lock is NULL");
    return NULL;
  }
  if ((uintptr_t)lock % sizeof(int64_t) != 0) {
    crts_report(call, "lock %p is not aligned to 8 bytes", (void *)lock);
    return NULL;
  }
  char *p = (char *)(uintptr_t)lock;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  p += sizeof(uint32_t);
#endif
  _Atomic uint32_t *w = (_Atomic uint32_t *)p;
  uint32_t v = atomic_load_explicit(w, memory_order_relaxed);
  if (v > 2) {
    crts_report(call, "lock %p holds %#x, not a lock state: set it to 0 "
                "before first use", (void *)lock, (unsigned)v);
    return NULL;
  }
  return w;
}

int CRTS_mutex_lock(volatile int64_t *lock)
{
  _Atomic uint32_t *w = lock_word("CRTS_mutex_lock", lock);
  if (!w)
    return -1;
  crts_lockword_acquire(w, 1);
  return 0;
}

int CRTS_mutex_trylock(volatile int64_t *lock)
{
  _Atomic uint32_t *w = lock_word("CRTS_mutex_trylock", lock);
  if (!w)
    return -1;
  return crts_lockword_try(w) ? 1 : 0;
}

int CRTS_mutex_unlock(volatile int64_t *lock)
{
  const char *call = "CRTS_mutex_unlock";
  _Atomic uint32_t *w = lock_word(call, lock);
  if (!w)
    return -1;
  if (atomic_load_explicit(w, memory_order_relaxed) == 0) {
    crts_report(call, "lock %p is not locked", (void *)lock);
    return 1;
  }
  crts_lockword_release(w, 1);
  return 0;
}
