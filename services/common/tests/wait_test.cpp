// wait_test.cpp - Fabric::wait() blocks on the provider's wait object: an
// idle endpoint sleeps in the kernel (few loop turns), a message or wake()
// ends the wait at once, on every provider that offers a wait fd.
#include "common/fabric.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using svc::Fabric;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kTtl = std::chrono::seconds(10);
/* Far beyond any wake-up: a wait that lasts this long missed its event. */
constexpr auto kLong = std::chrono::seconds(20);

/* A service loop as the services run theirs: one thread owns the endpoint,
 * other threads hand it messages to send and wake it (Fabric is not
 * thread-safe; only wake() is). */
struct Loop {
	explicit Loop(Fabric &fab) : f(fab) {}

	Fabric &f;
	std::atomic<bool> stop{false};
	std::atomic<uint64_t> turns{0};
	std::atomic<int> got{0};
	std::atomic<int64_t> got_at_ns{0};
	std::mutex mu;
	std::vector<std::pair<uint32_t, std::string>> outbox;

	void post(uint32_t peer, std::string msg)
	{
		{
			std::lock_guard lk(mu);
			outbox.emplace_back(peer, std::move(msg));
		}
		f.wake();
	}

	void run()
	{
		while (!stop) {
			turns++;
			std::vector<std::pair<uint32_t, std::string>> out;
			{
				std::lock_guard lk(mu);
				out.swap(outbox);
			}
			for (auto &[peer, msg] : out)
				f.send(peer, std::move(msg));
			size_t n = out.size() + f.progress(
				[&](std::string &&) {
					got_at_ns = Clock::now().time_since_epoch().count();
					got++;
				},
				[](uint32_t, const std::string &w) { ADD_FAILURE() << w; });
			if (!n)
				f.wait(Clock::now() + kLong);
		}
	}
	void end()
	{
		stop = true;
		f.wake();
	}
};

class Wait : public ::testing::TestWithParam<const char *> {};

/* Waits (yielding) until pred holds or the bound passes. */
template <class P> bool until(P pred)
{
	auto end = Clock::now() + kLong;
	while (!pred() && Clock::now() < end)
		std::this_thread::yield();
	return pred();
}

} // namespace

TEST_P(Wait, WakeEndsAWaitAtOnce)
{
	Fabric f(GetParam(), 0, kTtl);
	if (!f.uses_wait_fd())
		GTEST_SKIP() << GetParam() << " offers no CQ wait fd (polled)";
	auto t0 = Clock::now();
	std::thread w([&] { f.wait(t0 + kLong); });
	f.wake();
	w.join();
	EXPECT_LT(Clock::now() - t0, kLong / 4);
	/* A wake-up before the wait is kept, not lost. */
	f.wake();
	t0 = Clock::now();
	f.wait(t0 + kLong);
	EXPECT_LT(Clock::now() - t0, kLong / 4);
}

TEST_P(Wait, TimeoutEndsAWait)
{
	Fabric f(GetParam(), 0, kTtl);
	auto t0 = Clock::now();
	f.wait(t0 + std::chrono::milliseconds(30));
	if (f.uses_wait_fd()) {
		EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(25));
	}
	EXPECT_LT(Clock::now() - t0, kLong / 4);
}

TEST_P(Wait, IdleEndpointSleepsAndAMessageWakesIt)
{
	Fabric a(GetParam(), 0, kTtl), b(GetParam(), 1, kTtl);
	if (!b.uses_wait_fd())
		GTEST_SKIP() << GetParam() << " offers no CQ wait fd (polled)";
	uint32_t to_b = a.add_peer(b.address());
	b.add_peer(a.address());
	Loop la(a), lb(b);
	std::thread ta([&] { la.run(); }), tb([&] { lb.run(); });
	/* The first message sets up the connection. */
	la.post(to_b, "hello");
	ASSERT_TRUE(until([&] { return lb.got == 1; })) << "first message never came";
	/* Both idle: the receiver's loop turns only on events, so a quiet
	 * while costs a handful of turns, not one per poll. */
	uint64_t before = lb.turns;
	auto quiet = Clock::now() + std::chrono::milliseconds(200);
	while (Clock::now() < quiet)
		std::this_thread::sleep_until(quiet);
	uint64_t idle_turns = lb.turns - before;
	EXPECT_LT(idle_turns, 20u) << "an idle endpoint polled instead of blocking";
	/* A message to the sleeping receiver is taken well before the wait's
	 * own end (kLong). */
	auto sent = Clock::now();
	la.post(to_b, "after quiet");
	ASSERT_TRUE(until([&] { return lb.got == 2; })) << "message to an idle endpoint lost";
	auto took = std::chrono::nanoseconds(lb.got_at_ns.load()) - sent.time_since_epoch();
	EXPECT_LT(took, kLong / 4);
	la.end();
	lb.end();
	ta.join();
	tb.join();
}

INSTANTIATE_TEST_SUITE_P(Providers, Wait, ::testing::Values("tcp;ofi_rxm", "shm", "udp;ofi_rxd"),
			 [](const auto &p) {
				 std::string n = p.param;
				 for (auto &c : n)
					 if (!isalnum(static_cast<unsigned char>(c)))
						 c = '_';
				 return n;
			 });
