/* Both work queues against their contract (work_queue.hpp): bound, FIFO,
 * every item out exactly once under concurrent producers and consumers,
 * pop() woken by close(). */
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "ms_queue.hpp"
#include "mutex_queue.hpp"

using namespace kvsrv;

template <typename Q>
class QueueTest : public ::testing::Test {};

using Kinds = ::testing::Types<MutexQueue<std::shared_ptr<int>>, MsQueue<std::shared_ptr<int>>>;
TYPED_TEST_SUITE(QueueTest, Kinds);

TYPED_TEST(QueueTest, BoundedAndFifo)
{
	TypeParam q(3);
	for (int i = 0; i < 3; i++)
		EXPECT_TRUE(q.push(std::make_shared<int>(i)));
	EXPECT_FALSE(q.push(std::make_shared<int>(9)));
	EXPECT_EQ(q.depth(), 3u);
	for (int i = 0; i < 3; i++) {
		std::shared_ptr<int> v;
		ASSERT_TRUE(q.pop(v));
		EXPECT_EQ(*v, i);
	}
	EXPECT_EQ(q.depth(), 0u);
}

TYPED_TEST(QueueTest, CloseWakesWaitersAndDrains)
{
	TypeParam q(8);
	std::atomic<int> ended{0};
	std::vector<std::thread> ts;
	for (int i = 0; i < 3; i++)
		ts.emplace_back([&] {
			std::shared_ptr<int> v;
			while (q.pop(v))
				;
			ended++;
		});
	q.push(std::make_shared<int>(1));
	q.close();
	EXPECT_FALSE(q.push(std::make_shared<int>(2)));
	for (auto &t : ts)
		t.join();
	EXPECT_EQ(ended.load(), 3);
}

TYPED_TEST(QueueTest, ConcurrentEveryItemOnce)
{
	constexpr int producers = 3, consumers = 3, per = 20000;
	TypeParam q(64);
	std::vector<std::atomic<int>> seen(producers * per);
	std::vector<std::thread> ts;
	for (int p = 0; p < producers; p++)
		ts.emplace_back([&, p] {
			for (int i = 0; i < per; i++) {
				auto v = std::make_shared<int>(p * per + i);
				while (!q.push(v))
					std::this_thread::yield();
			}
		});
	std::vector<std::thread> cs;
	for (int c = 0; c < consumers; c++)
		cs.emplace_back([&] {
			std::shared_ptr<int> v;
			int last[producers] = {-1, -1, -1};
			while (q.pop(v)) {
				seen[static_cast<size_t>(*v)]++;
				/* Per producer, one consumer sees increasing items. */
				int p = *v / per;
				EXPECT_GT(*v, last[p]);
				last[p] = *v;
			}
		});
	for (auto &t : ts)
		t.join();
	q.close();
	for (auto &t : cs)
		t.join();
	for (auto &s : seen)
		ASSERT_EQ(s.load(), 1);
}
