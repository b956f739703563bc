/*
 * crts_scoll.h - element kernels of CRTS_scoll_redurt (cpe_scoll_redu.c).
 */
#ifndef CRTS_SCOLL_H
#define CRTS_SCOLL_H

#include <stddef.h>

/* Bytes of one element of dtype; 0 if dtype is no CRTS_* type. */
size_t crts_redu_elem_size(int dtype);
/* 1 if optype is an OP_* that dtype supports. */
int crts_redu_op_valid(int dtype, int optype);
/* Names for reports ("?" when out of range). */
const char *crts_redu_type_name(int dtype);
const char *crts_redu_op_name(int optype);
/*
 * acc[i] = acc[i] optype in[i] for n elements of dtype (validated pair).
 * Neither pointer needs more than 4-byte alignment.
 */
void crts_redu_apply(int dtype, int optype, void *acc, const void *in,
                     size_t n);

#endif /* CRTS_SCOLL_H */
