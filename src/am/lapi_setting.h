/*
 * lapi_setting.h - numeric LAPI_* environment settings (lapi_setting.c).
 */
#ifndef LAPI_SETTING_H
#define LAPI_SETTING_H

/* The value of environment setting name, a whole number in 0..max; dflt
 * when unset, and with a message saying it is not `what` when it is not
 * such a number.  *set (if given) says whether the value came from it. */
int lapi_setting_int(const char *name, int dflt, long max, const char *what,
                     int *set);

/* Reads every setting that is otherwise read on first use, so that no
 * thread of ours calls getenv later: the first LAPI_Init calls it before
 * it starts the dispatcher, and the ofi transport's setenv
 * (FI_OFI_RXM_EAGER_LIMIT, read by libfabric when it loads) then races
 * with no getenv of ours (a getenv beside a setenv can read a freed
 * environment: the dispatcher once crashed so, in getenv). */
void lapi_settings_read_all(void);

#endif /* LAPI_SETTING_H */
