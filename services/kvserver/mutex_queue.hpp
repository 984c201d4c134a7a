/*
 * mutex_queue.hpp: the bounded work queue under one mutex, workers waiting
 * on a condition variable (work_queue.hpp has the contract).
 */
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>

#include "work_queue.hpp"

namespace kvsrv {

template <typename T>
class MutexQueue : public WorkQueue<T> {
public:
	explicit MutexQueue(size_t capacity) : capacity_(capacity) {}

	bool push(T item) override
	{
		{
			std::lock_guard lock(mu_);
			if (closed_ || items_.size() >= capacity_)
				return false;
			items_.push_back(std::move(item));
		}
		nonempty_.notify_one();
		return true;
	}

	bool pop(T &out) override
	{
		std::unique_lock lock(mu_);
		nonempty_.wait(lock, [this] { return !items_.empty() || closed_; });
		if (items_.empty())
			return false;
		out = std::move(items_.front());
		items_.pop_front();
		return true;
	}

	void close() override
	{
		{
			std::lock_guard lock(mu_);
			closed_ = true;
		}
		nonempty_.notify_all();
	}

	size_t depth() const override
	{
		std::lock_guard lock(mu_);
		return items_.size();
	}

private:
	const size_t capacity_;
	mutable std::mutex mu_;
	std::condition_variable nonempty_;
	std::deque<T> items_;	/* guarded by mu_ */
	bool closed_ = false;	/* guarded by mu_ */
};

} // namespace kvsrv
