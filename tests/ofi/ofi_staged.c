/*
 * ofi_staged.c - mid-size messages staged whole (OFI_RTS_STAGED).
 *
 * Between two CGs on shm, an Amsend, Amsendv or put above the eager limit
 * and up to LAPI_OFI_STAGED_MAX is packed whole into a stage of the
 * origin's arena and named in its RTS; the sink copies it from there once
 * the destination is known, without the process_vm_readv of a read
 * (ofi_packref.c); so does a get's reply, whose target stages it.  Task
 * 0 sends task 1 every kind (Amsend, Amsendv as IOVECTOR, STRIDED and
 * GENERIC, Put, Putv STRIDED) and gets from it (Get, Getv STRIDED) at
 * three sizes (4 KiB, 10 KiB, 16 KiB), each from and to 16 bytes past a
 * page as a malloc'd buffer (where glibc's memcpy is slowest on AMD Zen:
 * util/bulk_copy.h), one at a time: every byte and every gap checked,
 * org_cntr, tgt_cntr and cmpl_cntr each moved once.  The transport's
 * counts, summed over both tasks, then prove the path, by
 * OFI_TEST_STAGED:
 *   used      every message staged and copied from the stage, none pulled;
 *   fallback  LAPI_OFI_PACK_REF=2, every arena mapping fails: the first
 *             staged message each way is pulled from its origin's own
 *             memory, and that origin stages nothing more for its peer;
 *   off       LAPI_OFI_STAGED_MAX=0: nothing staged.
 * In "used", task 1 last runs two forged STAGED RTSs as if task 0 had
 * sent them (ofi_test_arrival): one naming another process, one another
 * file of task 0 than its arena.  Both are dropped as OFI_BAD_REF before
 * any handler runs.  White box (lapi_static); exits 77 (skipped) where
 * stage references cannot work (no shm, no proven peer pid).
 */
#include "ofi_test.h"

#include "transport/ofi/ofi.h"

#define OFF 16             /* past a page, as a malloc'd buffer */
#define SPAN (64 * 1024)   /* room for the widest layout */
#define BLOCK 512          /* STRIDED block, pitch 2 x BLOCK */
#define GAP 100            /* IOVECTOR and GENERIC gap after a piece */

static unsigned char src[SPAN] __attribute__((aligned(4096)));
static unsigned char dst[SPAN] __attribute__((aligned(4096)));
static lapi_cntr_t tgt_cntr;
static int headers; /* AM header handlers run here (atomic) */

enum kind { AMSEND, AMV_IOV, AMV_STRIDED, AMV_GENERIC, PUT, PUTV_STRIDED,
            GET, GETV_STRIDED, NKINDS };
static const char *const kind_names[NKINDS] = {
    "Amsend", "Amsendv IOVECTOR", "Amsendv STRIDED", "Amsendv GENERIC",
    "Put", "Putv STRIDED", "Get", "Getv STRIDED"};

/* Task 1 holds the stream of a get, task 0 of anything else. */
static int is_get(int kind) { return kind == GET || kind == GETV_STRIDED; }
static const size_t sizes[] = {4096, 10240, 16384};

/* What an Amsendv carries in its uhdr: the target builds the same kind
 * of layout over its dst. */
struct what {
  int kind;
  uint32_t size;
};

struct layout {
  lapi_vec_t v;
  void *info[8];
  ulong len[8];
};

/* The pieces of size bytes from base: one (contiguous kinds), three with
 * gaps (IOVECTOR; GENERIC at the origin), two with a gap (GENERIC at the
 * target: the pair does not line up), or BLOCK-byte blocks (STRIDED). */
static void build(struct layout *l, int kind, size_t size,
                  unsigned char *base, int target)
{
  lapi_vec_t *v = &l->v;
  memset(l, 0, sizeof *l);
  v->info = l->info;
  if (kind == AMV_STRIDED || kind == PUTV_STRIDED || kind == GETV_STRIDED) {
    v->vec_type = LAPI_GEN_STRIDED_XFER;
    v->num_vecs = (uint)(size / BLOCK);
    l->info[0] = base;
    l->info[1] = (void *)(uintptr_t)BLOCK;
    l->info[2] = (void *)(uintptr_t)(2 * BLOCK);
    return;
  }
  size_t cut[3];
  uint n;
  if (kind == AMV_GENERIC && target) {
    n = 2;
    cut[0] = size / 4;
    cut[1] = size - cut[0];
  } else if (kind == AMV_IOV || kind == AMV_GENERIC) {
    n = 3;
    cut[0] = size / 3;
    cut[1] = size / 3;
    cut[2] = size - 2 * (size / 3);
  } else {
    n = 1;
    cut[0] = size;
  }
  v->vec_type = kind == AMV_GENERIC ? LAPI_GEN_GENERIC : LAPI_GEN_IOVECTOR;
  v->num_vecs = n;
  v->len = l->len;
  size_t at = 0;
  for (uint i = 0; i < n; i++) {
    l->info[i] = base + at;
    l->len[i] = cut[i];
    at += cut[i] + GAP;
  }
}

/* Byte k of the stream goes to (or comes from) this address. */
static unsigned char *stream_byte(const struct layout *l, size_t k)
{
  const lapi_vec_t *v = &l->v;
  if (v->vec_type == LAPI_GEN_STRIDED_XFER)
    return (unsigned char *)l->info[0] + (k / BLOCK) * 2 * BLOCK +
           k % BLOCK;
  for (uint i = 0; i < v->num_vecs; i++) {
    if (k < l->len[i])
      return (unsigned char *)l->info[i] + k;
    k -= l->len[i];
  }
  return NULL;
}

static struct layout target_layout; /* task 1: the Amsendv's destination */

static lapi_vec_t *amv_header(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                              ulong *len_vec, compl_hndlr_t **comp_h,
                              void **uinfo)
{
  (void)h;
  (void)uhdr_len;
  (void)len_vec;
  struct what w;
  memcpy(&w, uhdr, sizeof w);
  build(&target_layout, w.kind, w.size, dst + OFF, 1);
  __atomic_add_fetch(&headers, 1, __ATOMIC_SEQ_CST);
  *comp_h = NULL;
  *uinfo = NULL;
  return &target_layout.v;
}

static void *am_header(lapi_handle_t *h, void *uhdr, uint *uhdr_len,
                       ulong *msg_len, compl_hndlr_t **comp_h, void **uinfo)
{
  (void)h;
  (void)uhdr;
  (void)uhdr_len;
  OT_CHECK(*msg_len <= SPAN - OFF, "msg_len %lu", *msg_len);
  __atomic_add_fetch(&headers, 1, __ATOMIC_SEQ_CST);
  *comp_h = NULL;
  *uinfo = NULL;
  return dst + OFF;
}

struct counts {
  uint64_t out, in, pulled, pull, bad_ref;
};

static struct counts counts_now(void)
{
  pthread_mutex_lock(&ofi.lock);
  struct counts c = {ofi.st.staged_out, ofi.st.staged_in,
                     ofi.st.staged_pulled, ofi.st.pull,
                     ofi.st.dropped[OFI_BAD_REF]};
  pthread_mutex_unlock(&ofi.lock);
  return c;
}

/* The task holding the stream: src in the layout of kind. */
static void fill_source(int kind, size_t size, uint32_t seed)
{
  struct layout o;
  build(&o, kind == GET ? AMSEND : kind, size, src + OFF, 0);
  memset(src, 0x11, sizeof src);
  for (size_t k = 0; k < size; k++)
    *stream_byte(&o, k) = ot_byte(seed, k);
}

/* Task 0: one message of kind and size into task 1 (a get: from it),
 * waited for. */
static void send_one(int kind, size_t size, void **srcs, void **dsts,
                     void **cntrs)
{
  struct layout o, t;
  build(&o, kind, size, src + OFF, 0);
  lapi_cntr_t org, cmpl;
  LAPI_Setcntr(ot.h, &org, 0);
  LAPI_Setcntr(ot.h, &cmpl, 0);
  struct what w = {kind, (uint32_t)size};
  switch (kind) {
  case AMSEND:
    OT_OK(LAPI_Amsend(ot.h, 1, (void *)1, NULL, 0, src + OFF, size,
                      cntrs[1], &org, &cmpl));
    break;
  case AMV_IOV:
  case AMV_STRIDED:
  case AMV_GENERIC:
    OT_OK(LAPI_Amsendv(ot.h, 1, (void *)2, &w, sizeof w, &o.v, cntrs[1],
                       &org, &cmpl));
    break;
  case PUT:
    OT_OK(LAPI_Put(ot.h, 1, size, (unsigned char *)dsts[1] + OFF,
                   src + OFF, cntrs[1], &org, &cmpl));
    break;
  case PUTV_STRIDED:
    build(&t, kind, size, (unsigned char *)dsts[1] + OFF, 1);
    OT_OK(LAPI_Putv(ot.h, 1, &t.v, &o.v, cntrs[1], &org, &cmpl));
    break;
  case GET:
    OT_OK(LAPI_Get(ot.h, 1, size, (unsigned char *)srcs[1] + OFF, dst + OFF,
                   cntrs[1], &org));
    LAPI_Setcntr(ot.h, &cmpl, 1); /* a get has none */
    break;
  case GETV_STRIDED:
    build(&t, kind, size, (unsigned char *)srcs[1] + OFF, 0);
    build(&o, kind, size, dst + OFF, 1);
    OT_OK(LAPI_Getv(ot.h, 1, &t.v, &o.v, cntrs[1], &org));
    LAPI_Setcntr(ot.h, &cmpl, 1);
    break;
  }
  OT_OK(LAPI_Waitcntr(ot.h, &org, 1, NULL));
  OT_OK(LAPI_Waitcntr(ot.h, &cmpl, 1, NULL));
  OT_CHECK(ot_cntr(&org) == 0 && ot_cntr(&cmpl) == 0,
           "%s %zu B: org_cntr %d, cmpl_cntr %d left over", kind_names[kind],
           size, ot_cntr(&org), ot_cntr(&cmpl));
}

/* The receiving task: the stream landed in the layout, the gaps are
 * untouched. */
static void check_landed(int kind, size_t size, uint32_t seed)
{
  struct layout t;
  build(&t, kind == PUT || kind == GET ? AMSEND : kind, size, dst + OFF, 1);
  static unsigned char want[SPAN];
  memset(want, 0xEE, sizeof want);
  for (size_t k = 0; k < size; k++)
    want[stream_byte(&t, k) - dst] = ot_byte(seed, k);
  for (size_t i = 0; i < SPAN; i++)
    if (dst[i] != want[i]) {
      OT_CHECK(0, "%s %zu B: byte %zu of the target is 0x%02x, want 0x%02x",
               kind_names[kind], size, i, dst[i], want[i]);
      return;
    }
}

/* Task 1: a STAGED RTS as task 0 would send it, with ref naming pid and
 * fd: run as an arrival.  Returns ofi_test_arrival's code. */
static int forge_staged(uint32_t pid, uint32_t fd)
{
  struct {
    struct ofi_rts r;
    struct ofi_data_ref ref;
  } m;
  memset(&m, 0, sizeof m);
  pthread_mutex_lock(&ofi.lock);
  ofi_hdr_init(&m.r.h, OFI_M_RTS, 0, 0xdead0001, sizeof m);
  m.r.h.src = 0;
  m.r.h.ack_done = m.r.h.ack_seq = ofi.peers[0].nf_acked;
  pthread_mutex_unlock(&ofi.lock);
  m.r.kind = OFI_K_AM;
  m.r.mode = OFI_MODE_PULL;
  m.r.hdr_hdl = 1;
  m.r.data_len = 4096;
  m.r.flags = OFI_RTS_STAGED;
  m.ref.len = 4096;
  m.ref.pid = pid;
  m.ref.fd = fd;
  return ofi_test_arrival(&m, sizeof m, 0);
}

int main(void)
{
  const char *mode = getenv("OFI_TEST_STAGED");
  if (mode == NULL)
    mode = "used";
  ot_init(NULL, 60);
  pthread_mutex_lock(&ofi.lock);
  int usable = ot.n == 2 && ofi.pack_ref && ofi.peers[1 - ot.me].pid != 0 &&
               ofi.eager_limit < sizes[0];
  size_t staged_max = ofi.staged_max;
  pthread_mutex_unlock(&ofi.lock);
  if (!usable) {
    if (ot.me == 0)
      printf("ofi_staged: stage references cannot work here (not shm, "
             "peer not proven, or not 2 tasks): SKIP\n");
    return ot_finish("ofi_staged") == 0 ? 77 : 1;
  }
  OT_CHECK(strcmp(mode, "off") == 0 ? staged_max == 0
                                    : staged_max >= sizes[2],
           "LAPI_OFI_STAGED_MAX is %zu for mode %s", staged_max, mode);
  OT_OK(LAPI_Addr_set(ot.h, (void *)am_header, 1));
  OT_OK(LAPI_Addr_set(ot.h, (void *)amv_header, 2));
  LAPI_Setcntr(ot.h, &tgt_cntr, 0);
  void **srcs = ot_addrs(src);
  void **dsts = ot_addrs(dst);
  void **cntrs = ot_addrs(&tgt_cntr);
  struct counts start = counts_now();
  uint32_t seed = 0;
  int sent = 0;
  for (int kind = 0; kind < NKINDS; kind++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++, seed++) {
      memset(dst, 0xEE, sizeof dst);
      if (ot.me == is_get(kind))
        fill_source(kind, sizes[s], seed);
      OT_OK(LAPI_Gfence(ot.h));
      if (ot.me == 0)
        send_one(kind, sizes[s], srcs, dsts, cntrs);
      else
        OT_OK(LAPI_Waitcntr(ot.h, &tgt_cntr, 1, NULL));
      if (ot.me != is_get(kind))
        check_landed(kind, sizes[s], seed);
      sent++;
      OT_OK(LAPI_Gfence(ot.h));
    }
  struct counts end = counts_now();
  uint64_t out = ot_job_sum(end.out - start.out);
  uint64_t in = ot_job_sum(end.in - start.in);
  uint64_t pulled = ot_job_sum(end.pulled - start.pulled);
  uint64_t pulls = ot_job_sum(end.pull - start.pull);
  /* fallback: the first staged message each way is pulled, and its
   * origin stages no more */
  int used = strcmp(mode, "used") == 0, fallback = !used &&
                                                   strcmp(mode, "fallback") == 0;
  uint64_t want_out = used ? (uint64_t)sent : fallback ? 2 : 0;
  uint64_t want_in = used ? (uint64_t)sent : 0;
  uint64_t want_pulled = fallback ? 2 : 0;
  OT_CHECK(out == want_out && in == want_in && pulled == want_pulled,
           "mode %s: of %d messages %llu sent staged, %llu copied from the "
           "stage, %llu pulled instead; want %llu, %llu and %llu", mode,
           sent, (unsigned long long)out, (unsigned long long)in,
           (unsigned long long)pulled, (unsigned long long)want_out,
           (unsigned long long)want_in, (unsigned long long)want_pulled);
  if (used)
    OT_CHECK(pulls == 0, "%llu packed transfers: a staged message was "
             "pulled", (unsigned long long)pulls);
  if (ot.me == 1 && strcmp(mode, "used") == 0) {
    pthread_mutex_lock(&ofi.lock);
    uint32_t pid = (uint32_t)ofi.peers[0].pid;
    uint32_t fd = ofi.peers[0].arena_fd;
    int mapped = ofi.peers[0].arena != NULL;
    uint64_t live = ofi.xlive;
    pthread_mutex_unlock(&ofi.lock);
    OT_CHECK(mapped, "task 0's arena was never mapped");
    int seen = __atomic_load_n(&headers, __ATOMIC_SEQ_CST);
    struct counts before = counts_now();
    OT_CHECK(forge_staged(pid + 1, fd) == 0, "the forged RTS could not run");
    OT_CHECK(forge_staged(pid, fd + 1) == 0, "the forged RTS could not run");
    struct counts after = counts_now();
    pthread_mutex_lock(&ofi.lock);
    uint64_t live_after = ofi.xlive;
    pthread_mutex_unlock(&ofi.lock);
    OT_CHECK(after.bad_ref - before.bad_ref == 2 && after.in == before.in &&
                 after.pulled == before.pulled,
             "forged STAGED RTSs: %llu dropped as REF (want 2), %llu copied, "
             "%llu pulled", (unsigned long long)(after.bad_ref -
                                                 before.bad_ref),
             (unsigned long long)(after.in - before.in),
             (unsigned long long)(after.pulled - before.pulled));
    OT_CHECK(live_after == live, "%llu transfers live after the forged "
             "RTSs, %llu before", (unsigned long long)live_after,
             (unsigned long long)live);
    OT_CHECK(__atomic_load_n(&headers, __ATOMIC_SEQ_CST) == seen,
             "a header handler ran for a forged RTS");
  }
  OT_OK(LAPI_Gfence(ot.h));
  free(srcs);
  free(dsts);
  free(cntrs);
  return ot_finish("ofi_staged");
}
