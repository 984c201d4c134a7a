/*
 * sched.hpp: lightweight workers (Boost.Context fibers) of one process and
 * the cooperative scheduler that runs them.
 *
 * A worker runs until it waits (suspend(): a remote operation in flight, a
 * combined batch, a barrier) and is made ready again by whoever completes
 * what it waits for (wake()).  The scheduler runs the ready workers in rounds:
 * every worker ready at the start of a round runs once, then the round hook
 * runs (the runtime polls the network and flushes its aggregation buffers
 * there).  Everything runs on the one thread that called run(); nothing
 * here is thread-safe.
 *
 * Errors: an exception escaping a worker ends run() with that exception.
 */
#pragma once

#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>

#include <boost/context/fiber.hpp>

namespace comb {

class Scheduler {
public:
	struct Task;

	/* Workers' stacks are stack_bytes each. */
	explicit Scheduler(size_t stack_bytes);
	~Scheduler();
	Scheduler(const Scheduler &) = delete;
	Scheduler &operator=(const Scheduler &) = delete;

	/* A new worker, ready to run fn. */
	void spawn(std::function<void()> fn);
	/* The worker running now (nullptr outside workers). */
	Task *current() const { return current_; }
	/* From a worker: wait until someone wake()s it. */
	void suspend();
	/* Makes a suspended worker ready (at the end of the ready queue). */
	void wake(Task *t);
	/* From a worker: go to the end of the ready queue. */
	void yield();
	/*
	 * Runs rounds until done() is true after a round.  round_hook(ready)
	 * runs after every round with the number of workers now ready; it may
	 * wake workers.
	 */
	void run(const std::function<bool()> &done, const std::function<void(size_t)> &round_hook);
	size_t live() const { return live_; }
	size_t ready() const { return ready_.size(); }

private:
	void resume(Task *t);

	size_t stack_bytes_;
	std::deque<Task *> ready_;
	Task *current_ = nullptr;
	size_t live_ = 0;
	std::exception_ptr error_;
};

} // namespace comb
