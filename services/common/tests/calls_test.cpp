// calls_test.cpp - matching responses to requests, deadlines and dead peers.
#include "common/calls.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

using svc::Calls;

namespace {

struct Result {
	int errnum = -1;
	std::string what, reply;
};

Calls::Done record(Result &r)
{
	return [&r](int e, const std::string &w, std::string &&rep) {
		r.errnum = e;
		r.what = w;
		r.reply = std::move(rep);
	};
}

} // namespace

TEST(Calls, AnswerMatchesByIdOnce)
{
	Calls c;
	auto far = Calls::Clock::now() + std::chrono::hours(1);
	Result a, b;
	uint64_t ia = c.add(3, far, record(a));
	uint64_t ib = c.add(3, far, record(b));
	EXPECT_NE(ia, ib);
	EXPECT_EQ(c.inflight(3), 2u);
	EXPECT_TRUE(c.answer(ib, "B"));
	EXPECT_EQ(b.errnum, 0);
	EXPECT_EQ(b.reply, "B");
	EXPECT_EQ(a.errnum, -1);
	EXPECT_FALSE(c.answer(ib, "again"));	/* late or duplicate: dropped */
	EXPECT_EQ(c.inflight(3), 1u);
	EXPECT_TRUE(c.answer(ia, "A"));
	EXPECT_EQ(c.size(), 0u);
	EXPECT_EQ(c.inflight(3), 0u);
}

TEST(Calls, ExpireNamesThePeer)
{
	Calls c;
	auto now = Calls::Clock::now();
	Result late, early;
	c.add(1, now - std::chrono::milliseconds(1), record(late));
	c.add(2, now + std::chrono::hours(1), record(early));
	c.expire(now, [](uint32_t p) { return "server " + std::to_string(p) + " is silent"; });
	EXPECT_EQ(late.errnum, ETIMEDOUT);
	EXPECT_EQ(late.what, "server 1 is silent");
	EXPECT_EQ(early.errnum, -1);
	EXPECT_EQ(c.size(), 1u);
}

TEST(Calls, FailPeerEndsOnlyItsCallsAndCallbacksMayAdd)
{
	Calls c;
	auto far = Calls::Clock::now() + std::chrono::hours(1);
	Result a, other, retry;
	c.add(1, far, [&](int e, const std::string &w, std::string &&) {
		a.errnum = e;
		a.what = w;
		c.add(1, far, record(retry));	/* a retry queued from the callback */
	});
	c.add(2, far, record(other));
	c.fail_peer(1, EIO, "server 1 is gone");
	EXPECT_EQ(a.errnum, EIO);
	EXPECT_EQ(a.what, "server 1 is gone");
	EXPECT_EQ(other.errnum, -1);
	EXPECT_EQ(c.inflight(1), 1u);
	c.fail_all(ESHUTDOWN, "closing");
	EXPECT_EQ(retry.errnum, ESHUTDOWN);
	EXPECT_EQ(other.errnum, ESHUTDOWN);
	EXPECT_EQ(c.size(), 0u);
}
