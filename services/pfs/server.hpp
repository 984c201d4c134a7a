/*
 * server.hpp: one PFS storage server (a storage target), and on server 0
 * also the metadata server.
 *
 * A server owns DIR = INSTANCE/server-<index>: the objects it stores
 * (store.hpp), and on server 0 the namespace (meta.db, meta.hpp).  It
 * answers clients over libfabric (services/common/fabric.hpp): each
 * request is one message, each answer one reply that echoes its call id.
 * A client's first request to a server is HELLO with its endpoint address,
 * which the server adds as a peer; server 0 also hands out the client id
 * that keys the client's message pieces everywhere.
 *
 * One thread polls the endpoint, queues the requests that arrived and
 * serves them in arrival order, synchronously (the local file system is the
 * device), then blocks on the endpoint's wait object until the next
 * message (svc::Fabric::wait).  A READ or WRITE whose data moves by RMA
 * (more than Fabric::kCtrlMax bytes) is answered once its RMA op has
 * completed: the bytes read written into the client's exposed buffer, or
 * the bytes to write read from it; the loop serves other requests
 * meanwhile.  A request that does not
 * decode, names an unknown op, comes from a client that never said HELLO,
 * or asks server 1.. for metadata is refused and counted; the server goes
 * on.  A HELLO the server cannot accept (server 0 out of client ids, its
 * disk full) is answered with the reason, so the client can say it.
 *
 * Appends: the server of a file's object 0 places O_APPEND writes.  A
 * client glimpses the file's size and asks it (APPEND) where len bytes go;
 * the answer is the larger of that size and the end of the last append it
 * placed, which it then remembers, so concurrent appenders from any
 * clients get disjoint ranges.  It forgets a file's end when the file is
 * truncated or destroyed, and after cfg.ttl without appends (a placed
 * append is written within the client's timeout, no longer than that);
 * at most kAppendFiles files at once (EBUSY past that).
 *
 * Full disk on server 0: an operation that removes or changes metadata and
 * finds no space releases the namespace's reserve (meta.hpp) and runs once
 * more; after every metadata operation the reserve is taken back when
 * there is room.  Counters: stats(), and with a metrics endpoint (cfg.metrics_host) the
 * same in Prometheus' text format, served from the loop (common/metrics_http.hpp).
 *
 * Errors: the constructor throws pfs::Error (provider, directory, metadata
 * file of another instance); run() returns when stop is set.
 */
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>

#include <nlohmann/json_fwd.hpp>

#include "common/fabric.hpp"
#include "common/metrics_http.hpp"
#include "error.hpp"
#include "meta.hpp"
#include "proto.hpp"
#include "store.hpp"

namespace pfs {

struct ServerConfig {
	std::string dir;		/* INSTANCE/server-<index>, created */
	uint32_t index = 0;
	uint32_t servers = 1;
	std::string provider = "tcp;ofi_rxm";
	uint64_t capacity = 0;		/* bytes of objects; 0: the disk's */
	std::chrono::milliseconds ttl{10000};	/* of a message's pieces */
	std::string metrics_host;	/* Prometheus endpoint; "" for none */
	uint16_t metrics_port = 0;	/* 0: any free port */
};

struct ServerStats {
	uint64_t requests = 0;		/* served, any op */
	uint64_t reads = 0, writes = 0;
	uint64_t bytes_read = 0, bytes_written = 0;	/* object data served */
	uint64_t meta_ops = 0;
	uint64_t errors = 0;		/* requests answered with an error */
	uint64_t bad_requests = 0;	/* refused: malformed, unknown client or op */
	uint64_t queue_max = 0;		/* most requests waiting at once */
	uint64_t queue_sum = 0;		/* waiting requests summed at each service */
	uint64_t service_ns = 0, service_max_ns = 0;
	uint64_t clients = 0;
	uint64_t appends = 0;		/* APPENDs placed */
	uint64_t reserve_used = 0;	/* metadata ops run on the namespace's reserve */
};

class Server {
public:
	explicit Server(const ServerConfig &cfg);
	~Server();
	Server(const Server &) = delete;
	Server &operator=(const Server &) = delete;

	std::string address() const { return fabric_.address(); }
	/* Serves until stop is set. */
	void run(const std::atomic<bool> &stop);
	/* The counters as one JSON object (also the STATS reply). */
	std::string stats() const;
	/* The same counters in Prometheus' text format, labelled server="<index>". */
	std::string metrics() const;
	/* The metrics endpoint's "host:port", "" without one. */
	std::string metrics_address() const { return http_ ? http_->address() : ""; }

	static constexpr size_t kAppendFiles = 65536;

private:
	using Clock = std::chrono::steady_clock;
	struct AppendEnd {
		uint64_t end;
		Clock::time_point used;
	};

	/* A read is one reply: at most one stripe unit (layout.hpp). */
	static constexpr uint64_t kReadMax = kStripeMax;
	/* Object offsets stay far below off_t's limit. */
	static constexpr uint64_t kOffsetMax = 1ULL << 60;
	static void check_range(uint64_t off, uint64_t len);
	/* A READ, or a WRITE by RMA: one stripe unit at most. */
	static void check_unit(Op op, uint64_t off, uint64_t len);

	void on_msg(std::string &&frame);
	void serve(const std::string &frame);
	/* A READ or WRITE by RMA (server_bulk.cpp). */
	void bulk(const Request &q);
	/* Makes r the answer to error e (counted). */
	void fail(Reply &r, const Error &e);
	Reply handle(const Request &q);
	Reply handle_meta(const Request &q);
	/* handle_meta, on the namespace's reserve once if the disk is full. */
	Reply meta_op(const Request &q);
	void hello(const Request &q, const std::string &frame);
	uint64_t place_append(uint64_t ino, uint64_t size, uint64_t len);
	nlohmann::json counters() const;
	void refuse(const std::string &frame, const std::string &why);
	void reply(uint32_t client, const Reply &r);

	ServerConfig cfg_;
	svc::Fabric fabric_;
	Store store_;
	std::unique_ptr<Meta> meta_;	/* server 0 only */
	std::unordered_map<uint32_t, uint32_t> peers_;	/* client id -> fabric peer */
	std::unordered_map<std::string, uint32_t> by_addr_;	/* address -> fabric peer */
	std::deque<std::string> queue_;
	std::unordered_map<uint64_t, AppendEnd> appends_;	/* ino -> end */
	ServerStats stats_;
	std::unique_ptr<svc::MetricsHttp> http_;
};

} // namespace pfs
