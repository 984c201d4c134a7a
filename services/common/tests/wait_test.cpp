// wait_test.cpp - Fabric::wait() blocks on the provider's wait object: an
// idle endpoint sleeps in the kernel (few loop turns), a message or wake()
// ends the wait at once, on every provider that offers a wait fd; after a
// turn with work it only yields for kSpin (spin.hpp) before it blocks.
#include "common/fabric.hpp"

#include "provider_name.hpp"

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
	std::atomic<uint64_t> spins{0};	/* turns whose wait() only yielded */
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
			if (!n) {
				f.wait(Clock::now() + kLong);
				spins = f.stats().spins;
			}
		}
	}
	void end()
	{
		stop = true;
		f.wake();
	}
};

class Wait : public ::testing::TestWithParam<const char *> {};

void nop_msg(std::string &&) {}
void no_error(uint32_t, const std::string &w)
{
	ADD_FAILURE() << w;
}

/* Turns of an idle service loop (progress(), then wait() until `until`)
 * until one of them blocked on the wait fd or `until` passed. */
void idle_until_blocked(Fabric &f, Clock::time_point until)
{
	uint64_t waits = f.stats().waits;
	while (f.stats().waits == waits && Clock::now() < until) {
		f.progress(nop_msg, no_error);
		f.wait(until);
	}
}

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
	std::thread w([&] { idle_until_blocked(f, t0 + kLong); });
	f.wake();
	w.join();
	EXPECT_LT(Clock::now() - t0, kLong / 4);
	EXPECT_EQ(f.stats().waits, 1u);
	/* A wake-up before the wait is kept, not lost. */
	f.wake();
	t0 = Clock::now();
	idle_until_blocked(f, t0 + kLong);
	EXPECT_LT(Clock::now() - t0, kLong / 4);
	EXPECT_EQ(f.stats().waits, 2u);
}

TEST_P(Wait, TimeoutEndsAWait)
{
	Fabric f(GetParam(), 0, kTtl);
	auto t0 = Clock::now();
	idle_until_blocked(f, t0 + std::chrono::milliseconds(30));
	if (f.uses_wait_fd()) {
		EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(25));
	}
	EXPECT_LT(Clock::now() - t0, kLong / 4);
}

/* After a turn with work a loop keeps looking (yields) for kSpin, then
 * blocks; turns that follow a block do not spin again until work comes. */
TEST_P(Wait, AWaitAfterWorkYieldsForTheSpinThenBlocks)
{
	Fabric f(GetParam(), 0, kTtl);
	if (!f.uses_wait_fd())
		GTEST_SKIP() << GetParam() << " offers no CQ wait fd (polled)";
	constexpr auto kBlock = std::chrono::milliseconds(20);
	f.progress(nop_msg, no_error);	/* a turn with work: it does not wait */
	auto t0 = Clock::now();
	Clock::time_point first_block;
	while (f.stats().waits == 0) {
		f.progress(nop_msg, no_error);
		first_block = Clock::now();
		f.wait(first_block + kBlock);
		ASSERT_LT(Clock::now() - t0, kLong) << "wait() never blocked";
	}
	EXPECT_GE(first_block - t0, svc::kSpin);
	EXPECT_GT(f.stats().spins, 0u);
	EXPECT_GE(Clock::now() - first_block, kBlock * 3 / 4) << "the block ended early";
	/* Still idle: the next turn blocks at once. */
	uint64_t spins = f.stats().spins;
	f.progress(nop_msg, no_error);
	f.wait(Clock::now() + std::chrono::milliseconds(1));
	EXPECT_EQ(f.stats().spins, spins);
	EXPECT_EQ(f.stats().waits, 2u);
	/* A turn that skips wait() is work: the spin starts again. */
	f.progress(nop_msg, no_error);
	f.progress(nop_msg, no_error);
	f.wait(Clock::now() + kLong);
	EXPECT_EQ(f.stats().spins, spins + 1);
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
	/* Both idle: once the receiver's spin after the message is over
	 * (kSpin, far below the first 100 ms), its loop turns only on events,
	 * so the next quiet 100 ms cost a handful of turns, none spinning. */
	auto quiet = Clock::now() + std::chrono::milliseconds(100);
	while (Clock::now() < quiet)
		std::this_thread::sleep_until(quiet);
	uint64_t before = lb.turns, spins_before = lb.spins;
	quiet = Clock::now() + std::chrono::milliseconds(100);
	while (Clock::now() < quiet)
		std::this_thread::sleep_until(quiet);
	EXPECT_LT(lb.turns - before, 10u) << "an idle endpoint polled instead of blocking";
	EXPECT_EQ(lb.spins, spins_before) << "an idle endpoint spun past its budget";
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

/* The target of an RMA op does nothing for it but progress: one blocked
 * on its wait object (past its spin) is woken by the op's traffic and
 * serves it, so a read of its buffer (which needs the target to answer)
 * completes long before the target's wait would end on its own (kLong). */
TEST_P(Wait, AnRmaReadReachesATargetBlockedOnItsWaitObject)
{
	Fabric a(GetParam(), 0, kTtl), b(GetParam(), 1, kTtl);
	if (!a.has_rma())
		GTEST_SKIP() << GetParam() << " has no RMA";
	uint32_t to_b = a.add_peer(b.address());
	b.add_peer(a.address());
	std::string src(256 * 1024, 's');
	svc::Remote at;
	b.expose(src.data(), src.size(), false, &at);
	Loop lb(b);
	std::thread tb([&] { lb.run(); });
	/* The first read sets up the connection; the second finds b blocked
	 * (its spin ended long before: no turns in the quiet's last 20 ms). */
	for (auto quiet : {std::chrono::milliseconds(0), std::chrono::milliseconds(50)}) {
		uint64_t turns = 0;
		for (auto part : {quiet, quiet / 2}) {
			turns = lb.turns;
			auto end = Clock::now() + part;
			while (Clock::now() < end)
				std::this_thread::sleep_until(end);
		}
		if (quiet.count() && b.uses_wait_fd()) {
			EXPECT_EQ(lb.turns, turns) << "the target did not block in the quiet";
		}
		std::atomic<bool> done{false};
		std::string got;
		auto t0 = Clock::now();
		a.read_from(to_b, at, src.size(), [&](int e, const std::string &w, std::string &&d) {
			EXPECT_EQ(e, 0) << w;
			got = std::move(d);
			done = true;
		});
		while (!done && Clock::now() - t0 < kLong)
			if (!a.progress(nop_msg, no_error))
				std::this_thread::yield();
		ASSERT_TRUE(done) << "the read never completed";
		EXPECT_TRUE(got == src) << "read " << got.size() << " bytes that differ";
		EXPECT_LT(Clock::now() - t0, kLong / 4) << "the target served it only at its timeout";
	}
	lb.end();
	tb.join();
}

INSTANTIATE_TEST_SUITE_P(Providers, Wait, ::testing::Values("tcp;ofi_rxm", "shm", "udp;ofi_rxd"),
			 provider_name);
