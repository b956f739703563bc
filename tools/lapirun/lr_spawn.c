/*
 * lr_spawn.c - start one CG: its environment, pipes and process group.
 *
 * Each CG runs in a process group of its own, so lapirun can signal the
 * CG with everything it started (a --host-cmd shell, ssh, the program)
 * and a terminal's Ctrl-C reaches only lapirun, which forwards it.
 * With --host-cmd the CG's settings are passed as `env VAR=VALUE ...`
 * words on the command line, because ssh does not carry the environment.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2, signalfd */
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "lapirun.h"

/* host_cmd with every "{rank}" replaced; NULL without --host-cmd. */
static char *subst_rank(const char *cmd, int rank)
{
  if (cmd == NULL)
    return NULL;
  char num[16];
  int nl = snprintf(num, sizeof num, "%d", rank);
  size_t n = strlen(cmd), cap = n + 1;
  for (const char *p = strstr(cmd, "{rank}"); p; p = strstr(p + 6, "{rank}"))
    cap += (size_t)nl;
  char *out = malloc(cap), *w = out;
  if (out == NULL)
    return NULL;
  for (const char *p = cmd; *p;) {
    if (strncmp(p, "{rank}", 6) == 0) {
      memcpy(w, num, (size_t)nl);
      w += nl;
      p += 6;
    } else {
      *w++ = *p++;
    }
  }
  *w = '\0';
  return out;
}

int lr_groups(const struct lr_opts *o, struct lr_cg *cg)
{
  int ngroups = 0;
  for (int r = 0; r < o->ncg; r++) {
    cg[r].rank = r;
    cg[r].host_cmd = subst_rank(o->host_cmd, r);
    if (o->host_cmd && cg[r].host_cmd == NULL) {
      fprintf(stderr, "lapirun: out of memory\n");
      exit(LR_EXIT_OSERR);
    }
    /* CGs whose command is the same string share a host. */
    cg[r].group = -1;
    for (int q = 0; q < r && cg[r].group < 0; q++)
      if ((cg[q].host_cmd == NULL && cg[r].host_cmd == NULL) ||
          (cg[q].host_cmd && cg[r].host_cmd &&
           strcmp(cg[q].host_cmd, cg[r].host_cmd) == 0))
        cg[r].group = cg[q].group;
    if (cg[r].group < 0)
      cg[r].group = ngroups++;
  }
  for (int r = 0; r < o->ncg; r++) {
    cg[r].local_rank = 0;
    cg[r].local_size = 0;
    for (int q = 0; q < o->ncg; q++)
      if (cg[q].group == cg[r].group) {
        if (q < r)
          cg[r].local_rank++;
        cg[r].local_size++;
      }
  }
  return ngroups;
}

void lr_crts_key(char *buf, size_t len, const char *key, int group,
                 int ngroups)
{
  if (ngroups <= 1)
    snprintf(buf, len, "%s", key);
  else
    snprintf(buf, len, "%s-h%d", key, group);
}

#define LR_NVARS 13

/* The CG's settings as "NAME=VALUE" strings (static storage). */
static int cg_env(const struct lr_opts *o, const struct lr_cg *c,
                  const char *addr, const char *key, int ngroups,
                  char vars[LR_NVARS][320])
{
  char crts_key[128];
  lr_crts_key(crts_key, sizeof crts_key, key, c->group, ngroups);
  int n = 0;
  snprintf(vars[n++], 320, "LAPIRUN_ADDR=%s", addr);
  snprintf(vars[n++], 320, "LAPIRUN_RANK=%d", c->rank);
  snprintf(vars[n++], 320, "LAPIRUN_SIZE=%d", o->ncg);
  snprintf(vars[n++], 320, "LAPIRUN_TASKS_PER_CG=%d", o->tasks_per_cg);
  snprintf(vars[n++], 320, "LAPIRUN_LOCAL_RANK=%d", c->local_rank);
  snprintf(vars[n++], 320, "LAPIRUN_LOCAL_SIZE=%d", c->local_size);
  snprintf(vars[n++], 320, "LAPIRUN_JOB_KEY=%s", key);
  snprintf(vars[n++], 320, "LAPI_TIMEOUT=%d", o->timeout_s);
  snprintf(vars[n++], 320, "CRTS_JOB_KEY=%s", crts_key);
  snprintf(vars[n++], 320, "CRTS_NODE_CGS=%d", c->local_size);
  snprintf(vars[n++], 320, "CRTS_CGN=%d", c->local_rank);
  if (o->provider)
    snprintf(vars[n++], 320, "FI_PROVIDER=%s", o->provider);
  /* -c N: the CG has exactly N CPEs, so a plain spawn makes N tasks
   * (unless the user chose CRTS_NUM_CPES). */
  if (o->tasks_per_cg > 1 && !getenv("CRTS_NUM_CPES"))
    snprintf(vars[n++], 320, "CRTS_NUM_CPES=%d", o->tasks_per_cg);
  return n;
}

/*
 * Does the command hand our words to a remote shell, which splits them
 * again (ssh, rsh)?  Then each word is quoted for it: a provider such as
 * "tcp;ofi_rxm" or an argument with a space arrives as one word.
 */
static int remote_shell(const char *cmd)
{
  while (*cmd == ' ' || *cmd == '\t')
    cmd++;
  size_t n = strcspn(cmd, " \t");
  const char *base = cmd + n;
  while (base > cmd && base[-1] != '/')
    base--;
  size_t bl = (size_t)(cmd + n - base);
  return (bl == 3 && (!strncmp(base, "ssh", 3) || !strncmp(base, "rsh", 3)));
}

/* 'word' with each ' written as '\'' (malloc'd; the child execs soon). */
static char *shell_quote(const char *w)
{
  size_t n = 3;
  for (const char *p = w; *p; p++)
    n += *p == '\'' ? 4 : 1;
  char *q = malloc(n), *o = q;
  if (q == NULL)
    return (char *)w;
  *o++ = '\'';
  for (const char *p = w; *p; p++) {
    if (*p == '\'') {
      memcpy(o, "'\\''", 4);
      o += 4;
    } else {
      *o++ = *p;
    }
  }
  *o++ = '\'';
  *o = '\0';
  return q;
}

/* In the child: never returns. */
static void child_exec(const struct lr_opts *o, const struct lr_cg *c,
                       char vars[LR_NVARS][320], int nvars, int out_w,
                       int err_w, pid_t parent)
{
  setpgid(0, 0);
  /* If lapirun is killed outright, its CGs do not live on. */
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent)
    _exit(128 + SIGTERM);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGPIPE, SIG_DFL);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) {
    dup2(devnull, 0);
    close(devnull);
  }
  dup2(out_w, 1);
  dup2(err_w, 2);
  if (out_w > 2)
    close(out_w);
  if (err_w > 2 && err_w != out_w)
    close(err_w);
  if (c->host_cmd == NULL) {
    for (int i = 0; i < nvars; i++)
      putenv(vars[i]);
    execvp(o->argv[0], o->argv);
  } else {
    /* sh -c 'CMD "$@"' sh env VARS... program args... */
    int argc = 0;
    while (o->argv[argc])
      argc++;
    char **av = calloc((size_t)(argc + nvars + 8), sizeof *av);
    size_t sl = strlen(c->host_cmd) + 8;
    char *script = malloc(sl);
    if (av && script) {
      snprintf(script, sl, "%s \"$@\"", c->host_cmd);
      int k = 0;
      av[k++] = "/bin/sh";
      av[k++] = "-c";
      av[k++] = script;
      av[k++] = "lapirun";
      int remote = remote_shell(c->host_cmd);
      av[k++] = "env";
      for (int i = 0; i < nvars; i++)
        av[k++] = remote ? shell_quote(vars[i]) : vars[i];
      for (int i = 0; i < argc; i++)
        av[k++] = remote ? shell_quote(o->argv[i]) : o->argv[i];
      av[k] = NULL;
      execv("/bin/sh", av);
    }
  }
  int e = errno;
  char msg[512];
  int n = snprintf(msg, sizeof msg, "lapirun: rank %d: cannot run %s: %s\n",
                   c->rank, c->host_cmd ? "/bin/sh" : o->argv[0],
                   strerror(e));
  if (write(2, msg, (size_t)n) < 0)
    _exit(127);
  _exit(e == ENOENT ? 127 : 126);
}

int lr_spawn(const struct lr_opts *o, struct lr_cg *c, const char *addr,
             const char *key, int ngroups)
{
  static char vars[LR_NVARS][320];
  int nvars = cg_env(o, c, addr, key, ngroups, vars);
  int po[2], pe[2];
  if (pipe2(po, O_CLOEXEC) < 0) {
    fprintf(stderr, "lapirun: pipe: %s\n", strerror(errno));
    return -1;
  }
  if (pipe2(pe, O_CLOEXEC) < 0) {
    fprintf(stderr, "lapirun: pipe: %s\n", strerror(errno));
    close(po[0]);
    close(po[1]);
    return -1;
  }
  fflush(NULL);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "lapirun: fork: %s\n", strerror(errno));
    close(po[0]);
    close(po[1]);
    close(pe[0]);
    close(pe[1]);
    return -1;
  }
  if (pid == 0)
    child_exec(o, c, vars, nvars, po[1], pe[1], parent);
  /* Both sides set the group: no race with an early kill(-pid). */
  setpgid(pid, pid);
  close(po[1]);
  close(pe[1]);
  c->pid = pid;
  c->running = 1;
  c->out = (struct lr_stream){.fd = po[0], .out_fd = 1, .rank = c->rank};
  c->err = (struct lr_stream){.fd = pe[0], .out_fd = 2, .rank = c->rank};
  if (o->verbose)
    fprintf(stderr, "lapirun: rank %d: pid %ld%s%s\n", c->rank, (long)pid,
            c->host_cmd ? " via " : "", c->host_cmd ? c->host_cmd : "");
  return 0;
}
