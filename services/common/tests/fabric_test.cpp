// fabric_test.cpp - two endpoints of one process: small and long (announced,
// then sent whole) messages, peers added one at a time, self ids that keep
// senders' long messages apart.
#include "common/error.hpp"
#include "common/fabric.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <sched.h>
#include <vector>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>

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

TEST(Fabric, LongMessagesOfTwoSendersStayApart)
{
	Fabric server("tcp;ofi_rxm", 0, kTtl);
	Fabric a("tcp;ofi_rxm", 1, kTtl), b("tcp;ofi_rxm", 2, kTtl);
	uint32_t to_a = server.add_peer(a.address());
	uint32_t to_b = server.add_peer(b.address());
	EXPECT_EQ(to_a, 0u);
	EXPECT_EQ(to_b, 1u);
	uint32_t sa = a.add_peer(server.address()), sb = b.add_peer(server.address());
	/* Long messages of both senders at once: the self id in the tag tells
	 * them apart. */
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

namespace {

/* A bare tagged RDM endpoint that sends frames as a broken or departed peer
 * would: the transport's wire format written by hand (fabric.cpp). */
class RawPeer {
public:
	explicit RawPeer(const std::string &to)
	{
		fi_info *hints = fi_allocinfo();
		hints->caps = FI_TAGGED;
		hints->mode = FI_CONTEXT | FI_CONTEXT2;
		hints->ep_attr->type = FI_EP_RDM;
		hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
		hints->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
		EXPECT_EQ(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info_), 0);
		fi_freeinfo(hints);
		fi_cq_attr cq_attr = {};
		cq_attr.format = FI_CQ_FORMAT_TAGGED;
		fi_av_attr av_attr = {};
		av_attr.type = FI_AV_TABLE;
		EXPECT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
		EXPECT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
		EXPECT_EQ(fi_cq_open(domain_, &cq_attr, &cq_, nullptr), 0);
		EXPECT_EQ(fi_av_open(domain_, &av_attr, &av_, nullptr), 0);
		EXPECT_EQ(fi_endpoint(domain_, info_, &ep_, nullptr), 0);
		EXPECT_EQ(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), 0);
		EXPECT_EQ(fi_ep_bind(ep_, &av_->fid, 0), 0);
		EXPECT_EQ(fi_enable(ep_), 0);
		EXPECT_EQ(fi_av_insert(av_, to.data(), 1, &to_, 0, nullptr), 1);
	}
	~RawPeer()
	{
		fi_close(&ep_->fid);
		fi_close(&av_->fid);
		fi_close(&cq_->fid);
		fi_close(&domain_->fid);
		fi_close(&fabric_->fid);
		fi_freeinfo(info_);
	}
	/* An announcement (kind 1: self id, message id, length) on the control tag. */
	void announce(uint32_t self, uint32_t id, uint32_t len)
	{
		frame_.assign(13, '\0');
		frame_[0] = 1;
		std::memcpy(&frame_[1], &self, 4);
		std::memcpy(&frame_[5], &id, 4);
		std::memcpy(&frame_[9], &len, 4);
		pending_ = true;
		poll();
	}
	/* Progress; posts the frame once the provider takes it (connecting
	 * needs the receiver's progress too). */
	void poll()
	{
		if (pending_) {
			ssize_t ret = fi_tsend(ep_, frame_.data(), frame_.size(), nullptr, to_,
					       1ULL << 62, &ctx_);
			EXPECT_TRUE(ret == 0 || ret == -FI_EAGAIN) << ret;
			pending_ = ret == -FI_EAGAIN;
		}
		fi_cq_tagged_entry e;
		fi_cq_read(cq_, &e, 1);
	}

private:
	fi_info *info_ = nullptr;
	fid_fabric *fabric_ = nullptr;
	fid_domain *domain_ = nullptr;
	fid_cq *cq_ = nullptr;
	fid_av *av_ = nullptr;
	fid_ep *ep_ = nullptr;
	fi_addr_t to_ = FI_ADDR_UNSPEC;
	std::string frame_;
	bool pending_ = false;
	fi_context2 ctx_;
};

/* Progresses f (and the raw peer) until an error naming `what` or the bound. */
std::string error_with(Fabric &f, RawPeer &raw, const std::string &what)
{
	auto until = std::chrono::steady_clock::now() + kWait;
	std::string found;
	while (found.empty() && std::chrono::steady_clock::now() < until) {
		f.progress([](std::string &&) { ADD_FAILURE() << "a message from nowhere"; },
			   [&](uint32_t, const std::string &w) {
				   if (w.find(what) != std::string::npos)
					   found = w;
			   });
		raw.poll();
		sched_yield();
	}
	return found;
}

} // namespace

TEST(Fabric, AnnouncedMessageThatNeverComesIsDroppedAfterTheTtl)
{
	Fabric f("tcp;ofi_rxm", 0, std::chrono::milliseconds(200));
	RawPeer raw(f.address());
	auto t0 = std::chrono::steady_clock::now();
	raw.announce(7, 1, 100000);
	std::string err = error_with(f, raw, "did not come within the timeout");
	EXPECT_EQ(err, "dropped a 100000-byte message from sender 7 that did not come within "
		       "the timeout");
	EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200));
}

TEST(Fabric, AnnouncementOfABadLengthIsDroppedNamingIt)
{
	Fabric f("tcp;ofi_rxm", 0, kTtl);
	RawPeer raw(f.address());
	raw.announce(9, 1, 0xffffffffu);
	std::string err = error_with(f, raw, "announcement");
	EXPECT_NE(err.find("announcement of a 4294967295-byte message from sender 9"),
		  std::string::npos)
		<< err;
}
