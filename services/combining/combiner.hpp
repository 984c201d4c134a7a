/*
 * combiner.hpp: a process's flat-combining buffer for a global stack or
 * queue, without the network (README.md, "Modes").
 *
 * Workers' operations wait here until a combined batch carries them to the
 * master.  The stack matches at once: a push that finds pending pops hands
 * its value to the newest one, a pop that finds pending pushes takes the
 * newest one's value, and both complete without a message.  The queue never
 * matches (a dequeue must see older elements of other processes first).  A
 * batch is up to `buffer` pending operations of one kind, oldest first;
 * pushes and pops alternate when both are pending.
 */
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "vector_master.hpp"

namespace comb {

struct PendingOp {
	VecOp op;
	int64_t value;		/* a push's */
	void *ctx;		/* the caller's (the waiting worker) */
};

class Combiner {
public:
	Combiner(VecKind kind, size_t buffer) : kind_(kind), buffer_(buffer) {}

	/* Adds op; for a stack that matched, returns (push, pop), both done. */
	std::optional<std::pair<PendingOp, PendingOp>> add(const PendingOp &op);
	/* The next batch (empty when nothing is pending). */
	std::vector<PendingOp> take_batch();
	size_t pending() const { return pushes_.size() + pops_.size(); }
	uint64_t matched() const { return matched_; }

private:
	VecKind kind_;
	size_t buffer_;
	std::deque<PendingOp> pushes_, pops_;
	VecOp last_ = VecOp::POP;
	uint64_t matched_ = 0;	/* pairs */
};

} // namespace comb
