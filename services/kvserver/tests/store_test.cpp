/* The three store variants (store.hpp): the same answers, and no lost
 * update under concurrent writers. */
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "store.hpp"

using namespace kvsrv;

class StoreTest : public ::testing::TestWithParam<StoreKind> {};

INSTANTIATE_TEST_SUITE_P(Kinds, StoreTest,
			 ::testing::Values(StoreKind::global, StoreKind::rwlock, StoreKind::sharded),
			 [](const auto &p) { return std::string(store_name(p.param)); });

TEST_P(StoreTest, PutGetDelete)
{
	auto s = make_store(GetParam(), 4);
	EXPECT_FALSE(s->get("a"));
	EXPECT_FALSE(s->put("a", "1", nullptr).existed);
	EXPECT_TRUE(s->put("a", "2", nullptr).existed);
	EXPECT_EQ(*s->get("a"), "2");
	EXPECT_EQ(s->size(), 1u);
	EXPECT_TRUE(s->del("a", nullptr).existed);
	EXPECT_FALSE(s->del("a", nullptr).existed);
	EXPECT_FALSE(s->get("a"));
}

TEST_P(StoreTest, ConcurrentWritersOfDistinctKeys)
{
	auto s = make_store(GetParam(), 4);
	std::vector<std::thread> ts;
	for (int t = 0; t < 4; t++)
		ts.emplace_back([&, t] {
			for (int i = 0; i < 2000; i++) {
				std::string k = std::to_string(t) + "-" + std::to_string(i);
				s->put(k, k, nullptr);
				EXPECT_EQ(*s->get(k), k);
				if (i % 2)
					s->del(k, nullptr);
			}
		});
	for (auto &t : ts)
		t.join();
	EXPECT_EQ(s->size(), 4u * 1000);
}
