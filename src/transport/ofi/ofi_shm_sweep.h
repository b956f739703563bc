/*
 * ofi_shm_sweep.h - remove the shared-memory regions a dead process of
 * libfabric's shm provider left behind.
 *
 * libfabric 1.17's shm provider names an endpoint's region after the
 * process ("/dev/shm/<pid>:<ep>:<domain>", 16 MiB each) and unlinks it
 * only when the endpoint closes.  A process that is killed leaves it; a
 * later process that gets the same pid then fails fi_enable with EBUSY.
 * So both ends sweep: lapirun after it reaps a CG it started on this host,
 * and LAPI before it opens the first shm endpoint of a process (no live
 * process but this one can own regions named after its pid).
 *
 * The doorbell and the lane of a CG (ofi_bell.c, ofi_lane.c) are named
 * after the job key and its rank (ofi_cg_object_name) and unlinked by
 * the CG once every peer mapped them; lapirun removes those of a CG that
 * ended before that (ofi_shm_sweep_cg).
 *
 * Header-only so that lapirun, which does not link liblapi, shares it.
 */
#ifndef LAPI_OFI_SHM_SWEEP_H
#define LAPI_OFI_SHM_SWEEP_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

/* Unlink every /dev/shm entry named "<pid>:..."; returns how many went. */
static inline int ofi_shm_sweep_pid(pid_t pid)
{
  char prefix[32];
  int plen = snprintf(prefix, sizeof prefix, "%ld:", (long)pid);
  DIR *d = opendir("/dev/shm");
  if (d == NULL)
    return 0;
  int gone = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, prefix, (size_t)plen) != 0)
      continue;
    char name[300];
    snprintf(name, sizeof name, "/%s", e->d_name);
    if (shm_unlink(name) == 0)
      gone++;
  }
  closedir(d);
  return gone;
}

/* The name of a CG's own object: kind "ofi" (its doorbell) or "lane". */
static inline void ofi_cg_object_name(char *out, size_t n, const char *kind,
                                      const char *job_key, int rank)
{
  snprintf(out, n, "/lapi-%s-%s-%d", kind, job_key, rank);
}

/* Unlink the objects of CG rank of the job job_key, if still there. */
static inline void ofi_shm_sweep_cg(const char *job_key, int rank)
{
  static const char *const kinds[] = {"ofi", "lane"};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    char name[160];
    ofi_cg_object_name(name, sizeof name, kinds[k], job_key, rank);
    shm_unlink(name);
  }
}

#endif
