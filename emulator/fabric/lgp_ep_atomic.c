/* SPDX-License-Identifier: MIT */
/*
 * Atomic ops of a wrapped endpoint.  Delays apply as to RMA: a plain atomic
 * is copied and deferred like a write; fetching and compare atomics are
 * deferred like reads, their result arriving L + n*G after the real
 * completion.  While delays are active the vector forms take one element
 * vector each (what MPI one-sided and OpenSHMEM layers issue); longer
 * vectors are refused (lgp_refuse) rather than run undelayed.
 */
#include "lgp_fi.h"

static struct lgp_ep *lgp_ep_of(struct fid_ep *ep)
{
	return lgp_container_of(ep, struct lgp_ep, ep);
}

static size_t lgp_atomic_size(enum fi_datatype dt)
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

struct lgp_atomic_call {
	enum lgp_op_kind kind;
	const struct fi_ioc *ioc;
	void *desc;
	const struct fi_ioc *cmp;
	void *cmp_desc;
	struct fi_ioc *res;
	void *res_desc;
	fi_addr_t dest;
	uint64_t addr, key;
	enum fi_datatype datatype;
	enum fi_op op;
	uint64_t data, flags;
	void *context;
	bool inject;
};

static ssize_t lgp_atomic_submit(struct lgp_ep *ep, const struct lgp_atomic_call *c)
{
	size_t n = c->ioc ? c->ioc->count : c->res->count;
	struct lgp_req req = {
		.ep = ep, .kind = c->kind, .inject_call = c->inject,
		.want_cqe = !c->inject &&
			    (!ep->tx_selective || (c->flags & FI_COMPLETION)),
		.app_context = c->context, .flags = c->flags,
		.len = n * lgp_atomic_size(c->datatype),
		.addr = c->dest, .data = c->data,
		.ioc_desc = c->desc, .cmp_desc = c->cmp_desc,
		.res_desc = c->res_desc,
		.rma_ioc = { .addr = c->addr, .count = n, .key = c->key },
		.datatype = c->datatype, .op = c->op,
	};

	if (c->ioc)
		req.ioc = *c->ioc;
	if (c->cmp)
		req.cmp_ioc = *c->cmp;
	if (c->res)
		req.res_ioc = *c->res;
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

	if (!ep->dom->active) {
		lgp_ep_count(ep, count * lgp_atomic_size(datatype));
		return fi_atomic(ep->hep, buf, count, desc, dest, addr, key,
				 datatype, op, context);
	}
	return lgp_atomic_submit(ep, &(struct lgp_atomic_call) {
		.kind = LGP_OP_ATOMIC, .ioc = &ioc, .desc = desc, .dest = dest,
		.addr = addr, .key = key, .datatype = datatype, .op = op,
		.flags = ep->tx_op_flags, .context = context });
}

static ssize_t lgp_atomic_writev(struct fid_ep *fep, const struct fi_ioc *iov,
				 void **desc, size_t count, fi_addr_t dest,
				 uint64_t addr, uint64_t key,
				 enum fi_datatype datatype, enum fi_op op,
				 void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, count ? iov[0].count * lgp_atomic_size(datatype) : 0);
		return fi_atomicv(ep->hep, iov, desc, count, dest, addr, key,
				  datatype, op, context);
	}
	if (count != 1)
		return LGP_REFUSE("an atomic with more than one fi_ioc");
	return lgp_atomic_submit(ep, &(struct lgp_atomic_call) {
		.kind = LGP_OP_ATOMIC, .ioc = iov, .desc = desc ? desc[0] : NULL,
		.dest = dest, .addr = addr, .key = key, .datatype = datatype,
		.op = op, .flags = ep->tx_op_flags, .context = context });
}

static ssize_t lgp_atomic_writemsg(struct fid_ep *fep,
				   const struct fi_msg_atomic *msg,
				   uint64_t flags)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, msg->iov_count ?
			     msg->msg_iov[0].count * lgp_atomic_size(msg->datatype) : 0);
		return fi_atomicmsg(ep->hep, msg, flags);
	}
	if (msg->iov_count != 1 || msg->rma_iov_count != 1)
		return LGP_REFUSE("an atomic with more than one fi_ioc");
	return lgp_atomic_submit(ep, &(struct lgp_atomic_call) {
		.kind = LGP_OP_ATOMIC, .ioc = msg->msg_iov,
		.desc = msg->desc ? msg->desc[0] : NULL, .dest = msg->addr,
		.addr = msg->rma_iov[0].addr, .key = msg->rma_iov[0].key,
		.datatype = msg->datatype, .op = msg->op, .data = msg->data,
		.flags = flags, .context = msg->context });
}

static ssize_t lgp_atomic_inject(struct fid_ep *fep, const void *buf,
				 size_t count, fi_addr_t dest, uint64_t addr,
				 uint64_t key, enum fi_datatype datatype,
				 enum fi_op op)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct fi_ioc ioc = { (void *) buf, count };

	if (!ep->dom->active) {
		lgp_ep_count(ep, count * lgp_atomic_size(datatype));
		return fi_inject_atomic(ep->hep, buf, count, dest, addr, key,
					datatype, op);
	}
	return lgp_atomic_submit(ep, &(struct lgp_atomic_call) {
		.kind = LGP_OP_ATOMIC, .ioc = &ioc, .dest = dest, .addr = addr,
		.key = key, .datatype = datatype, .op = op, .flags = FI_INJECT,
		.inject = true });
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

	if (!ep->dom->active) {
		lgp_ep_count(ep, count * lgp_atomic_size(datatype));
		return fi_fetch_atomic(ep->hep, buf, count, desc, result,
				       result_desc, dest, addr, key, datatype,
				       op, context);
	}
	return lgp_atomic_submit(ep, &(struct lgp_atomic_call) {
		.kind = LGP_OP_FETCH_ATOMIC, .ioc = &ioc, .desc = desc,
		.res = &res, .res_desc = result_desc, .dest = dest,
		.addr = addr, .key = key, .datatype = datatype, .op = op,
		.flags = ep->tx_op_flags, .context = context });
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

	if (!ep->dom->active) {
		lgp_ep_count(ep, result_count ?
			     resultv[0].count * lgp_atomic_size(datatype) : 0);
		return fi_fetch_atomicv(ep->hep, iov, desc, count, resultv,
					result_desc, result_count, dest, addr,
					key, datatype, op, context);
	}
	if (count > 1 || result_count != 1)
		return LGP_REFUSE("an atomic with more than one fi_ioc");
	return lgp_atomic_submit(ep, &(struct lgp_atomic_call) {
		.kind = LGP_OP_FETCH_ATOMIC, .ioc = count ? iov : NULL,
		.desc = count && desc ? desc[0] : NULL, .res = resultv,
		.res_desc = result_desc ? result_desc[0] : NULL, .dest = dest,
		.addr = addr, .key = key, .datatype = datatype, .op = op,
		.flags = ep->tx_op_flags, .context = context });
}

static ssize_t lgp_atomic_readwritemsg(struct fid_ep *fep,
				       const struct fi_msg_atomic *msg,
				       struct fi_ioc *resultv,
				       void **result_desc, size_t result_count,
				       uint64_t flags)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, result_count ?
			     resultv[0].count * lgp_atomic_size(msg->datatype) : 0);
		return fi_fetch_atomicmsg(ep->hep, msg, resultv, result_desc,
					  result_count, flags);
	}
	if (msg->iov_count > 1 || msg->rma_iov_count != 1 || result_count != 1)
		return LGP_REFUSE("an atomic with more than one fi_ioc");
	return lgp_atomic_submit(ep, &(struct lgp_atomic_call) {
		.kind = LGP_OP_FETCH_ATOMIC,
		.ioc = msg->iov_count ? msg->msg_iov : NULL,
		.desc = msg->iov_count && msg->desc ? msg->desc[0] : NULL,
		.res = resultv, .res_desc = result_desc ? result_desc[0] : NULL,
		.dest = msg->addr, .addr = msg->rma_iov[0].addr,
		.key = msg->rma_iov[0].key, .datatype = msg->datatype,
		.op = msg->op, .data = msg->data, .flags = flags,
		.context = msg->context });
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

	if (!ep->dom->active) {
		lgp_ep_count(ep, count * lgp_atomic_size(datatype));
		return fi_compare_atomic(ep->hep, buf, count, desc, compare,
					 compare_desc, result, result_desc,
					 dest, addr, key, datatype, op, context);
	}
	return lgp_atomic_submit(ep, &(struct lgp_atomic_call) {
		.kind = LGP_OP_COMPARE_ATOMIC, .ioc = &ioc, .desc = desc,
		.cmp = &cmp, .cmp_desc = compare_desc, .res = &res,
		.res_desc = result_desc, .dest = dest, .addr = addr,
		.key = key, .datatype = datatype, .op = op,
		.flags = ep->tx_op_flags, .context = context });
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

	if (!ep->dom->active) {
		lgp_ep_count(ep, count ? iov[0].count * lgp_atomic_size(datatype) : 0);
		return fi_compare_atomicv(ep->hep, iov, desc, count, comparev,
					  compare_desc, compare_count, resultv,
					  result_desc, result_count, dest, addr,
					  key, datatype, op, context);
	}
	if (count != 1 || compare_count != 1 || result_count != 1)
		return LGP_REFUSE("an atomic with more than one fi_ioc");
	return lgp_atomic_submit(ep, &(struct lgp_atomic_call) {
		.kind = LGP_OP_COMPARE_ATOMIC, .ioc = iov,
		.desc = desc ? desc[0] : NULL, .cmp = comparev,
		.cmp_desc = compare_desc ? compare_desc[0] : NULL,
		.res = resultv, .res_desc = result_desc ? result_desc[0] : NULL,
		.dest = dest, .addr = addr, .key = key, .datatype = datatype,
		.op = op, .flags = ep->tx_op_flags, .context = context });
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
		lgp_ep_count(ep, msg->iov_count ?
			     msg->msg_iov[0].count * lgp_atomic_size(msg->datatype) : 0);
		return fi_compare_atomicmsg(ep->hep, msg, comparev, compare_desc,
					    compare_count, resultv, result_desc,
					    result_count, flags);
	}
	if (msg->iov_count != 1 || msg->rma_iov_count != 1 ||
	    compare_count != 1 || result_count != 1)
		return LGP_REFUSE("an atomic with more than one fi_ioc");
	return lgp_atomic_submit(ep, &(struct lgp_atomic_call) {
		.kind = LGP_OP_COMPARE_ATOMIC, .ioc = msg->msg_iov,
		.desc = msg->desc ? msg->desc[0] : NULL, .cmp = comparev,
		.cmp_desc = compare_desc ? compare_desc[0] : NULL,
		.res = resultv, .res_desc = result_desc ? result_desc[0] : NULL,
		.dest = msg->addr, .addr = msg->rma_iov[0].addr,
		.key = msg->rma_iov[0].key, .datatype = msg->datatype,
		.op = msg->op, .data = msg->data, .flags = flags,
		.context = msg->context });
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
