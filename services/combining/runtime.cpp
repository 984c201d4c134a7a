/*
 * runtime.cpp: delegate operations, aggregation and progress (runtime.hpp).
 *
 * A libfabric message is the sender's rank, then records: kind (request or
 * reply), handler, request id (0: no reply wanted), a length-prefixed body.
 */
#include "runtime.hpp"



#include "common/error.hpp"
#include "common/mpi_peers.hpp"

namespace comb {

namespace {
constexpr uint8_t kRequest = 0;
constexpr uint8_t kReply = 1;
/* A record's header: kind, handler, id, body length. */
constexpr size_t kRecordHeader = 1 + 4 + 8 + 4;
/* Pieces of a message lost for this long are reported (fabric.hpp). */
constexpr std::chrono::milliseconds kTtl(30000);
} // namespace

Runtime::Runtime(MPI_Comm comm, const RuntimeConfig &cfg)
    : comm_(comm), cfg_(cfg), sched_(cfg.stack_bytes)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	rank_ = static_cast<uint32_t>(rank);
	size_ = static_cast<uint32_t>(size);
	fabric_ = std::make_unique<svc::Fabric>(cfg.provider, rank_, kTtl);
	fabric_->set_peers(svc::mpi_exchange_addresses(comm, fabric_->address()));
	out_.resize(size_);
	h_arrive_ = handler([this](Token, svc::Reader &r) {
		arrived_sum_ += static_cast<int64_t>(r.u64());
		if (++arrived_ < size_)
			return;
		svc::Writer w;
		w.u64(static_cast<uint64_t>(arrived_sum_));
		std::string sum = w.take();
		arrived_ = 0;
		arrived_sum_ = 0;
		for (uint32_t p = 0; p < size_; p++)
			send(p, h_release_, sum);
	});
	h_release_ = handler([this](Token, svc::Reader &r) {
		barrier_sum_ = static_cast<int64_t>(r.u64());
		barrier_epoch_++;
		if (barrier_waiter_)
			sched_.wake(std::exchange(barrier_waiter_, nullptr));
	});
}

Runtime::~Runtime() = default;

uint16_t Runtime::handler(Handler h)
{
	handlers_.push_back(std::move(h));
	return static_cast<uint16_t>(handlers_.size() - 1);
}

void Runtime::enqueue(uint32_t dest, uint8_t kind, uint16_t h, uint64_t id,
		      std::string_view payload)
{
	std::string &b = out_[dest];
	if (b.empty()) {
		svc::Writer w;
		w.u32(rank_);
		b = w.take();
	}
	svc::Writer w;
	w.u8(kind);
	w.u32(h);
	w.u64(id);
	w.str(payload);
	b += w.take();
	stats_.records_sent++;
	if (!cfg_.aggregate || b.size() >= cfg_.agg_bytes)
		flush(dest);
}

void Runtime::flush(uint32_t dest)
{
	if (out_[dest].empty())
		return;
	fabric_->send(dest, std::move(out_[dest]));
	out_[dest].clear();
	stats_.messages_sent++;
}

void Runtime::flush_all()
{
	for (uint32_t p = 0; p < size_; p++)
		flush(p);
}

void Runtime::post(uint32_t dest, uint16_t h, std::string payload, OnReply on_reply)
{
	uint64_t id = next_id_++;
	pending_.emplace(id, std::move(on_reply));
	if (dest == rank_) {
		stats_.local_requests++;
		dispatch(rank_, kRequest, h, id, payload);
		return;
	}
	enqueue(dest, kRequest, h, id, payload);
}

void Runtime::send(uint32_t dest, uint16_t h, std::string payload)
{
	if (dest == rank_) {
		stats_.local_requests++;
		dispatch(rank_, kRequest, h, 0, payload);
		return;
	}
	enqueue(dest, kRequest, h, 0, payload);
}

void Runtime::reply(Token t, std::string payload)
{
	if (t.src == rank_) {
		dispatch(rank_, kReply, 0, t.id, payload);
		return;
	}
	enqueue(t.src, kReply, 0, t.id, payload);
}

std::string Runtime::call(uint32_t dest, uint16_t h, std::string payload)
{
	std::vector<Request> one;
	one.push_back({dest, h, std::move(payload)});
	return std::move(call_all(std::move(one))[0]);
}

std::vector<std::string> Runtime::call_all(std::vector<Request> reqs)
{
	struct Wait {
		Scheduler::Task *task;
		size_t left;
		bool waiting = false;
		std::vector<std::string> results;
	} w{sched_.current(), reqs.size(), false, std::vector<std::string>(reqs.size())};
	for (size_t i = 0; i < reqs.size(); i++)
		post(reqs[i].dest, reqs[i].h, std::move(reqs[i].payload),
		     [this, &w, i](std::string &&r) {
			     w.results[i] = std::move(r);
			     if (--w.left == 0 && w.waiting)
				     sched_.wake(w.task);
		     });
	if (w.left) {
		w.waiting = true;
		sched_.suspend();
	}
	return std::move(w.results);
}

void Runtime::call_everywhere(uint16_t h, const std::string &payload)
{
	std::vector<Request> reqs;
	for (uint32_t p = 0; p < size_; p++)
		reqs.push_back({p, h, payload});
	call_all(std::move(reqs));
}

void Runtime::parallel(size_t n, const std::function<void(size_t)> &fn)
{
	Scheduler::Task *self = sched_.current();
	size_t left = n;
	for (size_t i = 0; i < n; i++)
		sched_.spawn([this, &fn, &left, self, i] {
			fn(i);
			if (--left == 0)
				sched_.wake(self);
		});
	if (left)
		sched_.suspend();
}

int64_t Runtime::allreduce_sum(int64_t v)
{
	uint64_t epoch = barrier_epoch_;
	svc::Writer w;
	w.u64(static_cast<uint64_t>(v));
	send(0, h_arrive_, w.take());
	if (barrier_epoch_ == epoch) {
		barrier_waiter_ = sched_.current();
		sched_.suspend();
	}
	return barrier_sum_;
}

void Runtime::dispatch(uint32_t src, uint8_t kind, uint16_t h, uint64_t id, std::string_view body)
{
	svc::Reader r(body, "combining record");
	if (kind == kReply) {
		auto it = pending_.find(id);
		if (it == pending_.end())
			throw svc::Error(EPROTO, "reply from process " + std::to_string(src) +
							 " to unknown request " + std::to_string(id));
		OnReply fn = std::move(it->second);
		pending_.erase(it);
		fn(std::string(body));
		return;
	}
	if (h >= handlers_.size())
		throw svc::Error(EPROTO, "request from process " + std::to_string(src) +
						 " for unknown handler " + std::to_string(h));
	handlers_[h](Token{src, id}, r);
}

void Runtime::on_message(std::string &&msg)
{
	svc::Reader r(msg, "combining message");
	uint32_t src = r.u32();
	if (src >= size_)
		throw svc::Error(EPROTO, "message from unknown process " + std::to_string(src));
	while (r.left() >= kRecordHeader) {
		uint8_t kind = r.u8();
		uint16_t h = static_cast<uint16_t>(r.u32());
		uint64_t id = r.u64();
		std::string_view body = r.view();
		dispatch(src, kind, h, id, body);
	}
	r.done();
}

void Runtime::round(size_t ready)
{
	for (auto &fn : round_hooks_)
		fn();
	flush_all();
	size_t n = fabric_->progress([this](std::string &&m) { on_message(std::move(m)); },
				     [](uint32_t peer, const std::string &what) {
					     throw svc::Error(EIO, "combining: peer " +
								   std::to_string(peer) + ": " + what);
				     });
	/* Nothing ran and nothing came: only a message can make work. */
	if (!n && !ready && !sched_.ready())
		fabric_->wait(std::chrono::steady_clock::now() + svc::Fabric::kTimerCheck);
}

void Runtime::drain()
{
	while (fabric_->sends_pending())
		round(0);
}

void Runtime::run(std::function<void()> root)
{
	root_done_ = false;
	sched_.spawn([this, root = std::move(root)] {
		root();
		barrier();
		root_done_ = true;
	});
	sched_.run([this] { return root_done_ && sched_.live() == 0; },
		   [this](size_t ready) { round(ready); });
	drain();
}

} // namespace comb
