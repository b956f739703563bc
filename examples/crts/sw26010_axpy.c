/*
 * sw26010_axpy.c - CPE code in the style of the SW26010 (TaihuLight)
 * athread API, built unchanged against libcrts: slave.h's athread_get /
 * athread_put with reply words and busy waits, a BCAST_MODE get by CPE 0,
 * athread_syn and _MYID; athread.h's SLAVE_FUN and athread_spawn on the
 * MPE.
 *
 * Build and run:  make            then  ./build/examples/crts_sw26010_axpy
 * With fewer CPEs:                      CRTS_NUM_CPES=8 ./build/examples/crts_sw26010_axpy
 * Outside this tree:  cc sw26010_axpy.c $(pkg-config --cflags --libs crts) -o axpy
 *
 * Each CPE owns rows _MYID, _MYID + n, ... of Y (ROWS x COLS floats in
 * main memory) and computes Y[r] += a[k] * X[r] in chunks of CHUNK floats,
 * where a (one coefficient per chunk position k) is loaded once into every
 * LDM by CPE 0's broadcast.  On the SW26010 the MPE half and the CPE half
 * are two files compiled apart (-mhost, -mslave); here they are one.
 */
#include <athread.h> /* the MPE side */
#include <slave.h>   /* the CPE side */
#include <stdio.h>

#define ROWS 256
#define COLS 4096
#define CHUNK 1024 /* floats per DMA: 4 KiB */
#define NCHUNK (COLS / CHUNK)

/* Main memory, shared by the MPE and every CPE, as on the machine. */
float X[ROWS][COLS], Y[ROWS][COLS], A[NCHUNK];

/* ------------------------------------------------------------ CPE code */

__thread_local float x_ldm[CHUNK], y_ldm[CHUNK], a_ldm[NCHUNK];
__thread_local volatile unsigned long get_reply, put_reply;

void axpy_rows(void *arg)
{
  int ncpe = *(int *)arg;

  /* CPE 0 loads the coefficients into every LDM at once. */
  athread_syn(ARRAY_SCOPE, 0xffff);
  if (_MYID == 0) {
    get_reply = 0;
    athread_get(BCAST_MODE, A, a_ldm, sizeof a_ldm, (void *)&get_reply, 0xff,
                0, 0);
    while (get_reply != 1)
      ;
  }
  athread_syn(ARRAY_SCOPE, 0xffff);

  put_reply = 0;
  int puts = 0;
  for (int r = _MYID; r < ROWS; r += ncpe)
    for (int k = 0; k < NCHUNK; k++) {
      get_reply = 0;
      athread_get(PE_MODE, &X[r][k * CHUNK], x_ldm, CHUNK * 4,
                  (void *)&get_reply, 0, 0, 0);
      /* the previous chunk's put must be out of y_ldm before it is reused */
      while (put_reply != (unsigned long)puts)
        ;
      athread_get(PE_MODE, &Y[r][k * CHUNK], y_ldm, CHUNK * 4,
                  (void *)&get_reply, 0, 0, 0);
      while (get_reply != 2)
        ;
      for (int i = 0; i < CHUNK; i++)
        y_ldm[i] += a_ldm[k] * x_ldm[i];
      athread_put(PE_MODE, y_ldm, &Y[r][k * CHUNK], CHUNK * 4,
                  (void *)&put_reply, 0, 0);
      puts++;
    }
  while (put_reply != (unsigned long)puts)
    ;
}

/* ------------------------------------------------------------ MPE code */

extern void SLAVE_FUN(axpy_rows)(void *);

int main(void)
{
  athread_init();
  for (int k = 0; k < NCHUNK; k++)
    A[k] = 0.5f * (float)(k + 1);
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLS; c++) {
      X[r][c] = (float)((r + c) % 7);
      Y[r][c] = (float)(r % 5);
    }

  int ncpe = athread_get_max_threads();
  athread_spawn(axpy_rows, &ncpe);
  athread_join();

  int bad = 0;
  for (int r = 0; r < ROWS && !bad; r++)
    for (int c = 0; c < COLS; c++) {
      float want = (float)(r % 5) + A[c / CHUNK] * (float)((r + c) % 7);
      if (Y[r][c] != want) {
        fprintf(stderr, "sw26010_axpy: Y[%d][%d] = %g, expected %g\n", r, c,
                Y[r][c], want);
        bad = 1;
        break;
      }
    }
  printf("sw26010_axpy: %d CPEs updated a %d x %d matrix with athread_get / "
         "athread_put and a BCAST_MODE coefficient table: %s\n",
         ncpe, ROWS, COLS, bad ? "FAIL" : "PASS");
  athread_halt();
  return bad ? 1 : 0;
}
