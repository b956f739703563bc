/*
 * rma_ring.c - every CPE sends a token block around a ring of all CPEs with
 * RMA puts, each holder adding to it; the MPE checks what came back.
 *
 * Build and run:  make            then  ./build/examples/crts_rma_ring
 * With fewer CPEs:    CRTS_NUM_CPES=5 ./build/examples/crts_rma_ring
 *
 * CPE i puts the token it holds into the inbox of CPE i+1 (its LDM, at the
 * same address as i's own inbox: a __thread_local variable names the same
 * place on every CPE) and raises i+1's reply word `arrived`.  All n tokens
 * travel at once, so each inbox has two slots used alternately, and a
 * receiver that has emptied a slot tells its predecessor with a zero-length
 * put whose only effect is to raise the predecessor's `freed` word.  Reply
 * words count: a CPE waits for arrived >= 1, 2, 3, ... and freed >= 1, 2, ...
 * After n * LAPS steps every token is back at its origin.
 */
#include <crts.h>
#include <stdio.h>
#include <string.h>

#define LAPS 3
#define DATA_WORDS 12

/* One token: 64 bytes, a multiple of the 4-byte RMA unit. */
struct token {
  int origin;             /* CPE that started it */
  int hops;               /* puts it has travelled */
  int sum;                /* sum of the tids of every CPE that held it */
  unsigned path;          /* order-sensitive hash of the holders */
  int data[DATA_WORDS];   /* data[k] += holder + k at every hop */
};

struct ring_arg {
  int ncpes;
  struct token result[CRTS_MAX_SPE_NUM]; /* main memory: filled by the CPEs */
};

static __thread_local struct token held;      /* the token this CPE holds */
static __thread_local struct token inbox[2];  /* written by the predecessor */
/*
 * Reply words start at 0: this program spawns once on fresh CPEs.  Code
 * that spawns again zeroes them and meets at CRTS_ssync_array() before
 * anybody may raise them.
 */
static __thread_local crts_rply_t arrived;    /* tokens put into my inbox */
static __thread_local crts_rply_t freed;      /* my successor emptied a slot */
static __thread_local int no_data; /* target of the zero-length put */

static unsigned path_step(unsigned path, int holder)
{
  return path * 31u + (unsigned)holder;
}

static void ring_cpe(void *p)
{
  struct ring_arg *arg = p;
  int n = arg->ncpes, me = CRTS_tid;
  int next = (me + 1) % n, prev = (me + n - 1) % n;

  held.origin = me;
  held.hops = 0;
  held.sum = me;
  held.path = (unsigned)me;
  for (int k = 0; k < DATA_WORDS; k++)
    held.data[k] = me * k;

  for (int step = 0; step < n * LAPS; step++) {
    int slot = step % 2;
    /* Slot `slot` of next's inbox last held message step-2: is it empty? */
    if (step >= 2 && CRTS_rma_wait_value(&freed, step - 1) != 0)
      return;
    if (CRTS_rma_put(&held, sizeof held, next, &inbox[slot], &arrived) != 0)
      return;
    /* The put is blocking: held may be overwritten now.  Receive. */
    if (CRTS_rma_wait_value(&arrived, step + 1) != 0)
      return;
    memcpy(&held, &inbox[slot], sizeof held);
    if (CRTS_rma_put(&no_data, 0, prev, &no_data, &freed) != 0)
      return;
    held.hops++;
    held.sum += me;
    held.path = path_step(held.path, me);
    for (int k = 0; k < DATA_WORDS; k++)
      held.data[k] += me + k;
  }
  arg->result[me] = held; /* CPEs may store to main memory directly */
}

static struct ring_arg ring;

int main(void)
{
  if (CRTS_init() != 0) {
    fprintf(stderr, "rma_ring: CRTS_init failed\n");
    return 1;
  }
  int n = CRTS_athread_get_max_threads();
  ring.ncpes = n;
  for (int i = 0; i < n; i++)
    ring.result[i].origin = -1;
  if (CRTS_athread_spawn((void (*)(void))ring_cpe, &ring) != 0 ||
      CRTS_athread_join() != 0) {
    fprintf(stderr, "rma_ring: spawn or join failed\n");
    return 1;
  }

  /* Replay the ring on the MPE and compare every token. */
  int steps = n * LAPS, bad = 0;
  for (int o = 0; o < n; o++) {
    struct token want = { .origin = o, .hops = steps, .sum = o,
                          .path = (unsigned)o };
    for (int k = 0; k < DATA_WORDS; k++)
      want.data[k] = o * k;
    for (int s = 1; s <= steps; s++) {
      int holder = (o + s) % n;
      want.sum += holder;
      want.path = path_step(want.path, holder);
      for (int k = 0; k < DATA_WORDS; k++)
        want.data[k] += holder + k;
    }
    if (memcmp(&want, &ring.result[o], sizeof want) != 0) {
      fprintf(stderr, "rma_ring: token of CPE %d came back wrong (origin %d, "
              "%d hops, sum %d)\n", o, ring.result[o].origin,
              ring.result[o].hops, ring.result[o].sum);
      bad++;
    }
  }
  printf("rma_ring: %d CPEs, %d laps, %d tokens of %zu bytes, %d puts: %s\n",
         n, LAPS, n, sizeof(struct token), 2 * n * steps,
         bad ? "FAIL" : "PASS");
  CRTS_athread_halt();
  return bad ? 1 : 0;
}
