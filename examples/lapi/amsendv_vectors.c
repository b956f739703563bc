/*
 * amsendv_vectors.c - LAPI_Amsendv with the three vector types, as in the
 * LAPI_Amsendv manual page:
 *   1. IOVECTOR  four ints scattered at the origin land in data_buffer[]:
 *                same count and lengths on both sides
 *   2. GENERIC   origin segments of 5, 10, 5 bytes flow into target
 *                segments of 12, 2, 4, 2 bytes: 5 -> t0, 7 -> t0+5,
 *                2 -> t1, 1 + 3 -> t2, 2 -> t3
 *   3. STRIDED   3 blocks of 5 bytes, 8 bytes apart at the origin, land
 *                as 3 blocks of 5 bytes 6 apart at the target
 *
 * Build and run:  make            then  ./build/examples/lapi_amsendv_vectors
 * Across core groups (processes):
 *   ./build/bin/lapirun -n 2 --label ./build/examples/lapi_amsendv_vectors
 * Outside this tree:
 *   cc amsendv_vectors.c -llapi -lcrts -lpthread -o amsendv_vectors
 *
 * The header handler returns the target vector; it must stay valid until
 * the target counter moves, so it lives in static storage.  The user
 * header says which of the three examples is arriving.  Each task sends
 * to the next one (with one task: to itself).
 */
#include <lapi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NUM_VECS 4

enum example { EX_IOVECTOR, EX_GENERIC, EX_STRIDED };

/* ------------------------------------------------------ target side */

static int data_buffer[NUM_VECS];            /* IOVECTOR target */
static char t0[12], t1[2], t2[4], t3[2];     /* GENERIC targets */
static char strided_in[17];  /* STRIDED target: 2 * 6 + 5 bytes */

static void *io_info[NUM_VECS];
static ulong io_len[NUM_VECS];
static lapi_vec_t io_vec = {LAPI_GEN_IOVECTOR, NUM_VECS, io_info, io_len};

static void *gen_info[4] = {t0, t1, t2, t3};
static ulong gen_len[4] = {12, 2, 4, 2};
static lapi_vec_t gen_vec = {LAPI_GEN_GENERIC, 4, gen_info, gen_len};

/* Strided: info = {base, block size, stride}, integers in void * slots. */
static void *str_info[3] = {strided_in, (void *)5, (void *)6};
static lapi_vec_t str_vec = {LAPI_GEN_STRIDED_XFER, 3, str_info, NULL};

static lapi_vec_t *vec_header(lapi_handle_t *hndl, void *uhdr,
                              uint *uhdr_len, ulong *len_vec,
                              compl_hndlr_t **comp_h, void **user_info)
{
  (void)hndl;
  (void)uhdr_len;
  (void)len_vec; /* the origin's lengths, if the target needs them */
  *comp_h = NULL; /* no completion handler: tgt_cntr is enough here */
  *user_info = NULL;
  switch (*(int *)uhdr) {
  case EX_IOVECTOR:
    /* Same num_vecs and lengths as the origin; our own addresses. */
    for (int i = 0; i < NUM_VECS; i++) {
      io_info[i] = &data_buffer[i];
      io_len[i] = sizeof(int);
    }
    return &io_vec;
  case EX_GENERIC:
    return &gen_vec;
  default:
    return &str_vec;
  }
}

/* ------------------------------------------------------ origin side */

static const char *const names[] = {"IOVECTOR", "GENERIC ", "STRIDED "};

static int send_and_wait(lapi_handle_t hndl, int me, int to, int example,
                         lapi_vec_t *vec, void *tgt_cntr)
{
  lapi_cntr_t org_cntr, cmpl_cntr;
  LAPI_Setcntr(hndl, &org_cntr, 0);
  LAPI_Setcntr(hndl, &cmpl_cntr, 0);
  int rc = LAPI_Amsendv(hndl, to, (void *)vec_header, &example,
                        sizeof example, vec, tgt_cntr, &org_cntr, &cmpl_cntr);
  if (rc != LAPI_SUCCESS) {
    char msg[LAPI_MAX_ERR_STRING];
    LAPI_Msg_string(rc, msg);
    fprintf(stderr, "LAPI_Amsendv: %s\n", msg);
    return 0;
  }
  int org_rc = LAPI_Waitcntr(hndl, &org_cntr, 1, NULL); /* vec reusable */
  int cmpl_rc = LAPI_Waitcntr(hndl, &cmpl_cntr, 1, NULL); /* delivered */
  printf("task %d: %s sent to task %d: org_cntr and cmpl_cntr reached 1\n",
         me, names[example], to);
  return org_rc == LAPI_SUCCESS && cmpl_rc == LAPI_SUCCESS;
}

int main(void)
{
  lapi_handle_t hndl;
  lapi_info_t info;
  memset(&info, 0, sizeof info);
  if (LAPI_Init(&hndl, &info) != LAPI_SUCCESS)
    return 1;
  int me, ntasks;
  LAPI_Qenv(hndl, TASK_ID, &me);
  LAPI_Qenv(hndl, NUM_TASKS, &ntasks);
  int to = (me + 1) % ntasks;

  lapi_cntr_t tgt_cntr;
  LAPI_Setcntr(hndl, &tgt_cntr, 0);
  void *tgt_cntrs[ntasks];
  LAPI_Address_init(hndl, &tgt_cntr, tgt_cntrs);
  int ok = 1;

  /* 1. IOVECTOR: four ints that are not next to each other. */
  int a = 10, b = 20, c = 30, d = 40;
  void *o_info[NUM_VECS] = {&a, &b, &c, &d};
  ulong o_len[NUM_VECS] = {sizeof a, sizeof b, sizeof c, sizeof d};
  lapi_vec_t iov = {LAPI_GEN_IOVECTOR, NUM_VECS, o_info, o_len};
  ok &= send_and_wait(hndl, me, to, EX_IOVECTOR, &iov, tgt_cntrs[to]);

  /* 2. GENERIC: 20 bytes in 5 + 10 + 5 into 12 + 2 + 4 + 2. */
  char g0[5] = {'A', 'B', 'C', 'D', 'E'};
  char g1[10] = {'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O'};
  char g2[5] = {'P', 'Q', 'R', 'S', 'T'};
  void *g_info[3] = {g0, g1, g2};
  ulong g_len[3] = {5, 10, 5};
  lapi_vec_t gen = {LAPI_GEN_GENERIC, 3, g_info, g_len};
  ok &= send_and_wait(hndl, me, to, EX_GENERIC, &gen, tgt_cntrs[to]);

  /* 3. STRIDED: blocks of 5 at pitch 8 (the bytes between are skipped). */
  char src[24] = "abcde...fghij...klmno...";
  void *s_info[3] = {src, (void *)5, (void *)8};
  lapi_vec_t str = {LAPI_GEN_STRIDED_XFER, 3, s_info, NULL};
  ok &= send_and_wait(hndl, me, to, EX_STRIDED, &str, tgt_cntrs[to]);

  /* What arrived here (from the previous task). */
  LAPI_Waitcntr(hndl, &tgt_cntr, 3, NULL);
  int from = (me + ntasks - 1) % ntasks;
  printf("task %d: tgt_cntr reached 3: three vectors from task %d of %d\n",
         me, from, ntasks);
  printf("IOVECTOR data_buffer = {%d, %d, %d, %d}\n", data_buffer[0],
         data_buffer[1], data_buffer[2], data_buffer[3]);
  ok &= data_buffer[0] == 10 && data_buffer[1] == 20 &&
        data_buffer[2] == 30 && data_buffer[3] == 40;
  printf("GENERIC  t0 = %.12s, t1 = %.2s, t2 = %.4s, t3 = %.2s\n", t0, t1,
         t2, t3);
  ok &= memcmp(t0, "ABCDEFGHIJKL", 12) == 0 && memcmp(t1, "MN", 2) == 0 &&
        memcmp(t2, "OPQR", 4) == 0 && memcmp(t3, "ST", 2) == 0;
  char shown[18];
  for (int i = 0; i < 17; i++)
    shown[i] = strided_in[i] ? strided_in[i] : '_';
  shown[17] = '\0';
  printf("STRIDED  target = %s\n", shown);
  ok &= memcmp(strided_in, "abcde\0fghij\0klmno", 17) == 0;

  LAPI_Gfence(hndl);
  LAPI_Term(hndl);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
