/*
 * runtime.hpp: the PGAS runtime beneath the global data structures: one
 * process per core (launched by mpirun), many workers per process, delegate
 * operations and per-destination message aggregation over svc::Fabric.
 *
 * A delegate operation runs a handler at another process: post() sends a
 * request record and calls on_reply with the handler's reply when it comes
 * back; call() does the same from a worker and suspends it meanwhile, so the
 * scheduler switches to another worker on every remote operation.  A
 * request for this process runs its handler at once, without a message.
 * Handlers are registered in the same order on every process (their number
 * is the same everywhere); they run on the scheduler's thread, never block,
 * and answer through reply() at once or later (a master that queues
 * requests).
 *
 * Records to one destination are packed into one libfabric message until it
 * holds agg_bytes, or the scheduler's round ends (every ready worker ran);
 * with aggregation off every record is its own message.  Between rounds the
 * runtime polls the fabric; with no worker ready it blocks on the fabric's
 * wait object until a message comes (svc::Fabric::wait), so ranks that
 * share cores give the CPU back without delaying what arrives.
 *
 * Addresses are exchanged with MPI (common/mpi_peers.hpp); MPI carries
 * nothing else, so FI_HOOK=loggp sees every message of the structures.
 * Errors: a send error or a malformed message throws svc::Error out of run().
 */
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <mpi.h>

#include "common/codec.hpp"
#include "common/fabric.hpp"
#include "sched.hpp"

namespace comb {

struct RuntimeConfig {
	std::string provider;		/* libfabric provider, e.g. "tcp;ofi_rxm" */
	size_t stack_bytes = 32 * 1024;	/* per worker */
	bool aggregate = true;
	size_t agg_bytes = 4096;	/* flush a destination's buffer at this size */
};

/* Where a reply goes: the requesting process and its request id. */
struct Token {
	uint32_t src;
	uint64_t id;
};

struct RuntimeStats {
	uint64_t records_sent = 0;	/* requests, replies, one-way records to peers */
	uint64_t messages_sent = 0;	/* libfabric messages those travelled in */
	uint64_t local_requests = 0;	/* requests that needed no message */
};

class Runtime {
public:
	using Handler = std::function<void(Token, svc::Reader &)>;
	using OnReply = std::function<void(std::string &&)>;

	Runtime(MPI_Comm comm, const RuntimeConfig &cfg);
	~Runtime();
	Runtime(const Runtime &) = delete;
	Runtime &operator=(const Runtime &) = delete;

	uint32_t rank() const { return rank_; }
	uint32_t size() const { return size_; }

	/* Registers a handler; the same order on every process. */
	uint16_t handler(Handler h);
	/* A request for handler h at dest; on_reply gets the reply. */
	void post(uint32_t dest, uint16_t h, std::string payload, OnReply on_reply);
	/* A request without a reply. */
	void send(uint32_t dest, uint16_t h, std::string payload);
	/* The reply of a request (from its handler, now or later). */
	void reply(Token t, std::string payload);
	/* From a worker: post() and wait for the reply. */
	std::string call(uint32_t dest, uint16_t h, std::string payload);
	/* From a worker: post() each and wait for every reply (in order). */
	struct Request {
		uint32_t dest;
		uint16_t h;
		std::string payload;
	};
	std::vector<std::string> call_all(std::vector<Request> reqs);
	/* From a worker: handler h at every process, this one too, with the
	 * same payload; returns when every process has run it. */
	void call_everywhere(uint16_t h, const std::string &payload);

	/* Workers. */
	void spawn(std::function<void()> fn) { sched_.spawn(std::move(fn)); }
	/* From a worker: runs fn(0..n-1) in n new workers, returns when all
	 * have returned (a parallel loop). */
	void parallel(size_t n, const std::function<void(size_t)> &fn);
	Scheduler &sched() { return sched_; }
	/* Runs root as a worker, with the scheduler serving everything, until
	 * root returns and every worker has ended; then sends what is queued. */
	void run(std::function<void()> root);
	/* From a worker (one at a time per process): returns once every
	 * process has called it, with the sum of their v. */
	int64_t allreduce_sum(int64_t v);
	void barrier() { allreduce_sum(0); }
	/* Called at the end of every scheduler round (before the flush), e.g.
	 * to send what a combiner has gathered. */
	void on_round(std::function<void()> fn) { round_hooks_.push_back(std::move(fn)); }

	const RuntimeStats &stats() const { return stats_; }
	const svc::FabricStats &fabric_stats() const { return fabric_->stats(); }

private:
	void enqueue(uint32_t dest, uint8_t kind, uint16_t h, uint64_t id, std::string_view payload);
	void flush(uint32_t dest);
	void flush_all();
	void on_message(std::string &&msg);
	void dispatch(uint32_t src, uint8_t kind, uint16_t h, uint64_t id, std::string_view body);
	void round(size_t ready);
	void drain();

	MPI_Comm comm_;
	RuntimeConfig cfg_;
	uint32_t rank_ = 0, size_ = 1;
	std::unique_ptr<svc::Fabric> fabric_;
	Scheduler sched_;
	std::vector<Handler> handlers_;
	std::vector<std::function<void()>> round_hooks_;
	std::unordered_map<uint64_t, OnReply> pending_;
	uint64_t next_id_ = 1;
	std::vector<std::string> out_;		/* aggregation buffer per destination */
	uint16_t h_arrive_ = 0, h_release_ = 0;
	uint32_t arrived_ = 0;			/* at rank 0: barrier arrivals */
	int64_t arrived_sum_ = 0;
	uint64_t barrier_epoch_ = 0;		/* releases seen */
	int64_t barrier_sum_ = 0;		/* of the last release */
	Scheduler::Task *barrier_waiter_ = nullptr;
	bool root_done_ = false;
	RuntimeStats stats_;
};

} // namespace comb
