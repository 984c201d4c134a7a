/*
 * lincheck.cpp: the search of lincheck.hpp.
 */
#include "lincheck.hpp"

#include <algorithm>
#include <cerrno>
#include <limits>
#include <map>
#include <string>
#include <unordered_set>

#include "common/error.hpp"

namespace comb {

namespace {

constexpr size_t kStateBudget = 2'000'000;

/* Applies op to the model's state; false if its result is impossible. */
bool apply(LinModel m, const HistOp &op, std::vector<int64_t> &s)
{
	if (op.update) {
		if (m == LinModel::SET || m == LinModel::MAP)
			s.assign(1, op.arg);
		else
			s.push_back(op.arg);
		return true;
	}
	if (!op.ok)
		return s.empty();
	if (s.empty())
		return false;
	switch (m) {
	case LinModel::STACK:
		if (s.back() != op.ret)
			return false;
		s.pop_back();
		return true;
	case LinModel::QUEUE:
		if (s.front() != op.ret)
			return false;
		s.erase(s.begin());
		return true;
	case LinModel::SET:
		return true;
	case LinModel::MAP:
		return s.front() == op.ret;
	}
	return false;
}

class Search {
public:
	Search(LinModel m, std::vector<HistOp> ops) : m_(m), ops_(std::move(ops)), done_(ops_.size())
	{
		std::sort(ops_.begin(), ops_.end(),
			  [](const HistOp &a, const HistOp &b) { return a.inv < b.inv; });
	}

	bool run(std::vector<int64_t> &state, size_t left)
	{
		if (left == 0)
			return true;
		std::string key(done_.begin(), done_.end());
		for (int64_t v : state)
			key.append(reinterpret_cast<const char *>(&v), sizeof v);
		if (!seen_.insert(std::move(key)).second)
			return false;
		if (seen_.size() > kStateBudget)
			throw svc::Error(E2BIG, "linearizability search: more than " +
							std::to_string(kStateBudget) + " states");
		uint64_t min_res = std::numeric_limits<uint64_t>::max();
		for (size_t i = 0; i < ops_.size(); i++)
			if (!done_[i])
				min_res = std::min(min_res, ops_[i].res);
		for (size_t i = 0; i < ops_.size() && ops_[i].inv <= min_res; i++) {
			if (done_[i])
				continue;
			std::vector<int64_t> next = state;
			if (!apply(m_, ops_[i], next))
				continue;
			done_[i] = 1;
			bool ok = run(next, left - 1);
			done_[i] = 0;
			if (ok)
				return true;
		}
		return false;
	}

private:
	LinModel m_;
	std::vector<HistOp> ops_;
	std::vector<char> done_;
	std::unordered_set<std::string> seen_;
};

bool check_one(LinModel m, const std::vector<HistOp> &h)
{
	Search s(m, h);
	std::vector<int64_t> state;
	return s.run(state, h.size());
}

} // namespace

bool linearizable(LinModel model, const std::vector<HistOp> &history)
{
	if (model == LinModel::STACK || model == LinModel::QUEUE)
		return check_one(model, history);
	std::map<uint64_t, std::vector<HistOp>> by_key;
	for (const HistOp &op : history)
		by_key[op.key].push_back(op);
	return std::all_of(by_key.begin(), by_key.end(),
			   [model](const auto &kv) { return check_one(model, kv.second); });
}

} // namespace comb
