/*
 * crts_mid.h - the checkpoint ("mid") file of CRTS_task_fetch.
 *
 * As the CRTS manual specifies, the file holds one byte per block of
 * block_size tasks, (task_num + block_size - 1) / block_size bytes; a block
 * is finished when its byte is '1' and unfinished otherwise (a new file is
 * all '0').  Since those bytes alone do not say how many tasks a block
 * holds, libcrts also writes a small text sidecar "<file>.info":
 *
 *   crts-mid 1
 *   task_num 100
 *   block_size 7
 *
 * It lets readmid print task counts and lets a restart with other
 * parameters be refused.  A mid file without sidecar is accepted as long
 * as its length fits.
 */
#ifndef CRTS_MID_H
#define CRTS_MID_H

#include <stddef.h>
#include <stdint.h>

/* Suffix of the sidecar name. */
#define CRTS_MID_INFO_SUFFIX ".info"

/* Blocks of task_num tasks in blocks of block (both > 0), without overflow. */
static inline long crts_mid_blocks(long task_num, long block)
{
  return task_num / block + (task_num % block != 0);
}

/* Tasks in block b: block, or fewer in the last one. */
static inline long crts_mid_block_tasks(long b, long task_num, long block)
{
  long first = b * block;
  return task_num - first < block ? task_num - first : block;
}

/*
 * Read the sidecar of file: 1 with *task_num and *block set, 0 when there
 * is none, -1 when it exists but is not a sidecar (err receives why).
 */
int crts_mid_info_read(const char *file, long *task_num, long *block,
                       char *err, size_t errlen);

/*
 * Open file for a loop of task_num tasks in blocks of block (nblocks =
 * crts_mid_blocks): create it as nblocks '0' bytes if it is missing or
 * empty, and with create_info write the sidecar when missing.  The file
 * must then be nblocks long and agree with its sidecar.  Returns the open
 * descriptor, or -1 with err saying why and what to do.
 */
int crts_mid_open(const char *file, long task_num, long block,
                  int create_info, char *err, size_t errlen);

/*
 * Read the finished blocks of the open file fd (nblocks long) into a new
 * bitmap (bit b set: block b finished; the bits past nblocks are set too).
 * Returns the bitmap (free() it) and the number of unfinished blocks in
 * *unfinished, or NULL with err set.
 */
uint64_t *crts_mid_snapshot(int fd, long nblocks, long *unfinished,
                            char *err, size_t errlen);

/* Record block b as finished; 0, or -1 with errno set. */
int crts_mid_mark(int fd, long b);
/* Record every one of nblocks blocks as finished; 0, or -1 with errno set. */
int crts_mid_mark_all(int fd, long nblocks);

#endif /* CRTS_MID_H */
