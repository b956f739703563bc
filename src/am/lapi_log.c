/*
 * lapi_log.c - LAPI_DEBUG logging and the asynchronous error handler.
 *
 * Errors a call can return are the caller's business: they are printed
 * only at LAPI_DEBUG >= 2.  Errors found while a message is delivered
 * (a bad target vector, an unregistered header handler) have no caller:
 * they go to the lapi_info_t err_hndlr of the handle, and when there is
 * none they are printed at the default level, so they are never silent.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am/lapi_am.h"

static int log_level = LAPI_LOG_ASYNC;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void log_read_env(void)
{
  const char *s = getenv("LAPI_DEBUG");
  if (s && *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == '\0' && v >= 0)
      log_level = v > LAPI_LOG_TRACE ? LAPI_LOG_TRACE : (int)v;
    else
      fprintf(stderr, "lapi: LAPI_DEBUG=%s is not a level 0..4; using %d\n",
              s, log_level);
  }
}

int lapi_log_known = -1;

int lapi_log_level_read(void)
{
  pthread_once(&log_once, log_read_env);
  __atomic_store_n(&lapi_log_known, log_level, __ATOMIC_RELEASE);
  return log_level;
}

/* "LAPI_ERR_TGT" out of LAPI_Msg_string's "LAPI_ERR_TGT (428): ...". */
static void code_name(int code, char *buf, size_t size)
{
  char text[LAPI_MAX_ERR_STRING];
  PLAPI_Msg_string(code, text);
  char *cut = strstr(text, " (");
  if (cut)
    *cut = '\0';
  snprintf(buf, size, "%s", text);
}

void lapi_log_write(int level, int code, const char *func, int line,
                    const char *fmt, ...)
{
  if (level > lapi_log_level())
    return;
  int saved = errno;
  char msg[512], name[LAPI_MAX_ERR_STRING];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (code) {
    code_name(code, name, sizeof name);
    fprintf(stderr, "lapi: task %u: %s:%d: %s [%s]\n", lapi_ctx_task(),
            func, line, msg, name);
  } else {
    fprintf(stderr, "lapi: task %u: %s:%d: %s\n", lapi_ctx_task(), func,
            line, msg);
  }
  errno = saved;
}

void lapi_am_async_error(struct lapi_hndl *h, int code, lapi_err_t type,
                         int src, const char *func, int line,
                         const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);

  LAPI_err_hndlr *eh = __atomic_load_n(&h->err_hndlr, __ATOMIC_ACQUIRE);
  if (eh == NULL) {
    lapi_log_write(LAPI_LOG_ASYNC, code, func, line,
                   "%s (no error handler in lapi_info_t)", msg);
    return;
  }
  lapi_log_write(LAPI_LOG_CALL, code, func, line, "%s", msg);
  lapi_handle_t hv = h->index;
  int err = code, task = (int)h->task_id, from = src;
  lapi_err_t t = type;
  eh(&hv, &err, &t, &task, &from);
}
