/*
 * crts_wait.h - waits that spin briefly and then sleep on a futex.
 *
 * Up to 64 emulated CPEs share two host cores, so nothing here spins for
 * long: after crts_spin_limit() polls a waiter sleeps in the kernel, and a
 * waker issues a futex wake only when somebody sleeps.  The "shared"
 * variants use process-shared futexes for node-scope objects that live in a
 * shared mapping.
 */
#ifndef CRTS_WAIT_H
#define CRTS_WAIT_H

#include <stdatomic.h>
#include <stdint.h>

/* Polls before sleeping (CRTS_SPIN, else chosen from cores vs threads). */
int crts_spin_limit(void);
/* One polite busy-wait step (pause instruction). */
void crts_cpu_relax(void);

/* futex(2) wrappers; shared != 0 for process-shared memory. */
void crts_futex_wait(_Atomic uint32_t *word, uint32_t expected, int shared);
void crts_futex_wake(_Atomic uint32_t *word, int count, int shared);

/*
 * Sense-reversing barrier for `count` threads (count may differ between
 * uses, never within one episode).  Zero-initialised is ready to use.
 */
struct crts_barrier {
  _Atomic uint32_t arrived;
  _Atomic uint32_t generation;
  _Atomic uint32_t sleepers;
};
void crts_barrier_wait(struct crts_barrier *b, uint32_t count, int shared);

/* Mutex: 0 free, 1 locked, 2 locked with sleepers.  Zero is unlocked. */
struct crts_lock {
  _Atomic uint32_t word;
};
void crts_lock_acquire(struct crts_lock *l, int shared);
int crts_lock_try(struct crts_lock *l);        /* 0 taken, 1 busy */
void crts_lock_release(struct crts_lock *l, int shared);
/* The same algorithm on any aligned 32-bit word. */
void crts_lockword_acquire(_Atomic uint32_t *w, int shared);
int crts_lockword_try(_Atomic uint32_t *w);
void crts_lockword_release(_Atomic uint32_t *w, int shared);

/*
 * What a thread sleeping on a reply word waits for: the word and the value
 * it must reach.  One per waiting thread (a CPE's `waiting_on`).
 */
struct crts_waiter {
  _Atomic(volatile int *) word;
  _Atomic int value;
};

/*
 * Wait until *word >= value (reply words).  The waiter publishes the word
 * and the value in *w so that crts_word_add_notify() wakes it only when the
 * value is reached, not at every increment.
 */
void crts_word_wait_ge(volatile int *word, int value, struct crts_waiter *w);
/* Add to *word and wake its waiter in *w if that reaches its value. */
void crts_word_add_notify(volatile int *word, int add, struct crts_waiter *w);

/* Wait until *word != expected (generic flags); wake with futex_wake. */
void crts_wait_change(_Atomic uint32_t *word, uint32_t expected, int shared);

#endif /* CRTS_WAIT_H */
