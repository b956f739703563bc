/*
 * lapirun.c - start a job of core groups on this host (or through a
 * command prefix on others), serve its exchange, forward its output,
 * and end it as one.
 *
 * One thread, one poll() loop over: a signalfd (SIGCHLD, and the
 * signals forwarded to the job), every CG's stdout and stderr, and the
 * exchange server's sockets.  The first CG to fail decides the exit
 * status and brings the whole job down: SIGTERM to every CG's process
 * group, SIGKILL after LR_GRACE_MS.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2, signalfd */
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lapirun.h"
#include "transport/boot/boot_proto.h"
#include "transport/ofi/ofi_shm_sweep.h"

struct lr_job {
  struct lr_opts o;
  struct lr_cg *cg;
  int ngroups;
  int running;             /* CGs not reaped yet */
  int status;              /* exit status to return, -1: none yet */
  int killing;             /* SIGTERM sent to the job */
  int64_t kill_at;         /* when SIGKILL follows (0: not planned) */
  int64_t drain_until;     /* stop forwarding output (0: not yet) */
  struct boot_srv *srv;    /* the exchange */
  char key[BOOT_KEY_MAX + 1];
};

static void signal_job(struct lr_job *j, int sig)
{
  for (int r = 0; r < j->o.ncg; r++)
    if (j->cg[r].running)
      kill(-j->cg[r].pid, sig);
}

/* Bring the job down: SIGTERM now, SIGKILL after the grace period. */
static void end_job(struct lr_job *j, int sig)
{
  signal_job(j, sig);
  if (!j->killing) {
    j->killing = 1;
    j->kill_at = boot_now_ms() + LR_GRACE_MS;
  }
}

/* A CG started through --host-cmd may have failed in the command prefix
 * rather than in the program: say how to tell for the codes that usually
 * mean so (ssh's 255, a shell's 126/127 for a program it cannot run). */
static void host_cmd_hint(const struct lr_cg *c, int code)
{
  if (c->host_cmd == NULL)
    return;
  if (code == 255)
    fprintf(stderr, "lapirun: rank %d ran through --host-cmd '%s': 255 is "
            "also ssh's code when it cannot connect or log in; try `%s "
            "true` by hand\n", c->rank, c->host_cmd, c->host_cmd);
  else if (code == 126 || code == 127)
    fprintf(stderr, "lapirun: rank %d ran through --host-cmd '%s': %d is "
            "a shell's code for a program it cannot find or run there; "
            "give the program's absolute path, the same on every host\n",
            c->rank, c->host_cmd, code);
}

static void reap(struct lr_job *j)
{
  for (;;) {
    int st;
    pid_t pid = waitpid(-1, &st, WNOHANG);
    if (pid <= 0)
      return;
    for (int r = 0; r < j->o.ncg; r++) {
      struct lr_cg *c = &j->cg[r];
      if (c->pid != pid || !c->running)
        continue;
      c->running = 0;
      j->running--;
      if (c->host_cmd == NULL)
        ofi_shm_sweep_pid(pid); /* what libfabric's shm left if it died */
      int code = WIFEXITED(st) ? WEXITSTATUS(st)
                               : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
      if (j->killing)
        break; /* a CG we killed is not news */
      if (code == 0) {
        /* Its transport still up: it left without LAPI_Term, as an MPI
         * process that does not finalize.  The exchange told its peers
         * (GONE: their transports declare it gone, their waits for it
         * end with an error); the others run on, as after any fault a
         * LAPI job survives, but the job did not succeed. */
        if (boot_srv_rank_active(j->srv, r)) {
          fprintf(stderr, "lapirun: rank %d (pid %ld) exited with code 0 "
                  "without calling LAPI_Term: the job fails%s\n", r,
                  (long)pid, j->running ? " (its peers were told it is "
                  "gone and run on)" : "");
          if (j->status < 0)
            j->status = LR_EXIT_NOTERM;
        }
        break;
      }
      if (WIFSIGNALED(st))
        fprintf(stderr, "lapirun: rank %d (pid %ld) was killed by signal %d "
                "(%s)%s\n", r, (long)pid, WTERMSIG(st),
                strsignal(WTERMSIG(st)),
                j->running ? ": ending the job" : "");
      else
        fprintf(stderr, "lapirun: rank %d (pid %ld) exited with code %d%s\n",
                r, (long)pid, code, j->running ? ": ending the job" : "");
      if (!WIFSIGNALED(st))
        host_cmd_hint(c, code);
      if (j->status < 0)
        j->status = code;
      end_job(j, SIGTERM);
      break;
    }
  }
}

static void on_signals(struct lr_job *j, int sfd)
{
  struct signalfd_siginfo si;
  while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
    int sig = (int)si.ssi_signo;
    if (sig == SIGCHLD) {
      reap(j);
      continue;
    }
    /* A second interrupt does not wait for the grace period. */
    if (j->killing && (sig == SIGINT || sig == SIGTERM)) {
      signal_job(j, SIGKILL);
      continue;
    }
    if (j->o.verbose)
      fprintf(stderr, "lapirun: got signal %d: forwarding it to the job\n",
              sig);
    if (j->status < 0)
      j->status = 128 + sig;
    end_job(j, sig);
  }
}

/* Remove the node-scope objects of the job's host groups (CRTS), and
 * the doorbells and lanes of CGs that ended before they unlinked theirs
 * (src/transport/ofi/ofi_bell.c, ofi_lane.c: named after the job key and
 * the rank). */
static void cleanup_shm(const struct lr_job *j)
{
  for (int g = 0; g < j->ngroups; g++) {
    char name[160];
    char key[128];
    lr_crts_key(key, sizeof key, j->key, g, j->ngroups);
    snprintf(name, sizeof name, "/crts-%s", key);
    shm_unlink(name);
  }
  for (int r = 0; r < j->o.ncg; r++)
    ofi_shm_sweep_cg(j->key, r);
}

static void serve(struct lr_job *j, struct boot_srv *srv, int sfd)
{
  int nstreams = 2 * j->o.ncg;
  struct pollfd *pfd = NULL;
  int cap = 0;
  for (;;) {
    int open_streams = 0;
    for (int r = 0; r < j->o.ncg; r++)
      open_streams += (j->cg[r].out.fd >= 0) + (j->cg[r].err.fd >= 0);
    if (j->running == 0 && open_streams == 0)
      break;
    int64_t now = boot_now_ms();
    if (j->running == 0 && j->drain_until == 0)
      j->drain_until = now + LR_DRAIN_MS;
    if (j->drain_until && now >= j->drain_until)
      break; /* a grandchild keeps a pipe open: do not wait for it */
    if (j->kill_at && now >= j->kill_at) {
      signal_job(j, SIGKILL);
      j->kill_at = 0;
    }

    int need = 1 + nstreams + boot_srv_max_fds(srv);
    if (need > cap) {
      struct pollfd *p = realloc(pfd, (size_t)need * sizeof *p);
      if (p == NULL) {
        fprintf(stderr, "lapirun: out of memory\n");
        end_job(j, SIGKILL);
        j->status = LR_EXIT_OSERR;
        break;
      }
      pfd = p;
      cap = need;
    }
    int n = 0;
    pfd[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
    int first_stream = n;
    for (int r = 0; r < j->o.ncg; r++) {
      pfd[n++] = (struct pollfd){.fd = j->cg[r].out.fd, .events = POLLIN};
      pfd[n++] = (struct pollfd){.fd = j->cg[r].err.fd, .events = POLLIN};
    }
    int first_srv = n;
    n += boot_srv_pollfds(srv, pfd + n, cap - n);

    int64_t wake = -1, t;
    int st = boot_srv_timeout_ms(srv);
    if (st >= 0)
      wake = st;
    if (j->kill_at && (t = j->kill_at - now) >= 0 && (wake < 0 || t < wake))
      wake = t;
    if (j->drain_until && (t = j->drain_until - now) >= 0 &&
        (wake < 0 || t < wake))
      wake = t;
    int rc = poll(pfd, (nfds_t)n, (int)wake);
    if (rc < 0 && errno != EINTR) {
      fprintf(stderr, "lapirun: poll: %s\n", strerror(errno));
      end_job(j, SIGKILL);
      if (j->status < 0)
        j->status = LR_EXIT_OSERR;
      break;
    }
    if (rc > 0 && pfd[0].revents)
      on_signals(j, sfd);
    for (int k = first_stream; rc > 0 && k < first_srv; k++) {
      if (pfd[k].fd < 0 || pfd[k].revents == 0)
        continue;
      struct lr_cg *c = &j->cg[(k - first_stream) / 2];
      lr_stream_read((k - first_stream) % 2 ? &c->err : &c->out,
                     j->o.label);
    }
    boot_srv_process(srv, pfd + first_srv, rc > 0 ? n - first_srv : 0);
  }
  for (int r = 0; r < j->o.ncg; r++) {
    lr_stream_close(&j->cg[r].out, j->o.label);
    lr_stream_close(&j->cg[r].err, j->o.label);
  }
  free(pfd);
}

int main(int argc, char **argv)
{
  struct lr_job j = {.status = -1};
  lr_parse(argc, argv, &j.o);
  j.cg = calloc((size_t)j.o.ncg, sizeof *j.cg);
  if (j.cg == NULL) {
    fprintf(stderr, "lapirun: out of memory for %d CGs\n", j.o.ncg);
    return LR_EXIT_OSERR;
  }
  j.ngroups = lr_groups(&j.o, j.cg);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  snprintf(j.key, sizeof j.key, "lapirun-%ld-%lx", (long)getpid(),
           (unsigned long)(ts.tv_nsec ^ ts.tv_sec) & 0xffffffu);

  /* Signals arrive through the loop; children get them unblocked. */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGQUIT);
  sigprocmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);
  int sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd < 0) {
    fprintf(stderr, "lapirun: signalfd: %s\n", strerror(errno));
    return LR_EXIT_OSERR;
  }

  char addr[300];
  struct boot_srv *srv = boot_srv_open(j.o.xaddr, j.o.ncg, j.key,
                                       j.o.timeout_s, "lapirun", addr,
                                       sizeof addr);
  if (srv == NULL)
    return LR_EXIT_OSERR;
  j.srv = srv;
  if (j.o.verbose)
    fprintf(stderr, "lapirun: job %s: %d CG(s) on %d host(s), exchange at "
            "%s\n", j.key, j.o.ncg, j.ngroups, addr);

  for (int r = 0; r < j.o.ncg; r++) {
    if (lr_spawn(&j.o, &j.cg[r], addr, j.key, j.ngroups) < 0) {
      j.status = LR_EXIT_OSERR;
      end_job(&j, SIGTERM);
      break;
    }
    j.running++;
  }
  serve(&j, srv, sfd);
  boot_srv_close(srv);
  cleanup_shm(&j);
  for (int r = 0; r < j.o.ncg; r++)
    free(j.cg[r].host_cmd);
  free(j.cg);
  return j.status < 0 ? 0 : j.status;
}
