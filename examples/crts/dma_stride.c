/*
 * dma_stride.c - strided DMA: each CPE gathers a block of matrix columns
 * from main memory into its LDM, works on it there and scatters it back.
 *
 * Build and run:  make            then  ./build/examples/crts_dma_stride
 * With fewer CPEs:                      CRTS_NUM_CPES=5 ./build/examples/crts_dma_stride
 * Outside this tree:  cc dma_stride.c $(pkg-config --cflags --libs crts) -o dma_stride
 *
 * The matrix is stored by rows, so the BLK columns a CPE owns are ROWS
 * pieces of BLK doubles, each followed by the other COLS - BLK columns of
 * its row.  That is exactly what a strided DMA describes:
 *
 *   bsize  = BLK * sizeof(double)           bytes taken from each row
 *   stride = (COLS - BLK) * sizeof(double)  bytes skipped after each piece
 *   len    = ROWS * bsize                   total bytes, contiguous in LDM
 *
 * In LDM the block arrives packed as a ROWS x BLK matrix.  Each CPE then
 * normalises its columns (divides each by its sum) and writes the block
 * back into the same place of the output matrix with the same shape.
 */
#include <crts.h>
#include <math.h>
#include <stdio.h>

#define ROWS 128
#define BLK 8                       /* columns per block */
#define NBLOCKS 64                  /* one block per CPE when all 64 run */
#define COLS (BLK * NBLOCKS)

struct job {
  double *in;   /* ROWS x COLS, row-major, main memory */
  double *out;  /* the same shape */
  int ncpes;    /* CPEs taking part: block b goes to CPE b % ncpes */
};

static double in[ROWS][COLS];
static double out[ROWS][COLS];

/* LDM: one packed ROWS x BLK block (8 KiB), private to each CPE. */
static __thread_local double block[ROWS][BLK];

static void normalise_columns(void *arg)
{
  const struct job *job = arg;
  const int bsize = BLK * (int)sizeof(double);
  const int stride = (COLS - BLK) * (int)sizeof(double);
  const int len = ROWS * bsize;

  for (int b = CRTS_tid; b < NBLOCKS; b += job->ncpes) {
    double *src = job->in + b * BLK;   /* row 0, first column of block b */
    double *dst = job->out + b * BLK;
    if (CRTS_dma_get_stride(block, src, len, bsize, stride) != 0)
      return; /* the runtime printed why; the MPE's check will fail */

    for (int c = 0; c < BLK; c++) {
      double sum = 0;
      for (int r = 0; r < ROWS; r++)
        sum += block[r][c];
      for (int r = 0; r < ROWS; r++)
        block[r][c] /= sum;
    }

    if (CRTS_dma_put_stride(dst, block, len, bsize, stride) != 0)
      return;
  }
}

int main(void)
{
  if (CRTS_init() != 0) {
    fprintf(stderr, "dma_stride: CRTS_init failed\n");
    return 1;
  }
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLS; c++) {
      in[r][c] = 1.0 + (r * 31 + c * 17) % 97; /* positive: sums are > 0 */
      out[r][c] = -1.0;
    }

  struct job job = { &in[0][0], &out[0][0], CRTS_athread_get_max_threads() };
  if (CRTS_athread_spawn((void (*)(void))normalise_columns, &job) != 0 ||
      CRTS_athread_join() != 0) {
    fprintf(stderr, "dma_stride: spawn or join failed\n");
    return 1;
  }

  /* Every column must now sum to 1 and keep the proportions of the input. */
  int bad = 0;
  for (int c = 0; c < COLS && !bad; c++) {
    double sum_in = 0, sum_out = 0;
    for (int r = 0; r < ROWS; r++) {
      sum_in += in[r][c];
      sum_out += out[r][c];
    }
    for (int r = 0; r < ROWS; r++)
      if (fabs(out[r][c] - in[r][c] / sum_in) > 1e-12) {
        fprintf(stderr, "dma_stride: out[%d][%d] = %g, expected %g\n", r, c,
                out[r][c], in[r][c] / sum_in);
        bad = 1;
        break;
      }
    if (!bad && fabs(sum_out - 1.0) > 1e-9) {
      fprintf(stderr, "dma_stride: column %d sums to %g\n", c, sum_out);
      bad = 1;
    }
  }
  printf("dma_stride: %d CPEs normalised %d columns of a %d x %d matrix "
         "(blocks of %d columns gathered and scattered by strided DMA): %s\n",
         job.ncpes, COLS, ROWS, COLS, BLK, bad ? "FAIL" : "PASS");
  CRTS_athread_halt();
  return bad ? 1 : 0;
}
