/*
 * vector_master.cpp: range allocation of vector_master.hpp.
 */
#include "vector_master.hpp"

#include <algorithm>

namespace comb {

void VectorMaster::submit(const VecRequest &r)
{
	stats_.requests++;
	waiting_.push_back(r);
}

VecGrant VectorMaster::grant(const VecRequest &r)
{
	VecGrant g{r, 0, 0};
	if (r.op == VecOp::PUSH) {
		g.count = static_cast<uint32_t>(std::min<uint64_t>(r.count, capacity_ - size_));
		g.start = kind_ == VecKind::STACK ? size_ : head_ + size_;
		size_ += g.count;
	} else {
		g.count = static_cast<uint32_t>(std::min<uint64_t>(r.count, size_));
		if (kind_ == VecKind::STACK) {
			g.start = size_ - g.count;
		} else {
			g.start = head_;
			head_ += g.count;
		}
		size_ -= g.count;
	}
	if (g.count)
		outstanding_++;
	return g;
}

std::vector<VecGrant> VectorMaster::next()
{
	std::vector<VecGrant> out;
	if (busy() || waiting_.empty())
		return out;
	if (!combine_) {
		out.push_back(grant(waiting_.front()));
		waiting_.pop_front();
	} else {
		bool pushes = false, pops = false;
		for (const VecRequest &r : waiting_)
			(r.op == VecOp::PUSH ? pushes : pops) = true;
		VecOp op = pushes && pops ? (last_ == VecOp::PUSH ? VecOp::POP : VecOp::PUSH)
					  : (pushes ? VecOp::PUSH : VecOp::POP);
		std::deque<VecRequest> rest;
		for (const VecRequest &r : waiting_) {
			if (r.op == op)
				out.push_back(grant(r));
			else
				rest.push_back(r);
		}
		waiting_.swap(rest);
		last_ = op;
		if (out.size() > 1)
			stats_.combined += out.size();
	}
	stats_.groups++;
	return out;
}

void VectorMaster::release()
{
	if (outstanding_)
		outstanding_--;
}

} // namespace comb
