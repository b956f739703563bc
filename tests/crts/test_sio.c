/*
 * test_sio.c - CRTS_sio_fwrite: the file holds every CPE's block in tid
 * order, call after call, appended to what was there.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crts_cg.h"
#include "crts_test_util.h"

#define MAX_BLOCK 200

static __thread_local unsigned char ldm_block[MAX_BLOCK];
static unsigned char mem_block[64][MAX_BLOCK];

static unsigned long block_size(int tid, int call)
{
  if (tid == 7)
    return 0; /* a CPE with nothing to say still takes part */
  return (unsigned long)((tid * 37 + call * 11) % MAX_BLOCK) + 1;
}

static unsigned char block_byte(int tid, int call, unsigned long j)
{
  return (unsigned char)(tid * 31 + j * 7 + (unsigned long)call * 101);
}

struct sio_plan {
  char path[256];
  int calls;
  int odd_tid_bad; /* odd tids pass another CPE's LDM (refused) */
};

static void write_kernel(void *arg)
{
  struct sio_plan *p = arg;
  int t = CRTS_tid;
  for (int c = 0; c < p->calls; c++) {
    unsigned long n = block_size(t, c);
    /* Even CPEs write from LDM, odd ones from main memory. */
    unsigned char *b = t % 2 ? mem_block[t] : ldm_block;
    for (unsigned long j = 0; j < n; j++)
      b[j] = block_byte(t, c, j);
    if (p->odd_tid_bad && t % 2)
      b = crts_ldm_translate(ldm_block, (t + 1) % crts_cg.group_size);
    CRTS_sio_fwrite(p->path, b, n);
  }
}

static void temp_path(struct sio_plan *p)
{
  snprintf(p->path, sizeof p->path, "/tmp/crts_sio_XXXXXX");
  int fd = mkstemp(p->path);
  cr_assert_geq(fd, 0);
  close(fd);
  unlink(p->path); /* the first call creates it */
}

static unsigned char *slurp(const char *path, long *len)
{
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "%s was not created", path);
  fseek(f, 0, SEEK_END);
  *len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *d = malloc((size_t)*len + 1);
  cr_assert_eq(fread(d, 1, (size_t)*len, f), (size_t)*len);
  fclose(f);
  return d;
}

/* Check the records of calls 0..calls-1 from offset at; returns the end. */
static long check_records(const unsigned char *d, long len, long at,
                          int ncpes, int calls, int skip_odd)
{
  for (int c = 0; c < calls; c++)
    for (int t = 0; t < ncpes; t++) {
      if (skip_odd && t % 2)
        continue;
      unsigned long n = block_size(t, c);
      cr_assert_leq(at + (long)n, len, "file too short at CPE %d call %d", t,
                    c);
      for (unsigned long j = 0; j < n; j++)
        cr_assert_eq(d[at + (long)j], block_byte(t, c, j),
                     "call %d, CPE %d, byte %lu", c, t, j);
      at += (long)n;
    }
  return at;
}

static void run_and_check(int ncpes, int calls)
{
  struct sio_plan p = { .calls = calls };
  temp_path(&p);
  crts_test_run(write_kernel, &p);
  CRTS_ASSERT_NO_CPE_FAILURE();
  long len;
  unsigned char *d = slurp(p.path, &len);
  cr_assert_eq(check_records(d, len, 0, ncpes, calls, 0), len,
               "bytes after the last record");
  free(d);
  unlink(p.path);
}

Test(sio, blocks_land_in_tid_order_over_two_calls)
{
  run_and_check(64, 2);
}

Test(sio, eight_cpes_three_calls)
{
  setenv("CRTS_NUM_CPES", "8", 1);
  run_and_check(8, 3);
}

Test(sio, an_existing_file_is_appended_to)
{
  struct sio_plan p = { .calls = 1 };
  temp_path(&p);
  FILE *f = fopen(p.path, "wb");
  fputs("HEAD", f);
  fclose(f);
  crts_test_run(write_kernel, &p);
  long len;
  unsigned char *d = slurp(p.path, &len);
  cr_assert_eq(memcmp(d, "HEAD", 4), 0);
  cr_assert_eq(check_records(d, len, 4, 64, 1, 0), len);
  /* A later spawn appends again. */
  crts_test_run(write_kernel, &p);
  free(d);
  d = slurp(p.path, &len);
  long at = check_records(d, len, 4, 64, 1, 0);
  cr_assert_eq(check_records(d, len, at, 64, 1, 0), len);
  free(d);
  unlink(p.path);
}

Test(sio, refused_blocks_leave_no_gap)
{
  struct sio_plan p = { .calls = 2, .odd_tid_bad = 1 };
  temp_path(&p);
  crts_test_run(write_kernel, &p);
  long len;
  unsigned char *d = slurp(p.path, &len);
  cr_assert_eq(check_records(d, len, 0, 64, 2, 1), len);
  free(d);
  unlink(p.path);
}

static char other_path[300];

static void mixed_names(void *arg)
{
  struct sio_plan *p = arg;
  unsigned long n = block_size(CRTS_tid, 0);
  for (unsigned long j = 0; j < n; j++)
    mem_block[CRTS_tid][j] = block_byte(CRTS_tid, 0, j);
  CRTS_sio_fwrite(CRTS_tid == 9 ? other_path : p->path, mem_block[CRTS_tid],
                  n);
}

Test(sio, a_cpe_naming_another_file_is_dropped)
{
  struct sio_plan p = { .calls = 1 };
  temp_path(&p);
  snprintf(other_path, sizeof other_path, "%s.other", p.path);
  crts_test_run(mixed_names, &p);
  long len;
  unsigned char *d = slurp(p.path, &len);
  long at = 0;
  for (int t = 0; t < 64; t++) {
    if (t == 9)
      continue;
    unsigned long n = block_size(t, 0);
    for (unsigned long j = 0; j < n; j++)
      cr_assert_eq(d[at + (long)j], block_byte(t, 0, j));
    at += (long)n;
  }
  cr_assert_eq(at, len);
  struct stat st;
  cr_assert_neq(stat(other_path, &st), 0, "the odd name was not created");
  free(d);
  unlink(p.path);
}

static void big_blocks(void *arg)
{
  char *path = arg;
  size_t n = 300000 + (size_t)CRTS_tid * 1000;
  unsigned char *b = malloc(n);
  for (size_t j = 0; j < n; j++)
    b[j] = (unsigned char)(j * 13 + (size_t)CRTS_tid);
  CRTS_sio_fwrite(path, b, n);
  free(b);
}

Test(sio, large_blocks_from_main_memory)
{
  setenv("CRTS_NUM_CPES", "4", 1);
  struct sio_plan p = { .calls = 1 };
  temp_path(&p);
  crts_test_run(big_blocks, p.path);
  long len;
  unsigned char *d = slurp(p.path, &len);
  long at = 0;
  for (int t = 0; t < 4; t++) {
    size_t n = 300000 + (size_t)t * 1000;
    for (size_t j = 0; j < n; j++)
      if (d[at + (long)j] != (unsigned char)(j * 13 + (size_t)t))
        cr_assert_fail("CPE %d byte %zu", t, j);
    at += (long)n;
  }
  cr_assert_eq(at, len);
  free(d);
  unlink(p.path);
}

Test(sio, unopenable_file_returns_quietly)
{
  struct sio_plan p = { .calls = 2 };
  snprintf(p.path, sizeof p.path, "/nonexistent-dir-crts/sub/file");
  crts_test_run(write_kernel, &p);
  struct stat st;
  cr_assert_neq(stat(p.path, &st), 0);
}

Test(sio, not_from_the_mpe)
{
  cr_assert_eq(CRTS_init(), 0);
  char path[] = "/tmp/crts_sio_never";
  CRTS_sio_fwrite(path, "x", 1);
  struct stat st;
  cr_assert_neq(stat(path, &st), 0);
}
