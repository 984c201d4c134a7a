/*
 * pfs_badreq: sends server 0 requests no client library would, and checks
 * that each is refused and counted while the server goes on answering.
 *
 *   pfs_badreq INSTANCE
 *
 * After a proper HELLO: a frame too short for a header, an unknown op, a
 * write whose body is cut short, a lookup from a client id that never said
 * hello, and a read longer than any stripe unit.  The first three and the
 * fourth are bad requests (the second and third answered with EPROTO, the
 * others cannot be), the fifth a request answered with EINVAL.  Then a
 * HELLO without a client id to server 1 (only server 0 hands ids out): it
 * must be answered with the reason, not left to time out.  Prints one JSON
 * line with what came back and the server's counters; exit 0 if all is as
 * expected.
 */
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <sched.h>
#include <string>

#include <nlohmann/json.hpp>

#include "common/fabric.hpp"
#include "common/options.hpp"
#include "error.hpp"
#include "instance.hpp"
#include "proto.hpp"

using namespace pfs;

namespace {

constexpr auto kWait = std::chrono::seconds(10);

struct Peer {
	svc::Fabric f{svc::default_provider(), 0, std::chrono::seconds(10)};
	uint32_t server = 0;
	std::map<uint64_t, Reply> replies;

	/* Progresses until the reply to call came (or the wait ends). */
	bool wait(uint64_t call)
	{
		auto until = std::chrono::steady_clock::now() + kWait;
		while (!replies.count(call) && std::chrono::steady_clock::now() < until) {
			f.progress(
				[&](std::string &&m) {
					Reply r = reply_decode(m);
					replies[r.call] = r;
				},
				[](uint32_t, const std::string &w) {
					std::fprintf(stderr, "pfs_badreq: %s\n", w.c_str());
				});
			sched_yield();
		}
		return replies.count(call);
	}
};

} // namespace

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: pfs_badreq INSTANCE\n");
		return 2;
	}
	try {
		Peer p;
		auto addr = addr_read(argv[1], 0);
		if (!addr)
			throw Error(ENOENT, "no " + addr_path(argv[1], 0));
		p.server = p.f.add_peer(*addr);
		std::string me = p.f.address();
		Request hello;
		hello.op = Op::HELLO;
		hello.call = 1;
		hello.data = me;
		p.f.send(p.server, request_encode(hello));
		if (!p.wait(1))
			throw Error(ETIMEDOUT, "no answer to hello");
		uint32_t id = static_cast<uint32_t>(p.replies[1].value);
		p.f.set_self(id);

		auto header = [&](uint8_t op, uint64_t call, uint32_t client) {
			std::string h(1, static_cast<char>(op));
			h.append(reinterpret_cast<const char *>(&client), 4);
			h.append(reinterpret_cast<const char *>(&call), 8);
			return h;
		};
		p.f.send(p.server, std::string("\x03\x01", 2));		/* short */
		p.f.send(p.server, header(99, 2, id));			/* unknown op */
		p.f.send(p.server, header(static_cast<uint8_t>(Op::WRITE), 3, id) + "abc");
		Request stranger;
		stranger.op = Op::LOOKUP;
		stranger.client = 999999;
		stranger.call = 4;
		stranger.path = "/";
		p.f.send(p.server, request_encode(stranger));
		Request big;
		big.op = Op::READ;
		big.client = id;
		big.call = 5;
		big.ino = 1;
		big.length = kStripeMax + 1;
		p.f.send(p.server, request_encode(big));
		Request stats;
		stats.op = Op::STATS;
		stats.client = id;
		stats.call = 6;
		p.f.send(p.server, request_encode(stats));
		bool answered = p.wait(2) && p.wait(3) && p.wait(5) && p.wait(6);
		if (!answered)
			throw Error(ETIMEDOUT, "the server stopped answering");
		auto addr1 = addr_read(argv[1], 1);
		if (!addr1)
			throw Error(ENOENT, "no " + addr_path(argv[1], 1));
		uint32_t server1 = p.f.add_peer(*addr1);
		Request anon = hello;
		anon.call = 7;
		p.f.send(server1, request_encode(anon));
		if (!p.wait(7))
			throw Error(ETIMEDOUT, "server 1 did not answer a hello without a client id");
		auto counters = nlohmann::json::parse(p.replies[6].data);
		nlohmann::json out = {
			{"pfs_badreq", true},
			{"unknown_op", p.replies[2].errnum},
			{"unknown_op_error", p.replies[2].error},
			{"cut_write", p.replies[3].errnum},
			{"long_read", p.replies[5].errnum},
			{"long_read_error", p.replies[5].error},
			{"stranger_answered", p.replies.count(4) > 0},
			{"bad_requests", counters["bad_requests"]},
			{"errors", counters["errors"]},
			{"anonymous_hello_error", p.replies[7].error},
		};
		bool ok = p.replies[2].errnum == EPROTO && p.replies[3].errnum == EPROTO &&
			  p.replies[5].errnum == EINVAL && !p.replies.count(4) &&
			  counters["bad_requests"] == 4 && p.replies[7].errnum == EINVAL;
		out["ok"] = ok;
		std::printf("%s\n", out.dump().c_str());
		/* Let the sends complete before the endpoint closes. */
		auto until = std::chrono::steady_clock::now() + kWait;
		while (p.f.sends_pending() && std::chrono::steady_clock::now() < until)
			p.f.progress([](std::string &&) {}, [](uint32_t, const std::string &) {});
		return ok ? 0 : 1;
	} catch (const std::exception &e) {
		std::printf("{\"pfs_badreq\": true, \"ok\": false, \"error\": \"%s\"}\n", e.what());
		return 1;
	}
}
