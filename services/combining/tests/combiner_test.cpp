/*
 * combiner_test.cpp: a process's matching and batching.
 */
#include <gtest/gtest.h>

#include "combiner.hpp"

using namespace comb;

namespace {
PendingOp push(int64_t v) { return {VecOp::PUSH, v, nullptr}; }
PendingOp pop() { return {VecOp::POP, 0, nullptr}; }
} // namespace

TEST(Combiner, StackPopTakesTheNewestPendingPush)
{
	Combiner c(VecKind::STACK, 16);
	EXPECT_FALSE(c.add(push(1)));
	EXPECT_FALSE(c.add(push(2)));
	auto m = c.add(pop());
	ASSERT_TRUE(m);
	EXPECT_EQ(m->first.value, 2);
	EXPECT_EQ(c.pending(), 1u);
	EXPECT_EQ(c.matched(), 1u);
}

TEST(Combiner, StackPushFeedsAPendingPop)
{
	Combiner c(VecKind::STACK, 16);
	EXPECT_FALSE(c.add(pop()));
	auto m = c.add(push(7));
	ASSERT_TRUE(m);
	EXPECT_EQ(m->first.value, 7);
	EXPECT_EQ(m->second.op, VecOp::POP);
	EXPECT_EQ(c.pending(), 0u);
}

TEST(Combiner, QueueNeverMatches)
{
	Combiner c(VecKind::QUEUE, 16);
	EXPECT_FALSE(c.add(push(1)));
	EXPECT_FALSE(c.add(pop()));
	EXPECT_EQ(c.pending(), 2u);
	EXPECT_EQ(c.matched(), 0u);
}

TEST(Combiner, BatchesHoldOneKindUpToTheBufferOldestFirst)
{
	Combiner c(VecKind::QUEUE, 3);
	for (int i = 0; i < 5; i++)
		c.add(push(i));
	c.add(pop());
	auto b = c.take_batch();
	ASSERT_EQ(b.size(), 3u);
	EXPECT_EQ(b[0].value, 0);
	EXPECT_EQ(b[2].value, 2);
	b = c.take_batch();
	ASSERT_EQ(b.size(), 1u) << "pushes and pops alternate";
	EXPECT_EQ(b[0].op, VecOp::POP);
	b = c.take_batch();
	ASSERT_EQ(b.size(), 2u);
	EXPECT_TRUE(c.take_batch().empty());
}
