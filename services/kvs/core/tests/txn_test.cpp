// txn_test.cpp - transactions, merging of redundant ops, the batch wire form.
#include "txn.hpp"

#include "apply.hpp"
#include "expect_error.hpp"
#include "lookup.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

using namespace kvs;

namespace {

Op put(std::string k, std::string v)
{
	return Op{std::move(k), std::move(v), false};
}

Op del(std::string k)
{
	return Op{std::move(k), {}, true};
}

FenceBatch batch(std::vector<Op> ops, uint32_t count = 1, uint32_t nprocs = 64,
		 std::string name = "f1")
{
	FenceBatch b;
	b.name = std::move(name);
	b.nprocs = nprocs;
	b.count = count;
	b.ops_in = ops.size();
	b.ops = std::move(ops);
	return b;
}

// The root ref after applying `ops` to an empty namespace (the reference
// semantics a merge must preserve).
std::string applied(ContentStore& cs, const std::vector<Op>& ops)
{
	return apply_ops(cs, empty_root(cs), ops).root_ref;
}

} // namespace

TEST(Txn, BuffersOpsInOrder)
{
	Txn t;
	EXPECT_TRUE(t.empty());
	t.put("a.b", "1");
	t.unlink("c");
	t.put("a.b", "2");
	ASSERT_EQ(t.ops().size(), 3u);
	EXPECT_EQ(t.ops()[0], put("a.b", "1"));
	EXPECT_EQ(t.ops()[1], del("c"));
	EXPECT_EQ(t.ops()[2], put("a.b", "2"));
	t.clear();
	EXPECT_TRUE(t.empty());
}

TEST(Txn, RejectsBadKeysAndLargeValues)
{
	Txn t(10);
	EXPECT_KVS_ERROR(t.put("a..b", "x"), EINVAL, "bad key 'a..b': empty component");
	EXPECT_KVS_ERROR(t.unlink("a b"), EINVAL, "not allowed");
	EXPECT_KVS_ERROR(t.put(".", "x"), EINVAL, "bad key '.'");
	t.put("ok", std::string(10, 'v'));
	EXPECT_KVS_ERROR(t.put("big", std::string(11, 'v')), EFBIG, "value for key 'big' is 11 bytes (the limit is 10 bytes)");
	EXPECT_EQ(t.ops().size(), 1u);
	EXPECT_EQ(Txn().max_value(), 64u << 20);
}

TEST(Merge, IdenticalOpsCollapseToOne)
{
	const uint32_t n = 32;
	FenceBatch into = batch({put("shared.key", "redundant-value")}, 1, n);
	for (uint32_t i = 1; i < n; i++)
		batch_merge(into, batch({put("shared.key", "redundant-value")}, 1, n));
	ASSERT_EQ(into.ops.size(), 1u);
	EXPECT_EQ(into.ops[0], put("shared.key", "redundant-value"));
	EXPECT_EQ(into.count, n);
	EXPECT_EQ(into.ops_in, n);
}

TEST(Merge, DifferentValuesForOneKeyKeptInOrder)
{
	FenceBatch into = batch({put("k", "1")});
	batch_merge(into, batch({put("k", "2")}));
	batch_merge(into, batch({put("k", "3"), put("other", "x")}));
	ASSERT_EQ(into.ops.size(), 4u);
	EXPECT_EQ(into.ops[0], put("k", "1"));
	EXPECT_EQ(into.ops[1], put("k", "2"));
	EXPECT_EQ(into.ops[2], put("k", "3"));
	EXPECT_EQ(into.ops[3], put("other", "x"));
	EXPECT_EQ(into.count, 3u);
	EXPECT_EQ(into.ops_in, 4u);
}

TEST(Merge, CountsAndOpsInAddUp)
{
	FenceBatch into = batch({put("a", "1"), put("b", "2")}, 3);
	into.ops_in = 10; // this broker already merged 10 ops from 3 participants
	FenceBatch from = batch({put("a", "1"), put("c", "3")}, 2);
	from.ops_in = 7;
	batch_merge(into, std::move(from));
	EXPECT_EQ(into.count, 5u);
	EXPECT_EQ(into.ops_in, 17u);
	EXPECT_EQ(into.ops.size(), 3u);
}

TEST(Merge, MismatchedFenceIsEinvalAndLeavesBatch)
{
	FenceBatch into = batch({put("a", "1")}, 1, 4, "fence-A");
	EXPECT_KVS_ERROR(batch_merge(into, batch({put("b", "1")}, 1, 4, "fence-B")), EINVAL, "cannot merge fence 'fence-B' into fence 'fence-A'");
	EXPECT_KVS_ERROR(batch_merge(into, batch({put("b", "1")}, 1, 5, "fence-A")), EINVAL, "nprocs 5 does not match 4");
	EXPECT_KVS_ERROR(batch_merge(into, batch({put("b", "1")}, 4, 4, "fence-A")), EINVAL, "5 participants merged, more than nprocs 4");
	EXPECT_EQ(into.ops.size(), 1u);
	EXPECT_EQ(into.count, 1u);
	EXPECT_EQ(into.name, "fence-A");
}

TEST(Merge, DropsOnlyWhatChangesNothing)
{
	// into: a=1 then a=2; from: a=1. Applied as a concatenation a ends as 1,
	// so the a=1 of `from` must be kept although an identical op exists.
	FenceBatch into = batch({put("a", "1"), put("a", "2")});
	batch_merge(into, batch({put("a", "1")}));
	EXPECT_EQ(into.ops.size(), 3u);

	// A participant's own a=2, a=1 after another participant's a=1.
	FenceBatch x = batch({put("a", "1")});
	batch_merge(x, batch({put("a", "2"), put("a", "1")}));
	EXPECT_EQ(x.ops.size(), 3u);

	// A directory op in between: unlink d, then d.k=v again must be kept.
	FenceBatch y = batch({put("d.k", "v")});
	batch_merge(y, batch({del("d"), put("d.k", "v")}));
	EXPECT_EQ(y.ops.size(), 3u);

	// An op below the key in between: put d=v over d.k must be kept.
	FenceBatch z = batch({put("d", "v"), put("d.k", "w")});
	batch_merge(z, batch({put("d", "v")}));
	EXPECT_EQ(z.ops.size(), 3u);

	// Ops on siblings in between do not matter.
	FenceBatch s = batch({put("d.k", "v"), put("d.j", "w"), del("e")});
	batch_merge(s, batch({put("d.k", "v"), del("e"), put("d.j", "w")}));
	EXPECT_EQ(s.ops.size(), 3u);
}

TEST(Merge, MergedBatchAppliesLikeTheConcatenation)
{
	std::vector<std::vector<Op>> parts = {
		{put("a.x", "1"), put("b", "2"), del("c.y")},
		{put("a.x", "1"), put("a.x", "9"), put("a.x", "1")},
		{put("c.y", "3"), put("b", "2"), del("a")},
		{put("a.x", "1"), put("c.y", "3"), put("b", "2")},
		{del("a"), put("a", std::string(100, 'L'))},
		{put("a", std::string(100, 'L')), put("d.e.f", "deep"), put("d.e.f", "deep")},
	};
	std::vector<Op> concat;
	FenceBatch merged = batch(parts[0], 1, 8);
	for (size_t i = 0; i < parts.size(); i++) {
		concat.insert(concat.end(), parts[i].begin(), parts[i].end());
		if (i > 0)
			batch_merge(merged, batch(parts[i], 1, 8));
	}
	EXPECT_LT(merged.ops.size(), concat.size());
	ContentStore a, b;
	EXPECT_EQ(applied(a, merged.ops), applied(b, concat));
}

TEST(Merge, MergerKeepsIndexAcrossManyChildren)
{
	// 1000 children each putting 50 shared and 1 private key: one pass each.
	const uint32_t n = 1000;
	BatchMerger m(batch({}, 0, n));
	for (uint32_t c = 0; c < n; c++) {
		std::vector<Op> ops;
		for (int i = 0; i < 50; i++)
			ops.push_back(put("dir" + std::to_string(i % 5) + ".k" + std::to_string(i), "same"));
		ops.push_back(put("private.p" + std::to_string(c), "mine"));
		m.merge(batch(std::move(ops), 1, n));
	}
	FenceBatch b = std::move(m).take();
	EXPECT_EQ(b.ops.size(), 50u + n);
	EXPECT_EQ(b.count, n);
	EXPECT_EQ(b.ops_in, 51u * n);
}

TEST(Batch, EncodeDecodeRoundTrip)
{
	FenceBatch b = batch({put("a.b", std::string("bin\0ary\xff", 8)), del("c"), put("e", "")}, 3, 9, "fence name with spaces");
	b.ops_in = 12345678901ull;
	FenceBatch d = batch_decode(batch_encode(b));
	EXPECT_EQ(d.name, b.name);
	EXPECT_EQ(d.nprocs, 9u);
	EXPECT_EQ(d.count, 3u);
	EXPECT_EQ(d.ops_in, 12345678901ull);
	EXPECT_EQ(d.ops, b.ops);

	FenceBatch empty = batch({}, 0, 0, "");
	FenceBatch e = batch_decode(batch_encode(empty));
	EXPECT_TRUE(e.ops.empty());
	EXPECT_EQ(e.name, "");
}

TEST(Batch, EncodingIsLittleEndianAndCompact)
{
	FenceBatch b = batch({put("k", "v")}, 1, 2, "f");
	std::string w = batch_encode(b);
	// magic 4 + name 4+1 + nprocs 4 + count 4 + ops_in 8 + nops 4 + op (1 + 4+1 + 4+1)
	EXPECT_EQ(w.size(), 4u + 5 + 4 + 4 + 8 + 4 + 11);
	EXPECT_EQ(w.substr(0, 4), "KVB1");
	EXPECT_EQ(w.substr(4, 5), std::string("\x01\x00\x00\x00" "f", 5));
	EXPECT_EQ(w.substr(9, 4), std::string("\x02\x00\x00\x00", 4));
}

TEST(Batch, EveryTruncationIsEproto)
{
	FenceBatch b = batch({put("a.b", "value"), del("c")}, 2, 4, "trunc");
	std::string w = batch_encode(b);
	for (size_t n = 0; n < w.size(); n++)
		EXPECT_KVS_ERROR(batch_decode(std::string_view(w).substr(0, n)), EPROTO, "corrupt fence batch");
	EXPECT_KVS_ERROR(batch_decode(std::string_view(w).substr(0, 10)), EPROTO, "truncated in fence name");
}

TEST(Batch, GarbageIsEproto)
{
	FenceBatch b = batch({put("a", "1")}, 1, 2, "g");
	std::string w = batch_encode(b);
	EXPECT_KVS_ERROR(batch_decode("XXXX" + w.substr(4)), EPROTO, "bad magic");
	EXPECT_KVS_ERROR(batch_decode(w + "z"), EPROTO, "1 trailing bytes");

	std::string flags = w;
	flags[4 + 5 + 4 + 4 + 8 + 4] = 4;
	EXPECT_KVS_ERROR(batch_decode(flags), EPROTO, "unknown flags 4");

	std::string huge = w;
	huge[4 + 5 + 4 + 4 + 8 + 3] = '\x7f'; // nops ~ 2^30
	EXPECT_KVS_ERROR(batch_decode(huge), EPROTO, "ops cannot fit");

	std::string over = w;
	over[4 + 5 + 4] = 9; // count 9 > nprocs 2
	EXPECT_KVS_ERROR(batch_decode(over), EPROTO, "count 9 exceeds nprocs 2");

	FenceBatch bad = batch({put("a..b", "1")});
	EXPECT_KVS_ERROR(batch_decode(batch_encode(bad)), EPROTO, "op 0: bad key 'a..b'");

	FenceBatch unl = batch({Op{"a", "value", true}});
	EXPECT_KVS_ERROR(batch_decode(batch_encode(unl)), EPROTO, "op 0 is an unlink with a value");
}
