/*
 * lincheck_test.cpp: the checker accepts linearizable histories and rejects
 * the others.
 */
#include <gtest/gtest.h>

#include "lincheck.hpp"

using namespace comb;

namespace {
HistOp push(int64_t v, uint64_t inv, uint64_t res) { return {true, 0, v, true, 0, inv, res}; }
HistOp pop(int64_t v, uint64_t inv, uint64_t res) { return {false, 0, 0, true, v, inv, res}; }
HistOp pop_empty(uint64_t inv, uint64_t res) { return {false, 0, 0, false, 0, inv, res}; }
} // namespace

TEST(Lincheck, SequentialStackAndQueue)
{
	std::vector<HistOp> h = {push(1, 0, 1), push(2, 2, 3), pop(2, 4, 5), pop(1, 6, 7)};
	EXPECT_TRUE(linearizable(LinModel::STACK, h));
	EXPECT_FALSE(linearizable(LinModel::QUEUE, h));
	h[2].ret = 1;
	h[3].ret = 2;
	EXPECT_TRUE(linearizable(LinModel::QUEUE, h));
	EXPECT_FALSE(linearizable(LinModel::STACK, h));
}

TEST(Lincheck, ConcurrentOperationsMayTakeEitherOrder)
{
	/* The pushes overlap, so a pop may return either first. */
	std::vector<HistOp> h = {push(1, 0, 10), push(2, 1, 9), pop(1, 11, 12), pop(2, 13, 14)};
	EXPECT_TRUE(linearizable(LinModel::STACK, h));
	EXPECT_TRUE(linearizable(LinModel::QUEUE, h));
}

TEST(Lincheck, EmptyPopAfterACompletedPushIsRejected)
{
	std::vector<HistOp> h = {push(1, 0, 1), pop_empty(2, 3)};
	EXPECT_FALSE(linearizable(LinModel::STACK, h));
	h[1].inv = 0;	/* overlapping: the pop may come first */
	EXPECT_TRUE(linearizable(LinModel::STACK, h));
}

TEST(Lincheck, AValueNeverPushedOrPoppedTwiceIsRejected)
{
	EXPECT_FALSE(linearizable(LinModel::QUEUE, {push(1, 0, 1), pop(5, 2, 3)}));
	EXPECT_FALSE(linearizable(LinModel::STACK,
				  {push(1, 0, 1), pop(1, 2, 3), pop(1, 4, 5)}));
}

TEST(Lincheck, MapsAreCheckedPerKey)
{
	HistOp ins{true, 7, 70, true, 0, 0, 1};
	HistOp look{false, 7, 0, true, 70, 2, 3};
	HistOp miss{false, 8, 0, false, 0, 2, 3};
	EXPECT_TRUE(linearizable(LinModel::MAP, {ins, look, miss}));
	look.ret = 71;
	EXPECT_FALSE(linearizable(LinModel::MAP, {ins, look, miss}));
	EXPECT_TRUE(linearizable(LinModel::SET, {ins, look, miss}));
	miss.key = 7;
	EXPECT_FALSE(linearizable(LinModel::SET, {ins, miss}));
}
