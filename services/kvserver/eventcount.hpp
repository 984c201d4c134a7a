/*
 * eventcount.hpp: lets a thread sleep in the kernel until a lock-free
 * structure has something for it, without a lost wake-up and without
 * costing the producer a system call when nobody sleeps.
 *
 *   consumer:  if (try()) done;  key = prepare_wait();
 *              if (try()) { cancel_wait(); done; }  wait(key);  retry
 *   producer:  publish();  notify_one();
 *
 * One 64-bit word holds the number of waiters (low half) and an epoch (high
 * half, the futex word).  prepare_wait() and notify_*() are read-modify-
 * writes of that one word, so they are totally ordered: either the producer's
 * notify comes first and the consumer's second try sees what was published,
 * or the consumer is counted as a waiter, the producer bumps the epoch and
 * wakes it, and wait(key) does not sleep on a stale epoch.
 */
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kvsrv {

class EventCount {
public:
	uint32_t prepare_wait()
	{
		return static_cast<uint32_t>(word_.fetch_add(one_waiter, std::memory_order_acq_rel) >>
					     32);
	}

	void cancel_wait() { word_.fetch_sub(one_waiter, std::memory_order_acq_rel); }

	void wait(uint32_t key)
	{
		while (static_cast<uint32_t>(word_.load(std::memory_order_acquire) >> 32) == key)
			syscall(SYS_futex, epoch_word(), FUTEX_WAIT_PRIVATE, key, nullptr, nullptr, 0);
		word_.fetch_sub(one_waiter, std::memory_order_acq_rel);
	}

	void notify_one() { notify(1); }
	void notify_all() { notify(INT_MAX); }

private:
	static constexpr uint64_t one_waiter = 1;
	static constexpr uint64_t one_epoch = uint64_t{1} << 32;

	void notify(int n)
	{
		uint64_t prev = word_.fetch_add(one_epoch, std::memory_order_acq_rel);
		if (prev & 0xffffffffu)
			syscall(SYS_futex, epoch_word(), FUTEX_WAKE_PRIVATE, n, nullptr, nullptr, 0);
	}

	/* The high half of word_ (little-endian: the second 32-bit word). */
	uint32_t *epoch_word()
	{
		static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "epoch half assumes LE");
		return reinterpret_cast<uint32_t *>(&word_) + 1;
	}

	std::atomic<uint64_t> word_{0};
};

} // namespace kvsrv
