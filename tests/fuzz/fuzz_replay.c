/*
 * fuzz_replay.c - the ctest of the wire fuzzer (fuzz_wire.h), built by
 * any compiler: task 1 runs every file of a seed corpus, then a fixed
 * number of deterministic mutations of them (FUZZ_ITERS, default 20000,
 * seeded by FUZZ_SEED, default 1), then the job's final check.
 *
 *   lapirun -n 2 --provider shm fuzz_wire_replay tests/fuzz/corpus
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_wire.h"

#define FZ_MAX_INPUT 9000
#define MAX_FILES 512

struct input {
  size_t n;
  uint8_t b[FZ_MAX_INPUT];
};

static struct input corpus[MAX_FILES];
static int ncorpus;

static int by_name(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads every file of dir, in name order (the mutations are then the
 * same on every run). */
static void load(const char *dir)
{
  DIR *d = opendir(dir);
  if (d == NULL) {
    perror(dir);
    exit(2);
  }
  char *names[MAX_FILES];
  int nn = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && nn < MAX_FILES)
    if (e->d_name[0] != '.')
      names[nn++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)nn, sizeof names[0], by_name);
  for (int i = 0; i < nn; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    FILE *f = fopen(path, "rb");
    if (f) {
      corpus[ncorpus].n = fread(corpus[ncorpus].b, 1, FZ_MAX_INPUT, f);
      fclose(f);
      ncorpus++;
    }
    free(names[i]);
  }
}

static uint64_t rng;

static uint32_t rnd(uint32_t below)
{
  rng ^= rng << 13; /* xorshift64 */
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return below ? (uint32_t)(rng % below) : 0;
}

/* One to eight of libFuzzer's kinds of change: bits, bytes, interesting
 * values in 1, 2, 4 or 8 bytes, bytes inserted, erased or copied. */
static void mutate(struct input *in)
{
  static const uint64_t interesting[] = {
      0, 1, 2, 7, 8, 16, 64, 255, 256, 4096, 65535, 65536, 0x7fffffff,
      0x80000000u, 0xffffffffu, 0x100000000ull, UINT64_MAX, UINT64_MAX - 7};
  int k = 1 + (int)rnd(8);
  for (int i = 0; i < k; i++) {
    size_t n = in->n;
    switch (rnd(6)) {
    case 0:
      if (n)
        in->b[rnd((uint32_t)n)] ^= (uint8_t)(1u << rnd(8));
      break;
    case 1:
      if (n)
        in->b[rnd((uint32_t)n)] = (uint8_t)rnd(256);
      break;
    case 2: {
      size_t w = (size_t)1 << rnd(4);
      if (n >= w) {
        uint64_t v = interesting[rnd(sizeof interesting /
                                     sizeof interesting[0])];
        memcpy(in->b + rnd((uint32_t)(n - w + 1)), &v, w);
      }
      break;
    }
    case 3: {
      size_t add = 1 + rnd(64);
      if (n + add <= FZ_MAX_INPUT) {
        size_t at = rnd((uint32_t)n + 1);
        memmove(in->b + at + add, in->b + at, n - at);
        for (size_t j = 0; j < add; j++)
          in->b[at + j] = (uint8_t)rnd(256);
        in->n += add;
      }
      break;
    }
    case 4:
      if (n) {
        size_t at = rnd((uint32_t)n), cut = 1 + rnd(64);
        if (cut > n - at)
          cut = n - at;
        memmove(in->b + at, in->b + at + cut, n - at - cut);
        in->n -= cut;
      }
      break;
    default:
      if (n > 1) {
        size_t from = rnd((uint32_t)n), to = rnd((uint32_t)n);
        size_t w = 1 + rnd(16);
        if (w > n - from)
          w = n - from;
        if (w > n - to)
          w = n - to;
        memmove(in->b + to, in->b + from, w);
      }
      break;
    }
  }
}

int main(int argc, char **argv)
{
  fz_strict = 1;
  if (fz_start(90) != 1)
    return fz_serve(60);
  load(argc > 1 ? argv[1] : "corpus");
  const char *it = getenv("FUZZ_ITERS"), *sd = getenv("FUZZ_SEED");
  long iters = it ? atol(it) : 20000;
  rng = sd ? strtoull(sd, NULL, 0) : 1;
  if (rng == 0)
    rng = 1;
  for (int i = 0; i < ncorpus; i++)
    fz_one(corpus[i].b, corpus[i].n);
  static struct input m;
  for (long i = 0; i < iters && ncorpus; i++) {
    m = corpus[rnd((uint32_t)ncorpus)];
    mutate(&m);
    fz_one(m.b, m.n);
  }
  printf("fuzz_wire task 1: %d corpus files, %ld mutations (seed %llu)\n",
         ncorpus, iters, (unsigned long long)(sd ? strtoull(sd, NULL, 0) : 1));
  return fz_finish();
}
