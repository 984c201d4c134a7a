// fabric_test.cpp - two endpoints of one process: small and pieced messages,
// peers added one at a time, self ids that keep senders' pieces apart.
#include "common/error.hpp"
#include "common/fabric.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <sched.h>
#include <vector>

using svc::Fabric;

namespace {

constexpr auto kTtl = std::chrono::seconds(10);
constexpr auto kWait = std::chrono::seconds(20);

/* Progresses every endpoint until want messages reached `to` (bounded). */
std::vector<std::string> pump(std::vector<Fabric *> eps, Fabric &to, size_t want)
{
	std::vector<std::string> got;
	std::vector<std::string> errs;
	auto until = std::chrono::steady_clock::now() + kWait;
	while (got.size() < want && std::chrono::steady_clock::now() < until) {
		for (Fabric *f : eps)
			f->progress(
				[&](std::string &&m) {
					if (f == &to)
						got.push_back(std::move(m));
				},
				[&](uint32_t, const std::string &w) { errs.push_back(w); });
		sched_yield();
	}
	EXPECT_TRUE(errs.empty()) << errs.front();
	return got;
}

std::string pattern(size_t n, char seed)
{
	std::string s(n, '\0');
	for (size_t i = 0; i < n; i++)
		s[i] = static_cast<char>(seed + i * 7 + i / 4099);
	return s;
}

} // namespace

TEST(Fabric, PiecesOfTwoSendersReassembleApart)
{
	Fabric server("tcp;ofi_rxm", 0, kTtl);
	Fabric a("tcp;ofi_rxm", 1, kTtl), b("tcp;ofi_rxm", 2, kTtl);
	uint32_t to_a = server.add_peer(a.address());
	uint32_t to_b = server.add_peer(b.address());
	EXPECT_EQ(to_a, 0u);
	EXPECT_EQ(to_b, 1u);
	uint32_t sa = a.add_peer(server.address()), sb = b.add_peer(server.address());
	/* Same message ids from both senders: only the self id tells them apart. */
	std::string big_a = pattern(3 * Fabric::kCtrlMax + 5, 'a');
	std::string big_b = pattern(2 * Fabric::kCtrlMax + 9, 'b');
	a.send(sa, big_a);
	b.send(sb, big_b);
	a.send(sa, "small");
	auto got = pump({&server, &a, &b}, server, 3);
	ASSERT_EQ(got.size(), 3u);
	int seen = 0;
	for (auto &m : got)
		seen |= (m == big_a) | (m == big_b) << 1 | (m == "small") << 2;
	EXPECT_EQ(seen, 7);
	/* And back, to a peer the server added. */
	server.send(to_b, pattern(Fabric::kCtrlMax * 4, 'r'));
	auto back = pump({&server, &a, &b}, b, 1);
	ASSERT_EQ(back.size(), 1u);
	EXPECT_EQ(back[0], pattern(Fabric::kCtrlMax * 4, 'r'));
}

TEST(Fabric, BadPeerAndProviderAreOneLine)
{
	Fabric f("tcp;ofi_rxm", 0, kTtl);
	try {
		f.send(5, "x");
		FAIL() << "no error";
	} catch (const svc::Error &e) {
		EXPECT_STREQ(e.what(), "send to peer 5 of 0");
	}
	try {
		Fabric bad("no-such-provider", 0, kTtl);
		FAIL() << "no error";
	} catch (const svc::Error &e) {
		EXPECT_NE(std::string(e.what()).find("no libfabric provider 'no-such-provider'"),
			  std::string::npos);
	}
}
