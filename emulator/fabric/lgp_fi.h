/* SPDX-License-Identifier: MIT */
/*
 * ofi_hook_loggp: a libfabric hooking provider that adds LogGP delays.
 *
 * libfabric calls lgp_fabric_hook() for every fabric the application opens
 * (FI_HOOK=loggp).  For a core provider (tcp, shm, udp, verbs ...) it wraps
 * the fabric and, through it, every object opened below: domains,
 * endpoints, completion queues, counters, address vectors, event queues,
 * memory regions and poll sets.  Utility providers (ofi_rxm, ofi_rxd,
 * ofi_mrail) are returned untouched: their own traffic runs over a core
 * fabric that is itself hooked, so each message is delayed exactly once,
 * at the provider nearest the wire.
 *
 * Every wrapper starts with the public libfabric object, so the pointer the
 * application holds is the wrapper; the wrapped ("real") object is opened
 * with the application's context, and events that name a real fid are
 * mapped back through a table (lgp_fid_from_real()).
 *
 * Delay model (docs/design.md, "LogGP semantics"), applied on the sending side:
 *   - o_s is spun inside every send-type call;
 *   - the message is paced through the endpoint's injection port (g, G) and
 *     held in the domain's delay queue until it has left and L has passed,
 *     then posted to the real endpoint by whichever thread gets there first
 *     (the application's next call into the domain, or the progress thread);
 *   - the application's local completion is synthesised when the message has
 *     left (so L never delays it), the payload having been copied at the call;
 *   - o_r is spun when a receive completion is handed to the application.
 * All knobs zero means pass-through: no copy, no lock, no queue.
 */
#ifndef LGP_FI_H
#define LGP_FI_H

#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <lgp/dqueue.h>
#include <lgp/knob.h>
#include <lgp/stats.h>

#include "lgp_engine.h"

extern struct fi_provider lgp_prov;

#define LGP_WARN(subsys, ...) FI_WARN(&lgp_prov, subsys, __VA_ARGS__)
#define LGP_INFO(subsys, ...) FI_INFO(&lgp_prov, subsys, __VA_ARGS__)

/* Synthesised completions one CQ can hold. */
#define LGP_CQ_QUEUE_DEPTH	65536

/* Process-wide configuration, read once from the environment. */
struct lgp_config {
	struct lgp_params params;
	bool active;		/* any knob non-zero */
	int error;		/* knob parse error: refuse to open domains */
	char errmsg[LGP_KNOB_ERRLEN];
	char stats_file[4096];	/* LOGGP_STATS_FILE, or "" */
	bool progress_idle;	/* progress thread runs as SCHED_IDLE */
};

const struct lgp_config *lgp_config_get(void);

/* ---- fabric ---------------------------------------------------------- */

struct lgp_fabric {
	struct fid_fabric fabric;
	struct fid_fabric *hfabric;
	const char *prov_name;
	struct lgp_stats stats;
	bool stats_written;
	struct lgp_fabric *next;	/* list of open fabrics for exit dump */
};

int lgp_fabric_hook(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
void lgp_fabric_stats_write(struct lgp_fabric *fab);
void lgp_fabric_stats_write_all(void);

/* ---- domain ---------------------------------------------------------- */

struct lgp_ep;
struct lgp_ops_flow_ctrl;

struct lgp_domain {
	struct fid_domain domain;
	struct fid_domain *hdomain;
	struct lgp_fabric *fab;
	bool active;
	/*
	 * Serialises the shim's state and every data-path call into the real
	 * domain while delays are active, so the progress thread may post
	 * into providers whose threading model is FI_THREAD_DOMAIN.
	 * Recursive: a core provider may call back into the utility above it
	 * (rxm's credit handler) from inside a call the shim made.
	 */
	pthread_mutex_t lock;
	struct lgp_engine eng;		/* knobs, deferred operations */
	size_t inflight;		/* shim posts awaiting real completion */
	struct lgp_cq *cqs;		/* this domain's CQs */
	struct lgp_ep *eps;		/* this domain's endpoints */
	uint64_t next_signal;		/* earliest completion a wait object awaits */
	struct lgp_domain *prog_next;	/* progress thread's list */
	/* rxm's flow control over a core provider (lgp_ops.c) */
	struct lgp_ops_flow_ctrl *base_flow_ctrl;
	ssize_t (*credit_handler)(struct fid_ep *ep, uint64_t credits);
};

int lgp_domain_ops_open(struct fid *fid, const char *name, uint64_t flags,
			void **ops, void *context);

/*
 * Reads the real CQs the shim may read (drivable), consuming its own
 * completions and keeping the application's: a post may wait for a peer
 * in this process to progress (shm maps a peer on its first message) or
 * for its completion, while the application blocks elsewhere or in a
 * flush.  Lock held.
 */
void lgp_domain_drive(struct lgp_domain *dom);
/*
 * Signals the wait object of every CQ whose earliest synthesised
 * completion is due by now, and recomputes dom->next_signal; lock held.
 */
void lgp_domain_signal(struct lgp_domain *dom, uint64_t now);

/* ---- completion queue ------------------------------------------------ */

struct lgp_cq {
	struct fid_cq cq;
	struct fid_cq *hcq;
	struct lgp_domain *dom;
	enum fi_cq_format app_format;	/* what the application reads */
	enum fi_cq_format real_format;	/* what the real CQ was opened with */
	size_t app_size;
	bool shim;			/* reads go through the shim */
	struct lgp_dq synq;		/* synthesised completions by time */
	struct lgp_cq *next_in_dom;
	/*
	 * Opened with a wait object: synthesised completions signal it when
	 * they fall due, as the provider signals its own (lgp_domain_signal).
	 */
	bool signals;
	uint64_t signalled;		/* release time signalled last */
	/*
	 * Bound to an endpoint that was enabled: the shim may read it on its
	 * own (lgp_domain_drive).  A provider may not expect a CQ of an
	 * endpoint that never became usable to be read: shm crashes reading
	 * one whose endpoint's fi_enable failed.
	 */
	bool drivable;
	struct lgp_wait *wait;		/* the wait set it belongs to, or NULL */
	struct lgp_cq *next_in_wait;
	/*
	 * An error entry the shim read off the real CQ for the application's
	 * next fi_cq_readerr (lgp_cq_take_err): the shim must see every
	 * error first, since those of its own posts are not the
	 * application's to read.
	 */
	bool err_held;
	struct fi_cq_err_entry err;
};

/*
 * Whether the CQ holds a synthesised completion that is due: a poll set,
 * wait set or fi_trywait must report it as the provider reports its own.
 * Releases what is due in the domain first.  *next (if not NULL) is the
 * earliest synthesised completion, UINT64_MAX for none.  Takes the domain
 * lock.
 */
bool lgp_cq_ready(struct lgp_cq *cq, uint64_t *next);

/*
 * Reads the real CQ until it is empty, consuming the shim's completions and
 * keeping the application's for its next read; lock held.  Used when an
 * endpoint closes and must see its deferred sends complete.
 */
void lgp_cq_drain(struct lgp_cq *cq);

/* Queue a synthesised completion; lock held.  Returns 0 or -FI_EAGAIN. */
int lgp_cq_synth(struct lgp_cq *cq, uint64_t release, void *op_context,
		 uint64_t flags, size_t len, void *buf, uint64_t data,
		 uint64_t tag);

/* ---- counter --------------------------------------------------------- */

struct lgp_cntr {
	struct fid_cntr cntr;
	struct fid_cntr *hcntr;
	struct lgp_domain *dom;
	bool counts_recv;	/* bound to an endpoint for FI_RECV */
	uint64_t seen;		/* value last handed to the application */
};

/* ---- endpoint -------------------------------------------------------- */

enum lgp_op_kind {
	LGP_OP_MSG,
	LGP_OP_TAGGED,
	LGP_OP_WRITE,
	LGP_OP_READ,
	LGP_OP_ATOMIC,
	LGP_OP_FETCH_ATOMIC,
	LGP_OP_COMPARE_ATOMIC,
};

struct lgp_ep {
	struct fid_ep ep;
	struct fid_ep *hep;
	struct lgp_domain *dom;
	struct lgp_cq *tx_cq;
	struct lgp_cq *rx_cq;
	bool tx_selective;	/* bound with FI_SELECTIVE_COMPLETION */
	struct lgp_eng_port port;	/* pacer, deferred operations */
	uint64_t tx_op_flags;	/* default flags of the transmit context */
	size_t inject_size;
	size_t inflight;	/* posted by the shim, real completion pending */
	bool flushing;		/* post so that completions come (no inject) */
	bool tx_counted;	/* a counter counts its sends (no inject) */
	bool enabled;		/* fi_enable succeeded: sends may be deferred */
	struct lgp_av *av;	/* bound address vector, or NULL */
	struct lgp_ep *next_in_dom;
};

/*
 * Posts everything the endpoint holds, each at its release time, and waits
 * until the provider has completed those posts (bounded): what the
 * application saw sent reaches the wire before the endpoint closes, shuts
 * down or loses the address it sent to.
 */
void lgp_ep_flush(struct lgp_ep *ep);
/* The endpoint is usable: sends may be deferred, its CQs drivable; lock held. */
void lgp_ep_enabled(struct lgp_ep *ep);

int lgp_ep_wrap(struct lgp_domain *dom, struct fid_ep *hep, void *context,
		size_t fclass, const struct fi_info *info, struct fid_ep **ep);

/* Data-transfer ops tables of an endpoint (lgp_ep_data.c). */
extern struct fi_ops_msg lgp_ep_msg_ops;
extern struct fi_ops_tagged lgp_ep_tagged_ops;
extern struct fi_ops_rma lgp_ep_rma_ops;
extern struct fi_ops_atomic lgp_ep_atomic_ops;

/* ---- send-type operations ------------------------------------------- */

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
/* The request an op_context names, or NULL if it is the application's. */
struct lgp_req *lgp_req_from_context(void *op_context);
/* Detaches every request from an endpoint that is going away. */
void lgp_req_forget_ep(struct lgp_ep *ep);

/*
 * Every send-type call on an active domain: spins o_s, paces through the
 * endpoint's port, then posts at once (nothing to wait for and nothing
 * queued ahead) or copies and defers the operation.  req describes the
 * call (its buffers are the caller's, valid during the call); it is
 * consumed.  Takes and releases the domain lock.
 */
ssize_t lgp_send_submit(struct lgp_ep *ep, struct lgp_req *req);

/* Posts a request to the real endpoint; lock held. */
ssize_t lgp_req_post(struct lgp_req *req);

/* A domain's engine ops: the core clock, lgp_req_post() to release. */
extern const struct lgp_eng_ops lgp_send_eng_ops;

/* The real CQ reported on a request the shim posted; lock held. */
void lgp_req_complete(struct lgp_cq *cq, struct lgp_req *req,
		      const struct fi_cq_tagged_entry *e,
		      const struct fi_cq_err_entry *err);

/* Counts a message on a pass-through (all knobs zero) endpoint. */
void lgp_ep_count(struct lgp_ep *ep, size_t len);

/* Bytes of one element of an atomic datatype, 0 for an unknown one. */
size_t lgp_atomic_size(enum fi_datatype dt);

/* ---- progress thread ------------------------------------------------- */

int lgp_progress_add(struct lgp_domain *dom);
void lgp_progress_del(struct lgp_domain *dom);
/*
 * Posts what every open domain still holds, waiting (up to a bound) for
 * release times and completions: a process that exits right after sending
 * still delivers what it sent, as a host whose NIC drains its queue.
 */
void lgp_progress_flush_all(void);
/* Stops the thread; libfabric is about to unload the provider. */
void lgp_progress_fini(void);
/*
 * A send deferred at now (the caller's clock reading, so the send path reads
 * the clock once) is due at release: keeps the thread ticking while the
 * process sends, and wakes it if release comes before it would look.
 */
void lgp_progress_kick(uint64_t release, uint64_t now);

/* ---- passive endpoint, event queue, address vector, memory region ---- */

int lgp_pep_open(struct lgp_fabric *fab, struct fi_info *info,
		 struct fid_pep **pep, void *context);
int lgp_eq_open(struct lgp_fabric *fab, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
int lgp_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);
int lgp_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
int lgp_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr, void *context);
int lgp_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		  struct fid_poll **pollset);
int lgp_mr_wrap(struct lgp_domain *dom, struct fid_mr *hmr, void *context,
		struct fid_mr **mr);
extern struct fi_ops_mr lgp_mr_ops;

struct lgp_pep {
	struct fid_pep pep;
	struct fid_pep *hpep;
};

struct lgp_eq {
	struct fid_eq eq;
	struct fid_eq *heq;
};

struct lgp_av {
	struct fid_av av;
	struct fid_av *hav;
	struct lgp_domain *dom;
};

struct lgp_mr {
	struct fid_mr mr;
	struct fid_mr *hmr;
};

/* Members of a poll or wait set whose completions the shim synthesises. */
#define LGP_SET_MAX	64

struct lgp_poll {
	struct fid_poll poll;
	struct fid_poll *hpoll;
	pthread_mutex_t lock;
	struct lgp_cq *cqs[LGP_SET_MAX];
	size_t ncqs;
};

struct lgp_wait {
	struct fid_wait wait;
	struct fid_wait *hwait;
	pthread_mutex_t lock;
	struct lgp_cq *cqs;	/* CQs opened on this wait set */
};

int lgp_wait_open(struct lgp_fabric *fab, struct fi_wait_attr *attr,
		  struct fid_wait **waitset);
void lgp_wait_add_cq(struct lgp_wait *w, struct lgp_cq *cq);
void lgp_wait_del_cq(struct lgp_wait *w, struct lgp_cq *cq);
/* Whether a member CQ holds a due synthesised completion. */
bool lgp_wait_set_ready(struct lgp_wait *w);

/* ---- fid translation ------------------------------------------------- */

extern struct fi_ops lgp_fabric_fi_ops, lgp_domain_fi_ops, lgp_ep_fi_ops,
	lgp_cq_fi_ops, lgp_cntr_fi_ops, lgp_av_fi_ops, lgp_eq_fi_ops,
	lgp_mr_fi_ops, lgp_pep_fi_ops, lgp_poll_fi_ops, lgp_wait_fi_ops;

#define lgp_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* The real object behind one of our wrappers; other fids are returned as is. */
struct fid *lgp_fid_real(struct fid *fid);
/* Our wrapper for a real fid we opened, or the fid itself. */
struct fid *lgp_fid_from_real(struct fid *hfid);
/* Records a wrapper for lgp_fid_from_real(); unregister before freeing. */
int lgp_fid_register(struct fid *wrapper, struct fid *real);
void lgp_fid_unregister(struct fid *real);

/* fi_ops shared by every wrapper: control/ops_open/tostr/ops_set forward. */
int lgp_fid_control(struct fid *fid, int command, void *arg);
int lgp_fid_ops_open(struct fid *fid, const char *name, uint64_t flags,
		     void **ops, void *context);
int lgp_fid_tostr(const struct fid *fid, char *buf, size_t len);
int lgp_fid_ops_set(struct fid *fid, const char *name, uint64_t flags,
		    void *ops, void *context);
int lgp_fid_bind(struct fid *fid, struct fid *bfid, uint64_t flags);

/*
 * An fi_info the application hands back may name objects it opened through
 * the shim: handle (a passive endpoint whose listening socket a new
 * endpoint takes over, a domain), domain_attr->domain and
 * fabric_attr->fabric.  The provider reads them as its own structures, so
 * they must be the real objects.  Returns info itself when it names no
 * wrapper, else a shallow copy in *copy with the real objects, valid while
 * copy and info are.
 */
struct lgp_info_copy {
	struct fi_info info;
	struct fi_domain_attr domain_attr;
	struct fi_fabric_attr fabric_attr;
};
struct fi_info *lgp_info_real(struct fi_info *info, struct lgp_info_copy *copy);

#endif /* LGP_FI_H */
