/*
 * ofi_readrate.c - raw libfabric RMA reads (fi_readmsg) between two
 * processes of one host, without LAPI: how fast the provider moves a
 * read of a given shape, with 1 .. 512 reads in flight.  Written to
 * learn whether STRIDED 4 KiB blocks read four to a read over
 * tcp;ofi_rxm are slow because of the provider (iovs, many small reads)
 * or because of LAPI's read path (docs/PERFORMANCE.md, "STRIDED 4 KiB
 * over tcp, session 11").
 *
 * The program forks: the parent registers 32 MiB for remote reads and
 * only drives its progress (fi_cq_read in a loop: over tcp a read is
 * answered by the owner's progress); the child reads it in the shapes
 * below, 64 MiB per figure, keeping `depth` reads posted.  The two meet
 * through a socketpair (addresses, key, the end).  Printed per shape and
 * depth: MB/s (1 MB = 1e6 bytes), wall time per read, how often
 * fi_readmsg said -FI_EAGAIN.
 *
 *   4x4KiB->4x4KiB  4 local and 4 remote pieces of 4 KiB, pitch 8 KiB
 *                   (a read of LAPI's STRIDED 4 KiB path)
 *   4x4KiB->16KiB   4 remote pieces into one local run
 *   16KiB->4x4KiB   one remote run into 4 local pieces
 *   4KiB, 16KiB, 64KiB, 256KiB, 1MiB   one piece a side
 *
 * --write 1 posts fi_writemsg of the same shapes instead (the local
 * pieces are the source): the other way to move pieces without a copy
 * of ours.  A write completes when the provider is done with the source,
 * not when the data is in, so its figure is an upper bound.
 *
 * Both processes spin; on the shared 2-core machine run it under
 * `chrt -f 10` (without, a 16 KiB figure came out 5x lower at load 5).
 *
 * Usage: ofi_readrate [--provider P] [--shape NAME] [--depth N]
 *        [--write 1]   (default tcp;ofi_rxm, every shape, depths 1 8 64
 *        512, reads)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REGION ((size_t)32 << 20)
#define PER_FIGURE ((size_t)64 << 20)
#define MAX_PIECES 4

struct shape {
  const char *name;
  int nl, nr;         /* local and remote pieces */
  size_t piece;       /* bytes a piece on the side with several */
  size_t lpitch, rpitch;
};

static const struct shape shapes[] = {
    {"4x4KiB->4x4KiB", 4, 4, 4096, 8192, 8192},
    {"4x4KiB->16KiB", 1, 4, 4096, 16384, 8192},
    {"16KiB->4x4KiB", 4, 1, 4096, 8192, 16384},
    {"4KiB", 1, 1, 4096, 4096, 4096},
    {"16KiB", 1, 1, 16384, 16384, 16384},
    {"64KiB", 1, 1, 65536, 65536, 65536},
    {"256KiB", 1, 1, 262144, 262144, 262144},
    {"1MiB", 1, 1, 1048576, 1048576, 1048576},
};

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_av *av;
static struct fid_cq *cq;
static struct fid_ep *ep;
static fi_addr_t peer;
static int writes;

static void check(int rc, const char *what)
{
  if (rc) {
    fprintf(stderr, "ofi_readrate: %s: %s\n", what, fi_strerror(rc < 0 ? -rc
                                                                      : rc));
    exit(1);
  }
}

static void io_all(int fd, void *p, size_t n, int out)
{
  char *c = p;
  while (n) {
    ssize_t k = out ? write(fd, c, n) : read(fd, c, n);
    if (k <= 0) {
      perror("ofi_readrate: socketpair");
      exit(1);
    }
    c += k;
    n -= (size_t)k;
  }
}

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static struct fid_mr *reg(void *p, size_t n, uint64_t access)
{
  struct fid_mr *mr;
  check(fi_mr_reg(domain, p, n, access, 0, 0, 0, &mr, NULL), "fi_mr_reg");
  if (info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
    check(fi_mr_bind(mr, &ep->fid, 0), "fi_mr_bind");
    check(fi_mr_enable(mr), "fi_mr_enable");
  }
  return mr;
}

/* The endpoint as LAPI opens it (ofi_fabric.c: hints, loopback). */
static void open_endpoint(const char *prov, int sock)
{
  struct fi_info *hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_RMA;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
                                FI_MR_PROV_KEY | FI_MR_ALLOCATED |
                                FI_MR_ENDPOINT;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->fabric_attr->prov_name = strdup(prov);
  int shm = strcmp(prov, "shm") == 0;
  check(fi_getinfo(FI_VERSION(1, 9), shm ? NULL : "127.0.0.1", NULL,
                   shm ? 0 : FI_SOURCE, hints, &info),
        "fi_getinfo");
  fi_freeinfo(hints);
  check(fi_fabric(info->fabric_attr, &fabric, NULL), "fi_fabric");
  check(fi_domain(fabric, info, &domain, NULL), "fi_domain");
  struct fi_av_attr aa = {.type = FI_AV_TABLE};
  check(fi_av_open(domain, &aa, &av, NULL), "fi_av_open");
  struct fi_cq_attr ca = {.format = FI_CQ_FORMAT_CONTEXT, .size = 4096};
  check(fi_cq_open(domain, &ca, &cq, NULL), "fi_cq_open");
  check(fi_endpoint(domain, info, &ep, NULL), "fi_endpoint");
  check(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind av");
  check(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind cq");
  check(fi_enable(ep), "fi_enable");
  char name[256], other[256];
  size_t len = sizeof name, olen;
  check(fi_getname(&ep->fid, name, &len), "fi_getname");
  io_all(sock, &len, sizeof len, 1);
  io_all(sock, name, len, 1);
  io_all(sock, &olen, sizeof olen, 0);
  if (olen > sizeof other) {
    fprintf(stderr, "ofi_readrate: address too long\n");
    exit(1);
  }
  io_all(sock, other, olen, 0);
  if (fi_av_insert(av, other, 1, &peer, 0, NULL) != 1) {
    fprintf(stderr, "ofi_readrate: fi_av_insert failed\n");
    exit(1);
  }
}

/* The owner: progress until the reader says it is done. */
static void serve(int sock, char *buf)
{
  struct fid_mr *mr = reg(buf, REGION, FI_REMOTE_READ | FI_REMOTE_WRITE);
  uint64_t key = fi_mr_key(mr);
  uint64_t base = (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
                      ? (uint64_t)(uintptr_t)buf
                      : 0;
  io_all(sock, &key, sizeof key, 1);
  io_all(sock, &base, sizeof base, 1);
  fcntl(sock, F_SETFL, O_NONBLOCK);
  struct fi_cq_entry e[16];
  char c;
  /* the socket is looked at rarely: a system call per poll would slow
   * the answers this side owes.  A byte is the end; so is end of file
   * (the reader died). */
  for (unsigned long it = 1;; it++) {
    fi_cq_read(cq, e, 16);
    if (it % 4096 == 0 && read(sock, &c, 1) >= 0)
      break;
  }
  fi_close(&mr->fid);
}

static void figure(const struct shape *s, int depth, char *buf, void *ldesc,
                   uint64_t key, uint64_t base)
{
  size_t lrun = s->nl == 1 ? s->piece * (size_t)s->nr : s->piece;
  size_t rrun = s->nr == 1 ? s->piece * (size_t)s->nl : s->piece;
  size_t per = lrun * (size_t)s->nl;
  size_t span = 2 * per, slots = REGION / span;
  long nreads = (long)(PER_FIGURE / per);
  struct fi_context2 *ctx = calloc((size_t)depth, sizeof *ctx);
  int *spare = malloc((size_t)depth * sizeof *spare);
  if (ctx == NULL || spare == NULL)
    exit(1);
  int nspare = depth;
  for (int i = 0; i < depth; i++)
    spare[i] = i;
  long posted = 0, done = 0, eagain = 0;
  double t0 = now();
  while (done < nreads) {
    while (nspare && posted < nreads) {
      size_t off = ((size_t)posted % slots) * span;
      struct iovec iov[MAX_PIECES];
      void *desc[MAX_PIECES];
      struct fi_rma_iov riov[MAX_PIECES];
      for (int i = 0; i < s->nl; i++) {
        iov[i].iov_base = buf + off + (size_t)i * s->lpitch;
        iov[i].iov_len = lrun;
        desc[i] = ldesc;
      }
      for (int i = 0; i < s->nr; i++) {
        riov[i].addr = base + off + (size_t)i * s->rpitch;
        riov[i].len = rrun;
        riov[i].key = key;
      }
      struct fi_msg_rma msg = {
          .msg_iov = iov, .desc = desc, .iov_count = (size_t)s->nl,
          .addr = peer, .rma_iov = riov, .rma_iov_count = (size_t)s->nr,
          .context = &ctx[spare[nspare - 1]],
      };
      int rc = writes ? (int)fi_writemsg(ep, &msg, 0)
                      : (int)fi_readmsg(ep, &msg, 0);
      if (rc == -FI_EAGAIN) {
        eagain++;
        break;
      }
      check(rc, writes ? "fi_writemsg" : "fi_readmsg");
      nspare--;
      posted++;
    }
    struct fi_cq_entry e[64];
    ssize_t n = fi_cq_read(cq, e, 64);
    for (ssize_t i = 0; i < n; i++) {
      spare[nspare++] = (int)((struct fi_context2 *)e[i].op_context - ctx);
      done++;
    }
    if (n < 0 && n != -FI_EAGAIN) {
      struct fi_cq_err_entry err = {0};
      fi_cq_readerr(cq, &err, 0);
      check(err.err ? err.err : (int)n, writes ? "a write" : "a read");
    }
  }
  double t = now() - t0;
  printf("%-15s depth %3d  %8.0f MB/s  %7.2f us/%s  eagain %ld\n",
         s->name, depth, (double)nreads * (double)per / t / 1e6,
         t / (double)nreads * 1e6, writes ? "write" : "read", eagain);
  fflush(stdout);
  free(ctx);
  free(spare);
}

int main(int argc, char **argv)
{
  const char *prov = "tcp;ofi_rxm", *only = NULL;
  int only_depth = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--provider") == 0)
      prov = argv[i + 1];
    else if (strcmp(argv[i], "--shape") == 0)
      only = argv[i + 1];
    else if (strcmp(argv[i], "--depth") == 0)
      only_depth = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--write") == 0)
      writes = atoi(argv[i + 1]) != 0;
    else
      break;
  }
  if (argc % 2 == 0) {
    fprintf(stderr, "usage: ofi_readrate [--provider P] [--shape NAME] "
                    "[--depth N] [--write 1]\n");
    return 2;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
    perror("ofi_readrate: socketpair");
    return 1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("ofi_readrate: fork");
    return 1;
  }
  int reader = pid == 0, sock = reader ? sv[1] : sv[0];
  open_endpoint(prov, sock);
  char *buf;
  if (posix_memalign((void **)&buf, 4096, REGION) != 0)
    return 1;
  memset(buf, reader, REGION);
  if (!reader) {
    serve(sock, buf);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
  }
  uint64_t key, base;
  io_all(sock, &key, sizeof key, 0);
  io_all(sock, &base, sizeof base, 0);
  struct fid_mr *lmr = reg(buf, REGION, writes ? FI_WRITE : FI_READ);
  /* rxm connects at the first operation and says -FI_EAGAIN until it
   * is up: connect before the clock runs for the first figure */
  struct fi_context2 warm;
  struct fi_cq_entry e;
  ssize_t got;
  while (fi_read(ep, buf, 4096, fi_mr_desc(lmr), peer, base, key, &warm) ==
         -FI_EAGAIN)
    fi_cq_read(cq, &e, 1); /* progress only: nothing of ours is out */
  while ((got = fi_cq_read(cq, &e, 1)) == -FI_EAGAIN)
    ;
  check(got == 1 ? 0 : (int)got, "the first read");
  static const int depths[] = {1, 8, 64, 512};
  printf("# ofi_readrate: %s, provider %s, iov_limit %zu, rma_iov_limit "
         "%zu, %zu MiB a figure\n",
         writes ? "fi_writemsg" : "fi_readmsg", info->fabric_attr->prov_name,
         info->tx_attr->iov_limit,
         info->tx_attr->rma_iov_limit, PER_FIGURE >> 20);
  for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
    if ((only && strcmp(shapes[k].name, only) != 0) ||
        shapes[k].nl > (int)info->tx_attr->iov_limit ||
        shapes[k].nr > (int)info->tx_attr->rma_iov_limit)
      continue;
    for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++)
      if (only_depth == 0 || only_depth == depths[d])
        figure(&shapes[k], depths[d], buf, fi_mr_desc(lmr), key, base);
  }
  char c = 1;
  io_all(sock, &c, 1, 1);
  fi_close(&lmr->fid);
  return 0;
}
