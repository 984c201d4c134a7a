/*
 * handler.hpp: one parsed request -> one response (README.md, "Protocol").
 *
 *   GET    /kv/<key>   200 and the value, 404 when missing
 *   HEAD   any GET route: the GET's status and headers, no body
 *   PUT    /kv/<key>   201 when the key is new, 204 when it was replaced
 *   POST   /kv/<key>   the same as PUT
 *   DELETE /kv/<key>   204, 404 when missing
 *   GET    /metrics    200, Prometheus text (metrics.hpp)
 *
 * Any other method on those paths is a 405 with Allow, any other path a
 * 404, a key that is empty or longer than --max-key a 400, a write the log
 * refused a 500.  With --fsync always a write's reply is built only after
 * its record is durable.  With --hash-rounds N a GET's value or a write's
 * body is hashed N times and the result sent as X-Value-Hash.
 *
 * Thread safety: handle() from any number of threads at once.
 */
#pragma once

#include <functional>
#include <string>

#include "http.hpp"
#include "metrics.hpp"
#include "options.hpp"
#include "store.hpp"
#include "wal.hpp"

namespace kvsrv {

class Handler {
public:
	Handler(Store &store, Wal *wal, Metrics &metrics, const Options &opt,
		std::function<Gauges()> gauges)
		: store_(store), wal_(wal), metrics_(metrics), opt_(opt), gauges_(std::move(gauges))
	{
	}

	/* Appends the response to out; returns whether the connection stays open. */
	bool handle(const Request &req, std::string &out);

private:
	int write_status(const WriteResult &r, int done_status, int &err);
	std::string hash_header(std::string_view value) const;

	Store &store_;
	Wal *wal_;
	Metrics &metrics_;
	const Options &opt_;
	std::function<Gauges()> gauges_;
};

} // namespace kvsrv
