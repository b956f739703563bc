/*
 * matmul.c - C = A * B (doubles, N x N, row-major) on the CPE array with
 * double-buffered DMA.  A starting point to copy for real Sunway kernels.
 *
 * Work split: C is cut into blocks of RB rows; block k goes to CPE
 * k % ncpes (with N = 512 and 64 CPEs every CPE gets one block of 8 rows).
 * For its block a CPE keeps in LDM
 *     a_ldm  RB x N   its rows of A              (RB*N*8  = 32 KiB)
 *     c_ldm  RB x N   the rows of C it computes  (32 KiB)
 *     b_ldm  2 x KP x N  two panels of KP rows of B (2 x 32 KiB)
 * and streams B through the two panel buffers: while it multiplies with
 * panel p it has already asked the DMA engine for panel p+1 (CRTS_dma_iget
 * into the other buffer), so on the chip loading overlaps computing.  The
 * finished C rows go back with CRTS_dma_iput.
 *
 * LDM is 256 KiB per CPE and the CPE stack only 32 KiB: the buffers come
 * from the LDM heap (CRTS_pldm_malloc), the reply words are __thread_local
 * (they must be in LDM), nothing big lives on the stack.
 *
 * The MPE checks C against a plain triple loop and prints PASS or FAIL
 * (exit status 1 on FAIL) with both times.
 *
 * Notes for the chip: mm_cpe and the __thread_local words belong in the
 * file compiled with -mslave, and the MPE names the kernel through the
 * slave_ prefix (SLAVE_FUN).  Here every CPE streams all of B; a tuned
 * kernel loads each panel once per row or column and shares it with
 * CRTS_rma_row_ibcast / CRTS_rma_col_ibcast.  In the emulator a DMA call
 * completes before it returns, so nothing overlaps, but the reply-word
 * counting is exact and the same code is correct on both.
 *
 * Usage: crts_matmul [N]   (N a multiple of 8, 8..512; default 512)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <crts.h>

#define RB 8      /* rows of C per block */
#define KP 8      /* rows of B per panel */
#define MAX_N 512 /* keeps the four LDM buffers (256 * N bytes) in LDM */

/* Arguments of the CPE kernel; it lives in main memory, which CPEs read. */
struct mm_args {
  const double *a, *b;
  double *c;
  int n;
  int ncpes;
  int cpe_failures; /* CPEs whose LDM allocation or DMA call failed */
};

/* Reply words: each completed DMA adds 1 to its word (LDM, per CPE). */
static __thread_local crts_rply_t get_rply;
static __thread_local crts_rply_t put_rply;

/* c (RB x n) += a[:, k0 .. k0+KP) * panel (KP x n), all in LDM. */
static void mm_panel(double *c, const double *a, const double *panel, int n,
                     int k0)
{
  for (int i = 0; i < RB; i++) {
    double *ci = c + (size_t)i * n;
    for (int kk = 0; kk < KP; kk++) {
      double aik = a[(size_t)i * n + k0 + kk];
      const double *bk = panel + (size_t)kk * n;
      for (int j = 0; j < n; j++)
        ci[j] += aik * bk[j];
    }
  }
}

/* The CPE kernel: started on every CPE by CRTS_athread_spawn. */
static void mm_cpe(void *p)
{
  struct mm_args *args = p;
  const int n = args->n;
  const int row_bytes = n * (int)sizeof(double);
  const int npanels = n / KP;

  /* LDM buffers.  The heap is emptied at every spawn; free them anyway. */
  size_t blk = (size_t)RB * n * sizeof(double);
  size_t pnl = (size_t)KP * n * sizeof(double);
  double *a_ldm = CRTS_pldm_malloc(blk);
  double *c_ldm = CRTS_pldm_malloc(blk);
  double *b_ldm[2] = { CRTS_pldm_malloc(pnl), CRTS_pldm_malloc(pnl) };
  if (!a_ldm || !c_ldm || !b_ldm[0] || !b_ldm[1])
    goto fail;

  put_rply = 0;
  int nput = 0;
  for (int blkno = CRTS_tid; blkno < n / RB; blkno += args->ncpes) {
    int r0 = blkno * RB;
    /*
     * The reply word counts completions since it was zeroed; all gets of
     * the previous block were waited for, so zeroing it here is safe.
     * A call that fails never completes: never wait for it.
     */
    get_rply = 0;
    if (CRTS_dma_iget(a_ldm, (void *)(args->a + (size_t)r0 * n),
                      RB * row_bytes, &get_rply) != 0 ||
        CRTS_dma_iget(b_ldm[0], (void *)args->b, KP * row_bytes,
                      &get_rply) != 0)
      goto fail;

    /* c_ldm may still be on its way to memory from the previous block. */
    CRTS_dma_wait_value(&put_rply, nput);
    memset(c_ldm, 0, blk);

    for (int pn = 0; pn < npanels; pn++) {
      /* Gets issued up to panel pn: A plus pn + 1 panels. */
      CRTS_dma_wait_value(&get_rply, pn + 2);
      /* Prefetch panel pn+1 into the buffer that panel pn-1 used. */
      if (pn + 1 < npanels &&
          CRTS_dma_iget(b_ldm[(pn + 1) & 1],
                        (void *)(args->b + (size_t)(pn + 1) * KP * n),
                        KP * row_bytes, &get_rply) != 0)
        goto fail;
      mm_panel(c_ldm, a_ldm, b_ldm[pn & 1], n, pn * KP);
    }

    /* Non-blocking write-back; a blocking CRTS_dma_put would also do. */
    if (CRTS_dma_iput(args->c + (size_t)r0 * n, c_ldm, RB * row_bytes,
                      &put_rply) != 0)
      goto fail;
    nput++;
  }
  CRTS_dma_wait_value(&put_rply, nput); /* C must be in memory at join */
  CRTS_pldm_free_all();
  return;

fail:
  __atomic_add_fetch(&args->cpe_failures, 1, __ATOMIC_RELAXED);
  CRTS_pldm_free_all();
}

static double now_sec(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : MAX_N;
  if (n < RB || n > MAX_N || n % RB != 0) {
    fprintf(stderr, "usage: %s [N]  (N a multiple of %d, %d..%d)\n", argv[0],
            RB, RB, MAX_N);
    return 2;
  }
  size_t elems = (size_t)n * n;
  double *a = aligned_alloc(64, elems * sizeof(double));
  double *b = aligned_alloc(64, elems * sizeof(double));
  double *c = aligned_alloc(64, elems * sizeof(double));
  double *ref = calloc(elems, sizeof(double));
  if (!a || !b || !c || !ref) {
    fprintf(stderr, "matmul: out of memory\n");
    return 2;
  }
  /* Small integers / 8: every product and partial sum is exact. */
  for (size_t i = 0; i < elems; i++) {
    a[i] = (double)((i * 7 + 3) % 17) / 8.0 - 1.0;
    b[i] = (double)((i * 5 + 1) % 13) / 8.0 - 0.75;
    c[i] = NAN; /* a row nobody computed cannot pass */
  }

  if (CRTS_init() != 0) {
    fprintf(stderr, "matmul: CRTS_init failed\n");
    return 2;
  }
  struct mm_args args = { a, b, c, n, CRTS_athread_get_max_threads(), 0 };

  double t0 = now_sec();
  if (CRTS_athread_spawn((void (*)(void))mm_cpe, &args) != 0 ||
      CRTS_athread_join() != 0) {
    fprintf(stderr, "matmul: spawn/join failed\n");
    return 2;
  }
  double t_cpe = now_sec() - t0;
  CRTS_athread_halt();

  /* Reference on the MPE: the plain triple loop (i-k-j order). */
  t0 = now_sec();
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++) {
      double aik = a[(size_t)i * n + k];
      for (int j = 0; j < n; j++)
        ref[(size_t)i * n + j] += aik * b[(size_t)k * n + j];
    }
  double t_mpe = now_sec() - t0;

  size_t bad = 0, first = 0;
  for (size_t i = 0; i < elems; i++)
    if (!(fabs(c[i] - ref[i]) <= 1e-9 * (1.0 + fabs(ref[i])))) {
      if (bad++ == 0)
        first = i;
    }
  double gflop = 2.0 * n * n * (double)n * 1e-9;
  printf("matmul %dx%d on %d CPEs: %.2f ms (%.2f GFLOP/s); MPE triple loop "
         "%.2f ms (%.2f GFLOP/s)\n", n, n, args.ncpes, t_cpe * 1e3,
         gflop / t_cpe, t_mpe * 1e3, gflop / t_mpe);
  if (args.cpe_failures || bad) {
    if (args.cpe_failures)
      printf("%d CPEs failed to allocate LDM or to issue a DMA (see the "
             "crts: lines above)\n", args.cpe_failures);
    if (bad)
      printf("%zu wrong elements; first C[%zu][%zu] = %g, expected %g\n", bad,
             first / n, first % n, c[first], ref[first]);
    printf("FAIL\n");
    return 1;
  }
  printf("PASS\n");
  free(a);
  free(b);
  free(c);
  free(ref);
  return 0;
}
