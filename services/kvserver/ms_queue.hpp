/*
 * ms_queue.hpp: the lock-free work queue: Michael and Scott's two-lock-free
 * linked queue (PODC 1996) with hazard pointers for its nodes (hazard.hpp)
 * and an eventcount (eventcount.hpp) on which idle workers sleep in the
 * kernel: no spinning, no sleeping for a guessed time.  work_queue.hpp has
 * the contract; the bound is an atomic count checked before linking.
 *
 * Nodes are the one place of loggp-kvserver with new and delete: a node's
 * lifetime ends when the last hazard pointer lets go of it, which no owning
 * smart pointer can express.
 */
#pragma once

#include <atomic>
#include <utility>

#include "eventcount.hpp"
#include "hazard.hpp"
#include "work_queue.hpp"

namespace kvsrv {

template <typename T>
class MsQueue : public WorkQueue<T> {
public:
	explicit MsQueue(size_t capacity) : capacity_(capacity)
	{
		Node *dummy = new Node();
		head_.store(dummy);
		tail_.store(dummy);
	}

	~MsQueue() override
	{
		for (Node *n = head_.load(); n;) {
			Node *next = n->next.load();
			delete n;
			n = next;
		}
	}

	bool push(T item) override
	{
		if (closed_.load(std::memory_order_acquire))
			return false;
		if (count_.fetch_add(1, std::memory_order_acq_rel) >= capacity_) {
			count_.fetch_sub(1, std::memory_order_acq_rel);
			return false;
		}
		Node *node = new Node(std::move(item));
		HazardDomain::Record &r = hp_.record();
		for (;;) {
			Node *tail = hp_.protect(r, 0, tail_);
			Node *next = tail->next.load(std::memory_order_acquire);
			if (tail != tail_.load(std::memory_order_acquire))
				continue;
			if (next) {
				tail_.compare_exchange_weak(tail, next, std::memory_order_acq_rel);
				continue;
			}
			Node *expected = nullptr;
			if (tail->next.compare_exchange_weak(expected, node, std::memory_order_acq_rel)) {
				tail_.compare_exchange_strong(tail, node, std::memory_order_acq_rel);
				break;
			}
		}
		HazardDomain::clear(r);
		ec_.notify_one();
		return true;
	}

	bool pop(T &out) override
	{
		for (;;) {
			if (try_pop(out))
				return true;
			uint32_t key = ec_.prepare_wait();
			if (try_pop(out)) {
				ec_.cancel_wait();
				return true;
			}
			if (closed_.load(std::memory_order_acquire)) {
				ec_.cancel_wait();
				return false;
			}
			ec_.wait(key);
		}
	}

	void close() override
	{
		closed_.store(true, std::memory_order_release);
		ec_.notify_all();
	}

	size_t depth() const override { return count_.load(std::memory_order_relaxed); }

private:
	struct Node {
		Node() = default;
		explicit Node(T v) : value(std::move(v)) {}
		std::atomic<Node *> next{nullptr};
		T value{};
	};

	static void free_node(void *p) { delete static_cast<Node *>(p); }

	bool try_pop(T &out)
	{
		HazardDomain::Record &r = hp_.record();
		for (;;) {
			Node *head = hp_.protect(r, 0, head_);
			Node *tail = tail_.load(std::memory_order_acquire);
			Node *next = hp_.protect(r, 1, head->next);
			if (head != head_.load(std::memory_order_acquire))
				continue;
			if (!next) {
				HazardDomain::clear(r);
				return false;
			}
			if (head == tail) {
				tail_.compare_exchange_weak(tail, next, std::memory_order_acq_rel);
				continue;
			}
			if (head_.compare_exchange_weak(head, next, std::memory_order_acq_rel)) {
				/* next is the new dummy; only this thread touches its
				 * value, and slot 1 keeps it alive while it does. */
				out = std::move(next->value);
				next->value = T{};
				HazardDomain::clear(r);
				hp_.retire(r, head, free_node);
				count_.fetch_sub(1, std::memory_order_acq_rel);
				return true;
			}
		}
	}

	const size_t capacity_;
	alignas(64) std::atomic<Node *> head_;
	alignas(64) std::atomic<Node *> tail_;
	alignas(64) std::atomic<size_t> count_{0};
	std::atomic<bool> closed_{false};
	EventCount ec_;
	HazardDomain hp_;
};

} // namespace kvsrv
