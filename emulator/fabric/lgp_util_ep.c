/* SPDX-License-Identifier: MIT */
/*
 * o_s at a utility provider's endpoint (lgp_util.h says why): every
 * send-type op of the utility's endpoint spins Δo_s, then calls the
 * utility's own; the core domain beneath charges none.
 *
 * As for the utility's CQs (lgp_util.c), the endpoint stays the
 * provider's: its msg, tagged, rma and atomic pointers are pointed at
 * copies of the provider's tables with the send-type entries replaced,
 * allocated beside the original pointers, so a call finds its state from
 * the ops pointer alone.  A provider that points its endpoint at other
 * tables when it is enabled gets copies of those instead.
 */
#include <stdbool.h>
#include <stdlib.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "lgp_config.h"
#include "lgp_domain.h"
#include "lgp_engine.h"
#include "lgp_fid.h"
#include "lgp_util.h"

struct lgp_util_ep {
	struct fi_ops_msg msg;
	struct fi_ops_tagged tagged;
	struct fi_ops_rma rma;
	struct fi_ops_atomic atomic;
	struct fi_ops fid_ops;
	const struct fi_ops_msg *orig_msg;
	const struct fi_ops_tagged *orig_tagged;
	const struct fi_ops_rma *orig_rma;
	const struct fi_ops_atomic *orig_atomic;
	const struct fi_ops *orig_fid;
	struct lgp_domain *core;
};

/* A wrapper of one send-type op of table tbl: spins o_s, then forwards. */
#define LGP_UTIL_OP(tbl, name, params, args)				\
	static ssize_t lgp_util_##tbl##_##name params			\
	{								\
		struct lgp_util_ep *u = lgp_container_of(ep->tbl,	\
			struct lgp_util_ep, tbl);			\
									\
		lgp_eng_send_overhead(&u->core->eng);			\
		return u->orig_##tbl->name args;			\
	}

LGP_UTIL_OP(msg, send, (struct fid_ep *ep, const void *buf, size_t len,
			void *desc, fi_addr_t dest, void *ctx),
	    (ep, buf, len, desc, dest, ctx))
LGP_UTIL_OP(msg, sendv, (struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest, void *ctx),
	    (ep, iov, desc, count, dest, ctx))
LGP_UTIL_OP(msg, sendmsg, (struct fid_ep *ep, const struct fi_msg *m,
			   uint64_t flags),
	    (ep, m, flags))
LGP_UTIL_OP(msg, inject, (struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest),
	    (ep, buf, len, dest))
LGP_UTIL_OP(msg, senddata, (struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest,
			    void *ctx),
	    (ep, buf, len, desc, data, dest, ctx))
LGP_UTIL_OP(msg, injectdata, (struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest),
	    (ep, buf, len, data, dest))

LGP_UTIL_OP(tagged, send, (struct fid_ep *ep, const void *buf, size_t len,
			   void *desc, fi_addr_t dest, uint64_t tag,
			   void *ctx),
	    (ep, buf, len, desc, dest, tag, ctx))
LGP_UTIL_OP(tagged, sendv, (struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t dest,
			    uint64_t tag, void *ctx),
	    (ep, iov, desc, count, dest, tag, ctx))
LGP_UTIL_OP(tagged, sendmsg, (struct fid_ep *ep,
			      const struct fi_msg_tagged *m, uint64_t flags),
	    (ep, m, flags))
LGP_UTIL_OP(tagged, inject, (struct fid_ep *ep, const void *buf, size_t len,
			     fi_addr_t dest, uint64_t tag),
	    (ep, buf, len, dest, tag))
LGP_UTIL_OP(tagged, senddata, (struct fid_ep *ep, const void *buf, size_t len,
			       void *desc, uint64_t data, fi_addr_t dest,
			       uint64_t tag, void *ctx),
	    (ep, buf, len, desc, data, dest, tag, ctx))
LGP_UTIL_OP(tagged, injectdata, (struct fid_ep *ep, const void *buf,
				 size_t len, uint64_t data, fi_addr_t dest,
				 uint64_t tag),
	    (ep, buf, len, data, dest, tag))

LGP_UTIL_OP(rma, read, (struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src, uint64_t addr, uint64_t key, void *ctx),
	    (ep, buf, len, desc, src, addr, key, ctx))
LGP_UTIL_OP(rma, readv, (struct fid_ep *ep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 uint64_t addr, uint64_t key, void *ctx),
	    (ep, iov, desc, count, src, addr, key, ctx))
LGP_UTIL_OP(rma, readmsg, (struct fid_ep *ep, const struct fi_msg_rma *m,
			   uint64_t flags),
	    (ep, m, flags))
LGP_UTIL_OP(rma, write, (struct fid_ep *ep, const void *buf, size_t len,
			 void *desc, fi_addr_t dest, uint64_t addr,
			 uint64_t key, void *ctx),
	    (ep, buf, len, desc, dest, addr, key, ctx))
LGP_UTIL_OP(rma, writev, (struct fid_ep *ep, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t dest,
			  uint64_t addr, uint64_t key, void *ctx),
	    (ep, iov, desc, count, dest, addr, key, ctx))
LGP_UTIL_OP(rma, writemsg, (struct fid_ep *ep, const struct fi_msg_rma *m,
			    uint64_t flags),
	    (ep, m, flags))
LGP_UTIL_OP(rma, inject, (struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest, uint64_t addr, uint64_t key),
	    (ep, buf, len, dest, addr, key))
LGP_UTIL_OP(rma, writedata, (struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, uint64_t data, fi_addr_t dest,
			     uint64_t addr, uint64_t key, void *ctx),
	    (ep, buf, len, desc, data, dest, addr, key, ctx))
LGP_UTIL_OP(rma, injectdata, (struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest, uint64_t addr,
			      uint64_t key),
	    (ep, buf, len, data, dest, addr, key))

LGP_UTIL_OP(atomic, write, (struct fid_ep *ep, const void *buf, size_t count,
			    void *desc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, enum fi_datatype dt, enum fi_op op,
			    void *ctx),
	    (ep, buf, count, desc, dest, addr, key, dt, op, ctx))
LGP_UTIL_OP(atomic, writev, (struct fid_ep *ep, const struct fi_ioc *iov,
			     void **desc, size_t count, fi_addr_t dest,
			     uint64_t addr, uint64_t key, enum fi_datatype dt,
			     enum fi_op op, void *ctx),
	    (ep, iov, desc, count, dest, addr, key, dt, op, ctx))
LGP_UTIL_OP(atomic, writemsg, (struct fid_ep *ep,
			       const struct fi_msg_atomic *m, uint64_t flags),
	    (ep, m, flags))
LGP_UTIL_OP(atomic, inject, (struct fid_ep *ep, const void *buf, size_t count,
			     fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype dt, enum fi_op op),
	    (ep, buf, count, dest, addr, key, dt, op))
LGP_UTIL_OP(atomic, readwrite, (struct fid_ep *ep, const void *buf,
				size_t count, void *desc, void *res,
				void *res_desc, fi_addr_t dest, uint64_t addr,
				uint64_t key, enum fi_datatype dt,
				enum fi_op op, void *ctx),
	    (ep, buf, count, desc, res, res_desc, dest, addr, key, dt, op, ctx))
LGP_UTIL_OP(atomic, readwritev, (struct fid_ep *ep, const struct fi_ioc *iov,
				 void **desc, size_t count,
				 struct fi_ioc *resv, void **res_desc,
				 size_t res_count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype dt, enum fi_op op, void *ctx),
	    (ep, iov, desc, count, resv, res_desc, res_count, dest, addr, key,
	     dt, op, ctx))
LGP_UTIL_OP(atomic, readwritemsg, (struct fid_ep *ep,
				   const struct fi_msg_atomic *m,
				   struct fi_ioc *resv, void **res_desc,
				   size_t res_count, uint64_t flags),
	    (ep, m, resv, res_desc, res_count, flags))
LGP_UTIL_OP(atomic, compwrite, (struct fid_ep *ep, const void *buf,
				size_t count, void *desc, const void *cmp,
				void *cmp_desc, void *res, void *res_desc,
				fi_addr_t dest, uint64_t addr, uint64_t key,
				enum fi_datatype dt, enum fi_op op, void *ctx),
	    (ep, buf, count, desc, cmp, cmp_desc, res, res_desc, dest, addr,
	     key, dt, op, ctx))
LGP_UTIL_OP(atomic, compwritev, (struct fid_ep *ep, const struct fi_ioc *iov,
				 void **desc, size_t count,
				 const struct fi_ioc *cmpv, void **cmp_desc,
				 size_t cmp_count, struct fi_ioc *resv,
				 void **res_desc, size_t res_count,
				 fi_addr_t dest, uint64_t addr, uint64_t key,
				 enum fi_datatype dt, enum fi_op op, void *ctx),
	    (ep, iov, desc, count, cmpv, cmp_desc, cmp_count, resv, res_desc,
	     res_count, dest, addr, key, dt, op, ctx))
LGP_UTIL_OP(atomic, compwritemsg, (struct fid_ep *ep,
				   const struct fi_msg_atomic *m,
				   const struct fi_ioc *cmpv, void **cmp_desc,
				   size_t cmp_count, struct fi_ioc *resv,
				   void **res_desc, size_t res_count,
				   uint64_t flags),
	    (ep, m, cmpv, cmp_desc, cmp_count, resv, res_desc, res_count,
	     flags))

/* Sets an entry the provider has to its wrapper. */
#define LGP_UTIL_SET(u, tbl, name)					\
	do {								\
		if ((u)->tbl.name)					\
			(u)->tbl.name = lgp_util_##tbl##_##name;	\
	} while (0)

/*
 * Whether ep's table tbl exists and is not ours yet; if so it is copied,
 * kept as the original and replaced by the copy.
 */
#define LGP_UTIL_TAKE(u, ep, tbl)					\
	((ep)->tbl && (ep)->tbl != &(u)->tbl &&				\
	 ((u)->orig_##tbl = (ep)->tbl,					\
	  lgp_util_copy(&(u)->tbl, (ep)->tbl, sizeof((u)->tbl)),	\
	  (ep)->tbl = &(u)->tbl, true))

/* Points the endpoint's tables that are not ours yet at wrapped copies. */
static void lgp_util_ep_install(struct lgp_util_ep *u, struct fid_ep *ep)
{
	if (LGP_UTIL_TAKE(u, ep, msg)) {
		LGP_UTIL_SET(u, msg, send);
		LGP_UTIL_SET(u, msg, sendv);
		LGP_UTIL_SET(u, msg, sendmsg);
		LGP_UTIL_SET(u, msg, inject);
		LGP_UTIL_SET(u, msg, senddata);
		LGP_UTIL_SET(u, msg, injectdata);
	}
	if (LGP_UTIL_TAKE(u, ep, tagged)) {
		LGP_UTIL_SET(u, tagged, send);
		LGP_UTIL_SET(u, tagged, sendv);
		LGP_UTIL_SET(u, tagged, sendmsg);
		LGP_UTIL_SET(u, tagged, inject);
		LGP_UTIL_SET(u, tagged, senddata);
		LGP_UTIL_SET(u, tagged, injectdata);
	}
	if (LGP_UTIL_TAKE(u, ep, rma)) {
		LGP_UTIL_SET(u, rma, read);
		LGP_UTIL_SET(u, rma, readv);
		LGP_UTIL_SET(u, rma, readmsg);
		LGP_UTIL_SET(u, rma, write);
		LGP_UTIL_SET(u, rma, writev);
		LGP_UTIL_SET(u, rma, writemsg);
		LGP_UTIL_SET(u, rma, inject);
		LGP_UTIL_SET(u, rma, writedata);
		LGP_UTIL_SET(u, rma, injectdata);
	}
	if (LGP_UTIL_TAKE(u, ep, atomic)) {
		LGP_UTIL_SET(u, atomic, write);
		LGP_UTIL_SET(u, atomic, writev);
		LGP_UTIL_SET(u, atomic, writemsg);
		LGP_UTIL_SET(u, atomic, inject);
		LGP_UTIL_SET(u, atomic, readwrite);
		LGP_UTIL_SET(u, atomic, readwritev);
		LGP_UTIL_SET(u, atomic, readwritemsg);
		LGP_UTIL_SET(u, atomic, compwrite);
		LGP_UTIL_SET(u, atomic, compwritev);
		LGP_UTIL_SET(u, atomic, compwritemsg);
	}
}

static struct lgp_util_ep *lgp_util_ep_of(struct fid *fid)
{
	return lgp_container_of(fid->ops, struct lgp_util_ep, fid_ops);
}

/* A provider may point the endpoint at other tables as it is enabled. */
static int lgp_util_ep_control(struct fid *fid, int command, void *arg)
{
	struct lgp_util_ep *u = lgp_util_ep_of(fid);
	int ret = u->orig_fid->control(fid, command, arg);

	if (!ret && command == FI_ENABLE)
		lgp_util_ep_install(u, lgp_container_of(fid, struct fid_ep, fid));
	return ret;
}

static int lgp_util_ep_close(struct fid *fid)
{
	struct lgp_util_ep *u = lgp_util_ep_of(fid);
	int ret = u->orig_fid->close(fid);

	if (!ret)
		free(u);
	return ret;
}

int lgp_util_ep_wrap(struct lgp_domain *core, struct fid_ep *ep)
{
	struct lgp_util_ep *u;

	if (!lgp_config_get()->peak.send_overhead_ns)
		return 0;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -FI_ENOMEM;
	u->core = core;
	u->orig_fid = ep->fid.ops;
	lgp_util_copy(&u->fid_ops, u->orig_fid, sizeof(u->fid_ops));
	u->fid_ops.close = lgp_util_ep_close;
	if (u->fid_ops.control)
		u->fid_ops.control = lgp_util_ep_control;
	lgp_util_ep_install(u, ep);
	ep->fid.ops = &u->fid_ops;
	return 0;
}
