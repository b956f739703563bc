/*
 * readmid - print the total and the unfinished task counts of a
 * CRTS_task_fetch checkpoint ("mid") file.
 *
 *   readmid FILE [BLOCK_SIZE [TASK_NUM]]
 *
 * The mid file holds one byte per block ('1' = finished), so the task
 * counts need the block size and the task count: they come from the
 * command line, else from the sidecar FILE.info that CRTS_task_fetch
 * writes.  Without either, readmid prints block counts only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crts/crts_mid.h"

static void usage(FILE *out)
{
  fprintf(out,
    "usage: readmid FILE [BLOCK_SIZE [TASK_NUM]]\n"
    "\n"
    "Print the total number of tasks of a CRTS_task_fetch checkpoint (mid)\n"
    "file and how many are not finished yet.  The file has one byte per\n"
    "block of BLOCK_SIZE tasks, '1' when the block is finished.\n"
    "\n"
    "BLOCK_SIZE and TASK_NUM default to the values CRTS_task_fetch recorded\n"
    "in FILE.info.  Without them readmid counts blocks; with BLOCK_SIZE\n"
    "alone it counts every block as full (the last one may be shorter).\n"
    "\n"
    "Output:\n"
    "  total tasks: N\n"
    "  unfinished tasks: U\n"
    "  blocks: B of S tasks, V unfinished\n"
    "Exit status: 0, or 1 when the file cannot be read or does not fit.\n");
}

/* A positive count from the command line, or 0. */
static long positive(const char *s)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  return errno == 0 && end != s && *end == '\0' && v > 0 ? v : 0;
}

int main(int argc, char **argv)
{
  if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    usage(stdout);
    return 0;
  }
  if (argc < 2 || argc > 4) {
    usage(stderr);
    return 1;
  }
  const char *file = argv[1];
  long block = 0, task_num = 0;
  if (argc > 2 && !(block = positive(argv[2]))) {
    fprintf(stderr, "readmid: BLOCK_SIZE %s is not a positive number\n",
            argv[2]);
    return 1;
  }
  if (argc > 3 && !(task_num = positive(argv[3]))) {
    fprintf(stderr, "readmid: TASK_NUM %s is not a positive number\n",
            argv[3]);
    return 1;
  }

  char err[512];
  long info_tasks = 0, info_block = 0;
  int info = crts_mid_info_read(file, &info_tasks, &info_block, err,
                                sizeof err);
  if (info < 0 && argc < 4) {
    fprintf(stderr, "readmid: %s\n", err);
    return 1;
  }
  if (info > 0 && (!block || block == info_block)) {
    block = info_block;
    if (!task_num)
      task_num = info_tasks;
  }

  FILE *f = fopen(file, "r");
  if (!f) {
    fprintf(stderr, "readmid: cannot open %s: %s\n", file, strerror(errno));
    return 1;
  }
  long nblocks = 0, open_blocks = 0, open_tasks = 0;
  int over = 0;
  for (int c; (c = getc(f)) != EOF; nblocks++) {
    if (c == '1')
      continue;
    open_blocks++;
    if (block && task_num) {
      if (nblocks * block >= task_num)
        over = 1;
      else
        open_tasks += crts_mid_block_tasks(nblocks, task_num, block);
    } else {
      open_tasks += block;
    }
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    fprintf(stderr, "readmid: cannot read %s\n", file);
    return 1;
  }
  if (block && task_num &&
      (over || nblocks != crts_mid_blocks(task_num, block))) {
    fprintf(stderr, "readmid: %s has %ld bytes, but %ld tasks in blocks of "
            "%ld need %ld (one per block): give the loop's BLOCK_SIZE and "
            "TASK_NUM\n", file, nblocks, task_num, block,
            crts_mid_blocks(task_num, block));
    return 1;
  }

  if (!block) {
    printf("total blocks: %ld\nunfinished blocks: %ld\n", nblocks,
           open_blocks);
    fprintf(stderr, "readmid: no %s%s records the block size: run "
            "`readmid %s BLOCK_SIZE [TASK_NUM]` to count tasks\n", file,
            CRTS_MID_INFO_SUFFIX, file);
    return 0;
  }
  if (!task_num) {
    printf("total tasks: %ld (at most: the last block may be shorter)\n",
           nblocks * block);
    printf("unfinished tasks: %ld (at most)\n", open_tasks);
  } else {
    printf("total tasks: %ld\nunfinished tasks: %ld\n", task_num, open_tasks);
  }
  printf("blocks: %ld of %ld tasks, %ld unfinished\n", nblocks, block,
         open_blocks);
  return 0;
}
