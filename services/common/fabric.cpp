/*
 * fabric.cpp: the service endpoint of fabric.hpp.
 */
#include "fabric.hpp"

#include <cerrno>
#include <cstring>
#include <random>

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "calls.hpp"
#include "error.hpp"

namespace svc {

namespace {

constexpr uint64_t kTagCtrl = 1ULL << 62;
constexpr size_t kCtrlRecvs = 64;
constexpr uint8_t kFrameInline = 0;
constexpr uint8_t kFrameFrag = 1;
/* kind, sender's self id, message id, message length, offset of this piece */
constexpr size_t kFragHeader = 1 + 4 + 4 + 4 + 4;
constexpr size_t kFragData = Fabric::kCtrlMax - kFragHeader;
/* Longest message accepted in pieces: bounds what a bad frame can allocate. */
constexpr size_t kMaxMessage = 256u << 20;
/* Completions reaped per fi_cq_read call. */
constexpr size_t kReapBatch = 16;

[[noreturn]] void fail(const char *call, int ret)
{
	throw Error(EIO, std::string("libfabric ") + call + " failed: " +
				 fi_strerror(-ret) + " (" + std::to_string(ret) + ")");
}

} // namespace

struct Fabric::Op {
	enum class Kind { SEND, CTRL_RECV, RMA_READ, RMA_WRITE };
	struct fi_context2 ctx;	/* handed to libfabric; keys inflight_ */
	Kind kind = Kind::SEND;
	std::string buf;	/* RMA: the bytes written, or the room for those read */
	uint32_t peer = 0;
	uint64_t tag = 0;
	/* RMA only. */
	Remote remote;
	RmaFn done;		/* empty once run */
	std::chrono::steady_clock::time_point deadline;
	int err = 0;		/* how it ended, when it ended outside a CQ read */
	std::string what;
	bool rma() const { return kind == Kind::RMA_READ || kind == Kind::RMA_WRITE; }
	std::string rma_name() const
	{
		return std::string(kind == Kind::RMA_READ ? "RMA read from" : "RMA write to") +
		       " peer " + std::to_string(peer);
	}
};

Fabric::Fabric(const std::string &provider, uint32_t self, std::chrono::milliseconds ttl)
    : provider_(provider), self_(self), ttl_(ttl)
{
	/* Message ids start anywhere, so the pieces of a restarted peer (same
	 * self id) are not taken for those of its predecessor's last message. */
	frag_seq_ = static_cast<uint32_t>(std::random_device{}());
	struct fi_info *hints = fi_allocinfo();
	if (!hints)
		throw Error(ENOMEM, "fi_allocinfo: out of memory");
	hints->caps = FI_TAGGED | FI_RMA;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->fabric_attr->prov_name = strdup(provider.c_str());
	int ret = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info_);
	if (ret) {
		/* A provider without RMA still carries messages. */
		hints->caps = FI_TAGGED;
		ret = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info_);
	}
	fi_freeinfo(hints);
	if (ret)
		throw Error(EIO, "no libfabric provider '" + provider +
					 "' with tagged RDM endpoints: " + fi_strerror(-ret) +
					 " (try tcp;ofi_rxm, shm or udp;ofi_rxd; fi_info lists them)");
	has_rma_ = (info_->caps & FI_RMA) != 0;
	try {
		if ((ret = fi_fabric(info_->fabric_attr, &fabric_, nullptr)))
			fail("fi_fabric", ret);
		if ((ret = fi_domain(fabric_, info_, &domain_, nullptr)))
			fail("fi_domain", ret);
		open_cq();
		struct fi_av_attr av_attr = {};
		av_attr.type = FI_AV_TABLE;
		if ((ret = fi_av_open(domain_, &av_attr, &av_, nullptr)))
			fail("fi_av_open", ret);
		if ((ret = fi_endpoint(domain_, info_, &ep_, nullptr)))
			fail("fi_endpoint", ret);
		if ((ret = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV)))
			fail("fi_ep_bind(cq)", ret);
		if ((ret = fi_ep_bind(ep_, &av_->fid, 0)))
			fail("fi_ep_bind(av)", ret);
		if ((ret = fi_enable(ep_)))
			fail("fi_enable", ret);
		for (size_t i = 0; i < kCtrlRecvs; i++) {
			auto op = std::make_unique<Op>();
			op->kind = Op::Kind::CTRL_RECV;
			op->buf.resize(kCtrlMax);
			op->tag = kTagCtrl;
			post_recv(std::move(op));
		}
	} catch (...) {
		close();
		throw;
	}
}

Fabric::~Fabric()
{
	close();
}

void Fabric::open_cq()
{
	wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (wake_fd_ < 0)
		throw Error(errno, std::string("eventfd for the service's wake-ups: ") +
					   std::strerror(errno));
	struct fi_cq_attr cq_attr = {};
	cq_attr.format = FI_CQ_FORMAT_TAGGED;
	cq_attr.size = 4096;
	/* A wait fd to block on; a provider that has none is polled. */
	cq_attr.wait_obj = FI_WAIT_FD;
	int ret = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
	if (ret == 0 && fi_control(&cq_->fid, FI_GETWAIT, &wait_fd_) != 0) {
		fi_close(&cq_->fid);
		cq_ = nullptr;
		wait_fd_ = -1;
		ret = -FI_ENOSYS;
	}
	if (ret) {
		cq_attr.wait_obj = FI_WAIT_NONE;
		if ((ret = fi_cq_open(domain_, &cq_attr, &cq_, nullptr)))
			fail("fi_cq_open", ret);
	}
}

void Fabric::close() noexcept
{
	for (auto &[id, mr] : exposed_)
		fi_close(&mr->fid);
	exposed_.clear();
	if (ep_)
		fi_close(&ep_->fid);
	if (av_)
		fi_close(&av_->fid);
	if (cq_)
		fi_close(&cq_->fid);
	if (domain_)
		fi_close(&domain_->fid);
	if (fabric_)
		fi_close(&fabric_->fid);
	if (info_)
		fi_freeinfo(info_);
	if (wake_fd_ >= 0)
		::close(wake_fd_);
	wake_fd_ = -1;
	wait_fd_ = -1;
	ep_ = nullptr;
	av_ = nullptr;
	cq_ = nullptr;
	domain_ = nullptr;
	fabric_ = nullptr;
	info_ = nullptr;
}

std::string Fabric::address() const
{
	std::string addr(256, '\0');
	size_t len = addr.size();
	int ret = fi_getname(&ep_->fid, addr.data(), &len);
	if (ret)
		fail("fi_getname", ret);
	addr.resize(len);
	return addr;
}

void Fabric::set_peers(const std::vector<std::string> &addrs)
{
	peers_.clear();
	for (const auto &a : addrs)
		add_peer(a);
}

uint32_t Fabric::add_peer(const std::string &addr)
{
	fi_addr_t fa = FI_ADDR_UNSPEC;
	int ret = fi_av_insert(av_, addr.data(), 1, &fa, 0, nullptr);
	if (ret != 1)
		throw Error(EIO, "fi_av_insert of peer " + std::to_string(peers_.size()) +
					 "'s address failed: " +
					 fi_strerror(ret < 0 ? -ret : FI_EINVAL));
	peers_.push_back(fa);
	return static_cast<uint32_t>(peers_.size() - 1);
}

size_t Fabric::drop_queued(uint32_t peer)
{
	auto it = queued_.find(peer);
	if (it == queued_.end())
		return 0;
	size_t n = it->second.size();
	queued_count_ -= n;
	for (auto &op : it->second)
		if (op->rma()) {
			op->err = EIO;
			op->what = op->rma_name() + ": dropped, the peer failed";
			rma_ended_.push_back(std::move(op));
		}
	queued_.erase(it);
	return n;
}

void Fabric::post_recv(std::unique_ptr<Op> op)
{
	ssize_t ret = fi_trecv(ep_, op->buf.data(), op->buf.size(), nullptr, FI_ADDR_UNSPEC,
			       op->tag, 0, &op->ctx);
	if (ret == -FI_EAGAIN) {
		recv_retry_.push_back(std::move(op));
		return;
	}
	if (ret)
		fail("fi_trecv", static_cast<int>(ret));
	void *key = &op->ctx;
	inflight_[static_cast<Op *>(key)] = std::move(op);
}

int Fabric::try_send(Op &op)
{
	ssize_t ret;
	switch (op.kind) {
	case Op::Kind::RMA_WRITE:
		ret = fi_write(ep_, op.buf.data(), op.buf.size(), nullptr, peers_[op.peer],
			       op.remote.addr, op.remote.key, &op.ctx);
		break;
	case Op::Kind::RMA_READ:
		ret = fi_read(ep_, op.buf.data(), op.buf.size(), nullptr, peers_[op.peer],
			      op.remote.addr, op.remote.key, &op.ctx);
		break;
	default:
		ret = fi_tsend(ep_, op.buf.data(), op.buf.size(), nullptr, peers_[op.peer],
			       op.tag, &op.ctx);
	}
	return static_cast<int>(ret);
}

void Fabric::queue_op(std::unique_ptr<Op> op)
{
	uint32_t peer = op->peer;
	queued_[peer].push_back(std::move(op));
	queued_count_++;
}

void Fabric::queue_frame(uint32_t peer, std::string frame)
{
	auto op = std::make_unique<Op>();
	op->buf = std::move(frame);
	op->peer = peer;
	op->tag = kTagCtrl;
	queue_op(std::move(op));
}

uint64_t Fabric::expose(void *buf, size_t len, bool writable, Remote *remote)
{
	if (!has_rma_)
		throw Error(ENOTSUP, "provider " + provider_ + " has no RMA");
	/* A key of our choosing must be unique in the domain; most
	 * providers choose their own (FI_MR_PROV_KEY). */
	uint64_t id = ++expose_seq_;
	struct fid_mr *mr = nullptr;
	int ret = fi_mr_reg(domain_, buf, len, writable ? FI_REMOTE_WRITE : FI_REMOTE_READ, 0, id,
			    0, &mr, nullptr);
	if (ret)
		fail("fi_mr_reg", ret);
	exposed_[id] = mr;
	remote->key = fi_mr_key(mr);
	/* Without FI_MR_VIRT_ADDR a peer addresses the buffer from 0. */
	remote->addr = info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR ? reinterpret_cast<uintptr_t>(buf)
								      : 0;
	return id;
}

void Fabric::unexpose(uint64_t id)
{
	auto it = exposed_.find(id);
	if (it == exposed_.end())
		return;
	fi_close(&it->second->fid);
	exposed_.erase(it);
}

void Fabric::queue_rma(uint32_t peer, const Remote &r, std::string buf, bool write, RmaFn done)
{
	if (!has_rma_)
		throw Error(ENOTSUP, "provider " + provider_ + " has no RMA");
	if (peer >= peers_.size())
		throw Error(EINVAL, "RMA with peer " + std::to_string(peer) + " of " +
					    std::to_string(peers_.size()));
	auto op = std::make_unique<Op>();
	op->kind = write ? Op::Kind::RMA_WRITE : Op::Kind::RMA_READ;
	op->buf = std::move(buf);
	op->peer = peer;
	op->remote = r;
	op->done = std::move(done);
	op->deadline = std::chrono::steady_clock::now() + ttl_;
	rma_pending_++;
	queue_op(std::move(op));
	push_queue();
}

void Fabric::write_to(uint32_t peer, const Remote &r, std::string bytes, RmaFn done)
{
	queue_rma(peer, r, std::move(bytes), true, std::move(done));
}

void Fabric::read_from(uint32_t peer, const Remote &r, size_t len, RmaFn done)
{
	queue_rma(peer, r, std::string(len, '\0'), false, std::move(done));
}

void Fabric::finish_rma(Op &op, int err, const std::string &what)
{
	if (!op.done)
		return;		/* timed out before: its done has run */
	rma_pending_--;
	RmaFn done = std::move(op.done);
	op.done = nullptr;
	std::string data = !err && op.kind == Op::Kind::RMA_READ ? std::move(op.buf) : std::string();
	done(err, what, std::move(data));
}

void Fabric::expire_rma()
{
	/* Collected first: a done may queue more (a reply) and so change
	 * the containers walked here.  An op in flight stays in inflight_,
	 * where its address stays valid: the provider still owns its buffer. */
	auto now = std::chrono::steady_clock::now();
	std::vector<std::unique_ptr<Op>> dropped;
	std::vector<Op *> late;
	for (auto &[peer, q] : queued_)
		for (auto it = q.begin(); it != q.end();) {
			if ((*it)->rma() && (*it)->deadline <= now) {
				dropped.push_back(std::move(*it));
				it = q.erase(it);
				queued_count_--;
			} else {
				++it;
			}
		}
	for (auto &[key, op] : inflight_)
		if (op->rma() && op->done && op->deadline <= now)
			late.push_back(op.get());
	std::string within = " did not complete within " + seconds_text(ttl_);
	for (auto &op : dropped)
		finish_rma(*op, ETIMEDOUT, op->rma_name() + within);
	for (Op *op : late)
		finish_rma(*op, ETIMEDOUT, op->rma_name() + within);
}

void Fabric::send(uint32_t peer, std::string bytes)
{
	if (peer >= peers_.size())
		throw Error(EINVAL, "send to peer " + std::to_string(peer) + " of " +
					    std::to_string(peers_.size()));
	if (bytes.size() > kMaxMessage)
		throw Error(EFBIG, "message of " + std::to_string(bytes.size()) +
					   " bytes (at most " + std::to_string(kMaxMessage) + ")");
	if (bytes.size() + 1 <= kCtrlMax) {
		std::string frame;
		frame.reserve(bytes.size() + 1);
		frame.push_back(static_cast<char>(kFrameInline));
		frame.append(bytes);
		queue_frame(peer, std::move(frame));
	} else {
		uint32_t id = frag_seq_++, total = static_cast<uint32_t>(bytes.size());
		for (uint32_t off = 0; off < total; off += kFragData) {
			uint32_t n = std::min<uint32_t>(kFragData, total - off);
			std::string frame(kFragHeader, '\0');
			frame[0] = static_cast<char>(kFrameFrag);
			std::memcpy(&frame[1], &self_, 4);
			std::memcpy(&frame[5], &id, 4);
			std::memcpy(&frame[9], &total, 4);
			std::memcpy(&frame[13], &off, 4);
			frame.append(bytes, off, n);
			queue_frame(peer, std::move(frame));
		}
	}
	push_queue();
}

void Fabric::push_queue()
{
	/* Receives first: a peer that cannot take our sends must not keep
	 * us from taking its. */
	while (!recv_retry_.empty()) {
		auto op = std::move(recv_retry_.front());
		recv_retry_.pop_front();
		size_t before = recv_retry_.size();
		post_recv(std::move(op));
		if (recv_retry_.size() > before)
			break;
	}
	/* One queue per peer: a peer that keeps refusing (EAGAIN) holds up
	 * only what is bound for it. */
	for (auto it = queued_.begin(); it != queued_.end();) {
		auto &q = it->second;
		while (!q.empty()) {
			Op &op = *q.front();
			int ret = try_send(op);
			if (ret == -FI_EAGAIN)
				break;
			if (ret && op.rma()) {
				op.err = EIO;
				op.what = op.rma_name() + " failed: " + fi_strerror(-ret);
				rma_ended_.push_back(std::move(q.front()));
			} else if (ret) {
				/* Dropped and reported: whoever waits for its
				 * effect times out naming the peer. */
				stats_.send_errors++;
				errors_.emplace_back(op.peer, std::string("fi_tsend failed: ") +
								      fi_strerror(-ret));
			} else if (op.rma()) {
				stats_.rma_ops++;
				stats_.rma_bytes += op.buf.size();
				rma_inflight_++;
				void *key = &op.ctx;
				inflight_[static_cast<Op *>(key)] = std::move(q.front());
			} else {
				stats_.msgs_sent++;
				stats_.bytes_sent += op.buf.size();
				sends_inflight_++;
				void *key = &op.ctx;
				inflight_[static_cast<Op *>(key)] = std::move(q.front());
			}
			q.pop_front();
			queued_count_--;
		}
		it = q.empty() ? queued_.erase(it) : std::next(it);
	}
}

void Fabric::expire_partial()
{
	auto now = std::chrono::steady_clock::now();
	for (auto it = partial_.begin(); it != partial_.end();) {
		if (now - it->second.first < ttl_) {
			++it;
			continue;
		}
		errors_.emplace_back(UINT32_MAX, "dropped a message from sender " +
							 std::to_string(it->first >> 32) +
							 " missing pieces after the timeout");
		it = partial_.erase(it);
	}
}

void Fabric::on_piece(const Op &op, size_t len, const MsgFn &on_msg)
{
	uint32_t src, id, total, off;
	std::memcpy(&src, &op.buf[1], 4);
	std::memcpy(&id, &op.buf[5], 4);
	std::memcpy(&total, &op.buf[9], 4);
	std::memcpy(&off, &op.buf[13], 4);
	size_t n = len - kFragHeader;
	/* Pieces are cut at multiples of kFragData; anything else, or a
	 * length that disagrees with the first piece's, is not ours. */
	if (total <= kFragData || total > kMaxMessage || off % kFragData || off >= total ||
	    n != std::min<size_t>(kFragData, total - off)) {
		errors_.emplace_back(UINT32_MAX, "malformed message piece from sender " +
							 std::to_string(src) + " (" +
							 std::to_string(off) + "+" + std::to_string(n) +
							 " of " + std::to_string(total) + "), dropped");
		return;
	}
	uint64_t key = (uint64_t(src) << 32) | id;
	auto [it, fresh] = partial_.try_emplace(key);
	Partial &p = it->second;
	if (fresh) {
		p.buf.resize(total);
		p.seen.assign((total + kFragData - 1) / kFragData, false);
		p.first = std::chrono::steady_clock::now();
	} else if (p.buf.size() != total) {
		errors_.emplace_back(UINT32_MAX, "message piece from sender " + std::to_string(src) +
						 " disagrees with its message's length, dropped");
		return;
	}
	size_t idx = off / kFragData;
	if (p.seen[idx])
		return;
	p.seen[idx] = true;
	std::memcpy(p.buf.data() + off, op.buf.data() + kFragHeader, n);
	p.got += n;
	if (p.got < total)
		return;
	std::string msg = std::move(p.buf);
	partial_.erase(it);
	on_msg(std::move(msg));
}

void Fabric::complete(Op *key, size_t len, const MsgFn &on_msg)
{
	auto it = inflight_.find(key);
	if (it == inflight_.end())
		return;
	std::unique_ptr<Op> op = std::move(it->second);
	inflight_.erase(it);
	if (op->kind == Op::Kind::SEND) {
		sends_inflight_--;
		return;
	}
	if (op->rma()) {
		rma_inflight_--;
		finish_rma(*op, 0, std::string());
		return;
	}
	stats_.msgs_recvd++;
	stats_.bytes_recvd += len;
	if (len >= 1 && op->buf[0] == static_cast<char>(kFrameInline)) {
		std::string msg(op->buf.data() + 1, len - 1);
		post_recv(std::move(op));
		on_msg(std::move(msg));
		return;
	}
	if (len > kFragHeader && op->buf[0] == static_cast<char>(kFrameFrag)) {
		on_piece(*op, len, on_msg);
		post_recv(std::move(op));
		return;
	}
	post_recv(std::move(op));
	errors_.emplace_back(UINT32_MAX, "malformed frame of " + std::to_string(len) +
						 " bytes, dropped");
}

size_t Fabric::reap(struct fi_cq_tagged_entry *e, ssize_t n, const MsgFn &on_msg)
{
	for (ssize_t i = 0; i < n; i++)
		complete(static_cast<Op *>(e[i].op_context), e[i].len, on_msg);
	return static_cast<size_t>(n);
}

void Fabric::complete_error(const MsgFn &on_msg, const ErrFn &on_err)
{
	struct fi_cq_err_entry err = {};
	if (fi_cq_readerr(cq_, &err, 0) != 1)
		return;
	auto it = inflight_.find(static_cast<Op *>(err.op_context));
	if (it == inflight_.end())
		return;
	std::unique_ptr<Op> op = std::move(it->second);
	inflight_.erase(it);
	std::string what = fi_strerror(err.err);
	if (op->rma()) {
		rma_inflight_--;
		finish_rma(*op, EIO, op->rma_name() + " failed: " + what);
		return;
	}
	if (op->kind == Op::Kind::SEND) {
		sends_inflight_--;
		stats_.send_errors++;
		on_err(op->peer, "send failed: " + what);
		return;
	}
	if (err.err == FI_ECANCELED)
		return;
	/* A receive that failed (e.g. truncated) is re-posted; the sender
	 * sees its own error, so the message is not silently lost. */
	post_recv(std::move(op));
	on_err(UINT32_MAX, "receive failed: " + what);
	(void)on_msg;
}

void Fabric::wake()
{
	uint64_t one = 1;
	/* EAGAIN means the counter is full: a wake-up is pending anyway. */
	ssize_t n = ::write(wake_fd_, &one, sizeof one);
	(void)n;
}

void Fabric::wait(std::chrono::steady_clock::time_point until)
{
	/* Sends the provider refused need our next attempt, not an event.
	 * Sends in flight are no reason to poll: beneath the shim its progress
	 * thread releases them (polling only while they were held skipped the
	 * host's wake-up cost beneath the shim only, and made small ΔL measure
	 * faster than none); the spin below is the same at every ΔL. */
	if (wait_fd_ < 0 || queued_count_ || !recv_retry_.empty()) {
		sched_yield();
		return;
	}
	/* Keep looking for kSpin after the last turn with work (spin.hpp):
	 * what comes back that soon is taken without the host's wake-up, at
	 * every ΔL alike.  An idle run goes on while each turn since it began
	 * called wait(); a turn without, or with completions, ends it. */
	auto now = std::chrono::steady_clock::now();
	if (!idle_run_ || turns_ - idle_turn_ > 1)
		idle_since_ = now;
	idle_run_ = true;
	idle_turn_ = turns_;
	if (now - idle_since_ < kSpin) {
		stats_.spins++;
		sched_yield();
		return;
	}
	/* fi_trywait drives the provider's own progress and says whether its
	 * wait fd will signal what comes next; -FI_EAGAIN: read the CQ first. */
	struct fid *fids[1] = {&cq_->fid};
	if (fi_trywait(fabric_, fids, 1) != FI_SUCCESS)
		return;
	auto t0 = std::chrono::steady_clock::now();
	auto left = until - t0;
	int ms = 0;
	if (left > left.zero())
		ms = static_cast<int>(std::min<int64_t>(
			std::chrono::ceil<std::chrono::milliseconds>(left).count(), 1 << 30));
	struct pollfd pfd[2] = {{wait_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
	int ready = ::poll(pfd, 2, ms);
	timed_out_ = ready == 0;
	stats_.waits++;
	stats_.wait_ns += static_cast<uint64_t>(
		std::chrono::duration_cast<std::chrono::nanoseconds>(
			std::chrono::steady_clock::now() - t0)
			.count());
	if (ready > 0 && (pfd[1].revents & POLLIN)) {
		uint64_t n;
		ssize_t r = ::read(wake_fd_, &n, sizeof n);
		(void)r;
	}
}

size_t Fabric::progress(const MsgFn &on_msg, const ErrFn &on_err)
{
	struct fi_cq_tagged_entry e[kReapBatch];
	size_t handled = 0;

	if (!partial_.empty())
		expire_partial();
	if (rma_pending_)
		expire_rma();

	turns_++;
	const uint64_t recvd_before = stats_.msgs_recvd;
	push_queue();
	for (;;) {
		ssize_t n = fi_cq_read(cq_, e, kReapBatch);
		if (n > 0) {
			handled += reap(e, n, on_msg);
			continue;
		}
		if (n == -FI_EAVAIL) {
			complete_error(on_msg, on_err);
			handled++;
			continue;
		}
		break;
	}
	push_queue();
	std::vector<std::unique_ptr<Op>> ended;
	ended.swap(rma_ended_);
	for (auto &op : ended) {
		finish_rma(*op, op->err, op->what);
		handled++;
	}
	if (handled)
		idle_run_ = false;	/* work: the next wait() starts a new idle run */
	if (timed_out_ && stats_.msgs_recvd != recvd_before)
		stats_.missed_wakeups++;
	timed_out_ = false;
	for (auto &[peer, what] : errors_)
		on_err(peer, what);
	errors_.clear();
	return handled;
}

} // namespace svc
