/*
 * crts_sig.h - the CPE -> MPE signal handler shared by mpe_sig.c and
 * cpe_ssig.c.
 */
#ifndef CRTS_SIG_H
#define CRTS_SIG_H

/* A handler installed by CRTS_sig_user_init. */
typedef void *(*crts_sig_handler_fn)(void *);

/* The handler installed last, or NULL if none was. */
crts_sig_handler_fn crts_sig_handler(void);

#endif /* CRTS_SIG_H */
