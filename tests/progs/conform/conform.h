/* SPDX-License-Identifier: MIT */
/*
 * fi_conform: libfabric API paths checked one case at a time, each in its
 * own process, so that a crash, a sanitizer report or a hang is pinned on
 * the case that caused it.  The same cases run on the bare provider and
 * beneath the shim; a case passes beneath the shim exactly when it passes
 * without it.
 *
 * A case returns CF_PASS, CF_SKIP (the provider lacks what it needs, e.g.
 * fi_getinfo finds no endpoint with FI_ATOMIC) or CF_FAIL, after
 * cf_why() said why.  Nothing needs closing on a failure (the process
 * ends); on a pass every object is closed, so leak checkers see the
 * shim's leaks and nothing else.
 */
#ifndef CONFORM_H
#define CONFORM_H

#include <stdbool.h>
#include <stddef.h>
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

enum { CF_PASS = 0, CF_SKIP = 1, CF_FAIL = 2 };

/* Bound of every wait inside a case; the runner's own bound is larger. */
#define CF_WAIT_NS	(10ULL * 1000000000ULL)
#define CF_BUF_LEN	4096

struct cf_case {
	const char *name;
	int (*run)(const char *prov);
};

/*
 * A case on an RDM and on a MSG endpoint: CF_EP_TYPES(x) defines
 * cf_case_x_rdm and cf_case_x_msg, which run cf_x(prov, type);
 * CF_EP_TYPE_CASES(x) names them "x_rdm" and "x_msg" in a case table.
 */
#define CF_EP_TYPES(name)						\
	static int cf_case_##name##_rdm(const char *prov)		\
	{								\
		return cf_##name(prov, FI_EP_RDM);			\
	}								\
	static int cf_case_##name##_msg(const char *prov)		\
	{								\
		return cf_##name(prov, FI_EP_MSG);			\
	}
#define CF_EP_TYPE_CASES(name)						\
	{ #name "_rdm", cf_case_##name##_rdm },				\
	{ #name "_msg", cf_case_##name##_msg }

/* Each file's cases, NULL-name terminated. */
extern const struct cf_case cf_msg_cases[], cf_rma_cases[], cf_av_cases[],
	cf_wait_cases[], cf_life_cases[], cf_select_cases[], cf_signal_cases[],
	cf_event_cases[];

/* Records why the case ends (first call wins); returns CF_FAIL. */
int cf_why(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Records a skip's reason; returns CF_SKIP. */
int cf_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define CF_CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			return cf_why(__VA_ARGS__);			\
	} while (0)

/* A libfabric call that must return 0. */
#define CF_OK(call)							\
	do {								\
		long cf_ret_ = (long) (call);				\
		if (cf_ret_)						\
			return cf_why("%s:%d: %s: %s", __FILE__, __LINE__, \
				      #call, fi_strerror((int) -cf_ret_)); \
	} while (0)

uint64_t cf_now_ns(void);

/* ---- a connected pair of endpoints in one process -------------------- */

struct cf_pair_attr {
	enum fi_ep_type type;		/* FI_EP_RDM or FI_EP_MSG */
	uint64_t caps;			/* beyond FI_MSG */
	enum fi_cq_format format;	/* 0: FI_CQ_FORMAT_DATA */
	enum fi_wait_obj wait_obj;	/* the CQs' wait object */
	struct fid_wait *wait_set;	/* with FI_WAIT_SET */
	bool cntrs;			/* send and receive counters too */
	uint64_t cq_flags;		/* more flags of the CQs' bind, e.g.
					   FI_SELECTIVE_COMPLETION */
	bool rma_cntr;			/* a counter of remote writes too */
};

struct cf_side {
	struct fid_ep *ep;
	struct fid_cq *cq;		/* transmit and receive */
	struct fid_cntr *tx_cntr, *rx_cntr;
	struct fid_cntr *rma_cntr;	/* remote writes (attr.rma_cntr) */
	struct fid_av *av;		/* RDM */
	fi_addr_t peer;			/* RDM: the other side's address */
	struct fid_mr *mr;		/* over buf */
	void *desc;
	uint64_t key;			/* the peer's key to reach buf */
	uint64_t raddr;			/* the peer's address of buf */
	char buf[CF_BUF_LEN];
	char addr[256];
	size_t addrlen;
};

struct cf_pair {
	struct cf_pair_attr attr;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;		/* MSG connection management */
	struct fid_pep *pep;
	struct cf_side a, b;		/* a sends, b receives, or both ways */
	struct cf_side c;		/* a third endpoint some cases open;
					   progressed and closed with a, b */
};

/*
 * Fabric, domain, CQs, the two endpoints and their connection: by an AV
 * holding each other's address (RDM), or a passive endpoint's accept of
 * a's connect (MSG, the accepted endpoint being b).  CF_SKIP when the
 * provider offers no such endpoint.
 */
int cf_pair_open(struct cf_pair *p, const char *prov,
		 const struct cf_pair_attr *attr);
int cf_pair_close(struct cf_pair *p);

/* The fi_info hints cf_pair_open uses; free with fi_freeinfo. */
struct fi_info *cf_hints(const char *prov, const struct cf_pair_attr *attr);

/* Steps of cf_pair_open, for cases that build a pair their own way. */
int cf_pair_domain(struct cf_pair *p, const char *prov,
		   const struct cf_pair_attr *attr);
int cf_side_open(struct cf_pair *p, struct cf_side *s, struct fi_info *info);
int cf_side_enable(struct cf_pair *p, struct cf_side *s);
int cf_side_close(struct cf_side *s);

/* The peer's address of s's buffer for RMA and atomics. */
void *cf_remote(const struct cf_pair *p, const struct cf_side *s);

/*
 * Reads one completion from cq, progressing the other side's CQ as it
 * waits; fails with "what" named when CF_WAIT_NS pass or an error entry
 * comes.  entry may be NULL.
 */
int cf_cq_wait(struct cf_pair *p, struct fid_cq *cq,
	       struct fi_cq_data_entry *entry, const char *what);
/* cf_cq_wait for CQs of FI_CQ_FORMAT_TAGGED. */
int cf_cq_wait_tagged(struct cf_pair *p, struct fid_cq *cq,
		      struct fi_cq_tagged_entry *entry, const char *what);
/*
 * Like cf_cq_wait, but the entry must be an error: its errno in *err,
 * its context in *ctx (ctx may be NULL).
 */
int cf_cq_wait_err(struct cf_pair *p, struct fid_cq *cq, int *err,
		   void **ctx, const char *what);
/* Progresses both CQs until cntr reaches value. */
int cf_cntr_wait(struct cf_pair *p, struct fid_cntr *cntr, uint64_t value,
		 const char *what);
/* Progresses every side's CQ once (entries are left alone). */
void cf_progress(struct cf_pair *p);
/* A posting call retried while it returns -FI_EAGAIN, bounded. */
#define CF_POST(p, call)						\
	do {								\
		uint64_t cf_dl_ = cf_now_ns() + CF_WAIT_NS;		\
		long cf_r_;						\
		while ((cf_r_ = (long) (call)) == -FI_EAGAIN &&		\
		       cf_now_ns() < cf_dl_)				\
			cf_progress(p);					\
		if (cf_r_)						\
			return cf_why("%s:%d: %s: %s", __FILE__, __LINE__, \
				      #call, fi_strerror((int) -cf_r_)); \
	} while (0)

/*
 * A burst: "to" posts n receives of len bytes, a sends n messages
 * (patterns seed, seed + 1, ...) to a.peer and reads their n completions.
 * cf_burst_recv then reads to's completions and checks every message.
 */
int cf_burst_send(struct cf_pair *p, struct cf_side *to, int n, size_t len,
		  unsigned seed);
int cf_burst_recv(struct cf_pair *p, struct cf_side *to, int n, size_t len,
		  unsigned seed);

/* Fills buf with a pattern of seed; checks it. */
void cf_fill(void *buf, size_t len, unsigned seed);
bool cf_check(const void *buf, size_t len, unsigned seed);

#endif /* CONFORM_H */
