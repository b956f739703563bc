/*
 * lapi_wait.c - futexes and the doorbell (the handle lock: lapi_rlock.c).
 *
 * See lapi_wait.h for the protocol.  Everything here is small on purpose:
 * the policy (what to wait for, whether to dispatch meanwhile) lives in
 * lapi_dispatch.c and lapi_cntr.c.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "am/lapi_setting.h"
#include "am/lapi_wait.h"

/* ---------------------------------------------------------------- spin */

static int spin_limit = -1; /* atomic: lapi_spin_hint_procs may lower it */
static int spin_from_env;
static pthread_once_t spin_once = PTHREAD_ONCE_INIT;
static int spin_cpus = 1;
static int spin_known; /* atomic: spin_read_env ran */

static void spin_read_env(void)
{
  cpu_set_t set;
  int cpus = 1;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    cpus = CPU_COUNT(&set);
  spin_cpus = cpus;
  /* Spinning on one CPU only delays the thread we wait for. */
  spin_limit = lapi_setting_int("LAPI_SPIN", cpus > 1 ? 2000 : 0, INT_MAX,
                                "a count of polls", &spin_from_env);
  __atomic_store_n(&spin_known, 1, __ATOMIC_RELEASE);
}

/* The tight wait asks at every turn: one load once the settings are
 * read, not a pthread_once call. */
static void spin_env(void)
{
  if (!__atomic_load_n(&spin_known, __ATOMIC_ACQUIRE))
    pthread_once(&spin_once, spin_read_env);
}

int lapi_spin_limit(void)
{
  spin_env();
  return __atomic_load_n(&spin_limit, __ATOMIC_RELAXED);
}

/* Processes of one job sharing this host (the ofi transport tells, once
 * it knows): each keeps an application thread and a dispatcher busy
 * while it communicates, so unless every process has two CPUs a spinning
 * waiter only delays the thread it waits for (measured: 8-byte Amsend
 * ping-pong between 2 processes on 2 CPUs, 15 us without spinning, 150 us
 * and more with the default spin).  LAPI_SPIN still wins. */
static int host_procs = 1; /* atomic */

void lapi_spin_hint_procs(int procs)
{
  spin_env();
  __atomic_store_n(&host_procs, procs > 1 ? procs : 1, __ATOMIC_RELAXED);
  if (!spin_from_env && procs > 1 && spin_cpus < 2 * procs)
    __atomic_store_n(&spin_limit, 0, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------- tight poll */

static int tight_us = -1, tight_set;
static pthread_once_t tight_once = PTHREAD_ONCE_INIT;

static void tight_read_env(void)
{
  tight_us = lapi_setting_int("LAPI_POLL_US", LAPI_TIGHT_US, 1000000,
                              "a count of microseconds", &tight_set);
}

int lapi_tight_us(int polling)
{
  pthread_once(&tight_once, tight_read_env);
  return polling && !tight_set ? LAPI_TIGHT_US_POLLING : tight_us;
}

/* A thread that polls the network for the message it waits for keeps
 * one CPU.  With a CPU for each process of the host, pausing is cheapest
 * while the answer is due (a round trip of a few microseconds); later,
 * or with fewer CPUs than processes, the thread that will send the
 * answer may need ours (another process of the job, or anybody's on a
 * shared machine, where a pausing poller would keep it off the CPU for a
 * whole time slice): yield.
 *
 * The scheduler may also put both ends of a ping-pong on one CPU (a
 * loaded machine keeps them there for whole runs): each answer then
 * comes only once the waiter yields, and every pause before the yield
 * is a trip's worth of the peer's time burnt (an 8-byte half round trip
 * took 12-20 us so over shm, 23-56 us over tcp; 2-3 and 11-21 us when
 * yielding at once).  A yield that handed
 * the CPU over for about a turn of the peer (YIELD_TURN_MIN_NS ..
 * YIELD_TURN_MAX_NS: longer is a time slice of somebody else's) right
 * before the answer came says so; after TURNS_SHARED paused waits in a
 * row that ended so, the thread yields from the start.  It pauses again
 * after a wait that ends without such a turn (its yields found nobody
 * else to run: the peer is elsewhere), and every PROBE_EVERY waits it
 * tries one paused wait: an answer that comes while it pauses (the peer
 * runs elsewhere, somebody else took the turns) ends the yielding. */
#define YIELD_TURN_MIN_NS 1000
#define YIELD_TURN_MAX_NS 200000
#define TURNS_SHARED 2
#define PROBE_EVERY 32
#define TIGHT_TLS __thread __attribute__((tls_model("initial-exec")))
static TIGHT_TLS int turns;         /* paused waits in a row ended by one */
static TIGHT_TLS int shared;        /* yield from the start */
static TIGHT_TLS unsigned since_probe;

static int64_t relax_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int lapi_tight_relax(int64_t waited_ns)
{
  spin_env();
  if (waited_ns < LAPI_TIGHT_PAUSE_NS && !shared &&
      spin_cpus >= __atomic_load_n(&host_procs, __ATOMIC_RELAXED)) {
    lapi_cpu_relax();
    return 0;
  }
  int64_t t0 = relax_now_ns();
  sched_yield();
  int64_t took = relax_now_ns() - t0;
  return took >= YIELD_TURN_MIN_NS && took <= YIELD_TURN_MAX_NS;
}

int lapi_tight_yields_first(void)
{
  return shared;
}

void lapi_tight_ended(int turned)
{
  if (!shared) {
    turns = turned ? turns + 1 : 0;
    if (turns >= TURNS_SHARED) {
      shared = 1;
      since_probe = 0;
    }
  } else if (!turned) {
    shared = 0;
    turns = 0;
  } else if (++since_probe >= PROBE_EVERY) {
    shared = 0; /* one paused wait; ended by a turn again, back at once */
    turns = TURNS_SHARED - 1;
  }
}

void lapi_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield" ::: "memory");
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

/* -------------------------------------------------------------- futex */

void lapi_futex_wait(int *addr, int val, int ms)
{
  struct timespec ts, *tsp = NULL;
  if (ms >= 0) {
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    tsp = &ts;
  }
  /* EAGAIN (value changed), EINTR and ETIMEDOUT all mean: look again. */
  syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, tsp, NULL, 0);
}

void lapi_futex_wake(int *addr, int n)
{
  syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* ------------------------------------------------------------ doorbell */

/* Apart, so ringers reading the counts do not fight over `seq`.  The
 * dispatcher's idle sleep counts apart from every other sleeper, so that
 * the rings of a polling-mode process's data path (its posts, counters
 * and lock releases) do not wake it for nothing. */
static struct {
  int seq __attribute__((aligned(64)));
  int sleepers __attribute__((aligned(64)));
  int idle;
} bell;

unsigned lapi_bell_arm(void)
{
  __atomic_add_fetch(&bell.sleepers, 1, __ATOMIC_SEQ_CST);
  return (unsigned)__atomic_load_n(&bell.seq, __ATOMIC_SEQ_CST);
}

void lapi_bell_disarm(void)
{
  __atomic_sub_fetch(&bell.sleepers, 1, __ATOMIC_SEQ_CST);
}

void lapi_bell_sleep(unsigned seq, int ms)
{
  lapi_futex_wait(&bell.seq, (int)seq, ms);
  lapi_bell_disarm();
}

unsigned lapi_bell_arm_idle(void)
{
  __atomic_add_fetch(&bell.idle, 1, __ATOMIC_SEQ_CST);
  return (unsigned)__atomic_load_n(&bell.seq, __ATOMIC_SEQ_CST);
}

void lapi_bell_disarm_idle(void)
{
  __atomic_sub_fetch(&bell.idle, 1, __ATOMIC_SEQ_CST);
}

void lapi_bell_sleep_idle(unsigned seq)
{
  lapi_futex_wait(&bell.seq, (int)seq, -1);
  lapi_bell_disarm_idle();
}

static void bell_wake(void)
{
  __atomic_add_fetch(&bell.seq, 1, __ATOMIC_SEQ_CST);
  lapi_futex_wake(&bell.seq, INT_MAX);
}

void lapi_bell_ring(void)
{
  if (__atomic_load_n(&bell.sleepers, __ATOMIC_SEQ_CST) == 0 &&
      __atomic_load_n(&bell.idle, __ATOMIC_SEQ_CST) == 0)
    return;
  bell_wake();
}

void lapi_bell_ring_waiters(void)
{
  if (__atomic_load_n(&bell.sleepers, __ATOMIC_SEQ_CST) == 0)
    return;
  bell_wake();
}
