/*
 * sched.cpp: the fiber scheduler of sched.hpp.
 */
#include "sched.hpp"

#include <boost/context/fixedsize_stack.hpp>

namespace comb {

namespace ctx = boost::context;

struct Scheduler::Task {
	ctx::fiber self;	/* resumed by the scheduler */
	ctx::fiber sink;	/* the scheduler, resumed to suspend */
	std::function<void()> fn;
	bool done = false;
};

Scheduler::Scheduler(size_t stack_bytes) : stack_bytes_(stack_bytes) {}

Scheduler::~Scheduler()
{
	/* Workers still suspended are unwound by their fibers' destructors. */
	for (Task *t : ready_)
		delete t;
}

void Scheduler::spawn(std::function<void()> fn)
{
	auto *t = new Task;
	t->fn = std::move(fn);
	t->self = ctx::fiber(std::allocator_arg, ctx::fixedsize_stack(stack_bytes_),
			     [this, t](ctx::fiber &&sink) {
				     t->sink = std::move(sink);
				     try {
					     t->fn();
				     } catch (const ctx::detail::forced_unwind &) {
					     throw;
				     } catch (...) {
					     if (!error_)
						     error_ = std::current_exception();
				     }
				     t->done = true;
				     return std::move(t->sink);
			     });
	live_++;
	ready_.push_back(t);
}

void Scheduler::suspend()
{
	Task *t = current_;
	t->sink = std::move(t->sink).resume();
}

void Scheduler::wake(Task *t)
{
	ready_.push_back(t);
}

void Scheduler::yield()
{
	ready_.push_back(current_);
	suspend();
}

void Scheduler::resume(Task *t)
{
	current_ = t;
	t->self = std::move(t->self).resume();
	current_ = nullptr;
	if (t->done) {
		live_--;
		delete t;
	}
}

void Scheduler::run(const std::function<bool()> &done,
		    const std::function<void(size_t)> &round_hook)
{
	for (;;) {
		for (size_t n = ready_.size(); n > 0 && !error_; n--) {
			Task *t = ready_.front();
			ready_.pop_front();
			resume(t);
		}
		if (error_)
			std::rethrow_exception(std::exchange(error_, nullptr));
		round_hook(ready_.size());
		if (done())
			return;
	}
}

} // namespace comb
