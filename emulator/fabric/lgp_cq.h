/* SPDX-License-Identifier: MIT */
/*
 * Completion queue wrapper (lgp_cq.c).  While delays are active a read
 * merges the completions the shim synthesised with the real CQ's entries,
 * minus those of the shim's own posts, and spends o_r per receive.
 */
#ifndef LGP_CQ_H
#define LGP_CQ_H

#include <stdbool.h>
#include <stdint.h>

#include <rdma/fi_eq.h>

#include <lgp/dqueue.h>

struct lgp_domain;
struct lgp_wait;

/* Synthesised completions one CQ can hold. */
#define LGP_CQ_QUEUE_DEPTH	65536

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
	 * The application called fi_cq_signal and no fi_cq_sread has
	 * returned for it yet.  The shim signals the real CQ too (above),
	 * and its sread is a loop of real reads: the real CQ's own flag is
	 * taken by whichever real read comes first, so the application's
	 * is kept here, for the sread it must cut short.
	 */
	bool app_signal;
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

extern struct fi_ops lgp_cq_fi_ops;

int lgp_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);

/* Bytes of one completion entry in a format (CONTEXT..TAGGED). */
size_t lgp_cq_entry_size(enum fi_cq_format format);

/*
 * Whether the CQ holds a synthesised completion that is due: a poll set,
 * wait set or fi_trywait must report it as the provider reports its own.
 * Releases what is due in the domain first.  *next (if not NULL) is the
 * earliest synthesised completion, UINT64_MAX for none.  Takes the domain
 * lock.
 */
bool lgp_cq_ready(struct lgp_cq *cq, uint64_t *next);

/*
 * Whether the application's read would return something: a due
 * synthesised completion or an error.  The real CQ is drained first
 * (lgp_cq_drain), since what it holds may be only the shim's own
 * completions, which no read returns.  For poll sets, which must report
 * a CQ only when it has something (fi_poll).  Takes the domain lock.
 */
bool lgp_cq_has_news(struct lgp_cq *cq);

/*
 * Reads the real CQ until it is empty, consuming the shim's completions and
 * keeping the application's for its next read; lock held.  Used when an
 * endpoint closes and must see its deferred sends complete.
 */
void lgp_cq_drain(struct lgp_cq *cq);

/*
 * Queue a synthesised completion of the request op_context (a struct
 * lgp_req) for time release; lock held.  Returns 0 or -FI_EAGAIN.
 */
int lgp_cq_synth(struct lgp_cq *cq, uint64_t release, void *op_context,
		 uint64_t flags, size_t len, void *buf, uint64_t data,
		 uint64_t tag);

#endif /* LGP_CQ_H */
