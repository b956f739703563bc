/*
 * cpe_scache.c - the CPE cache.
 *
 * Host caches are coherent, so the emulated CPE cache holds no data of its
 * own; its flush and evict calls remain what they are on the chip, the
 * points after which a CPE's writes to main memory are visible to others,
 * and are full memory fences here.
 */
#include "crts_cg.h"

long CRTS_scache_get_size(void) { return crts_cg.scache_size; }
long get_slave_cache_size(void) { return CRTS_scache_get_size(); }

void CRTS_scache_evict(void *start, void *end)
{
  if ((char *)end < (char *)start)
    crts_report("CRTS_scache_evict", "end %p lies before start %p", end,
                start);
  atomic_thread_fence(memory_order_seq_cst);
}

void evict_slave_cache_cont(void *start, void *end)
{
  CRTS_scache_evict(start, end);
}

void CRTS_scache_flush_all(void) { atomic_thread_fence(memory_order_seq_cst); }
void flush_slave_cache(void) { CRTS_scache_flush_all(); }

void crts_scache_exit_flush(void) { CRTS_scache_flush_all(); }
