/*
 * host_costs.c - what this machine charges for the operations that the
 * LAPI and CRTS figures are made of, so that runs on different machines
 * can be compared: a table of PERFORMANCE.md moves with these, not only
 * with the code.
 *
 *   syscall    a system call that does nothing (getppid)
 *   poll       poll() of one idle pipe, no timeout: what a libfabric
 *              socket provider pays per progress call
 *   yield      sched_yield() that finds no other thread on its CPU: what
 *              a waiter pays per yielding step of a wait
 *   switch     sched_yield() between two threads on one CPU: a thread
 *              switch (64 CPE threads on 2 cores take turns this way)
 *   futex      a token passed between two threads on two CPUs that both
 *              sleep on futexes: one wake-up of a sleeping thread
 *   line       a token passed between two threads on two CPUs that spin:
 *              one cache line moved between cores (a shm message, a
 *              counter another thread reads)
 *   memcpy     1 MiB, one buffer into another (both warm)
 *   pack       1 MiB in 64 B and 4 KiB blocks at a pitch of twice the
 *              block into a contiguous buffer (the packed path's copy)
 *   alias      16 KiB from a page-aligned buffer to one 16 bytes into its
 *              page (a malloc'ed one): glibc's memcpy, whose REP MOVSB
 *              runs ~20x slower there on AMD Zen before glibc 2.40, and
 *              bulk_copy (src/util/bulk_copy.h), which the libraries'
 *              data paths use instead
 *
 * Each figure is the median of the repetitions of bench_measure (11 of at
 * least 10 ms; --quick: 5 of 2 ms), with min and max.  The two-thread
 * figures pin their threads (to one CPU, or to the first two usable
 * CPUs) and are skipped with a note when fewer CPUs are usable.  Timing
 * never fails the program.
 *
 * Usage: host_costs [--quick] [--csv]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench_measure.h"
#include "bulk_copy.h"

#define PACK_TOTAL ((size_t)1 << 20)

static int opt_csv;
static int cpu_a = -1, cpu_b = -1; /* the first two usable CPUs */

static long agree_self(void *arg, long value)
{
  (void)arg;
  return value;
}

static void pin_to(int cpu)
{
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/* ----------------------------------------------------- one thread */

static double k_syscall(void *arg, long n)
{
  (void)arg;
  double t0 = bench_now();
  for (long i = 0; i < n; i++)
    syscall(SYS_getppid);
  return bench_now() - t0;
}

static double k_poll(void *arg, long n)
{
  struct pollfd *pfd = arg;
  double t0 = bench_now();
  for (long i = 0; i < n; i++)
    poll(pfd, 1, 0);
  return bench_now() - t0;
}

static double k_yield(void *arg, long n)
{
  (void)arg;
  double t0 = bench_now();
  for (long i = 0; i < n; i++)
    sched_yield();
  return bench_now() - t0;
}

struct copy_args {
  unsigned char *src, *dst;
  size_t block; /* 0: one memcpy of the whole */
};

static double k_copy(void *arg, long n)
{
  struct copy_args *c = arg;
  double t0 = bench_now();
  for (long i = 0; i < n; i++) {
    if (c->block == 0) {
      memcpy(c->dst, c->src, PACK_TOTAL);
    } else {
      size_t blocks = PACK_TOTAL / c->block;
      for (size_t b = 0; b < blocks; b++)
        memcpy(c->dst + b * c->block, c->src + 2 * b * c->block, c->block);
    }
    /* keep the copies: the compiler sees the buffer escape */
    __asm__ __volatile__("" ::"r"(c->dst) : "memory");
  }
  return bench_now() - t0;
}

/* 16 KiB into a destination 16 bytes after the source modulo 4 KiB. */
#define ALIAS_LEN 16384
struct alias_args {
  unsigned char *src, *dst;
  int bulk; /* bulk_copy instead of memcpy */
};

static double k_alias(void *arg, long n)
{
  struct alias_args *a = arg;
  double t0 = bench_now();
  for (long i = 0; i < n; i++) {
    if (a->bulk)
      bulk_copy(a->dst, a->src, ALIAS_LEN);
    else
      memcpy(a->dst, a->src, ALIAS_LEN);
    __asm__ __volatile__("" ::"r"(a->dst) : "memory");
  }
  return bench_now() - t0;
}

/* ---------------------------------------------------- two threads */

/* The token: 0 or 1, whose turn it is.  A round is both threads' turn. */
struct duo {
  _Alignas(64) uint32_t turn;
  _Alignas(64) long rounds;      /* the partner's rounds to play */
  uint32_t go;                   /* futex: a round count is posted */
  int cpu;                       /* the partner's CPU */
  int kind;                      /* DUO_* */
  pthread_t thread;
};

enum { DUO_SWITCH, DUO_FUTEX, DUO_LINE };

static void futex_wait(uint32_t *w, uint32_t v)
{
  syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(uint32_t *w)
{
  syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static inline void spin_step(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

/* Wait until it is side's turn, the duo's way. */
static void await_turn(struct duo *d, uint32_t side)
{
  for (;;) {
    uint32_t t = __atomic_load_n(&d->turn, __ATOMIC_ACQUIRE);
    if (t == side)
      return;
    if (d->kind == DUO_SWITCH)
      sched_yield();
    else if (d->kind == DUO_FUTEX)
      futex_wait(&d->turn, t);
    else
      spin_step();
  }
}

static void give_turn(struct duo *d, uint32_t to)
{
  __atomic_store_n(&d->turn, to, __ATOMIC_RELEASE);
  if (d->kind == DUO_FUTEX)
    futex_wake(&d->turn);
}

/* The partner: plays side 1 of every round posted to it; -1 ends it. */
static void *partner(void *arg)
{
  struct duo *d = arg;
  pin_to(d->cpu);
  for (;;) {
    uint32_t go = __atomic_load_n(&d->go, __ATOMIC_ACQUIRE);
    long n = __atomic_load_n(&d->rounds, __ATOMIC_ACQUIRE);
    if (n < 0)
      return NULL;
    if (n == 0) {
      futex_wait(&d->go, go);
      continue;
    }
    __atomic_store_n(&d->rounds, 0, __ATOMIC_RELEASE);
    for (long i = 0; i < n; i++) {
      await_turn(d, 1);
      give_turn(d, 0);
    }
  }
}

static void post_rounds(struct duo *d, long n)
{
  __atomic_store_n(&d->rounds, n, __ATOMIC_RELEASE);
  __atomic_add_fetch(&d->go, 1, __ATOMIC_RELEASE);
  futex_wake(&d->go);
}

/* n rounds; a unit is one hand-over (half a round). */
static double k_duo(void *arg, long n)
{
  struct duo *d = arg;
  long rounds = (n + 1) / 2;
  __atomic_store_n(&d->turn, 0, __ATOMIC_RELEASE);
  post_rounds(d, rounds);
  double t0 = bench_now();
  for (long i = 0; i < rounds; i++) {
    await_turn(d, 0);
    give_turn(d, 1);
  }
  await_turn(d, 0);
  double dt = bench_now() - t0;
  /* a unit count that was odd is timed as the next even one */
  return dt * (double)n / (double)(2 * rounds);
}

/* ------------------------------------------------------------ output */

static void report(const char *name, const char *what, double scale,
                   const char *unit, bench_run_fn run, void *arg, int quick)
{
  struct bench_plan plan = bench_plan_of(quick);
  double per_unit[64];
  int reps = bench_measure(&plan, run, agree_self, arg, per_unit);
  for (int r = 0; r < reps; r++)
    per_unit[r] *= scale;
  double med, lo, hi;
  bench_spread(per_unit, reps, &med, &lo, &hi);
  if (opt_csv)
    printf("%s,%s,%.4g,%.4g,%.4g,%d\n", name, unit, med, lo, hi, reps);
  else
    printf("%-9s %-44s | %9.4g | %9.4g | %9.4g | %s\n", name, what, med, lo,
           hi, unit);
  fflush(stdout);
}

static void skipped(const char *name, const char *why)
{
  if (opt_csv)
    printf("# %s skipped: %s\n", name, why);
  else
    printf("%-9s skipped: %s\n", name, why);
}

static void usable_cpus(int *n)
{
  cpu_set_t set;
  *n = 0;
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set))
      continue;
    if (*n == 0)
      cpu_a = c;
    else if (*n == 1)
      cpu_b = c;
    (*n)++;
  }
}

static void cpu_model(char *out, size_t len)
{
  snprintf(out, len, "?");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL)
    return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon) {
      snprintf(out, len, "%s", colon + 2);
      out[strcspn(out, "\n")] = '\0';
      break;
    }
  }
  fclose(f);
}

/* One two-thread figure: the partner on cpu, this thread on cpu_a. */
static void duo_figure(const char *name, const char *what, int kind, int cpu,
                       int quick)
{
  struct duo *d = aligned_alloc(64, sizeof *d);
  if (d == NULL) {
    skipped(name, "out of memory");
    return;
  }
  memset(d, 0, sizeof *d);
  d->kind = kind;
  d->cpu = cpu;
  if (pthread_create(&d->thread, NULL, partner, d) != 0) {
    skipped(name, "pthread_create failed");
    free(d);
    return;
  }
  report(name, what, 1e9, "ns", k_duo, d, quick);
  __atomic_store_n(&d->rounds, -1, __ATOMIC_RELEASE);
  __atomic_add_fetch(&d->go, 1, __ATOMIC_RELEASE);
  futex_wake(&d->go);
  pthread_join(d->thread, NULL);
  free(d);
}

int main(int argc, char **argv)
{
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[i], "--csv") == 0) {
      opt_csv = 1;
    } else {
      fprintf(stderr, "usage: %s [--quick] [--csv]\n", argv[0]);
      return 2;
    }
  }
  int ncpus;
  usable_cpus(&ncpus);
  char model[128], load[128];
  cpu_model(model, sizeof model);
  bench_load_average(load, sizeof load);
  struct utsname u;
  if (uname(&u) != 0)
    snprintf(u.release, sizeof u.release, "?");
  struct bench_plan plan = bench_plan_of(quick);
  printf("# host_costs: %d usable CPUs, %s, Linux %s; median of %d reps "
         "of >= %g ms; load average %s\n",
         ncpus, model, u.release, plan.reps, plan.min_time * 1e3, load);
  if (opt_csv)
    printf("figure,unit,median,min,max,reps\n");
  else
    printf("%-9s %-44s | %9s | %9s | %9s | unit\n", "figure", "what",
           "median", "min", "max");

  if (cpu_a >= 0)
    pin_to(cpu_a);
  report("syscall", "getppid()", 1e9, "ns", k_syscall, NULL, quick);
  int fds[2];
  if (pipe(fds) == 0) {
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    report("poll", "poll() of one idle pipe, no timeout", 1e9, "ns", k_poll,
           &pfd, quick);
    close(fds[0]);
    close(fds[1]);
  } else {
    skipped("poll", "pipe() failed");
  }
  report("yield", "sched_yield(), nobody else on the CPU", 1e9, "ns",
         k_yield, NULL, quick);
  if (cpu_a >= 0)
    duo_figure("switch", "thread switch: 2 threads yield on 1 CPU",
               DUO_SWITCH, cpu_a, quick);
  if (ncpus >= 2) {
    duo_figure("futex", "futex wake of a sleeper on the other CPU",
               DUO_FUTEX, cpu_b, quick);
    duo_figure("line", "cache line to a spinner on the other CPU", DUO_LINE,
               cpu_b, quick);
  } else {
    skipped("futex", "needs 2 usable CPUs");
    skipped("line", "needs 2 usable CPUs");
  }

  struct copy_args c = {.src = malloc(2 * PACK_TOTAL),
                        .dst = malloc(PACK_TOTAL)};
  if (c.src == NULL || c.dst == NULL) {
    fprintf(stderr, "host_costs: out of memory\n");
    return 1;
  }
  memset(c.src, 1, 2 * PACK_TOTAL);
  memset(c.dst, 2, PACK_TOTAL);
  report("memcpy", "1 MiB, warm buffers", 1e6, "us", k_copy, &c, quick);
  c.block = 64;
  report("pack64", "1 MiB in 64 B blocks at a pitch of 128 B", 1e6, "us",
         k_copy, &c, quick);
  c.block = 4096;
  report("pack4k", "1 MiB in 4 KiB blocks at a pitch of 8 KiB", 1e6, "us",
         k_copy, &c, quick);
  free(c.src);
  free(c.dst);

  struct alias_args a = {.src = aligned_alloc(4096, ALIAS_LEN),
                         .dst = aligned_alloc(4096, ALIAS_LEN + 4096)};
  if (a.src == NULL || a.dst == NULL) {
    fprintf(stderr, "host_costs: out of memory\n");
    return 1;
  }
  memset(a.src, 1, ALIAS_LEN);
  memset(a.dst, 2, ALIAS_LEN + 4096);
  a.dst += 16;
  report("alias", "memcpy 16 KiB, dst 16 B past src mod 4 KiB", 1e6, "us",
         k_alias, &a, quick);
  a.bulk = 1;
  report("alias_bc", "bulk_copy of the same", 1e6, "us", k_alias, &a,
         quick);
  free(a.src);
  free(a.dst - 16);
  return 0;
}
