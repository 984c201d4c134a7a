/* SPDX-License-Identifier: MIT */
/*
 * The send path (lgp_send.c): what the shim does with the delay engine's
 * verdicts (lgp_engine.h) on libfabric objects: copies, posts, and the
 * completions of its own posts.
 */
#ifndef LGP_SEND_H
#define LGP_SEND_H

#include <stddef.h>
#include <sys/types.h>

#include <rdma/fi_eq.h>

#include "lgp_engine.h"

struct lgp_cq;
struct lgp_ep;
struct lgp_req;

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

/* The real CQ reported on a request the shim posted; lock held. */
void lgp_req_complete(struct lgp_cq *cq, struct lgp_req *req,
		      const struct fi_cq_tagged_entry *e,
		      const struct fi_cq_err_entry *err);

/* A domain's engine ops: the core clock, lgp_req_post() to release. */
extern const struct lgp_eng_ops lgp_send_eng_ops;

/* Counts a message on a pass-through (all knobs zero) endpoint. */
void lgp_ep_count(struct lgp_ep *ep, size_t len);

#endif /* LGP_SEND_H */
