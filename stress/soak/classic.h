/* SPDX-License-Identifier: BSD-2-Clause */
/* stress/soak/classic.h - the classic workload of mkrt-soak (its first
 * torture type): producer sessions that come and go, user and built-in
 * ops, an APPEND consumer, exact per-cell shadows (classic_round.c tells
 * the whole story). Shared by classic_ops.c, classic_sess.c and
 * classic_round.c. */
#ifndef MKRT_SOAK_CLASSIC_H
#define MKRT_SOAK_CLASSIC_H

#include "soak.h"

#define SLOT_STRIDE 32                          /* cells per producer slot */
#define ACC_N 8                                 /* base + 0..7: accumulate cells */
#define MAXC_OFF 8                              /* base + 8..11: MAX cells */
#define MAXC_N 4
#define STORE_OFF 12                            /* base + 12: STORE cell */
#define APPEND_OFF 13                           /* base + 13: APPEND handle */
#define TRACKED (MAX_PRODUCERS * SLOT_STRIDE)   /* cells with shadows */
#define PROBE_CELL TRACKED                      /* the hang probe's cell */
#define CELLS 1024
#define BAD_HANDLE (CELLS + 7)
#define OP_ACC 16
#define OP_MAX 17
#define OP_FAIL 18
#define OP_SLOW 19
#define OP_UNKNOWN 999
#define CUSTOM_STATUS ((mkrt_status)-77)
#define APPEND_MAX 65536u  /* APPEND sequence numbers per slot per round (16 bits) */
#define MAX_SESSIONS 4096u /* sessions per slot per round (param bits 16..27) */
#define BATCH_MAX 64

typedef struct slot_state {
    /* Written by the slot's current session thread only (sessions of a
     * slot run one after another; main joins one before starting the
     * next); read by main after the joins. */
    uint64_t pub_items;
    uint64_t pub_sum[ACC_N];      /* every accumulate item published */
    uint64_t pub_user_sum[ACC_N]; /* ... of them the user ops' */
    uint64_t pub_user_n;
    uint32_t pub_max[MAXC_N];
    uint64_t must_fail;
    uint32_t appends;    /* APPEND sequence numbers used */
    uint32_t stores;     /* STORE params used (the param is the count) */
    uint32_t last_store; /* last STORE param published */
    uint32_t sessions;
    bool unwaited; /* a session closed without waiting for its items */
} slot_state;

typedef struct cell_shadow {
    _Atomic uint64_t exec_user_sum; /* params the accumulate user ops ran */
    _Atomic uint64_t fail_all_sum;  /* params of failed accumulate items */
    _Atomic uint64_t fail_user_sum; /* ... of them the user ops' */
    _Atomic bool max_failed, store_failed;
} cell_shadow;

struct round;

typedef struct session {
    struct round *r;
    unsigned slot;
    uint32_t id;
    uint64_t rng;
    mkrt__thread thread; /* stays here until joined */
    bool running;
    _Atomic bool finished;
    uint64_t next_start_ns;
    uint64_t window_ns; /* when the first batch not yet waited for was published */
} session;

enum { MARK_CONSUMED = 1, MARK_FAILED = 2 };

typedef struct round {
    unsigned index;
    uint64_t rng;
    mkrt_backend_kind backend;
    bool race, short_destroy, storms, hang_planned, hang_injected, calm;
    unsigned producers;
    uint64_t t0, t_end, t_race, t_hang;
    mkrt_config cfg;
    mkrt_runtime *rt;
    /* The gate: calls that take the runtime itself (open, cell reads,
     * consume) run inside it; race rounds close it before mkrt_destroy,
     * which publish, fence, wait and close may race. */
    _Atomic int users;
    _Atomic bool gate_closed;
    _Atomic bool stop;          /* sessions: finish up */
    _Atomic bool consumer_stop;
    _Atomic bool device_phase;  /* SIM: publish built-in ops only */
    _Atomic bool values_unchecked; /* a stray device failure: cells undefined */
    slot_state slot[MAX_PRODUCERS];
    session sess[MAX_PRODUCERS];
    cell_shadow cell[TRACKED + 1];
    _Atomic uint64_t exec_user_n, fail_user_n, callbacks, must_fail_reported, unexpected;
    _Atomic uint64_t why_timedout, why_device, why_overflow, probe_failures;
    _Atomic uint64_t append_consumed[MAX_PRODUCERS], append_failed[MAX_PRODUCERS];
    _Atomic uint8_t marks[MAX_PRODUCERS][APPEND_MAX];
    uint32_t last_seq[MAX_PRODUCERS][MAX_SESSIONS]; /* consumer-only: seq + 1 */
    uint64_t probe_published;
    uint64_t consumer_rng; /* the consumer's own */
    mkrt__thread consumer; /* stays here until joined */
} round;


mkrt_status fail_expect(uint32_t param);
bool gate_enter(round *r);
void gate_leave(round *r);
void gate_close(round *r);

/* classic_ops.c */
mkrt_status op_acc(const mkrt_item *it, const mkrt_op_ctx *c);
mkrt_status op_max(const mkrt_item *it, const mkrt_op_ctx *c);
mkrt_status op_fail(const mkrt_item *it, const mkrt_op_ctx *c);
mkrt_status op_slow(const mkrt_item *it, const mkrt_op_ctx *c);
void classic_on_error(void *ctx, const mkrt_item *it, mkrt_status why, const char *msg);
int consumer_main(void *arg);

/* classic_sess.c */
bool cells_undefined(round *r);
void check_slot_cells(round *r, unsigned slot, const char *when);
void start_session(round *r, unsigned slot);
void join_session(session *s);

#endif
