/*
 * hello.c - the smallest CRTS program: start the runtime, run a function on
 * every CPE of the core group, wait for it, print what each CPE saw.
 *
 * Build and run:  make            then  ./build/examples/crts_hello
 * With fewer CPEs:                      CRTS_NUM_CPES=16 ./build/examples/crts_hello
 * Outside this tree:  cc hello.c $(pkg-config --cflags --libs crts) -o hello
 *
 * Sixty-four threads printing at once would interleave their lines, so each
 * CPE fills its own record in main memory and the MPE prints them in order
 * after the join (CPEs may read and write main memory directly, as on the
 * chip; heavy traffic would use DMA instead).
 */
#include <crts.h>
#include <stdio.h>

/* What one CPE reports about itself. */
struct hello_record {
  int tid, rid, cid;     /* number 0..63, row and column in the 8x8 mesh */
  int spc_tid, spcn;     /* cluster-major number and 2x2 cluster number */
  int cgn;               /* core group number on the node */
  int ldm_free;          /* bytes left in the LDM heap */
  int ran;               /* 1 once the CPE has written the record */
};

/* Main memory: one record per CPE, shared by the MPE and every CPE. */
static struct hello_record records[CRTS_MAX_SPE_NUM];

/* A static LDM variable: each CPE has its own copy inside its 256 KiB. */
static __thread_local int greeting_count;

/* CPE code.  The argument is the pointer given to CRTS_athread_spawn. */
static void hello_cpe(void *arg)
{
  struct hello_record *all = arg;
  struct hello_record *me = &all[CRTS_tid];

  greeting_count++;
  me->tid = CRTS_tid;
  me->rid = CRTS_rid;
  me->cid = CRTS_cid;
  me->spc_tid = CRTS_spc_tid;
  me->spcn = CRTS_spcn;
  me->cgn = CRTS_cgn;
  me->ldm_free = CRTS_pldm_get_free_size();
  me->ran = greeting_count;
}

int main(void)
{
  if (CRTS_init() != 0) {
    fprintf(stderr, "hello: CRTS_init failed\n");
    return 1;
  }
  int ncpes = CRTS_athread_get_max_threads();
  printf("hello: %d CPEs, %d KiB of LDM each\n", ncpes,
         CRTS_MAX_LDM_SIZE / 1024);

  /* The entry point has type void (*)(void) in the API; the CPE receives
   * the second argument as its parameter. */
  if (CRTS_athread_spawn((void (*)(void))hello_cpe, records) != 0 ||
      CRTS_athread_join() != 0) {
    fprintf(stderr, "hello: spawn or join failed\n");
    return 1;
  }

  printf("  tid  rid  cid  spc_tid  spcn  ldm_free\n");
  int bad = 0;
  int min_free = CRTS_MAX_LDM_SIZE;
  for (int i = 0; i < ncpes; i++) {
    const struct hello_record *r = &records[i];
    printf("  %3d  %3d  %3d  %7d  %4d  %8d\n", r->tid, r->rid, r->cid,
           r->spc_tid, r->spcn, r->ldm_free);
    /* Check what the mesh says each id must be. */
    if (r->ran != 1 || r->tid != i || r->rid != i / CRTS_COL_NUM ||
        r->cid != i % CRTS_COL_NUM || r->ldm_free <= 0) {
      fprintf(stderr, "hello: CPE %d reported wrong ids\n", i);
      bad++;
    }
    if (r->ldm_free < min_free)
      min_free = r->ldm_free;
  }

  printf("hello: core group %d: %d of %d CPEs answered from %d row(s) of "
         "the mesh; at least %d bytes of LDM heap free on each\n",
         records[0].cgn, ncpes - bad, ncpes,
         (ncpes + CRTS_COL_NUM - 1) / CRTS_COL_NUM, min_free);
  CRTS_athread_halt();
  return bad ? 1 : 0;
}
