/*
 * global_hash.hpp: GlobalHashMap and GlobalHashSet, cells distributed by
 * hash (README.md, "GlobalHashSet and GlobalHashMap").
 *
 * A key's cell lives at process hash(key) % processes; one request there
 * inserts (a map's insert is an upsert) and/or looks the key up, and the
 * owner applies it whole (one thread per process: each cell is updated
 * atomically).  Without combining every operation is its own request.
 * With it, a per-process proxy gathers the operations of a scheduler round
 * (or until `buffer` distinct keys wait) and sends one request per distinct
 * key: its inserts in order (the last value wins), then its lookups, which
 * see them.  No master.
 *
 * Constructed in the same order on every process, outside workers; insert()
 * and lookup() from workers.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "runtime.hpp"

namespace comb {

struct HashStats {
	uint64_t inserts = 0;
	uint64_t lookups = 0;
	uint64_t found = 0;	/* lookups that found their key */
	uint64_t requests = 0;	/* to owners (one per distinct key when combining) */
	uint64_t combined = 0;	/* operations that joined another's request */
};

class GlobalHashMap {
public:
	GlobalHashMap(Runtime &rt, bool combining, size_t buffer);

	void insert(uint64_t key, int64_t value);
	std::optional<int64_t> lookup(uint64_t key);

	/* This process's cells. */
	const std::unordered_map<uint64_t, int64_t> &local() const { return cells_; }
	const HashStats &stats() const { return st_; }
	/* The process holding key's cell. */
	uint32_t owner(uint64_t key) const;

private:
	struct Wait;
	struct Entry {
		bool insert = false;
		int64_t value = 0;
		bool lookup = false;
		std::vector<Wait *> waiters;
	};
	std::optional<int64_t> op(uint64_t key, bool insert, int64_t value);
	void flush();
	void send(uint64_t key, Entry e);

	Runtime &rt_;
	bool combining_;
	size_t buffer_;
	std::unordered_map<uint64_t, int64_t> cells_;
	std::unordered_map<uint64_t, Entry> pending_;
	uint16_t h_cell_;
	HashStats st_;
};

/* A set: a map whose values are not used. */
class GlobalHashSet {
public:
	GlobalHashSet(Runtime &rt, bool combining, size_t buffer) : map_(rt, combining, buffer) {}
	void insert(uint64_t key) { map_.insert(key, 0); }
	bool contains(uint64_t key) { return map_.lookup(key).has_value(); }
	const GlobalHashMap &map() const { return map_; }

private:
	GlobalHashMap map_;
};

} // namespace comb
