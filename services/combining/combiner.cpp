/*
 * combiner.cpp: matching and batching of combiner.hpp.
 */
#include "combiner.hpp"

namespace comb {

std::optional<std::pair<PendingOp, PendingOp>> Combiner::add(const PendingOp &op)
{
	std::deque<PendingOp> &other = op.op == VecOp::PUSH ? pops_ : pushes_;
	if (kind_ == VecKind::STACK && !other.empty()) {
		PendingOp newest = other.back();
		other.pop_back();
		matched_++;
		if (op.op == VecOp::PUSH)
			return std::make_pair(op, newest);
		return std::make_pair(newest, op);
	}
	(op.op == VecOp::PUSH ? pushes_ : pops_).push_back(op);
	return std::nullopt;
}

std::vector<PendingOp> Combiner::take_batch()
{
	std::vector<PendingOp> out;
	if (pushes_.empty() && pops_.empty())
		return out;
	VecOp op = !pushes_.empty() && !pops_.empty()
			   ? (last_ == VecOp::PUSH ? VecOp::POP : VecOp::PUSH)
			   : (pushes_.empty() ? VecOp::POP : VecOp::PUSH);
	std::deque<PendingOp> &q = op == VecOp::PUSH ? pushes_ : pops_;
	while (!q.empty() && out.size() < buffer_) {
		out.push_back(q.front());
		q.pop_front();
	}
	last_ = op;
	return out;
}

} // namespace comb
