/*
 * broker.hpp: one KVS broker, the per-rank daemon of the store.
 *
 * Brokers form a tree overlay (rank 0 the root, parent of r is (r-1)/fanout)
 * and talk over libfabric (services/common/fabric.hpp).  Each runs one thread that owns all
 * of its state: the content cache (the root's is the authoritative store,
 * optionally backed by SQLite), the current root reference, fences in
 * progress and objects being faulted in.  Clients in the same process call
 * the public methods from any thread; each call hands a request to the
 * broker thread and blocks until the answer or the configured timeout.
 *
 * Protocol (flux-core's KVS is the model; docs/design.md, "Sources" [KVS]):
 * - fence(name, nprocs, ops): the batch goes up the tree; brokers merge
 *   batches of the same fence (identical ops collapse, txn.hpp) and forward
 *   a fence once their whole subtree has contributed (when nprocs equals the
 *   number of brokers: one participant per rank) or at once otherwise; a
 *   held batch leaves after fence_hold at the latest.  The root counts
 *   participants per name, applies the ops atomically when nprocs have
 *   arrived, and sends SETROOT (new version, root object, fence name) down
 *   the tree.  A fence returns when its SETROOT reached the caller's broker.
 * - get(key): resolved in the local cache against the current root; a
 *   missing object is fetched from the parent (LOAD), which faults it from
 *   its own parent if needed, so whole objects get cached along the path.
 *   With min_version the get waits until that root version is visible
 *   (causal consistency).
 *
 * Errors: every call throws kvs::Error; waits end after config.timeout with
 * ETIMEDOUT and a message that names the broker or step that did not answer.
 */
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apply.hpp"
#include "common/fabric.hpp"
#include "content.hpp"
#include "dirent.hpp"
#include "error.hpp"
#include "proto.hpp"
#include "txn.hpp"

namespace kvs {

using svc::Fabric;
using svc::FabricStats;

struct Config {
	std::string provider = "tcp;ofi_rxm";
	uint32_t fanout = 2;
	Limits limits;			/* inline_max (42 B) and max_value */
	std::string sqlite;		/* root's backing file; "" = memory only */
	std::chrono::milliseconds timeout{30000};
	std::chrono::microseconds fence_hold{5000};
	/*
	 * Cached objects unused this long are dropped, as flux-core's KVS
	 * expires clean cache entries by last use; the next get faults them in
	 * again.  Checked once a second, so an object goes between
	 * cache_expire - 1 s and cache_expire after its last use.  The root
	 * drops only what its SQLite file holds; a memory-only root keeps
	 * everything (it is the only copy).  0 = never.
	 */
	std::chrono::seconds cache_expire{60};
};

struct BrokerStats {
	uint64_t fences_joined = 0;	/* local participants */
	uint64_t fence_batches_in = 0;	/* batches received from children */
	uint64_t fence_batches_out = 0;	/* batches sent to the parent */
	uint64_t fence_ops_in = 0;	/* ops received (local + children) */
	uint64_t fence_ops_out = 0;	/* ops forwarded or applied after merging */
	uint64_t fences_applied = 0;	/* root: fences applied */
	uint64_t setroots = 0;
	uint64_t gets = 0;
	uint64_t loads_sent = 0;	/* objects faulted in from the parent */
	uint64_t loads_served = 0;	/* objects sent to children */
	uint64_t version = 0;
	uint64_t version_waiters = 0;	/* requests waiting for a root version now */
	uint64_t cache_objects = 0;	/* objects in the cache now */
	uint64_t cache_bytes = 0;	/* their bytes */
	uint64_t cache_expired = 0;	/* objects dropped unused (Config::cache_expire) */
	FabricStats fabric;
};

/* What a client request gets back. */
struct Reply {
	int errnum = 0;
	std::string error;
	std::string value;
	Directory dir;
	uint64_t version = 0;
	BrokerStats stats;
};

class Broker {
public:
	Broker(const Config &cfg, uint32_t rank, uint32_t size);
	~Broker();
	Broker(const Broker &) = delete;
	Broker &operator=(const Broker &) = delete;

	/* The endpoint address to exchange before start(). */
	std::string address() const { return fabric_.address(); }
	/* Connects to every broker and starts the thread. */
	void start(const std::vector<std::string> &addrs);
	/* Stops the thread after flushing its sends (bounded by the timeout). */
	void stop();

	uint32_t rank() const { return rank_; }
	uint32_t size() const { return size_; }
	const Config &config() const { return cfg_; }

	/* Client calls: thread-safe, blocking, throw kvs::Error. */
	uint64_t fence(const std::string &name, uint32_t nprocs, std::vector<Op> ops);
	std::string get(const std::string &key, uint64_t min_version = 0);
	Directory ls(const std::string &dir, uint64_t min_version = 0);
	/* Waits until root version >= v (0: until any root is known). */
	uint64_t wait_version(uint64_t v);
	/*
	 * Waits for the first root and one round trip to the parent, so the
	 * connection up the tree exists before the first fence or fault-in
	 * (providers such as tcp;ofi_rxm connect on first use, which costs
	 * tens of ms here).
	 */
	void connect();
	BrokerStats stats();

private:
	using Clock = std::chrono::steady_clock;
	enum class ReqKind { FENCE, GET, LS, WAIT, STATS, CONNECT };
	struct Request {
		ReqKind kind;
		std::string key;	/* GET/LS key, FENCE name */
		uint32_t nprocs = 0;
		uint64_t min_version = 0;
		std::vector<Op> ops;
		std::string root_ref;	/* the root a lookup started from */
		Clock::time_point deadline;
		std::string waiting_for;	/* for the timeout message */
		std::promise<Reply> done;
		bool answered = false;		/* done is set; later answers are dropped */
	};
	using ReqPtr = std::shared_ptr<Request>;
	struct FenceState {
		std::optional<BatchMerger> merger;	/* keeps its index across merges */
		Clock::time_point first;
	};
	struct LoadState {
		Clock::time_point deadline;
		std::vector<uint32_t> children;
		std::vector<ReqPtr> waiters;
	};

	Reply call(ReqPtr req);
	void run();
	void on_msg(std::string &&bytes);
	void on_fabric_error(uint32_t peer, const std::string &what);
	bool take_requests();
	void handle(ReqPtr req);
	void check_timers();
	void cache_tick();
	void finish(const ReqPtr &req, Reply r);
	void fail(const ReqPtr &req, int errnum, const std::string &what);
	void send(uint32_t peer, const Msg &m);

	/* broker_fence.cpp */
	void fence_join(FenceBatch batch);
	void fence_maybe_forward(const std::string &name, bool force);
	void fence_apply(const std::string &name);
	/* Ends a fence with an error for every participant at or below here. */
	void fence_fail(const std::string &name, const Error &e);
	void on_fence(Msg &m);
	void on_setroot(Msg &m);
	void on_fence_error(Msg &m);
	void publish_root(const std::vector<std::string> &names);

	/* broker_lookup.cpp */
	void lookup_run(const ReqPtr &req);
	void load_request(const std::string &ref, const ReqPtr &waiter, int child);
	void on_load(Msg &m);
	void on_load_reply(Msg &m);
	void version_advanced();

	Config cfg_;
	uint32_t rank_;
	uint32_t size_;
	uint32_t subtree_ = 1;		/* brokers in this broker's subtree */
	std::vector<uint32_t> children_;
	Fabric fabric_;
	ContentStore store_;
	RootRef root_{0, ""};
	bool root_known_ = false;
	Clock::time_point next_tick_;	/* of the cache's clock */
	std::map<std::string, FenceState> fences_;
	std::multimap<std::string, ReqPtr> fence_waiters_;
	std::map<std::string, LoadState> loads_;
	std::vector<ReqPtr> version_waiters_;
	BrokerStats stats_;

	std::mutex mu_;			/* guards incoming_, stopping_'s changes;
				   each change then wakes fabric_ */
	std::deque<ReqPtr> incoming_;
	std::atomic<bool> stopping_{false};
	std::atomic<bool> running_{false};	/* between start() and stop() */
	std::thread thread_;
	std::string thread_error_;
};

} // namespace kvs
