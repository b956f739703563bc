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

#endif /* LAPI_SETTING_H */
