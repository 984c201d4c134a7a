/*
 * hazard.cpp: records, retirement and scans of hazard pointers (hazard.hpp).
 *
 * A thread finds its record through a thread-local list keyed by the
 * domain's id, which no other domain ever has, so a destroyed domain's
 * entry never matches a new one at the same address.  At thread exit the
 * list gives the records back, but only of domains still alive: the
 * registry of live ids and its mutex order that against ~HazardDomain.
 */
#include "hazard.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_set>

namespace kvsrv {

namespace {

constexpr size_t scan_threshold = 2 * HazardDomain::slots * 64;

std::atomic<uint64_t> next_id{1};

std::mutex &live_mu()
{
	static std::mutex mu;
	return mu;
}

std::unordered_set<uint64_t> &live_ids()
{
	static std::unordered_set<uint64_t> ids;
	return ids;
}

struct Owned {
	uint64_t id;
	HazardDomain *domain;
	HazardDomain::Record *record;
};

struct ThreadRecords {
	std::vector<Owned> owned;
	~ThreadRecords()
	{
		std::lock_guard lock(live_mu());
		for (Owned &o : owned)
			if (live_ids().count(o.id))
				o.domain->release(*o.record);
	}
};

thread_local ThreadRecords mine;

} // namespace

HazardDomain::HazardDomain() : id_(next_id.fetch_add(1))
{
	std::lock_guard lock(live_mu());
	live_ids().insert(id_);
}

HazardDomain::~HazardDomain()
{
	{
		std::lock_guard lock(live_mu());
		live_ids().erase(id_);
	}
	for (Record &r : records_)
		for (Record::Retired &x : r.retired)
			x.del(x.p);
}

HazardDomain::Record &HazardDomain::record()
{
	for (Owned &o : mine.owned)
		if (o.id == id_)
			return *o.record;
	for (Record &r : records_) {
		bool expected = false;
		if (r.in_use.load(std::memory_order_relaxed) ||
		    !r.in_use.compare_exchange_strong(expected, true, std::memory_order_acq_rel))
			continue;
		int idx = static_cast<int>(&r - records_);
		int used = used_.load(std::memory_order_acquire);
		while (used <= idx && !used_.compare_exchange_weak(used, idx + 1,
								  std::memory_order_acq_rel)) {
		}
		mine.owned.push_back({id_, this, &r});
		return r;
	}
	std::fprintf(stderr, "kvserver: more than %d threads use one hazard-pointer domain\n",
		     max_records);
	std::abort();
}

void HazardDomain::release(Record &r)
{
	clear(r);
	r.in_use.store(false, std::memory_order_release);
}

void HazardDomain::retire(Record &r, void *p, Deleter del)
{
	r.retired.push_back({p, del});
	if (r.retired.size() >= scan_threshold)
		scan(r);
}

void HazardDomain::scan(Record &r)
{
	std::vector<void *> hazards;
	int used = used_.load(std::memory_order_acquire);
	std::atomic_thread_fence(std::memory_order_seq_cst);
	for (int i = 0; i < used; i++)
		for (auto &h : records_[i].hazard)
			if (void *p = h.load(std::memory_order_seq_cst))
				hazards.push_back(p);
	std::sort(hazards.begin(), hazards.end());
	auto keep = std::partition(r.retired.begin(), r.retired.end(), [&](const Record::Retired &x) {
		return std::binary_search(hazards.begin(), hazards.end(), x.p);
	});
	for (auto it = keep; it != r.retired.end(); ++it)
		it->del(it->p);
	r.retired.erase(keep, r.retired.end());
}

} // namespace kvsrv
