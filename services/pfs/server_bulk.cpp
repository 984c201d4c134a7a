/*
 * server_bulk.cpp: READ and WRITE whose data moves by RMA (server.hpp).
 *
 * The client exposed its buffer; the server writes the bytes it read into
 * it, or reads the bytes to write from it, in one RMA op, and replies once
 * the op has completed, so the reply reaches the client after the data.
 * Beneath the shim a read thus pays ΔL for the request and ΔL for the data
 * with the reply behind it (2·ΔL + n·ΔG); a write pays ΔL for the request,
 * 2·ΔL for the server's read of the client's buffer (there and back) and
 * ΔL for the reply (4·ΔL + n·ΔG).
 */
#include "server.hpp"

#include <cerrno>

namespace pfs {

void Server::bulk(const Request &q)
{
	Reply r;
	r.op = q.op;
	r.call = q.call;
	uint32_t client = q.client;
	std::string whose = " client " + std::to_string(client) + "'s buffer: ";
	auto answer = [this, client, whose](Reply &rep, int err, const std::string &what) {
		if (err)
			fail(rep, Error(err, (rep.op == Op::READ ? "read into" : "write from") +
						     whose + what));
		reply(client, rep);
	};
	try {
		svc::Remote at{q.rma_addr, q.rma_key};
		uint32_t peer = peers_.at(client);
		check_unit(q.op, q.offset, q.length);
		if (q.op == Op::READ) {
			std::string data = store_.read(q.ino, q.offset, q.length, &r.value);
			stats_.reads++;
			stats_.bytes_read += data.size();
			r.placed = data.size();
			if (data.empty()) {
				reply(client, r);	/* a hole or the end: nothing to place */
				return;
			}
			fabric_.write_to(peer, at, std::move(data),
					 [r, answer](int err, const std::string &what,
						     std::string &&) mutable { answer(r, err, what); });
			return;
		}
		fabric_.read_from(
			peer, at, q.length,
			[this, r, answer, ino = q.ino, off = q.offset](
				int err, const std::string &what, std::string &&data) mutable {
				if (!err) {
					try {
						r.value = store_.write(ino, off, data);
						stats_.writes++;
						stats_.bytes_written += data.size();
					} catch (const Error &e) {
						fail(r, e);
					}
				}
				answer(r, err, what);
			});
	} catch (const Error &e) {
		fail(r, e);
		reply(client, r);
	}
}

} // namespace pfs
