/*
 * fuzz_libfuzzer.c - the coverage-guided build of the wire fuzzer
 * (fuzz_wire.h), with clang's libFuzzer (tools/fuzz-wire.sh).  Task 1
 * alone runs libFuzzer's driver, with the program's arguments; task 0 is
 * a plain peer.  libFuzzer ends the process with exit() when the
 * campaign is over: the job's end and its check run then, from atexit.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_wire.h"

int LLVMFuzzerRunDriver(int *argc, char ***argv,
                        int (*cb)(const uint8_t *data, size_t size));

static int one(const uint8_t *data, size_t size)
{
  fz_one(data, size);
  return 0;
}

static void at_end(void)
{
  int rc = fz_finish();
  if (rc != 0)
    _exit(rc);
}

int main(int argc, char **argv)
{
  const char *lim = getenv("FUZZ_LIMIT_S"); /* the campaign and its end */
  int limit = lim ? atoi(lim) : 3600;
  if (fz_start(limit) != 1)
    return fz_serve(limit);
  /* libFuzzer times inputs with SIGALRM (-timeout) and leaves a handler
   * it finds in place: task 1's alarm is its, not ofi_test.h's */
  alarm(0);
  signal(SIGALRM, SIG_DFL);
  atexit(at_end);
  return LLVMFuzzerRunDriver(&argc, &argv, one);
}
