/*
 * calls.hpp: requests awaiting their responses, matched by id.
 *
 * Each call records the peer it went to and its deadline, so a call that
 * is never answered ends with an error naming the peer, and a peer found
 * dead fails every call it holds at once.  Ids are unique for the life of
 * the table (a 64-bit counter), so a late answer to an expired call is
 * recognised and dropped, never matched to a newer call.
 *
 * Threading: one thread (the one that owns the fabric) calls everything.
 * The done callbacks run on that thread, inside answer(), expire() and
 * fail_peer(); they may add calls.
 */
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>

namespace svc {

/* A thread that blocks on a call the owning thread answers waits this much
 * past the call's deadline before it decides that thread itself is stuck. */
constexpr auto kCallerGrace = std::chrono::seconds(5);

/* A timeout as messages say it: "2 s", "0.5 s". */
inline std::string seconds_text(std::chrono::milliseconds d)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "%.3g s", d.count() / 1000.0);
	return buf;
}

class Calls {
public:
	using Clock = std::chrono::steady_clock;
	/* errnum 0: reply holds the response; else what says why there is none. */
	using Done = std::function<void(int errnum, const std::string &what, std::string &&reply)>;
	/* What to say about a peer that did not answer in time. */
	using Silent = std::function<std::string(uint32_t peer)>;

	/* A new call to peer; returns the id its request must carry. */
	uint64_t add(uint32_t peer, Clock::time_point deadline, Done done);
	/* Hands the reply to the call's callback; false for an unknown id
	 * (late, or never ours), which the caller drops and may count. */
	bool answer(uint64_t id, std::string &&reply);
	/* Fails every call past its deadline with ETIMEDOUT and silent(peer). */
	void expire(Clock::time_point now, const Silent &silent);
	/* Fails every call to peer with errnum and what. */
	void fail_peer(uint32_t peer, int errnum, const std::string &what);
	/* Fails every call (shutting down). */
	void fail_all(int errnum, const std::string &what);
	size_t inflight(uint32_t peer) const;
	size_t size() const { return calls_.size(); }

private:
	struct Call {
		uint32_t peer;
		Clock::time_point deadline;
		Done done;
	};
	void finish(std::map<uint64_t, Call>::iterator it, int errnum, const std::string &what,
		    std::string &&reply);

	uint64_t next_id_ = 1;
	std::map<uint64_t, Call> calls_;
	std::unordered_map<uint32_t, size_t> per_peer_;
};

} // namespace svc
