/*
 * work_queue.hpp: how the accepting thread hands connections to workers
 * (README.md, "Variants").  Two implementations: MutexQueue
 * (mutex_queue.hpp) and MsQueue (ms_queue.hpp).
 *
 * Contract: bounded to capacity items; push() never blocks and returns
 * false when the queue is full or closed; pop() blocks, without spinning or
 * sleeping, until an item arrives or close() was called, and returns false
 * only when the queue is closed and empty.  Items come out in the order
 * they went in.  Any number of threads may push and pop.
 */
#pragma once

#include <cstddef>

namespace kvsrv {

template <typename T>
class WorkQueue {
public:
	virtual ~WorkQueue() = default;
	virtual bool push(T item) = 0;
	virtual bool pop(T &out) = 0;
	virtual void close() = 0;
	virtual size_t depth() const = 0;
};

} // namespace kvsrv
