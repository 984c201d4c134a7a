/* SPDX-License-Identifier: MIT */
/*
 * Send-type requests and their pool (lgp_req.c).  All requests live in
 * one slab, so a completion's op_context is recognised as the shim's by
 * an address range check, without touching memory that may be the
 * application's.  The pool is process-wide and has its own lock.
 */
#ifndef LGP_REQ_H
#define LGP_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>

struct lgp_ep;

enum lgp_op_kind {
	LGP_OP_MSG,
	LGP_OP_TAGGED,
	LGP_OP_WRITE,
	LGP_OP_READ,
	LGP_OP_ATOMIC,
	LGP_OP_FETCH_ATOMIC,
	LGP_OP_COMPARE_ATOMIC,
};

/*
 * Vector elements a deferred request keeps by reference (the remote
 * segments, a read's local buffers, a fetching atomic's operand, compare
 * and result vectors): at least every provider's iov_limit and
 * rma_iov_limit here.  Longer vectors are refused at every call, deferred
 * or not (lgp_send_submit), so that a call form works or fails whatever
 * the timing.  Sources copied into the payload have no such limit.
 */
#define LGP_REQ_IOV_MAX	4

/*
 * One send-type operation: what the application asked for, or, once
 * deferred, a copy the shim owns.  ctx comes first: it is handed to the
 * real provider as the context of operations the shim posts on its own
 * behalf (providers in FI_CONTEXT mode write into it), and
 * lgp_req_from_context() recognises it by address.
 *
 * The vectors are the caller's during the call; lgp_req_own() points a
 * deferred request at its own copies (struct lgp_req_vecs).
 */
struct lgp_req {
	struct fi_context2 ctx;
	struct lgp_ep *ep;		/* NULL once its endpoint is gone */
	enum lgp_op_kind kind;
	bool inject_call;		/* fi_inject*(): no completion wanted */
	bool deferred;			/* owned by the shim, payload copied */
	bool want_cqe;			/* the application expects a completion */
	void *app_context;
	uint64_t flags;			/* the application's operation flags */
	size_t len;			/* bytes of payload (or of result) */
	void *payload;			/* shim-owned copy of the source data */
	size_t payload_cap;		/* bytes payload holds (lgp_payload_alloc) */
	/* source (for reads the destination, for atomics the operand) */
	union {
		const struct iovec *iov;
		const struct fi_ioc *ioc;
	};
	void **desc;
	size_t count;
	/* remote segments of RMA and atomics */
	union {
		const struct fi_rma_iov *rma_iov;
		const struct fi_rma_ioc *rma_ioc;
	};
	size_t rma_count;
	/* fetching atomics: result and compare vectors */
	struct fi_ioc *res;
	void **res_desc;
	size_t res_count;
	const struct fi_ioc *cmp;
	void **cmp_desc;
	size_t cmp_count;
	fi_addr_t addr;
	uint64_t tag;
	uint64_t data;
	enum fi_datatype datatype;
	enum fi_op op;
	uint64_t return_at;		/* earliest time returned data is seen */
	/* The completion the application will read, once released. */
	struct fi_cq_tagged_entry cqe;
	fi_addr_t cqe_src;		/* its source, for fi_cq_readfrom */
	/* One for the real post awaiting completion, one per queued copy. */
	int refs;
	struct lgp_req *next_free;
};

/*
 * A deferred request's copies of its vectors.  They sit beside the request
 * in its pool slot rather than inside it, so that a call, described by a
 * struct lgp_req on the caller's stack, neither zeroes nor copies them.
 */
struct lgp_req_vecs {
	union {
		struct iovec iov[LGP_REQ_IOV_MAX];
		struct fi_ioc ioc[LGP_REQ_IOV_MAX];
	};
	void *desc[LGP_REQ_IOV_MAX];
	union {
		struct fi_rma_iov rma_iov[LGP_REQ_IOV_MAX];
		struct fi_rma_ioc rma_ioc[LGP_REQ_IOV_MAX];
	};
	struct fi_ioc res[LGP_REQ_IOV_MAX];
	void *res_desc[LGP_REQ_IOV_MAX];
	struct fi_ioc cmp[LGP_REQ_IOV_MAX];
	void *cmp_desc[LGP_REQ_IOV_MAX];
};

/* One entry of the request pool; req first, so its ctx names the slot. */
struct lgp_req_slot {
	struct lgp_req req;
	struct lgp_req_vecs vecs;
};

/* The vector copies of a request from lgp_req_alloc() (never of a call). */
static inline struct lgp_req_vecs *lgp_req_vecs(struct lgp_req *req)
{
	return &((struct lgp_req_slot *) (void *) req)->vecs;
}

/* A zeroed request with one reference, or NULL when the pool is empty. */
struct lgp_req *lgp_req_alloc(void);
/* Drops a reference; the last one frees the payload and the request. */
void lgp_req_put(struct lgp_req *req);
/*
 * A buffer of at least len bytes for a request's payload, its size in
 * *cap; NULL when out of memory.  The last lgp_req_put() gives it back:
 * large ones are kept for the next deferred op, since a fresh mapping for
 * each (glibc maps blocks above 128 KiB) costs its page faults and unmap
 * in every delayed send, ~1 ms for 1 MiB on the 2-core VM.
 */
void *lgp_payload_alloc(size_t len, size_t *cap);
/* Frees the payload buffers kept for reuse (the shim's teardown: libfabric
 * may unload it, and the buffers must not outlive the pointers to them). */
void lgp_payload_release_kept(void);
/* The request an op_context names, or NULL if it is the application's. */
struct lgp_req *lgp_req_from_context(void *op_context);
/* Detaches every request from an endpoint that is going away. */
void lgp_req_forget_ep(struct lgp_ep *ep);

#endif /* LGP_REQ_H */
