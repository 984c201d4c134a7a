// content.hpp - the content-addressed blob store.
//
// Holds objects (directory objects and large values) under their blobrefs.
// A broker uses one as its cache; the root broker's is the authoritative
// store and may be backed by an SQLite file so that a restart sees the last
// committed namespace.
//
// Memory: an object stays in memory until expire() drops it. The owner
// advances the store's clock with tick() and calls expire(max_age) to drop
// every object not stored or found during the last max_age ticks, as
// flux-core's KVS expires cache entries by last use. An object not yet
// written to the file is never dropped. Expiring is for stores that can get
// an object back: a cache (fault-in from the parent) or a store with a file;
// on the memory-only authoritative store it would lose data, so its owner
// never calls it. Pointers returned by find()/find_dir() stay valid until
// the next store or expire call on this object.
//
// Durability: with a file, store() only buffers; set_root() writes every
// object stored since the previous set_root plus the root in ONE SQLite
// transaction (WAL journal, synchronous=FULL), so the file always holds a
// root together with every object it references. Objects read back from the
// file are re-hashed; a mismatch is Error(EPROTO).
//
// Decoded directories: find_dir()/store_dir() keep directory objects also in
// decoded form, beside their bytes. Objects are immutable, so a decoded entry
// never goes stale; lookups and apply then pay one JSON decode per directory
// object while it is in memory instead of one per use.
//
// Errors: Error(EIO) for any SQLite failure (message has sqlite3_errmsg),
// Error(EPROTO) for a ref/data mismatch, Error(EINVAL) for a malformed root
// ref. Not thread-safe: one owner thread (the broker's event loop).
//
// SQLite schema (PRAGMA user_version = 1):
//   objects(ref TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID
//   root(id INTEGER PRIMARY KEY CHECK (id = 0), version INTEGER NOT NULL, ref TEXT NOT NULL)
#pragma once

#include "dirent.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace kvs {

struct RootRef {
	uint64_t version;
	std::string ref;
	bool operator==(const RootRef&) const = default;
};

class ContentStore {
public:
	// "" = memory only; else open or create the file. Throws Error(EIO).
	explicit ContentStore(const std::string& sqlite_path = "");
	~ContentStore();
	ContentStore(const ContentStore&) = delete;
	ContentStore& operator=(const ContentStore&) = delete;
	ContentStore(ContentStore&&) noexcept;
	ContentStore& operator=(ContentStore&&) noexcept;

	// Store `data`, return its blobref. Idempotent.
	std::string store(std::string data);
	// Store `data` that arrived under `ref` from a peer; Error(EPROTO) unless
	// blobref_hash(data) == ref.
	void store_ref(const std::string& ref, std::string data);
	// The object, or nullptr if neither memory nor the file holds it.
	// Counts a hit or a miss. Error(EIO)/Error(EPROTO) from the file.
	const std::string* find(const std::string& ref);
	// The directory object `ref` decoded (cached after the first call), or
	// nullptr if absent; Error(EPROTO) if the object is not a directory.
	// Pointer valid until the next store call. Counts a hit or a miss.
	const Directory* find_dir(const std::string& ref);
	// Encodes `d`, stores it (as store()) and keeps it decoded; returns its ref.
	std::string store_dir(Directory d);
	// Like find() != nullptr, without loading the object or counting.
	bool contains(const std::string& ref);

	// Advance the clock by one tick (the owner's period, e.g. a second).
	void tick() { now_++; }
	// Drop every object whose last store or find is max_age or more ticks
	// ago, except those not yet written to the file (max_age 0 drops every
	// other object). Returns how many were dropped. Visits every object in
	// memory, as flux-core's cache expiry does. See "Memory" above.
	size_t expire(uint64_t max_age);

	// Record the namespace root; with a file, commit it durably (see above).
	// Error(EINVAL) if r.ref is not a blobref; Error(EIO) leaves the previous
	// root and the pending objects in place, so the call can be retried.
	void set_root(const RootRef& r);
	// The last root set, or the one found in the file at open.
	std::optional<RootRef> root() const { return root_; }

	size_t count() const { return objects_.size(); }  // objects in memory
	size_t bytes() const { return bytes_; }            // their data bytes
	size_t dirs_decoded() const { return dirs_; }       // directories held decoded
	uint64_t expired() const { return expired_; }      // objects dropped by expire()
	uint64_t hits() const { return hits_; }            // find() found it
	uint64_t misses() const { return misses_; }        // find() returned nullptr
	size_t pending() const { return pending_.size(); } // stored, not yet in the file
	bool persistent() const { return db_ != nullptr; }
	std::vector<std::string> refs() const;             // every ref in memory, sorted

private:
	struct DbClose {
		void operator()(sqlite3* db) const noexcept;
	};
	struct StmtFinalize {
		void operator()(sqlite3_stmt* st) const noexcept;
	};
	using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalize>;

	void db_open(const std::string& path);
	void db_exec(const char* sql, const char* what);
	Stmt db_prepare(const char* sql);
	[[noreturn]] void db_fail(const std::string& what) const;
	void db_commit_root(const RootRef& r);
	struct Object {
		std::string data;
		std::optional<Directory> dir; // decoded, once find_dir/store_dir saw it
		uint64_t used = 0;	       // tick of the last store or find
		bool pending = false;	       // not yet in the file
	};

	Object* db_load(const std::string& ref);
	Object* lookup(const std::string& ref); // memory, then the file; marks it used

	std::string path_;
	std::unordered_map<std::string, Object> objects_;
	std::vector<std::string> pending_; // refs stored since the last set_root (file only)
	std::optional<RootRef> root_;
	size_t bytes_ = 0;
	size_t dirs_ = 0;
	uint64_t now_ = 0;
	uint64_t hits_ = 0;
	uint64_t misses_ = 0;
	uint64_t expired_ = 0;

	// The handle is declared before its statements, so they are finalised
	// first; it is closed with sqlite3_close_v2, which also waits for them.
	std::unique_ptr<sqlite3, DbClose> db_;
	Stmt st_get_;
	Stmt st_has_;
	Stmt st_put_;
	Stmt st_root_;
};

} // namespace kvs
