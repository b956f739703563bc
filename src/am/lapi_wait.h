/*
 * lapi_wait.h - how LAPI threads wait: spin briefly, then sleep.
 *
 * Futex words are plain ints accessed with __atomic builtins.  Two kinds
 * of sleepers:
 *  - a thread that only waits for a counter sleeps on the counter itself;
 *  - a thread that must also make progress (the dispatcher, a polling
 *    thread, a handler that waits) sleeps on the process-wide doorbell,
 *    which rings when work is posted, a lock is released with work
 *    pending, a fence completes, or a counter such a thread waits on
 *    moves.
 * Lost wake-ups are excluded by the usual order: the waker changes state
 * (seq_cst) and then looks for sleepers; the sleeper registers (seq_cst)
 * and then re-checks the state before it sleeps.
 */
#ifndef LAPI_WAIT_H
#define LAPI_WAIT_H

#include <pthread.h>
#include <stdint.h>

/* Polls before sleeping: LAPI_SPIN, or by default 0 on one CPU and a
 * few microseconds' worth otherwise. */
int lapi_spin_limit(void);
/* procs processes of the job share this host: spin only if each has two
 * CPUs (unless LAPI_SPIN is set). */
void lapi_spin_hint_procs(int procs);
void lapi_cpu_relax(void);
/* How long a waiting thread polls the network before it sleeps
 * (LAPI_POLL_US; by default 1 ms in interrupt mode and 10 ms in
 * polling mode, where the waiting thread is the only one that runs the
 * handle's work: a transfer of a few hundred us that it stopped
 * polling for went on through thread wake-ups, 2-3x slower; 100 us in
 * interrupt mode did that to a 1 MiB transfer), and how it
 * pauses between two polls once it has waited waited_ns: a pause for
 * the first LAPI_TIGHT_PAUSE_NS if every process of the host has a CPU,
 * a yield after that or else. */
#define LAPI_TIGHT_PAUSE_NS 10000
#define LAPI_TIGHT_US 1000
#define LAPI_TIGHT_US_POLLING 10000
int lapi_tight_us(int polling);
/* 1 if it yielded the CPU for about a turn of another thread (a peer
 * that shares our CPU may have answered meanwhile). */
int lapi_tight_relax(int64_t waited_ns);
/* A tight wait succeeded; turned: what its last relax returned.  Waits
 * that keep ending so make the thread's next ones yield from the start
 * (lapi_wait.c). */
void lapi_tight_ended(int turned);
/* 1 if the calling thread's next tight wait yields from the start. */
int lapi_tight_yields_first(void);

/* Sleep while *addr == val, at most ms milliseconds (< 0: no limit). */
void lapi_futex_wait(int *addr, int val, int ms);
void lapi_futex_wake(int *addr, int n);

/* The doorbell. */
unsigned lapi_bell_arm(void);
void lapi_bell_disarm(void);
void lapi_bell_sleep(unsigned seq, int ms); /* disarms when it returns */
void lapi_bell_ring(void);
/* Rings only if a thread other than the idle dispatcher sleeps: for
 * events that concern waiters only (a counter, a fence, a post to a
 * handle the dispatcher does not serve). */
void lapi_bell_ring_waiters(void);
/* The dispatcher's idle sleep: woken by lapi_bell_ring only. */
unsigned lapi_bell_arm_idle(void);
void lapi_bell_disarm_idle(void);
void lapi_bell_sleep_idle(unsigned seq); /* disarms when it returns */

#include "am/lapi_rlock.h"

#endif /* LAPI_WAIT_H */
