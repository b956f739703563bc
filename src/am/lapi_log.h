/*
 * lapi_log.h - the one logging path of the LAPI core.
 *
 * LAPI_DEBUG (environment, read once) sets how much is printed on stderr:
 *   0  nothing, not even asynchronous errors
 *   1  (default) asynchronous errors that have no error handler to go to
 *   2  also one line per call that returns an error code
 *   3  also lifecycle events (Init, Term, mode changes, dispatcher)
 *   4  also a trace of every message
 * A line reads "lapi: task 0: PLAPI_Amsend:123: <what> [LAPI_ERR_X]".
 */
#ifndef LAPI_LOG_H
#define LAPI_LOG_H

#include <lapi.h>

enum lapi_log_level {
  LAPI_LOG_ASYNC = 1, /* an error nobody else will hear of */
  LAPI_LOG_CALL = 2,  /* a call returned an error code */
  LAPI_LOG_INFO = 3,  /* lifecycle */
  LAPI_LOG_TRACE = 4, /* every message */
};

/* The level LAPI_DEBUG asked for (read on first use). */
int lapi_log_level_read(void);

/* The level once read, -1 before: every packet asks (a trace line per
 * message), so the common answer is one load, not a pthread_once call. */
extern int lapi_log_known;

static inline int lapi_log_level(void)
{
  int l = __atomic_load_n(&lapi_log_known, __ATOMIC_ACQUIRE);
  return l >= 0 ? l : lapi_log_level_read();
}

/* Print one line if level <= lapi_log_level(); code 0 prints no name. */
void lapi_log_write(int level, int code, const char *func, int line,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define LAPI_LOG(level, ...)                                            \
  do {                                                                  \
    if ((level) <= lapi_log_level())                                    \
      lapi_log_write((level), 0, __func__, __LINE__, __VA_ARGS__);      \
  } while (0)

/* Log a failed call at LAPI_LOG_CALL and evaluate to its code:
 *   return LAPI_FAIL(LAPI_ERR_TGT, "tgt %u is not below %u", tgt, n); */
#define LAPI_FAIL(code, ...)                                            \
  (LAPI_LOG_CALL <= lapi_log_level()                                    \
       ? (lapi_log_write(LAPI_LOG_CALL, (code), __func__, __LINE__,     \
                         __VA_ARGS__),                                  \
          (code))                                                       \
       : (code))

#endif /* LAPI_LOG_H */
