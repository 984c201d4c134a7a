/* SPDX-License-Identifier: MIT */
/*
 * Data-transfer ops of a wrapped endpoint: messages, tagged messages, RMA
 * and atomics.
 *
 * With every knob at zero each call forwards to the real endpoint after
 * counting the message.  Otherwise receives take the domain lock (the
 * progress thread may be posting on the same domain) and every send-type
 * call becomes a request for lgp_send_submit().
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

static size_t lgp_iov_len(const struct iovec *iov, size_t count)
{
	size_t i, len = 0;

	for (i = 0; i < count; i++)
		len += iov[i].iov_len;
	return len;
}

/* Whether the application will look for a completion of this call. */
static bool lgp_want_cqe(const struct lgp_ep *ep, uint64_t flags, bool inject)
{
	return !inject && (!ep->tx_selective || (flags & FI_COMPLETION));
}

static ssize_t lgp_submit(struct lgp_ep *ep, enum lgp_op_kind kind,
			  const struct iovec *iov, void **desc, size_t count,
			  fi_addr_t addr, uint64_t tag, uint64_t data,
			  const struct fi_rma_iov *rma, size_t rma_count,
			  uint64_t flags, void *context, bool inject)
{
	struct lgp_req req = {
		.ep = ep, .kind = kind, .inject_call = inject,
		.want_cqe = lgp_want_cqe(ep, flags, inject),
		.app_context = context, .flags = flags,
		.len = lgp_iov_len(iov, count),
		.iov = iov, .desc = desc, .count = count,
		.rma_iov = rma, .rma_count = rma_count,
		.addr = addr, .tag = tag, .data = data,
	};

	return lgp_send_submit(ep, &req);
}

#define LGP_LOCKED(ep, call) ({						\
	ssize_t __ret;							\
	if ((ep)->dom->active) {					\
		pthread_mutex_lock(&(ep)->dom->lock);			\
		__ret = (call);						\
		pthread_mutex_unlock(&(ep)->dom->lock);			\
	} else {							\
		__ret = (call);						\
	}								\
	__ret;								\
})

/* ---- messages -------------------------------------------------------- */

static ssize_t lgp_recv(struct fid_ep *fep, void *buf, size_t len, void *desc,
			fi_addr_t src, void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	return LGP_LOCKED(ep, fi_recv(ep->hep, buf, len, desc, src, context));
}

static ssize_t lgp_recvv(struct fid_ep *fep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src, void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	return LGP_LOCKED(ep, fi_recvv(ep->hep, iov, desc, count, src, context));
}

static ssize_t lgp_recvmsg(struct fid_ep *fep, const struct fi_msg *msg,
			   uint64_t flags)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	return LGP_LOCKED(ep, fi_recvmsg(ep->hep, msg, flags));
}

static ssize_t lgp_send(struct fid_ep *fep, const void *buf, size_t len,
			void *desc, fi_addr_t dest, void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { (void *) buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_send(ep->hep, buf, len, desc, dest, context);
	}
	return lgp_submit(ep, LGP_OP_MSG, &iov, &desc, 1, dest, 0, 0, NULL,
			  0, ep->tx_op_flags, context, false);
}

static ssize_t lgp_sendv(struct fid_ep *fep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest, void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, lgp_iov_len(iov, count));
		return fi_sendv(ep->hep, iov, desc, count, dest, context);
	}
	return lgp_submit(ep, LGP_OP_MSG, iov, desc, count, dest, 0, 0, NULL,
			  0, ep->tx_op_flags, context, false);
}

static ssize_t lgp_sendmsg(struct fid_ep *fep, const struct fi_msg *msg,
			   uint64_t flags)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, lgp_iov_len(msg->msg_iov, msg->iov_count));
		return fi_sendmsg(ep->hep, msg, flags);
	}
	return lgp_submit(ep, LGP_OP_MSG, msg->msg_iov, msg->desc,
			  msg->iov_count, msg->addr, 0, msg->data, NULL, 0,
			  flags, msg->context, false);
}

static ssize_t lgp_inject(struct fid_ep *fep, const void *buf, size_t len,
			  fi_addr_t dest)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { (void *) buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_inject(ep->hep, buf, len, dest);
	}
	return lgp_submit(ep, LGP_OP_MSG, &iov, NULL, 1, dest, 0, 0, NULL, 0,
			  FI_INJECT, NULL, true);
}

static ssize_t lgp_senddata(struct fid_ep *fep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest,
			    void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { (void *) buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_senddata(ep->hep, buf, len, desc, data, dest, context);
	}
	return lgp_submit(ep, LGP_OP_MSG, &iov, &desc, 1, dest, 0, data, NULL,
			  0, ep->tx_op_flags | FI_REMOTE_CQ_DATA, context,
			  false);
}

static ssize_t lgp_injectdata(struct fid_ep *fep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { (void *) buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_injectdata(ep->hep, buf, len, data, dest);
	}
	return lgp_submit(ep, LGP_OP_MSG, &iov, NULL, 1, dest, 0, data, NULL,
			  0, FI_INJECT | FI_REMOTE_CQ_DATA, NULL, true);
}

struct fi_ops_msg lgp_ep_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = lgp_recv,
	.recvv = lgp_recvv,
	.recvmsg = lgp_recvmsg,
	.send = lgp_send,
	.sendv = lgp_sendv,
	.sendmsg = lgp_sendmsg,
	.inject = lgp_inject,
	.senddata = lgp_senddata,
	.injectdata = lgp_injectdata,
};

/* ---- tagged messages ------------------------------------------------- */

static ssize_t lgp_trecv(struct fid_ep *fep, void *buf, size_t len, void *desc,
			 fi_addr_t src, uint64_t tag, uint64_t ignore,
			 void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	return LGP_LOCKED(ep, fi_trecv(ep->hep, buf, len, desc, src, tag, ignore,
				       context));
}

static ssize_t lgp_trecvv(struct fid_ep *fep, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t src, uint64_t tag,
			  uint64_t ignore, void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	return LGP_LOCKED(ep, fi_trecvv(ep->hep, iov, desc, count, src, tag,
					ignore, context));
}

static ssize_t lgp_trecvmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg,
			    uint64_t flags)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	return LGP_LOCKED(ep, fi_trecvmsg(ep->hep, msg, flags));
}

static ssize_t lgp_tsend(struct fid_ep *fep, const void *buf, size_t len,
			 void *desc, fi_addr_t dest, uint64_t tag, void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { (void *) buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_tsend(ep->hep, buf, len, desc, dest, tag, context);
	}
	return lgp_submit(ep, LGP_OP_TAGGED, &iov, &desc, 1, dest, tag, 0, NULL,
			  0, ep->tx_op_flags, context, false);
}

static ssize_t lgp_tsendv(struct fid_ep *fep, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t dest, uint64_t tag,
			  void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, lgp_iov_len(iov, count));
		return fi_tsendv(ep->hep, iov, desc, count, dest, tag, context);
	}
	return lgp_submit(ep, LGP_OP_TAGGED, iov, desc, count, dest, tag, 0, NULL,
			  0, ep->tx_op_flags, context, false);
}

static ssize_t lgp_tsendmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg,
			    uint64_t flags)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, lgp_iov_len(msg->msg_iov, msg->iov_count));
		return fi_tsendmsg(ep->hep, msg, flags);
	}
	return lgp_submit(ep, LGP_OP_TAGGED, msg->msg_iov, msg->desc,
			  msg->iov_count, msg->addr, msg->tag, msg->data, NULL,
			  0, flags, msg->context, false);
}

static ssize_t lgp_tinject(struct fid_ep *fep, const void *buf, size_t len,
			   fi_addr_t dest, uint64_t tag)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { (void *) buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_tinject(ep->hep, buf, len, dest, tag);
	}
	return lgp_submit(ep, LGP_OP_TAGGED, &iov, NULL, 1, dest, tag, 0, NULL,
			  0, FI_INJECT, NULL, true);
}

static ssize_t lgp_tsenddata(struct fid_ep *fep, const void *buf, size_t len,
			     void *desc, uint64_t data, fi_addr_t dest,
			     uint64_t tag, void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { (void *) buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_tsenddata(ep->hep, buf, len, desc, data, dest, tag,
				    context);
	}
	return lgp_submit(ep, LGP_OP_TAGGED, &iov, &desc, 1, dest, tag, data,
			  NULL, 0, ep->tx_op_flags | FI_REMOTE_CQ_DATA, context,
			  false);
}

static ssize_t lgp_tinjectdata(struct fid_ep *fep, const void *buf, size_t len,
			       uint64_t data, fi_addr_t dest, uint64_t tag)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { (void *) buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_tinjectdata(ep->hep, buf, len, data, dest, tag);
	}
	return lgp_submit(ep, LGP_OP_TAGGED, &iov, NULL, 1, dest, tag, data, NULL,
			  0, FI_INJECT | FI_REMOTE_CQ_DATA, NULL, true);
}

struct fi_ops_tagged lgp_ep_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = lgp_trecv,
	.recvv = lgp_trecvv,
	.recvmsg = lgp_trecvmsg,
	.send = lgp_tsend,
	.sendv = lgp_tsendv,
	.sendmsg = lgp_tsendmsg,
	.inject = lgp_tinject,
	.senddata = lgp_tsenddata,
	.injectdata = lgp_tinjectdata,
};

/* ---- RMA ------------------------------------------------------------- */

static ssize_t lgp_rma(struct lgp_ep *ep, enum lgp_op_kind kind,
		       const struct iovec *iov, void **desc, size_t count,
		       fi_addr_t dest, uint64_t addr, uint64_t key,
		       uint64_t data, uint64_t flags, void *context, bool inject)
{
	struct fi_rma_iov rma = {
		.addr = addr, .len = lgp_iov_len(iov, count), .key = key,
	};

	return lgp_submit(ep, kind, iov, desc, count, dest, 0, data, &rma, 1,
			  flags, context, inject);
}

static ssize_t lgp_read(struct fid_ep *fep, void *buf, size_t len, void *desc,
			fi_addr_t src, uint64_t addr, uint64_t key,
			void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_read(ep->hep, buf, len, desc, src, addr, key, context);
	}
	return lgp_rma(ep, LGP_OP_READ, &iov, &desc, 1, src, addr, key, 0,
		       ep->tx_op_flags, context, false);
}

static ssize_t lgp_readv(struct fid_ep *fep, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src, uint64_t addr,
			 uint64_t key, void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, lgp_iov_len(iov, count));
		return fi_readv(ep->hep, iov, desc, count, src, addr, key, context);
	}
	return lgp_rma(ep, LGP_OP_READ, iov, desc, count, src, addr, key, 0,
		       ep->tx_op_flags, context, false);
}

/* fi_readmsg, fi_writemsg: all segments, local and remote, one message. */
static ssize_t lgp_rma_msg(struct lgp_ep *ep, enum lgp_op_kind kind,
			   const struct fi_msg_rma *msg, uint64_t flags)
{
	return lgp_submit(ep, kind, msg->msg_iov, msg->desc, msg->iov_count,
			  msg->addr, 0, msg->data, msg->rma_iov,
			  msg->rma_iov_count, flags, msg->context, false);
}

static ssize_t lgp_readmsg(struct fid_ep *fep, const struct fi_msg_rma *msg,
			   uint64_t flags)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, lgp_iov_len(msg->msg_iov, msg->iov_count));
		return fi_readmsg(ep->hep, msg, flags);
	}
	return lgp_rma_msg(ep, LGP_OP_READ, msg, flags);
}

static ssize_t lgp_write(struct fid_ep *fep, const void *buf, size_t len,
			 void *desc, fi_addr_t dest, uint64_t addr, uint64_t key,
			 void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { (void *) buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_write(ep->hep, buf, len, desc, dest, addr, key, context);
	}
	return lgp_rma(ep, LGP_OP_WRITE, &iov, &desc, 1, dest, addr, key, 0,
		       ep->tx_op_flags, context, false);
}

static ssize_t lgp_writev(struct fid_ep *fep, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t dest,
			  uint64_t addr, uint64_t key, void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, lgp_iov_len(iov, count));
		return fi_writev(ep->hep, iov, desc, count, dest, addr, key,
				 context);
	}
	return lgp_rma(ep, LGP_OP_WRITE, iov, desc, count, dest, addr, key, 0,
		       ep->tx_op_flags, context, false);
}

static ssize_t lgp_writemsg(struct fid_ep *fep, const struct fi_msg_rma *msg,
			    uint64_t flags)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (!ep->dom->active) {
		lgp_ep_count(ep, lgp_iov_len(msg->msg_iov, msg->iov_count));
		return fi_writemsg(ep->hep, msg, flags);
	}
	return lgp_rma_msg(ep, LGP_OP_WRITE, msg, flags);
}

static ssize_t lgp_inject_write(struct fid_ep *fep, const void *buf, size_t len,
				fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { (void *) buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_inject_write(ep->hep, buf, len, dest, addr, key);
	}
	return lgp_rma(ep, LGP_OP_WRITE, &iov, NULL, 1, dest, addr, key, 0,
		       FI_INJECT, NULL, true);
}

static ssize_t lgp_writedata(struct fid_ep *fep, const void *buf, size_t len,
			     void *desc, uint64_t data, fi_addr_t dest,
			     uint64_t addr, uint64_t key, void *context)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { (void *) buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_writedata(ep->hep, buf, len, desc, data, dest, addr, key,
				    context);
	}
	return lgp_rma(ep, LGP_OP_WRITE, &iov, &desc, 1, dest, addr, key, data,
		       ep->tx_op_flags | FI_REMOTE_CQ_DATA, context, false);
}

static ssize_t lgp_inject_writedata(struct fid_ep *fep, const void *buf,
				    size_t len, uint64_t data, fi_addr_t dest,
				    uint64_t addr, uint64_t key)
{
	struct lgp_ep *ep = lgp_ep_of(fep);
	struct iovec iov = { (void *) buf, len };

	if (!ep->dom->active) {
		lgp_ep_count(ep, len);
		return fi_inject_writedata(ep->hep, buf, len, data, dest, addr, key);
	}
	return lgp_rma(ep, LGP_OP_WRITE, &iov, NULL, 1, dest, addr, key, data,
		       FI_INJECT | FI_REMOTE_CQ_DATA, NULL, true);
}

struct fi_ops_rma lgp_ep_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = lgp_read,
	.readv = lgp_readv,
	.readmsg = lgp_readmsg,
	.write = lgp_write,
	.writev = lgp_writev,
	.writemsg = lgp_writemsg,
	.inject = lgp_inject_write,
	.writedata = lgp_writedata,
	.injectdata = lgp_inject_writedata,
};
