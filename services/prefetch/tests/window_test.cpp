// The window: Mercury's prefetch and release rules, and its bound.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "pf_window.h"

namespace {

struct Win {
	pf_window w;
	pf_plan plan;
	pf_entry e{};
	std::vector<pf_hint> hints;
	explicit Win(uint64_t bs, uint32_t cache, uint32_t ra, std::vector<pf_hint> h)
		: hints(std::move(h))
	{
		e.block_size = bs;
		e.cache_size = cache;
		e.readahead = ra;
		e.nhints = hints.size();
		e.hints = hints.data();
		EXPECT_EQ(pf_window_init(&w, &plan, cache), 0);
	}
	~Win() { pf_window_fini(&w, &plan); }
	pf_verdict at(uint64_t size, uint64_t off, uint64_t len)
	{
		return pf_window_access(&w, &plan, &e, size, off, len);
	}
};

const pf_hint kWhole{PF_WILLNEED, 0, 0};

TEST(Window, FetchesTheBlockAndReadAheadThenOnlyWhatIsNew)
{
	Win x(100, 8, 3, {kWhole});
	ASSERT_EQ(x.at(10000, 150, 10), PF_PLANNED);
	ASSERT_EQ(x.plan.nfetch, 4u);
	EXPECT_EQ(x.plan.fetch[0].off, 100u);
	EXPECT_EQ(x.plan.fetch[3].off, 400u);
	EXPECT_EQ(x.plan.fetch[3].len, 100u);
	EXPECT_EQ(x.plan.nrelease, 0u);
	ASSERT_EQ(x.at(10000, 250, 10), PF_PLANNED);
	ASSERT_EQ(x.plan.nfetch, 1u);
	EXPECT_EQ(x.plan.fetch[0].off, 500u);
}

TEST(Window, ReleasesTheLeastRecentlyUsedBeyondCacheSize)
{
	Win x(100, 4, 1, {kWhole});
	x.at(10000, 0, 1);	 // 0 1
	x.at(10000, 200, 1);	 // 0 1 2 3
	x.at(10000, 10, 1);	 // 2 3 0 1: a backward seek finds 0 and 1 held
	ASSERT_EQ(x.plan.nfetch, 0u);
	ASSERT_EQ(x.at(10000, 400, 1), PF_PLANNED);	// 0 1 4 5: releases 2 and 3
	ASSERT_EQ(x.plan.nrelease, 2u);
	EXPECT_EQ(x.plan.release[0].off, 200u);
	EXPECT_EQ(x.plan.release[1].off, 300u);
	EXPECT_EQ(x.w.n, 4u);
}

TEST(Window, OversizedRequestsAndRequestsOutsideRangesAreNotPrefetched)
{
	Win x(100, 4, 2, {{PF_WILLNEED, 1000, 500}, {PF_RANDOM, 0, 0}});
	EXPECT_EQ(x.at(10000, 1000, 101), PF_OVERSIZED);
	EXPECT_EQ(x.at(10000, 999, 1), PF_OUTSIDE);
	EXPECT_EQ(x.at(10000, 1500, 1), PF_OUTSIDE);
	EXPECT_EQ(x.w.n, 0u);
}

TEST(Window, FetchesAreCutToTheRangeAndTheFile)
{
	Win x(100, 8, 5, {{PF_WILLNEED, 50, 260}, {PF_WILLNEED, 900, 0}});
	ASSERT_EQ(x.at(1000, 60, 1), PF_PLANNED);	// range [50, 310): blocks 0..3
	ASSERT_EQ(x.plan.nfetch, 4u);
	EXPECT_EQ(x.plan.fetch[0].off, 50u);
	EXPECT_EQ(x.plan.fetch[0].len, 50u);
	EXPECT_EQ(x.plan.fetch[3].off, 300u);
	EXPECT_EQ(x.plan.fetch[3].len, 10u);
	ASSERT_EQ(x.at(950, 920, 1), PF_PLANNED);	// to the end: the file is 950 bytes
	ASSERT_EQ(x.plan.nfetch, 1u);
	EXPECT_EQ(x.plan.fetch[0].off, 900u);
	EXPECT_EQ(x.plan.fetch[0].len, 50u);
}

TEST(Window, NeverHoldsMoreThanCacheSizeAndNeverReleasesWhatItAskedFor)
{
	std::mt19937_64 rng(7);
	for (uint32_t cache = 1; cache <= 9; cache++) {
		Win x(64, cache, cache - 1, {kWhole});
		for (int i = 0; i < 2000; i++) {
			uint64_t off = rng() % 64000, len = 1 + rng() % 64;
			ASSERT_EQ(x.at(64000, off, len), PF_PLANNED);
			ASSERT_LE(x.w.n, cache);
			for (uint32_t r = 0; r < x.plan.nrelease; r++)
				for (uint32_t f = 0; f < x.plan.nfetch; f++)
					ASSERT_NE(x.plan.release[r].off, x.plan.fetch[f].off);
			// the request's own block is held once it is planned
			bool held = false;
			for (uint32_t b = 0; b < x.w.n; b++)
				held = held || x.w.blocks[b] == off / 64;
			ASSERT_TRUE(held);
		}
		EXPECT_EQ(x.w.max, cache);
	}
}

} // namespace
