/*
 * ofi_cgobj.c - a core group's own named object in /dev/shm.
 *
 * The doorbell (ofi_bell.c) and the lane (ofi_lane.c) are each one POSIX
 * shared-memory object per CG, named after the job key and the CG's rank
 * (ofi_cg_object_name, ofi_shm_sweep.h), created before the address
 * exchange, mapped by every peer after it, and unlinked by its owner once
 * every peer has mapped it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transport/ofi/ofi.h"

void *ofi_cgobj_create(const char *name, size_t len)
{
  shm_unlink(name); /* a leftover of a crashed job with our key */
  int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    return NULL;
  /* Reserved now: a tmpfs that fills up later would kill the process
   * that touches a new page (SIGBUS), not fail a call. */
  int rc = posix_fallocate(fd, 0, (off_t)len);
  void *p = rc == 0 ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
                           fd, 0)
                    : MAP_FAILED;
  int err = rc ? rc : errno;
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name);
    errno = err;
    return NULL;
  }
  return p;
}

void *ofi_cgobj_open(const char *name, size_t *len)
{
  int fd = shm_open(name, O_RDWR, 0600);
  if (fd < 0)
    return NULL;
  struct stat st;
  void *p = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > 0)
    p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
             fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return NULL;
  *len = (size_t)st.st_size;
  return p;
}
