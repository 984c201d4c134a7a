/* SPDX-License-Identifier: MIT */
/*
 * Atomic ops of a wrapped endpoint.  Delays apply as to RMA: a plain atomic
 * is copied and deferred like a write; fetching and compare atomics are
 * deferred like reads, their result arriving L + n*G after the real
 * completion.  Every form becomes one message of all its elements; while
 * delays are active the vectors kept by reference hold up to
 * LGP_REQ_IOV_MAX elements each (lgp_send_submit refuses longer ones).
 */
#include "lgp_domain.h"
#include "lgp_ep.h"
#include "lgp_fid.h"
#include "lgp_req.h"
#include "lgp_send.h"

static struct lgp_ep *lgp_ep_of(struct fid_ep *ep)
{
	return lgp_container_of(ep, struct lgp_ep, ep);
}

size_t lgp_atomic_size(enum fi_datatype dt)
{
	switch (dt) {
	case FI_INT8: case FI_UINT8:
		return 1;
	case FI_INT16: case FI_UINT16:
		return 2;
	case FI_INT32: case FI_UINT32: case FI_FLOAT:
		return 4;
	case FI_INT64: case FI_UINT64: case FI_DOUBLE: case FI_FLOAT_COMPLEX:
		return 8;
	case FI_DOUBLE_COMPLEX: case FI_LONG_DOUBLE: case FI_INT128:
	case FI_UINT128:
		return 16;
	case FI_LONG_DOUBLE_COMPLEX:
		return 32;
	default:
		return 0;
	}
}

/* Elements of an fi_ioc vector. */
static size_t lgp_ioc_count(const struct fi_ioc *ioc, size_t count)
{
	size_t i, n = 0;

	for (i = 0; i < count; i++)
		n += ioc[i].count;
	return n;
}

/*
 * Bytes an atomic carries: its operands', or, for an operation without
 * operand (FI_ATOMIC_READ), its results'.
 */
static size_t lgp_atomic_len(const struct fi_ioc *ioc, size_t count,
			     const struct fi_ioc *res, size_t res_count,
			     enum fi_datatype dt)
{
	return (count ? lgp_ioc_count(ioc, count) :
			lgp_ioc_count(res, res_count)) * lgp_atomic_size(dt);
}

/* The vectors of a fetching atomic beyond its fi_msg_atomic. */
struct lgp_atomic_ret {
	const struct fi_ioc *cmp;
	void **cmp_desc;
	size_t cmp_count;
	struct fi_ioc *res;
	void **res_desc;
	size_t res_count;
};

/*
 * Every atomic entry point while delays are active: the call as a message
 * (the single-buffer forms' vectors on their stack, valid during the call).
 */
static ssize_t lgp_atomic_submit(struct lgp_ep *ep, enum lgp_op_kind kind,
				 const struct fi_msg_atomic *msg,
				 const struct lgp_atomic_ret *r,
				 uint64_t flags, bool inject)
{
	struct lgp_req req = {
		.ep = ep, .kind = kind, .inject_call = inject,
		.want_cqe = !inject &&
			    (!ep->tx_selective || (flags & FI_COMPLETION)),
		.app_context = msg->context, .flags = flags,
		.len = lgp_atomic_len(msg->msg_iov, msg->iov_count,
				      r ? r->res : NULL, r ? r->res_count : 0,
				      msg->datatype),
		.ioc = msg->msg_iov, .desc = msg->desc,
		.count = msg->iov_count,
		.rma_ioc = msg->rma_iov, .rma_count = msg->rma_iov_count,
		.addr = msg->addr, .data = msg->data,
		.datatype = msg->datatype, .op = msg->op,
	};

	if (r) {
		req.cmp = r->cmp;
		req.cmp_desc = r->cmp_desc;
		req.cmp_count = r->cmp_count;
		req.res = r->res;
		req.res_desc = r->res_desc;
		req.res_count = r->res_count;
	}
	return lgp_send_submit(ep, &req);
}

static ssize_t lgp_atomic_write(struct fid_ep *fep, const void *buf,
				size_t count, void *desc, fi_addr_t dest,
				uint64_t addr, uint64_t key,
				enum fi_datatype datatype, enum fi_op op,
				void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct fi_ioc ioc = { (void *) buf, count };
	struct fi_rma_ioc rma = { addr, count, key };

	if (!ep->dom->active) {
		lgp_ep_count(ep, count * lgp_atomic_size(datatype));
		return fi_atomic(ep->hep, buf, count, desc, dest, addr, key,
				 datatype, op, context);
	}
	return lgp_atomic_submit(ep, LGP_OP_ATOMIC, &(struct fi_msg_atomic) {
		.msg_iov = &ioc, .desc = &desc, .iov_count = 1, .addr = dest,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = datatype,
		.op = op, .context = context }, NULL, ep->tx_op_flags, false);
}

static ssize_t lgp_atomic_writev(struct fid_ep *fep, const struct fi_ioc *iov,
				 void **desc, size_t count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct fi_rma_ioc rma = { addr, lgp_ioc_count(iov, count), key };

	if (!ep->dom->active) {
		lgp_ep_count(ep, rma.count * lgp_atomic_size(datatype));
		return fi_atomicv(ep->hep, iov, desc, count, dest, addr, key,
				  datatype, op, context);
	}
	return lgp_atomic_submit(ep, LGP_OP_ATOMIC, &(struct fi_msg_atomic) {
		.msg_iov = iov, .desc = desc, .iov_count = count, .addr = dest,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = datatype,
		.op = op, .context = context }, NULL, ep->tx_op_flags, false);
}

static ssize_t lgp_atomic_writemsg(struct fid_ep *fep,
				   const struct fi_msg_atomic *msg,
				   uint64_t flags)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, lgp_atomic_len(msg->msg_iov, msg->iov_count,
						 NULL, 0, msg->datatype));
		return fi_atomicmsg(ep->hep, msg, flags);
	}
	return lgp_atomic_submit(ep, LGP_OP_ATOMIC, msg, NULL, flags, false);
}

static ssize_t lgp_atomic_inject(struct fid_ep *fep, const void *buf,
				 size_t count, fi_addr_t dest, uint64_t addr,
				 uint64_t key, enum fi_datatype datatype,
				 enum fi_op op)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct fi_ioc ioc = { (void *) buf, count };
	struct fi_rma_ioc rma = { addr, count, key };

	if (!ep->dom->active) {
		lgp_ep_count(ep, count * lgp_atomic_size(datatype));
		return fi_inject_atomic(ep->hep, buf, count, dest, addr, key,
					datatype, op);
	}
	return lgp_atomic_submit(ep, LGP_OP_ATOMIC, &(struct fi_msg_atomic) {
		.msg_iov = &ioc, .iov_count = 1, .addr = dest, .rma_iov = &rma,
		.rma_iov_count = 1, .datatype = datatype, .op = op },
		NULL, FI_INJECT, true);
}

static ssize_t lgp_atomic_readwrite(struct fid_ep *fep, const void *buf,
				    size_t count, void *desc, void *result,
				    void *result_desc, fi_addr_t dest,
				    uint64_t addr, uint64_t key,
				    enum fi_datatype datatype, enum fi_op op,
				    void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct fi_ioc ioc = { (void *) buf, count }, res = { result, count };
	struct fi_rma_ioc rma = { addr, count, key };

	if (!ep->dom->active) {
		lgp_ep_count(ep, count * lgp_atomic_size(datatype));
		return fi_fetch_atomic(ep->hep, buf, count, desc, result,
				       result_desc, dest, addr, key, datatype,
				       op, context);
	}
	return lgp_atomic_submit(ep, LGP_OP_FETCH_ATOMIC, &(struct fi_msg_atomic) {
		.msg_iov = &ioc, .desc = &desc, .iov_count = 1, .addr = dest,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = datatype,
		.op = op, .context = context }, &(struct lgp_atomic_ret) {
		.res = &res, .res_desc = &result_desc, .res_count = 1 },
		ep->tx_op_flags, false);
}

static ssize_t lgp_atomic_readwritev(struct fid_ep *fep, const struct fi_ioc *iov,
				     void **desc, size_t count,
				     struct fi_ioc *resultv, void **result_desc,
				     size_t result_count, fi_addr_t dest,
				     uint64_t addr, uint64_t key,
				     enum fi_datatype datatype, enum fi_op op,
				     void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct fi_rma_ioc rma = {
		addr, lgp_ioc_count(resultv, result_count), key,
	};

	if (!ep->dom->active) {
		lgp_ep_count(ep, rma.count * lgp_atomic_size(datatype));
		return fi_fetch_atomicv(ep->hep, iov, desc, count, resultv,
					result_desc, result_count, dest, addr,
					key, datatype, op, context);
	}
	return lgp_atomic_submit(ep, LGP_OP_FETCH_ATOMIC, &(struct fi_msg_atomic) {
		.msg_iov = iov, .desc = desc, .iov_count = count, .addr = dest,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = datatype,
		.op = op, .context = context }, &(struct lgp_atomic_ret) {
		.res = resultv, .res_desc = result_desc,
		.res_count = result_count }, ep->tx_op_flags, false);
}

static ssize_t lgp_atomic_readwritemsg(struct fid_ep *fep,
				       const struct fi_msg_atomic *msg,
				       struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       uint64_t flags)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, lgp_ioc_count(resultv, result_count) *
				 lgp_atomic_size(msg->datatype));
		return fi_fetch_atomicmsg(ep->hep, msg, resultv, result_desc,
					  result_count, flags);
	}
	return lgp_atomic_submit(ep, LGP_OP_FETCH_ATOMIC, msg,
				 &(struct lgp_atomic_ret) {
		.res = resultv, .res_desc = result_desc,
		.res_count = result_count }, flags, false);
}

static ssize_t lgp_atomic_compwrite(struct fid_ep *fep, const void *buf,
				    size_t count, void *desc,
				    const void *compare, void *compare_desc,
				    void *result, void *result_desc,
				    fi_addr_t dest, uint64_t addr, uint64_t key,
				    enum fi_datatype datatype, enum fi_op op,
				    void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct fi_ioc ioc = { (void *) buf, count };
	struct fi_ioc cmp = { (void *) compare, count }, res = { result, count };
	struct fi_rma_ioc rma = { addr, count, key };

	if (!ep->dom->active) {
		lgp_ep_count(ep, count * lgp_atomic_size(datatype));
		return fi_compare_atomic(ep->hep, buf, count, desc, compare,
					 compare_desc, result, result_desc,
					 dest, addr, key, datatype, op, context);
	}
	return lgp_atomic_submit(ep, LGP_OP_COMPARE_ATOMIC,
				 &(struct fi_msg_atomic) {
		.msg_iov = &ioc, .desc = &desc, .iov_count = 1, .addr = dest,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = datatype,
		.op = op, .context = context }, &(struct lgp_atomic_ret) {
		.cmp = &cmp, .cmp_desc = &compare_desc, .cmp_count = 1,
		.res = &res, .res_desc = &result_desc, .res_count = 1 },
		ep->tx_op_flags, false);
}

static ssize_t lgp_atomic_compwritev(struct fid_ep *fep,
				     const struct fi_ioc *iov, void **desc,
				     size_t count, const struct fi_ioc *comparev,
				     void **compare_desc, size_t compare_count,
				     struct fi_ioc *resultv, void **result_desc,
				     size_t result_count, fi_addr_t dest,
				     uint64_t addr, uint64_t key,
				     enum fi_datatype datatype, enum fi_op op,
				     void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct fi_rma_ioc rma = { addr, lgp_ioc_count(iov, count), key };

	if (!ep->dom->active) {
		lgp_ep_count(ep, rma.count * lgp_atomic_size(datatype));
		return fi_compare_atomicv(ep->hep, iov, desc, count, comparev,
					  compare_desc, compare_count, resultv,
					  result_desc, result_count, dest, addr,
					  key, datatype, op, context);
	}
	return lgp_atomic_submit(ep, LGP_OP_COMPARE_ATOMIC,
				 &(struct fi_msg_atomic) {
		.msg_iov = iov, .desc = desc, .iov_count = count, .addr = dest,
		.rma_iov = &rma, .rma_iov_count = 1, .datatype = datatype,
		.op = op, .context = context }, &(struct lgp_atomic_ret) {
		.cmp = comparev, .cmp_desc = compare_desc,
		.cmp_count = compare_count, .res = resultv,
		.res_desc = result_desc, .res_count = result_count },
		ep->tx_op_flags, false);
}

static ssize_t lgp_atomic_compwritemsg(struct fid_ep *fep,
				       const struct fi_msg_atomic *msg,
				       const struct fi_ioc *comparev,
				       void **compare_desc, size_t compare_count,
				       struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       uint64_t flags)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, lgp_atomic_len(msg->msg_iov, msg->iov_count,
						 NULL, 0, msg->datatype));
		return fi_compare_atomicmsg(ep->hep, msg, comparev, compare_desc,
					    compare_count, resultv, result_desc,
					    result_count, flags);
	}
	return lgp_atomic_submit(ep, LGP_OP_COMPARE_ATOMIC, msg,
				 &(struct lgp_atomic_ret) {
		.cmp = comparev, .cmp_desc = compare_desc,
		.cmp_count = compare_count, .res = resultv,
		.res_desc = result_desc, .res_count = result_count },
		flags, false);
}

static int lgp_atomic_writevalid(struct fid_ep *fep, enum fi_datatype datatype,
				 enum fi_op op, size_t *count)
{
	return fi_atomicvalid(lgp_ep_of(fep)->hep, datatype, op, count);
}

static int lgp_atomic_readwritevalid(struct fid_ep *fep,
				     enum fi_datatype datatype, enum fi_op op,
				     size_t *count)
{
	return fi_fetch_atomicvalid(lgp_ep_of(fep)->hep, datatype, op, count);
}

static int lgp_atomic_compwritevalid(struct fid_ep *fep,
				     enum fi_datatype datatype, enum fi_op op,
				     size_t *count)
{
	return fi_compare_atomicvalid(lgp_ep_of(fep)->hep, datatype, op, count);
}

struct fi_ops_atomic lgp_ep_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = lgp_atomic_write,
	.writev = lgp_atomic_writev,
	.writemsg = lgp_atomic_writemsg,
	.inject = lgp_atomic_inject,
	.readwrite = lgp_atomic_readwrite,
	.readwritev = lgp_atomic_readwritev,
	.readwritemsg = lgp_atomic_readwritemsg,
	.compwrite = lgp_atomic_compwrite,
	.compwritev = lgp_atomic_compwritev,
	.compwritemsg = lgp_atomic_compwritemsg,
	.writevalid = lgp_atomic_writevalid,
	.readwritevalid = lgp_atomic_readwritevalid,
	.compwritevalid = lgp_atomic_compwritevalid,
};
