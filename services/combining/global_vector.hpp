/*
 * global_vector.hpp: GlobalStack and GlobalQueue, after Grappa's
 * GlobalVector (README.md, "GlobalStack and GlobalQueue").
 *
 * The elements live in a global array spread over every process in blocks
 * of ceil(capacity / processes) slots; process 0 is the master and holds
 * only head, tail, size and the range allocator (vector_master.hpp).  A batch
 * (one operation, or a combined batch of up to `buffer`) asks the master for
 * a range, writes or reads the elements at their owners directly, and then
 * releases the range.  The mode (mode.hpp) says whether operations are
 * combined in each process (combiner.hpp) and whether the master combines
 * the requests waiting for it.
 *
 * Constructed in the same order on every process (it registers handlers),
 * outside workers; push() and pop() from workers.  A pop on an empty
 * structure returns nothing at once; a push beyond the capacity returns
 * false.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "combiner.hpp"
#include "mode.hpp"
#include "runtime.hpp"
#include "vector_master.hpp"

namespace comb {

struct VecStats {
	uint64_t pushes = 0;		/* completed, including matched */
	uint64_t pops = 0;		/* that returned an element */
	uint64_t pops_empty = 0;
	uint64_t pushes_full = 0;
	uint64_t matched = 0;		/* push/pop pairs matched in a process */
	uint64_t master_requests = 0;	/* batches sent to the master */
	uint64_t pop_requests = 0;	/* of those, pop batches */
	uint64_t owner_requests = 0;	/* element reads and writes at owners */
	uint64_t batched_ops = 0;	/* operations those batches carried */
	/* at the master */
	uint64_t master_groups = 0;
	uint64_t master_combined = 0;
};

class GlobalVector {
public:
	GlobalVector(Runtime &rt, VecKind kind, Mode mode, uint64_t capacity, size_t buffer);

	bool push(int64_t v);
	std::optional<int64_t> pop();

	VecStats stats() const;
	/* This process's block of slots (slot block() * rank() first). */
	const std::vector<int64_t> &local_slots() const { return store_; }
	uint64_t block() const { return block_; }
	/* At the master: the live range (first absolute index, size). */
	std::pair<uint64_t, uint64_t> live() const { return {master_.head(), master_.size()}; }
	uint64_t slot(uint64_t i) const { return master_.slot(i); }

private:
	struct Wait;
	struct Moved {
		uint32_t count;			/* slots granted */
		std::vector<int64_t> values;	/* a pop's */
	};
	Moved batch(VecOp op, const std::vector<int64_t> &values, uint32_t count);
	std::optional<int64_t> op(VecOp op, int64_t value);
	void combine();
	void pump();
	/* n slots of this process's block from slot start; throws EPROTO
	 * naming t's sender when they are not all here. */
	int64_t *owned_slots(Token t, uint64_t start, uint64_t n);

	Runtime &rt_;
	VecKind kind_;
	Mode mode_;
	uint64_t capacity_;
	uint64_t block_;
	std::vector<int64_t> store_;	/* this process's block */
	VectorMaster master_;		/* used at process 0 */
	Combiner comb_;
	bool combining_ = false;	/* a combining worker runs */
	std::unordered_map<uint64_t, Token> tokens_;	/* master: requests waiting */
	uint64_t next_tag_ = 0;
	uint16_t h_acquire_, h_release_, h_write_, h_read_;
	VecStats st_;
};

} // namespace comb
