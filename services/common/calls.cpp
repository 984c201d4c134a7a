/*
 * calls.cpp: the table of calls awaiting responses (calls.hpp).
 */
#include "calls.hpp"

#include <cerrno>
#include <vector>

namespace svc {

uint64_t Calls::add(uint32_t peer, Clock::time_point deadline, Done done)
{
	uint64_t id = next_id_++;
	calls_.emplace(id, Call{peer, deadline, std::move(done)});
	per_peer_[peer]++;
	return id;
}

void Calls::finish(std::map<uint64_t, Call>::iterator it, int errnum, const std::string &what,
		   std::string &&reply)
{
	Call c = std::move(it->second);
	calls_.erase(it);
	if (--per_peer_[c.peer] == 0)
		per_peer_.erase(c.peer);
	/* Erased first: the callback may add calls. */
	c.done(errnum, what, std::move(reply));
}

bool Calls::answer(uint64_t id, std::string &&reply)
{
	auto it = calls_.find(id);
	if (it == calls_.end())
		return false;
	finish(it, 0, std::string(), std::move(reply));
	return true;
}

void Calls::expire(Clock::time_point now, const Silent &silent)
{
	std::vector<uint64_t> late;
	for (const auto &[id, c] : calls_)
		if (now >= c.deadline)
			late.push_back(id);
	for (uint64_t id : late) {
		auto it = calls_.find(id);
		if (it != calls_.end())
			finish(it, ETIMEDOUT, silent(it->second.peer), std::string());
	}
}

void Calls::fail_peer(uint32_t peer, int errnum, const std::string &what)
{
	std::vector<uint64_t> ids;
	for (const auto &[id, c] : calls_)
		if (c.peer == peer)
			ids.push_back(id);
	for (uint64_t id : ids) {
		auto it = calls_.find(id);
		if (it != calls_.end())
			finish(it, errnum, what, std::string());
	}
}

void Calls::fail_all(int errnum, const std::string &what)
{
	while (!calls_.empty())
		finish(calls_.begin(), errnum, what, std::string());
}

size_t Calls::inflight(uint32_t peer) const
{
	auto it = per_peer_.find(peer);
	return it == per_peer_.end() ? 0 : it->second;
}

} // namespace svc
