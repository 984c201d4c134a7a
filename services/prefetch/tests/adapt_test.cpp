// Adaptive read-ahead (pf_adapt.h): what each pattern fetches, the window, the budget.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

#include "pf_adapt.h"

namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;

// Replays reads through an adapt and keeps what its plans say is held.
struct Reader {
	pf_adapt a;
	std::map<uint64_t, uint64_t> held;	// off -> len, from the plans alone
	uint64_t reads = 0, covered = 0, fetches = 0, fetched = 0, max_held = 0;

	Reader(uint64_t budget, uint64_t max_fetch) { pf_adapt_init(&a, budget, max_fetch); }

	bool holds(uint64_t off, uint64_t len) const
	{
		for (uint64_t at = off; at < off + len;) {
			auto it = held.upper_bound(at);
			if (it == held.begin())
				return false;
			--it;
			if (at >= it->first + it->second)
				return false;
			at = it->first + it->second;
		}
		return true;
	}

	void read(uint64_t off, uint64_t len, uint64_t size = UINT64_MAX)
	{
		reads++;
		covered += holds(off, len);
		pf_adapt_access(&a, 0, size, off, len);
		for (unsigned i = 0; i < a.nrelease; i++) {
			auto it = held.find(a.release[i].off);
			ASSERT_TRUE(it != held.end() && it->second == a.release[i].len);
			// never the range the read is in
			ASSERT_FALSE(it->first < off + len && it->first + it->second > off);
			held.erase(it);
		}
		uint64_t bytes = 0;
		for (auto &[o, l] : held)
			bytes += l;
		for (unsigned i = 0; i < a.nfetch; i++) {
			ASSERT_LE(a.fetch[i].len, a.max_fetch);
			ASSERT_LE(a.fetch[i].off + a.fetch[i].len, size);
			ASSERT_FALSE(holds(a.fetch[i].off, 1));	// nothing fetched twice
			held[a.fetch[i].off] = a.fetch[i].len;
			bytes += a.fetch[i].len;
			fetched += a.fetch[i].len;
		}
		fetches += a.nfetch;
		ASSERT_LE(bytes, a.budget);
		ASSERT_EQ(bytes, a.held_bytes);
		ASSERT_EQ(held.size(), a.nheld);
		max_held = std::max(max_held, bytes);
	}
};

TEST(Adapt, SequentialReadsAreFetchedAheadInBatches)
{
	Reader r(16 * 4 * MiB, 4 * MiB);
	for (uint64_t off = 0; off < 256 * MiB; off += 32 * KiB)
		r.read(off, 32 * KiB);
	EXPECT_EQ(r.a.pat, PF_PAT_SEQUENTIAL);
	EXPECT_GE(r.covered, r.reads - 2);	// all but the first two
	EXPECT_LE(r.fetched, 256 * MiB + 64 * 32 * KiB);
	EXPECT_LT(r.fetches, r.reads / 16);	// batches, not one fetch per read
	EXPECT_LE(r.max_held, 4 * MiB);		// read past: released
}

TEST(Adapt, SparseStridedFetchesOnlyThePredictedReads)
{
	Reader r(16 * 4 * MiB, 4 * MiB);
	for (uint64_t off = 0; off < 4096 * MiB; off += 3 * MiB)
		r.read(off, 64 * KiB);
	EXPECT_EQ(r.a.pat, PF_PAT_STRIDED);
	EXPECT_GE(r.covered, r.reads - 3);
	// 64 KiB per read, and at most the window ahead beyond the last
	EXPECT_LE(r.fetched, (r.reads + PF_ADAPT_WIN) * 64 * KiB);
	EXPECT_EQ(r.a.wasted, 0u);
}

TEST(Adapt, StridedReadsWithSmallGapsAreJoinedIntoFewFetches)
{
	Reader r(16 * 4 * MiB, 4 * MiB);
	for (uint64_t off = 0; off < 1024 * MiB; off += 288 * KiB)
		r.read(off, 256 * KiB);
	EXPECT_GE(r.covered, r.reads - 3);
	EXPECT_LT(r.fetches, r.reads / 4);
	EXPECT_LE(r.fetched, (r.reads + PF_ADAPT_WIN) * 288 * KiB);
}

TEST(Adapt, DenseStridedReadsFetchOnlyTheirBytes)
{
	Reader r(16 * 4 * MiB, 4 * MiB);
	for (uint64_t off = 0; off < 1024 * MiB; off += 512 * KiB)
		r.read(off, 256 * KiB);
	EXPECT_GE(r.covered, r.reads - 3);
	EXPECT_LE(r.fetched, (r.reads + PF_ADAPT_WIN) * 256 * KiB);
}

TEST(Adapt, BackwardStridedReadsArePredictedDownwards)
{
	Reader r(8 * MiB, MiB);
	for (int64_t off = 1024 * MiB; off >= 0; off -= MiB)
		r.read(uint64_t(off), 16 * KiB);
	EXPECT_EQ(r.a.pat, PF_PAT_STRIDED);
	EXPECT_LT(r.a.stride, 0);
	EXPECT_GE(r.covered, r.reads - 3);
}

TEST(Adapt, ForwardReadsOfVaryingSizesAndGapsWithSeeksBack)
{
	// rootio's pattern, denser: 125-375 KiB reads, gaps of 0-100 KiB, a read in 16
	// back into a gap three reads behind
	Reader r(16 * 4 * MiB, 4 * MiB);
	std::mt19937_64 g(7);
	uint64_t off = 0, back = 0;
	std::vector<std::pair<uint64_t, uint64_t>> gaps;
	for (int i = 0; off < 512 * MiB; i++) {
		uint64_t len = 125 * KiB + g() % (250 * KiB), gap = g() % (100 * KiB);
		if (i % 16 == 15 && gaps.size() > 3) {
			auto [o, l] = gaps[gaps.size() - 4];
			r.read(o, std::min(l, len));
			back++;
		}
		r.read(off, len);
		gaps.push_back({off + len, gap});
		off += len + gap;
	}
	EXPECT_GT(back, 10u);
	EXPECT_EQ(r.a.pat, PF_PAT_FORWARD);
	EXPECT_GE(r.covered, r.reads * 9 / 10);
	EXPECT_LE(r.max_held, r.a.budget);
}

TEST(Adapt, RandomReadsFetchNothingAndShrinkTheWindow)
{
	Reader r(16 * 4 * MiB, 4 * MiB);
	for (uint64_t off = 0; off < 64 * MiB; off += 32 * KiB)
		r.read(off, 32 * KiB);
	uint64_t before = r.fetched;
	std::mt19937_64 g(3);
	for (int i = 0; i < 1000; i++)
		r.read((g() % 4096) * MiB + 64 * MiB, 4 * KiB);
	EXPECT_EQ(r.a.win, 1u);
	EXPECT_LE(r.fetched - before, 8 * MiB);	// what the first misses still predicted
}

TEST(Adapt, TheBudgetHoldsAtEverySize)
{
	for (uint64_t budget : {64 * KiB, 100 * KiB, MiB, 3 * MiB}) {
		Reader r(budget, 64 * KiB);
		std::mt19937_64 g(budget);
		for (uint64_t off = 0; off < 128 * MiB; off += 96 * KiB)
			r.read(off, 32 * KiB + g() % (64 * KiB));
		for (uint64_t off = 0; off < 128 * MiB; off += 16 * KiB)
			r.read(off, 16 * KiB);
		EXPECT_LE(r.max_held, budget) << budget;
	}
}

TEST(Adapt, ReadsAreCutToTheRange)
{
	Reader r(16 * MiB, MiB);
	uint64_t size = 10 * MiB + 123;
	for (uint64_t off = 0; off < size; off += 64 * KiB)
		r.read(off, std::min<uint64_t>(64 * KiB, size - off), size);
	EXPECT_LE(r.fetched, size);
}

} // namespace
