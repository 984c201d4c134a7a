/* SPDX-License-Identifier: MIT */
/*
 * fi_stress: the state one rank keeps and the contracts between its parts.
 *
 *   fi_stress.c    options, the run's order, the JSON summary
 *   stress_ep.c    fabric, domain, endpoint, memory regions, address exchange
 *   stress_xfer.c  the message phase, completions, progress and barriers
 *   stress_rma.c   the RMA and atomic phase and the window's checks
 *   stress_msg.h   what messages and chunks hold (pure functions)
 *
 * One thread per rank; every function returns 0 or a negative fi_errno
 * after printing one line that names the rank and what failed.
 */
#ifndef STRESS_H
#define STRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#define STRESS_ADDR_MAX 256
#define STRESS_SPIN_YIELD 256	/* empty polls before yielding the core */
#define STRESS_RANKS_MAX 256	/* a tag holds the source in 8 bits */

/* The operations -o names, in the order the summary reports them. */
enum stress_op {
	STRESS_OP_SEND,
	STRESS_OP_TSEND,
	STRESS_OP_INJECT,
	STRESS_OP_TINJECT,
	STRESS_OP_WRITE,
	STRESS_OP_READ,
	STRESS_OP_ATOMIC,
	STRESS_OP_COUNT
};

#define STRESS_OP_BIT(op) (1u << (op))
#define STRESS_MSG_OPS (STRESS_OP_BIT(STRESS_OP_SEND) | STRESS_OP_BIT(STRESS_OP_TSEND) | \
			STRESS_OP_BIT(STRESS_OP_INJECT) | STRESS_OP_BIT(STRESS_OP_TINJECT))
#define STRESS_TAGGED_OPS (STRESS_OP_BIT(STRESS_OP_TSEND) | STRESS_OP_BIT(STRESS_OP_TINJECT))
#define STRESS_RMA_OPS (STRESS_OP_BIT(STRESS_OP_WRITE) | STRESS_OP_BIT(STRESS_OP_READ))

extern const char *const stress_op_names[STRESS_OP_COUNT];

struct stress_opts {
	const char *prov;
	enum fi_ep_type ep_type;
	uint64_t msgs;
	size_t max_size;
	uint64_t seed;
	int timeout_s;
	int window;
	int rxbufs;
	unsigned int ops;		/* STRESS_OP_BIT of each -o operation */
	enum stress_op msg_ops[4];	/* message operations, in -o order */
	int n_msg_ops;
	int chunks;			/* RMA chunks and atomics per peer */
};

/* What a completion's op_context is. */
enum stress_kind {
	STRESS_TX,	/* a send-type operation's buffer */
	STRESS_RX,	/* an untagged receive buffer */
	STRESS_TRX,	/* a tagged receive buffer */
};

/* One buffer and its operation; ctx first because of FI_CONTEXT(2) mode. */
struct stress_buf {
	struct fi_context2 ctx;
	enum stress_kind kind;
	bool busy;		/* send-type buffers: staged or awaiting completion */
	enum stress_op op;	/* send-type buffers: what was posted */
	int peer;		/* send-type buffers: the target rank */
	uint64_t k;		/* RMA: the chunk's index */
	uint64_t post_no;	/* receive buffers: order posted in their queue */
	char *data;
};

struct stress_peer {
	/* messages */
	uint64_t rx_expect;	/* messages this rank must get from the peer */
	uint64_t rx_got;
	uint64_t *rx_post;	/* post_no of the buffer holding seq k, 0 = none */
	uint64_t tx_total;	/* messages this rank sends to the peer */
	uint64_t tx_posted;
	uint64_t tx_done;
	/* every operation this rank issued to the peer, and its bytes */
	uint64_t ops;
	uint64_t bytes;
	/* the peer's window */
	uint64_t win_addr;
	uint64_t win_key;
};

/* Errors by kind; the summary names them in this order (stress_err_names). */
struct stress_errs {
	uint64_t magic, size, sum, dup, order, lost, extra, cq, tag, window,
		 counter, read;
};

#define STRESS_NERRS (sizeof(struct stress_errs) / sizeof(uint64_t))

extern const char *const stress_err_names[STRESS_NERRS];

struct stress {
	struct stress_opts o;
	int rank, nranks;
	size_t buf_len;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	void *desc;
	char *slab;
	fi_addr_t *addr;
	struct stress_buf *rx, *trx, *tx;
	struct stress_buf **tx_free;	/* free send-type buffers, a stack */
	int n_free;
	uint64_t next_post_no[2];	/* per receive queue: untagged, tagged */
	struct stress_peer *peer;
	struct stress_errs err;
	uint64_t op_count[STRESS_OP_COUNT];
	uint64_t bytes;			/* message bytes received */
	uint64_t tx_done, rx_got;	/* message totals over all peers */
	uint64_t refused;		/* send-type posts refused with -FI_EAGAIN */
	uint64_t rma_posted, rma_done;
	/* the window peers write, read and add to (stress_rma.c) */
	char *win;
	size_t win_len;
	struct fid_mr *win_mr;
	char *scratch;			/* one slot's expected bytes */
	double last_progress;
};

/* ---- stress_ep.c ---------------------------------------------------- */

/* Opens everything and exchanges addresses and windows (collective). */
int stress_setup(struct stress *s);
void stress_close(struct stress *s);

/* ---- stress_xfer.c -------------------------------------------------- */

double stress_now(void);
/* Prints "fi_stress: rank R: WHAT: error" and returns a negative error. */
int stress_fail(struct stress *s, const char *what, int ret);
/* Works out how many messages go to and come from each peer. */
int stress_plan(struct stress *s);
/* Posts a receive buffer (kind says which queue). */
int stress_rx_post(struct stress *s, struct stress_buf *b);
/*
 * Polls the CQ once, yielding after many empty polls; after TIMEOUT_S
 * without progress (s->last_progress) it reports the peers still owing
 * messages and step, and fails.
 */
int stress_progress(struct stress *s, const char *step, int *idle);
/* A free send-type buffer, or NULL when WINDOW operations are out. */
struct stress_buf *stress_tx_get(struct stress *s);
void stress_tx_put(struct stress *s, struct stress_buf *b);

/*
 * A phase's operations, as stress_issue() posts them: stage() fills a free
 * send-type buffer with the phase's operation i (b->op, b->peer, b->k, its
 * bytes in *len), or returns NULL when none is free or all were staged;
 * post() posts it and, on success, counts what only the phase counts;
 * done() says whether the phase is over once posted operations were.
 * Phases embed this first, so ph names the phase's own structure.
 */
struct stress_phase {
	const char *step;
	struct stress_buf *(*stage)(struct stress *s, const struct stress_phase *ph,
				    uint64_t i, size_t *len);
	int (*post)(struct stress *s, struct stress_buf *b, size_t len);
	bool (*done)(const struct stress *s, const struct stress_phase *ph,
		     uint64_t posted);
};

/*
 * Posts a phase's operations, at most WINDOW outstanding, retrying one on
 * -FI_EAGAIN after progressing the CQ, until the phase is done.
 */
int stress_issue(struct stress *s, const struct stress_phase *ph);
/* Sends this rank's share of messages until all are sent and received. */
int stress_run(struct stress *s);
/* An MPI barrier that keeps libfabric progressing while it waits. */
int stress_barrier(struct stress *s, const char *step);
/* Counts lost messages and per-source order violations once all is in. */
void stress_final_check(struct stress *s);

/* ---- stress_rma.c --------------------------------------------------- */

/* Bytes of the window each rank registers. */
size_t stress_win_len(const struct stress *s);
/* Writes and adds to every peer's window, settles, reads back, checks. */
int stress_rma_run(struct stress *s);
/* Counts window and counter errors; once every rank is done. */
void stress_rma_check(struct stress *s);
/* An RMA or atomic operation completed. */
void stress_rma_complete(struct stress *s, struct stress_buf *b);

#endif /* STRESS_H */
