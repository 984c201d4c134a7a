/*
 * vector_master.hpp: the master of a global stack or queue, without the
 * network: head, tail, size and the range allocator (README.md, "GlobalStack
 * and GlobalQueue").
 *
 * A request asks for a range of count slots to push into or pop from.  The
 * master hands out ranges one group at a time and waits until every range of
 * the group with slots is released (its elements written to or read from
 * their owners) before the next group, so no pop reads a slot whose push is
 * still on its way.  Without combining a group is the oldest request; with
 * it, every waiting request of one kind (pushes and pops alternate when both
 * wait).  A pop gets fewer slots than asked (zero: empty) when the structure
 * holds fewer elements; a push fewer (zero: full) beyond the capacity.
 * Slots: a stack's positions 0..capacity-1, bottom first; a queue's absolute
 * indices, slot index % capacity.
 */
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

namespace comb {

enum class VecKind { STACK, QUEUE };
enum class VecOp : uint8_t { PUSH = 0, POP = 1 };

struct VecRequest {
	VecOp op;
	uint32_t count;
	uint64_t tag;		/* the caller's (who to answer) */
};

struct VecGrant {
	VecRequest req;
	uint64_t start;		/* first slot */
	uint32_t count;		/* slots granted */
};

struct VecMasterStats {
	uint64_t requests = 0;
	uint64_t groups = 0;
	uint64_t combined = 0;	/* requests served in a group of more than one */
};

class VectorMaster {
public:
	VectorMaster(VecKind kind, uint64_t capacity, bool combine)
	    : kind_(kind), capacity_(capacity), combine_(combine) {}

	void submit(const VecRequest &r);
	/* The next group's grants, or none while a group is outstanding. */
	std::vector<VecGrant> next();
	/* One granted range (with slots) is done. */
	void release();

	uint64_t head() const { return head_; }
	uint64_t size() const { return size_; }
	uint64_t capacity() const { return capacity_; }
	/* The slot index of absolute index i. */
	uint64_t slot(uint64_t i) const { return kind_ == VecKind::QUEUE ? i % capacity_ : i; }
	bool busy() const { return outstanding_ > 0; }
	const VecMasterStats &stats() const { return stats_; }

private:
	VecGrant grant(const VecRequest &r);

	VecKind kind_;
	uint64_t capacity_;
	bool combine_;
	uint64_t head_ = 0;	/* queue: absolute index of the front */
	uint64_t size_ = 0;
	std::deque<VecRequest> waiting_;
	uint32_t outstanding_ = 0;
	VecOp last_ = VecOp::POP;
	VecMasterStats stats_;
};

} // namespace comb
