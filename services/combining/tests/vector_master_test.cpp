/*
 * vector_master_test.cpp: the master's ranges, groups and release rule.
 */
#include <gtest/gtest.h>

#include "vector_master.hpp"

using namespace comb;

TEST(VectorMaster, StackPushThenPopGivesTheTopRange)
{
	VectorMaster m(VecKind::STACK, 100, false);
	m.submit({VecOp::PUSH, 5, 1});
	auto g = m.next();
	ASSERT_EQ(g.size(), 1u);
	EXPECT_EQ(g[0].start, 0u);
	EXPECT_EQ(g[0].count, 5u);
	m.submit({VecOp::POP, 2, 2});
	EXPECT_TRUE(m.next().empty()) << "a pop must wait until the push range is released";
	m.release();
	g = m.next();
	ASSERT_EQ(g.size(), 1u);
	EXPECT_EQ(g[0].start, 3u);
	EXPECT_EQ(g[0].count, 2u);
	EXPECT_EQ(m.size(), 3u);
}

TEST(VectorMaster, PopOnEmptyGetsNothingAndNeedsNoRelease)
{
	VectorMaster m(VecKind::QUEUE, 8, false);
	m.submit({VecOp::POP, 4, 1});
	auto g = m.next();
	ASSERT_EQ(g.size(), 1u);
	EXPECT_EQ(g[0].count, 0u);
	EXPECT_FALSE(m.busy());
}

TEST(VectorMaster, QueueWrapsAroundItsCapacity)
{
	VectorMaster m(VecKind::QUEUE, 8, false);
	m.submit({VecOp::PUSH, 6, 1});
	m.next();
	m.release();
	m.submit({VecOp::POP, 5, 2});
	m.next();
	m.release();
	m.submit({VecOp::PUSH, 6, 3});
	auto g = m.next();
	ASSERT_EQ(g.size(), 1u);
	EXPECT_EQ(g[0].start, 6u);
	EXPECT_EQ(g[0].count, 6u);
	EXPECT_EQ(m.slot(g[0].start + 3), 1u);
	m.release();
	m.submit({VecOp::PUSH, 5, 4});
	g = m.next();
	EXPECT_EQ(g[0].count, 1u) << "only one slot left";
}

TEST(VectorMaster, CombiningServesEveryWaitingRequestOfOneKindTogether)
{
	VectorMaster m(VecKind::STACK, 100, true);
	m.submit({VecOp::PUSH, 1, 1});
	m.submit({VecOp::POP, 1, 2});
	m.submit({VecOp::PUSH, 2, 3});
	auto g = m.next();
	ASSERT_EQ(g.size(), 2u);
	EXPECT_EQ(g[0].req.tag, 1u);
	EXPECT_EQ(g[1].req.tag, 3u);
	EXPECT_EQ(g[1].start, 1u);
	EXPECT_TRUE(m.next().empty());
	m.release();
	EXPECT_TRUE(m.next().empty()) << "one range of the group is still out";
	m.release();
	g = m.next();
	ASSERT_EQ(g.size(), 1u);
	EXPECT_EQ(g[0].req.op, VecOp::POP);
	EXPECT_EQ(m.stats().combined, 2u);
}

TEST(VectorMaster, WithoutCombiningRequestsAreServedOneAtATimeInOrder)
{
	VectorMaster m(VecKind::STACK, 100, false);
	m.submit({VecOp::PUSH, 1, 1});
	m.submit({VecOp::PUSH, 1, 2});
	auto g = m.next();
	ASSERT_EQ(g.size(), 1u);
	EXPECT_EQ(g[0].req.tag, 1u);
	m.release();
	EXPECT_EQ(m.next()[0].req.tag, 2u);
	EXPECT_EQ(m.stats().combined, 0u);
}
