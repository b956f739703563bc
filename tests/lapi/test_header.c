/*
 * test_header.c - lapi.h against the reference: every numeric value, the
 * layouts clients depend on, and LAPI_Msg_string for every return code.
 *
 * The expected numbers below are typed from reference/lapi-api.md (and
 * IBM's names for the codes the reference only groups), not derived from
 * the header, so a wrong value in lapi.h fails here.
 */
#include <criterion/criterion.h>
#include <lapi.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* What an entry of the value table is. */
enum kind {
  RC,    /* the primary name of a return code: LAPI_Msg_string names it */
  ALIAS, /* another name of a return code */
  VALUE  /* any other constant or enumerator */
};

struct expect {
  const char *name;
  long long got;
  long long want;
  enum kind kind;
};

#define E(name, want, kind) { #name, (long long)(name), (want), kind }

static const struct expect values[] = {
  E(LAPI_SUCCESS, 0, RC),
  E(LAPI_ERR_UNKNOWN, 400, RC),
  E(LAPI_ERR_ALL_HNDL_IN_USE, 401, RC),
  E(LAPI_ERR_BOTH_NETSTR_SET, 402, RC),
  E(LAPI_ERR_CKPT_LOAD_FAILED, 403, RC),
  E(LAPI_ERR_CSS_LOAD_FAILED, 404, RC),
  E(LAPI_ERR_INFO_NULL, 405, RC),
  E(LAPI_ERR_MSG_API, 406, RC),
  E(LAPI_ERR_NO_NETSTR_SET, 407, RC),
  E(LAPI_ERR_NO_UDP_HNDLR, 408, RC),
  E(LAPI_ERR_HDR_HNDLR_NULL, 409, RC),
  E(LAPI_ERR_PSS_NON_ROOT, 410, RC),
  E(LAPI_WARN_PARM_NULL, 411, RC),
  E(LAPI_ERR_PARM_NULL, 411, ALIAS),
  E(LAPI_ERR_SHM_KE_NOT_LOADED, 412, RC),
  E(LAPI_ERR_TIMEOUT, 413, RC),
  E(LAPI_ERR_REG_TIMER, 414, RC),
  E(LAPI_ERR_UDP_PKT_SZ, 415, RC),
  E(LAPI_ERR_USER_UDP_HNDLR_FAIL, 416, RC),
  E(LAPI_ERR_HNDL_INVALID, 417, RC),
  E(LAPI_ERR_RET_PTR_NULL, 418, RC),
  E(LAPI_ERR_ADDR_HNDL_RANGE, 419, RC),
  E(LAPI_ERR_ADDR_TBL_NULL, 420, RC),
  E(LAPI_ERR_TGT_PURGED, 421, RC),
  E(LAPI_ERR_MULTIPLE_WAITERS, 422, RC),
  E(LAPI_ERR_MEMORY_EXHAUSTED, 423, RC),
  E(LAPI_ERR_INFO_NONZERO, 424, RC),
  E(LAPI_ERR_ORG_ADDR_NULL, 425, RC),
  E(LAPI_ERR_TGT_ADDR_NULL, 426, RC),
  E(LAPI_ERR_DATA_LEN, 427, RC),
  E(LAPI_ERR_TGT, 428, RC),
  E(LAPI_ERR_UHDR_NULL, 429, RC),
  E(LAPI_ERR_UHDR_LEN, 430, RC),
  E(LAPI_ERR_HDR_LEN, 431, RC),
  E(LAPI_ERR_ORG_EXTENT, 432, RC),
  E(LAPI_ERR_ORG_STRIDE, 433, RC),
  E(LAPI_ERR_NO_CONNECTIVITY, 434, RC),
  E(LAPI_ERR_ADAPTERS_DOWN, 435, RC),
  E(LAPI_ERR_RECV_INCOMP, 436, RC),
  E(LAPI_ERR_SEND_INCOMP, 437, RC),
  E(LAPI_ERR_SEND_TIMEOUT, 438, RC),
  E(LAPI_ERR_SHM_SETUP, 439, RC),
  E(LAPI_ERR_ORG_VEC_ADDR, 440, RC),
  E(LAPI_ERR_ORG_VEC_LEN, 441, RC),
  E(LAPI_ERR_ORG_VEC_NULL, 442, RC),
  E(LAPI_ERR_ORG_VEC_TYPE, 443, RC),
  E(LAPI_ERR_STRIDE_ORG_VEC_ADDR_NULL, 444, RC),
  E(LAPI_ERR_STRIDE_TGT_VEC_ADDR_NULL, 445, RC),
  E(LAPI_ERR_TGT_EXTENT, 446, RC),
  E(LAPI_ERR_TGT_STRIDE, 447, RC),
  E(LAPI_ERR_TGT_VEC_ADDR, 448, RC),
  E(LAPI_ERR_TGT_VEC_LEN, 449, RC),
  E(LAPI_ERR_CKPT, 450, RC),
  E(LAPI_ERR_TGT_VEC_NULL, 451, RC),
  E(LAPI_ERR_TGT_VEC_TYPE, 452, RC),
  E(LAPI_ERR_VEC_NUM_DIFF, 453, RC),
  E(LAPI_ERR_VEC_TYPE_DIFF, 454, RC),
  E(LAPI_ERR_VEC_LEN_DIFF, 455, RC),
  E(LAPI_ERR_MSG_INFO_NULL, 456, RC),
  E(LAPI_ERR_POLLING_NET, 457, RC),
  E(LAPI_ERR_CNTR_NULL, 458, RC),
  E(LAPI_ERR_CNTR_VAL, 459, RC),
  E(LAPI_ERR_QUERY_TYPE, 460, RC),
  E(LAPI_ERR_IN_VAL_NULL, 461, RC),
  E(LAPI_ERR_RMW_OP, 462, RC),
  E(LAPI_ERR_TGT_VAR_NULL, 463, RC),
  E(LAPI_ERR_SET_VAL, 464, RC),
  E(LAPI_ERR_DGSP, 465, RC),
  E(LAPI_ERR_DGSP_ATOM, 466, RC),
  E(LAPI_ERR_DGSP_BRANCH, 467, RC),
  E(LAPI_ERR_DGSP_CTL, 468, RC),
  E(LAPI_ERR_DGSP_COPY_SZ, 469, RC),
  E(LAPI_ERR_DGSP_FREE, 470, RC),
  E(LAPI_ERR_DGSP_OPC, 471, RC),
  E(LAPI_ERR_DGSP_REPS, 472, RC),
  E(LAPI_ERR_DGSP_STACK, 473, RC),
  E(LAPI_ERR_OP_SZ, 474, RC),
  E(LAPI_ERR_UDP_PORT_INFO, 475, RC),
  E(LAPI_ERR_XFER_CMD, 476, RC),
  E(LAPI_ERR_UTIL_CMD, 477, RC),
  E(LAPI_ERR_CATALOG_FAIL, 478, RC),
  E(LAPI_ERR_PACK_SZ, 479, RC),
  E(LAPI_ERR_DGSP_OTHER, 480, RC),
  E(LAPI_ERR_UDP_SOCKET, 481, RC),
  E(LAPI_ERR_COLLECTIVE_PSS, 482, RC),
  E(LAPI_ERR_DMA_HNDL, 483, RC),
  E(LAPI_ERR_DMA_TAG, 484, RC),
  E(LAPI_ATT_FR_SETUP_INTERNAL, 485, RC),
  E(LAPI_ATT_FR_SETUP_NONAM, 486, RC),
  E(LAPI_ATT_FR_SETUP_NOHAGS, 487, RC),
  E(LAPI_ATT_FR_SETUP_BADPOE, 488, RC),
  E(LAPI_ATT_FR_SETUP_NOPOE, 489, RC),
  E(LAPI_ATT_FR_SETUP_NONSNX, 490, RC),
  E(LAPI_ATT_FR_HALTED, 491, RC),
  E(LAPI_ERR_TGT_CONTEXT, 492, RC),
  E(LAPI_ERR_SRC_CONTEXT, 493, RC),
  E(LAPI_ERR_TGT_BUFHNDL, 494, RC),
  E(LAPI_ERR_SRC_BUFHNDL, 495, RC),
  E(LAPI_ERR_TGT_OFFSET, 496, RC),
  E(LAPI_ERR_SRC_OFFSET, 497, RC),
  E(LAPI_ERR_NO_RDMA_RESOURCE, 498, RC),
  E(LAPI_ATT_BULK_ENABLED, 499, RC),
  E(LAPI_ATT_COMM_TIMEOUT, 500, RC),
  E(LAPI_ATT_VERSION, 501, RC),
  E(LAPI_ATT_SHMINIT_FAIL, 502, RC),
  E(LAPI_ATT_SHMINIT_CKPT_FAIL, 503, RC),
  E(LAPI_ATT_SHM_SINGLE_TASK, 504, RC),
  E(LAPI_ATT_SHM_CREATE_FAIL, 505, RC),
  E(LAPI_ATT_SHM_GET_FAIL, 506, RC),
  E(LAPI_ATT_SHM_ATT_FAIL, 507, RC),
  E(LAPI_ATT_SHM_NO_SEGATT, 508, RC),
  E(LAPI_ATT_PORT_START, 509, RC),
  E(LAPI_ERR_NO_ENV_VAR, 510, RC),
  E(LAPI_ERR_NO_CALLBACK_REG, 511, RC),
  E(LAPI_ERR_NO_CNTR_REG, 512, RC),
  E(LAPI_ERR_XLATE_FAILED, 513, RC),
  E(LAPI_ERR_RDMA_RESOURCES, 514, RC),
  E(LAPI_ERR_LW_DATA_LEN, 515, RC),
  E(LAPI_ERR_NO_HNDLR_SET, 516, RC),
  E(LAPI_ERR_OFFSET_LEN, 517, RC),
  E(LAPI_ERR_RCXT_CANCEL, 518, RC),
  E(LAPI_ERR_CODE_UNKNOWN, 519, RC),
  E(LAPI_ATT_PREEMPT_SETUP_INTERNAL, 520, RC),
  E(LAPI_ERR_DUP_TRIGGER, 521, RC),
  E(LAPI_ERR_TRIGGER_UNKNOWN, 522, RC),
  E(LAPI_ERR_TASK_NUM, 523, RC),
  E(LAPI_ERR_NULL_LIST, 524, RC),
  E(LAPI_ERR_GRP_MEMBER, 525, RC),
  E(LAPI_ERR_NULL_GRP, 526, RC),
  E(LAPI_ERR_GRP, 527, RC),
  E(LAPI_ERR_STAT_SAVE_FAIL, 528, RC),
  E(LAPI_ERR_FIRSTCODE, 400, VALUE),
  E(LAPI_ERR_LASTCODE, 528, VALUE),

  /* old names, tested with #ifdef by clients */
  E(LAPI_ERR_UNKNOWN_DEVICE, 401, ALIAS),
  E(LAPI_ERR_UNKNOWN_FUNCTION, 402, ALIAS),
  E(LAPI_ERR_NOMORE_PORTS, 403, ALIAS),
  E(LAPI_ERR_INIT_FAILED, 404, ALIAS),
  E(LAPI_ERR_OPEN_FAILED, 405, ALIAS),
  E(LAPI_ERR_CLOSE_FAILED, 406, ALIAS),
  E(LAPI_ERR_SWITCH_FAULT, 407, ALIAS),
  E(LAPI_ERR_INTR_HNDLR, 408, ALIAS),
  E(LAPI_ERR_NO_HD_HNDLR, 409, ALIAS),
  E(LAPI_ERR_BAD_PARAMETER, 410, ALIAS),
  E(LAPI_ERR_RETRANSMISSION, 412, ALIAS),
  E(LAPI_ERR_QUEUE_FULL, 414, ALIAS),
  E(LAPI_ERR_INIT_LOCK_FAILED, 415, ALIAS),
  E(LAPI_ERR_GET_LOCK_FAILED, 416, ALIAS),
  E(LAPI_ERR_REL_LOCK_FAILED, 417, ALIAS),
  E(LAPI_ERR_TRY_LOCK_FAILED, 418, ALIAS),
  E(LAPI_ERR_INVALID_OPTIONS, 419, ALIAS),
  E(LAPI_WAIT_INTERRUPTED, 420, ALIAS),
  E(LAPI_ERR_PURGED_TASK, 421, ALIAS),
  E(LAPI_ERR_EXHAUSTED_MEMORY, 423, ALIAS),
  E(LAPI_ERR_NONZERO_INFO, 424, ALIAS),
  E(LAPI_ERR_BAD_FIRST_PARM, 425, ALIAS),
  E(LAPI_ERR_BAD_SECOND_PARM, 426, ALIAS),
  E(LAPI_ERR_BAD_THIRD_PARM, 427, ALIAS),
  E(LAPI_ERR_BAD_FOURTH_PARM, 428, ALIAS),
  E(LAPI_ERR_BAD_FIFTH_PARM, 429, ALIAS),
  E(LAPI_ERR_BAD_SIXTH_PARM, 430, ALIAS),
  E(LAPI_ERR_BAD_SEVENTH_PARM, 431, ALIAS),
  E(LAPI_ERR_BAD_EIGHTH_PARM, 432, ALIAS),
  E(LAPI_ERR_BAD_NINTH_PARM, 433, ALIAS),
  E(LAPI_ERR_SHM_CLEANUP, 440, ALIAS),
  E(LAPI_ERR_SHM_REGISTER, 441, ALIAS),
  E(LAPI_ERR_SHM_RELEASE, 442, ALIAS),
  E(LAPI_ERR_SHM_ATTDET, 443, ALIAS),
  E(LAPI_ERR_SHM_ATTACH, 444, ALIAS),
  E(LAPI_ERR_SHM_DETACH, 445, ALIAS),
  E(LAPI_ERR_SHM_ENV_SET, 446, ALIAS),
  E(LAPI_ERR_SHM_NOCOMM_TASK, 447, ALIAS),
  E(LAPI_ERR_SHM_SETSHM, 448, ALIAS),
  E(LAPI_ERR_SHM_LOAD, 449, ALIAS),
  E(LAPI_ERR_CHECKPOINT, 450, ALIAS),

  /* lapi_query_t */
  E(TASK_ID, 0, VALUE),
  E(NUM_TASKS, 1, VALUE),
  E(MAX_UHDR_SZ, 2, VALUE),
  E(MAX_DATA_SZ, 3, VALUE),
  E(ERROR_CHK, 4, VALUE),
  E(TIMEOUT, 5, VALUE),
  E(MIN_TIMEOUT, 6, VALUE),
  E(MAX_TIMEOUT, 7, VALUE),
  E(INTERRUPT_SET, 8, VALUE),
  E(MAX_PORTS, 9, VALUE),
  E(MAX_PKT_SZ, 10, VALUE),
  E(NUM_REX_BUFS, 11, VALUE),
  E(REX_BUF_SZ, 12, VALUE),
  E(LOC_ADDRTBL_SZ, 13, VALUE),
  E(EPOCH_NUM, 14, VALUE),
  E(USE_THRESH, 15, VALUE),
  E(RCV_FIFO_SIZE, 16, VALUE),
  E(MAX_ATOM_SIZE, 17, VALUE),
  E(BUF_CP_SIZE, 18, VALUE),
  E(MAX_PKTS_OUT, 19, VALUE),
  E(ACK_THRESHOLD, 20, VALUE),
  E(QUERY_SHM_ENABLED, 21, VALUE),
  E(QUERY_SHM_NUM_TASKS, 22, VALUE),
  E(QUERY_SHM_TASKS, 23, VALUE),
  E(QUERY_STATISTICS, 24, VALUE),
  E(PRINT_STATISTICS, 25, VALUE),
  E(QUERY_SHM_STATISTICS, 26, VALUE),
  E(QUERY_LOCAL_SEND_STATISTICS, 27, VALUE),
  E(BULK_XFER, 28, VALUE),
  E(BULK_MIN_MSG_SIZE, 29, VALUE),
  E(RDMA_REMOTE_RCXT_AVAIL, 30, VALUE),
  E(RDMA_REMOTE_RCXT_TOTAL, 31, VALUE),
  E(RC_MAX_QP, 32, VALUE),
  E(RC_QP_IN_USE, 33, VALUE),
  E(RC_QP_USE_LRU, 34, VALUE),
  E(RC_QP_USE_LMC, 35, VALUE),
  E(RC_QP_INIT_SETUP, 36, VALUE),
  E(LAST_QUERY, 37, VALUE),

  /* other enums */
  E(LAPI_GEN_IOVECTOR, 0, VALUE),
  E(LAPI_GEN_STRIDED_XFER, 1, VALUE),
  E(LAPI_GEN_GENERIC, 2, VALUE),
  E(FETCH_AND_ADD, 0, VALUE),
  E(FETCH_AND_OR, 1, VALUE),
  E(SWAP, 2, VALUE),
  E(COMPARE_AND_SWAP, 3, VALUE),
  E(LAPI_DELIVER_MSG, 0, VALUE),
  E(LAPI_BURY_MSG, 1, VALUE),
  E(LAPI_DROP_PKT, 2, VALUE),
  E(LAPI_NORMAL, 0, VALUE),
  E(LAPI_LOCAL_STATE, 1, VALUE),
  E(LAPI_SEND_REPLY, 2, VALUE),
  E(L1_LIB, 0, VALUE),
  E(L2_LIB, 1, VALUE),
  E(L3_LIB, 2, VALUE),
  E(L4_LIB, 3, VALUE),
  E(LAST_LIB, 4, VALUE),
  E(GET_ERR, 0, VALUE),
  E(PUT_ERR, 1, VALUE),
  E(RMW_ERR, 2, VALUE),
  E(AM_ERR, 3, VALUE),
  E(INT_ERR, 4, VALUE),
  E(TMR_ERR, 5, VALUE),
  E(LAPI_SEND_COMPLETE, 1, VALUE),
  E(LAPI_RECV_COMPLETE, 2, VALUE),
  E(LAPI_POLLING_NET, 4, VALUE),
  E(LAPI_GET_XFER, 0, VALUE),
  E(LAPI_AM_XFER, 1, VALUE),
  E(LAPI_PUT_XFER, 2, VALUE),
  E(LAPI_GETV_XFER, 3, VALUE),
  E(LAPI_PUTV_XFER, 4, VALUE),
  E(LAPI_AMV_XFER, 5, VALUE),
  E(LAPI_RMW_XFER, 6, VALUE),
  E(LAPI_DGSP_XFER, 7, VALUE),
  E(LAPI_RDMA_XFER, 8, VALUE),
  E(LAPI_AM_LW_XFER, 9, VALUE),
  E(LAPI_AMX_XFER, 10, VALUE),
  E(LAPI_MC_XFER, 11, VALUE),
  E(LAPI_LAST_XFER, 12, VALUE),

  /* constants */
  E(LAPI_MAX_ERR_STRING, 160, VALUE),
  E(LAPI_SHARE_PROTOCOL, 0x80000000LL, VALUE),
  E(LAPI_INTERRUPT_OFF, 0x20000000LL, VALUE),
  E(LAPI_VOID_HANDLE, 0xffffffffLL, VALUE),
  E(TRUE, 1, VALUE),
  E(FALSE, 0, VALUE),
};

#define NVALUES (sizeof values / sizeof values[0])
#define NCODES (LAPI_ERR_LASTCODE - LAPI_ERR_FIRSTCODE + 1)

Test(header, every_value_matches_the_reference)
{
  for (size_t i = 0; i < NVALUES; i++)
    cr_expect_eq(values[i].got, values[i].want, "%s is %lld, want %lld",
                 values[i].name, values[i].got, values[i].want);
}

Test(header, every_code_400_to_528_has_exactly_one_primary_name)
{
  int names[NCODES] = {0};
  for (size_t i = 0; i < NVALUES; i++) {
    long long code = values[i].got; /* what the header says */
    if (values[i].kind == RC && code != LAPI_SUCCESS) {
      cr_assert(code >= LAPI_ERR_FIRSTCODE && code <= LAPI_ERR_LASTCODE,
                "%s = %lld", values[i].name, code);
      names[code - LAPI_ERR_FIRSTCODE]++;
    }
  }
  for (int c = 0; c < NCODES; c++)
    cr_expect_eq(names[c], 1, "code %d has %d primary names",
                 c + LAPI_ERR_FIRSTCODE, names[c]);
}

Test(header, constants)
{
#if ULONG_MAX > 0xffffffffUL
  cr_expect_eq(LAPI_MAX_MSG_SZ, 0x7fffffffffffffffLL);
#else
  cr_expect_eq(LAPI_MAX_MSG_SZ, 0x7fffffffL);
#endif
  cr_expect_eq((ulong)LAPI_MAX_MSG_SZ, ULONG_MAX / 2);
  cr_expect_null(LAPI_ADDR_NULL);
  cr_expect_eq(LAPI_DGSM_COPY_SIZE, sizeof(lapi_dgsm_copy_t) / sizeof(int));
  cr_expect_geq(LAPI_DGSM_COPY_SIZE, 3);
  cr_expect_eq(LAPI_VOID_HANDLE, (lapi_handle_t)-1);
}

/* _Generic sees the type after lvalue conversion (qualifiers dropped). */
#define IS(type, expr) _Generic((expr), type: 1, default: 0)

Test(header, scalar_types)
{
  cr_expect(IS(unsigned int, (uint)0));
  cr_expect(IS(unsigned long, (ulong)0));
  cr_expect(IS(unsigned int, (lapi_handle_t)0));
  cr_expect(IS(unsigned int, (lapi_group_t)0));
  cr_expect(IS(unsigned int, (lapi_status_t)0));
  cr_expect(IS(unsigned int, (lapi_msg_state_t)0));
  cr_expect(IS(unsigned long long, (lapi_long_t)0));
  cr_expect_eq(sizeof(lapi_long_t), 8);
  cr_expect_eq(sizeof(lapi_dg_handle_t), sizeof(void *));

  lapi_cntr_t c = {0};
  cr_expect(IS(int, c.cntr));
  lapi_vec_t v = {0};
  cr_expect(IS(lapi_vectype_t, v.vec_type));
  cr_expect(IS(uint, v.num_vecs));
  cr_expect(IS(void **, v.info));
  cr_expect(IS(ulong *, v.len));
}

/* Counters live in arrays, statics and on the stack; zero means zero. */
static lapi_cntr_t static_counters[16];

Test(header, counters_are_small_zero_initialisable_pods)
{
  for (int i = 0; i < 16; i++)
    cr_expect_eq(static_counters[i].cntr, 0);
  cr_expect_leq(sizeof(lapi_cntr_t), 32);
  cr_expect_eq(offsetof(lapi_cntr_t, cntr), 0);

  lapi_cntr_t a[3] = {{0}};
  a[1].cntr = 7;
  lapi_cntr_t copy = a[1];
  cr_expect_eq(copy.cntr, 7);
  cr_expect_eq(a[0].cntr, 0);
  cr_expect_eq(a[2].cntr, 0);
}

/* Fields in reference order: offsets strictly increase. */
#define ORDERED(type, a, b)                       \
  cr_expect_lt(offsetof(type, a), offsetof(type, b), \
               #type ": " #a " before " #b)

Test(header, return_info_starts_with_msg_len_and_keeps_order)
{
  cr_expect_eq(offsetof(lapi_return_info_t, msg_len), 0);
  cr_expect(IS(ulong, ((lapi_return_info_t *)0)->msg_len));
  ORDERED(lapi_return_info_t, msg_len, MAGIC);
  ORDERED(lapi_return_info_t, MAGIC, ret_flags);
  ORDERED(lapi_return_info_t, ret_flags, ctl_flags);
  ORDERED(lapi_return_info_t, ctl_flags, dgsp_handle);
  ORDERED(lapi_return_info_t, dgsp_handle, bytes);
  ORDERED(lapi_return_info_t, bytes, src);
  ORDERED(lapi_return_info_t, src, udata_one_pkt_ptr);
  ORDERED(lapi_return_info_t, udata_one_pkt_ptr, recv_offset_dgsp_bytes);

  /* What a header handler does with its msg_len argument. */
  lapi_return_info_t ri;
  memset(&ri, 0, sizeof ri);
  ri.msg_len = 1234;
  ri.src = 5;
  ulong *msg_len = &ri.msg_len;
  lapi_return_info_t *seen = (lapi_return_info_t *)msg_len;
  cr_expect_eq(*msg_len, 1234);
  cr_expect_eq(seen->src, 5);
  seen->ctl_flags = LAPI_BURY_MSG;
  seen->ret_flags = LAPI_LOCAL_STATE;
  cr_expect_eq(ri.ctl_flags, LAPI_BURY_MSG);
  cr_expect_eq(ri.ret_flags, LAPI_LOCAL_STATE);
}

Test(header, info_vec_and_msg_info_layout)
{
  ORDERED(lapi_info_t, protocol, lib_vers);
  ORDERED(lapi_info_t, lib_vers, epoch_num);
  ORDERED(lapi_info_t, epoch_num, num_compl_hndlr_thr);
  ORDERED(lapi_info_t, num_compl_hndlr_thr, instance_no);
  ORDERED(lapi_info_t, instance_no, info6);
  ORDERED(lapi_info_t, info6, err_hndlr);
  ORDERED(lapi_info_t, err_hndlr, lapi_thread_attr);
  ORDERED(lapi_info_t, lapi_thread_attr, adapter_name);
  ORDERED(lapi_info_t, adapter_name, add_info);
  cr_expect(IS(LAPI_err_hndlr *, ((lapi_info_t *)0)->err_hndlr));
  cr_expect(IS(lapi_extend_t *, ((lapi_info_t *)0)->add_info));

  ORDERED(lapi_vec_t, vec_type, num_vecs);
  ORDERED(lapi_vec_t, num_vecs, info);
  ORDERED(lapi_vec_t, info, len);

  cr_expect_eq(offsetof(lapi_msg_info_t, status), 0);
  cr_expect_eq(sizeof(((lapi_msg_info_t *)0)->reserve), 10 * sizeof(ulong));
  ORDERED(lapi_sh_info_t, src, reason);
  ORDERED(lapi_sh_info_t, reason, reserve);
  cr_expect_eq(sizeof(((lapi_sh_info_t *)0)->reserve), 6 * sizeof(ulong));
}

Test(header, am_xfer_layout_follows_the_reference)
{
  ORDERED(lapi_am_t, Xfer_type, flags);
  ORDERED(lapi_am_t, flags, tgt);
  ORDERED(lapi_am_t, tgt, hdr_hdl);
  ORDERED(lapi_am_t, hdr_hdl, uhdr_len);
  ORDERED(lapi_am_t, uhdr_len, uhdr);
  ORDERED(lapi_am_t, uhdr, udata);
  ORDERED(lapi_am_t, udata, udata_len);
  ORDERED(lapi_am_t, udata_len, shdlr);
  ORDERED(lapi_am_t, shdlr, sinfo);
  ORDERED(lapi_am_t, sinfo, tgt_cntr);
  ORDERED(lapi_am_t, tgt_cntr, org_cntr);
  ORDERED(lapi_am_t, org_cntr, cmpl_cntr);
  cr_expect(IS(lapi_long_t, ((lapi_am_t *)0)->hdr_hdl));
  cr_expect(IS(lapi_long_t, ((lapi_am_t *)0)->tgt_cntr));
  cr_expect(IS(scompl_hndlr_t *, ((lapi_am_t *)0)->shdlr));
  cr_expect_eq(offsetof(lapi_am_t, hdr_hdl) % 8, 0);
}

/* Xfer_type must be the first member of every transfer struct. */
#define FIRST(member)                                                    \
  do {                                                                   \
    lapi_xfer_t x;                                                       \
    memset(&x, 0xff, sizeof x);                                          \
    x.member.Xfer_type = LAPI_LAST_XFER;                                 \
    cr_expect_eq(x.Xfer_type, LAPI_LAST_XFER, #member ".Xfer_type");     \
    cr_expect_eq(offsetof(lapi_xfer_t, member.Xfer_type), 0, #member);   \
  } while (0)

Test(header, xfer_type_is_first_in_every_union_member)
{
  FIRST(Get);
  FIRST(Am);
  FIRST(Rmw);
  FIRST(Put);
  FIRST(Getv);
  FIRST(Putv);
  FIRST(Amv);
  FIRST(Dgsp);
  FIRST(HwXfer);
  FIRST(Amx);
  FIRST(Mc);

  lapi_xfer_t x;
  memset(&x, 0, sizeof x);
  x.Xfer_type = LAPI_RMW_XFER;
  cr_expect_eq(x.Rmw.Xfer_type, LAPI_RMW_XFER);
  cr_expect_geq(sizeof(lapi_xfer_t), sizeof(lapi_amx_t));
}

Test(header, util_type_is_first_in_every_union_member)
{
  lapi_util_t u;
  memset(&u, 0, sizeof u);
  u.ThreadFunc.Util_type = LAPI_GET_THREAD_FUNC;
  cr_expect_eq(u.Util_type, LAPI_GET_THREAD_FUNC);
  cr_expect_eq(offsetof(lapi_util_t, ThreadFunc.Util_type), 0);
  cr_expect_eq(offsetof(lapi_util_t, RegDgsp.Util_type), 0);
  cr_expect_eq(offsetof(lapi_util_t, ResvDgsp.Util_type), 0);
  cr_expect_eq(offsetof(lapi_util_t, DrefDgsp.Util_type), 0);
  cr_expect_lt(LAPI_GET_THREAD_FUNC, LAPI_LAST_UTIL);
}

/* ------------------------------------------------------- LAPI_Msg_string */

/* Fill a buffer twice the documented size and check nothing past it moved. */
static int msg(int code, char out[LAPI_MAX_ERR_STRING])
{
  char buf[2 * LAPI_MAX_ERR_STRING];
  memset(buf, 0x5a, sizeof buf);
  int rc = LAPI_Msg_string(code, buf);
  for (size_t i = LAPI_MAX_ERR_STRING; i < sizeof buf; i++)
    cr_assert_eq(buf[i], 0x5a, "code %d wrote byte %zu", code, i);
  cr_assert_not_null(memchr(buf, '\0', LAPI_MAX_ERR_STRING),
                     "code %d: no NUL within LAPI_MAX_ERR_STRING", code);
  memcpy(out, buf, LAPI_MAX_ERR_STRING);
  return rc;
}

Test(msg_string, every_code_has_a_text_that_fits)
{
  char text[LAPI_MAX_ERR_STRING], num[16];
  for (int i = -1; i < NCODES; i++) { /* 0, then 400..528 */
    int code = i < 0 ? LAPI_SUCCESS : LAPI_ERR_FIRSTCODE + i;
    cr_assert_eq(msg(code, text), LAPI_SUCCESS, "code %d", code);
    size_t n = strlen(text);
    cr_expect_gt(n, 0, "code %d: empty text", code);
    cr_expect_lt(n, LAPI_MAX_ERR_STRING, "code %d", code);
    snprintf(num, sizeof num, "(%d)", code);
    cr_expect_not_null(strstr(text, num), "code %d: \"%s\"", code, text);
  }
}

Test(msg_string, text_starts_with_the_code_name)
{
  char text[LAPI_MAX_ERR_STRING], want[80];
  for (size_t i = 0; i < NVALUES; i++) {
    if (values[i].kind != RC)
      continue;
    msg((int)values[i].want, text);
    snprintf(want, sizeof want, "%s (%lld): ", values[i].name, values[i].want);
    cr_expect_eq(strncmp(text, want, strlen(want)), 0,
                 "got \"%s\", want \"%s...\"", text, want);
    /* a sentence after the prefix, not just the name */
    cr_expect_gt(strlen(text), strlen(want) + 10, "\"%s\"", text);
  }
}

Test(msg_string, distinct_codes_have_distinct_explanations)
{
  static char texts[NCODES + 1][LAPI_MAX_ERR_STRING];
  for (int i = 0; i <= NCODES; i++) {
    int code = i == NCODES ? LAPI_SUCCESS : LAPI_ERR_FIRSTCODE + i;
    char full[LAPI_MAX_ERR_STRING];
    msg(code, full);
    /* compare what follows "NAME (N): " so the prefix cannot hide twins */
    const char *sentence = strstr(full, "): ");
    cr_assert_not_null(sentence, "code %d: \"%s\"", code, full);
    snprintf(texts[i], sizeof texts[i], "%s", sentence + 3);
  }
  for (int i = 0; i <= NCODES; i++)
    for (int j = i + 1; j <= NCODES; j++)
      cr_expect_str_neq(texts[i], texts[j], "entries %d and %d: \"%s\"", i, j,
                        texts[i]);
}

Test(msg_string, null_buffer)
{
  cr_expect_eq(LAPI_Msg_string(LAPI_ERR_TGT, NULL), LAPI_ERR_RET_PTR_NULL);
  cr_expect_eq(LAPI_Msg_string(12345, NULL), LAPI_ERR_RET_PTR_NULL);
  cr_expect_eq(PLAPI_Msg_string(LAPI_SUCCESS, NULL), LAPI_ERR_RET_PTR_NULL);
}

Test(msg_string, unknown_codes)
{
  static const int unknown[] = {-1, 1, 2, 399, 529, 1000, INT_MAX, INT_MIN};
  char text[LAPI_MAX_ERR_STRING], want[64];
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    cr_expect_eq(msg(unknown[i], text), LAPI_ERR_CODE_UNKNOWN,
                 "code %d", unknown[i]);
    snprintf(want, sizeof want, "unknown LAPI error code %d", unknown[i]);
    cr_expect_eq(strncmp(text, want, strlen(want)), 0, "\"%s\"", text);
  }
}

Test(msg_string, profiling_entry_gives_the_same_text)
{
  char a[LAPI_MAX_ERR_STRING], b[LAPI_MAX_ERR_STRING];
  int codes[] = {LAPI_SUCCESS, LAPI_ERR_TGT, LAPI_ERR_UHDR_LEN, 77};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    cr_expect_eq(LAPI_Msg_string(codes[i], a), PLAPI_Msg_string(codes[i], b));
    cr_expect_str_eq(a, b);
  }
}
