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
 * message (svc::Fabric::wait).  A request that does not
 * decode, names an unknown op, comes from a client that never said HELLO,
 * or asks server 1.. for metadata is refused and counted; the server goes
 * on.  Counters: stats(), and with a metrics endpoint (cfg.metrics_host) the
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

private:
	void on_msg(std::string &&frame);
	void serve(const std::string &frame);
	Reply handle(const Request &q);
	Reply handle_meta(const Request &q);
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
	ServerStats stats_;
	std::unique_ptr<svc::MetricsHttp> http_;
};

} // namespace pfs
