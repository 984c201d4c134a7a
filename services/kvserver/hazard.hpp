/*
 * hazard.hpp: hazard pointers (Michael, 2004), the safe memory reclamation
 * of MsQueue: a node unlinked from the queue is freed only once no thread
 * has it published as hazardous.
 *
 * Each thread that uses a domain gets a record of slots hazard pointers
 * the first time (record(), cached per thread and domain).  protect() makes
 * a pointer read from an atomic safe to dereference until clear();
 * retire() hands over an unlinked node, freed by a later scan of this
 * thread once no record protects it, or at the domain's destruction.
 *
 * A thread's record goes back to the domain when the thread exits (its
 * retired nodes stay with the record for the next user).  The domain must
 * outlive every protect()/retire() call, not the threads.
 */
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvsrv {

class HazardDomain {
public:
	static constexpr int slots = 2;
	static constexpr int max_records = 1024;
	using Deleter = void (*)(void *);

	struct Record {
		std::atomic<void *> hazard[slots];
		std::atomic<bool> in_use{false};
		struct Retired {
			void *p;
			Deleter del;
		};
		std::vector<Retired> retired;	/* the owning thread only */
	};

	HazardDomain();
	~HazardDomain();
	HazardDomain(const HazardDomain &) = delete;
	HazardDomain &operator=(const HazardDomain &) = delete;

	/* This thread's record; aborts when more than max_records threads use it. */
	Record &record();

	/* Publishes *src in slot and returns it once src still holds it. */
	template <typename T>
	T *protect(Record &r, int slot, const std::atomic<T *> &src)
	{
		T *p = src.load(std::memory_order_acquire);
		for (;;) {
			r.hazard[slot].store(p, std::memory_order_seq_cst);
			T *again = src.load(std::memory_order_seq_cst);
			if (again == p)
				return p;
			p = again;
		}
	}

	static void clear(Record &r)
	{
		for (auto &h : r.hazard)
			h.store(nullptr, std::memory_order_release);
	}

	void retire(Record &r, void *p, Deleter del);

	void release(Record &r);
	uint64_t id() const { return id_; }

private:
	void scan(Record &r);

	const uint64_t id_;
	Record records_[max_records];
	std::atomic<int> used_{0};	/* records ever handed out: scan looks at these */
};

} // namespace kvsrv
