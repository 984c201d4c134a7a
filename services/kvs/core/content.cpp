// content.cpp - the content-addressed blob store (see content.hpp).
#include "content.hpp"

#include "blobref.hpp"
#include "error.hpp"
#include "key.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cerrno>

namespace kvs {

namespace {

constexpr int schema_version = 1;

} // namespace

void ContentStore::DbClose::operator()(sqlite3* db) const noexcept
{
	sqlite3_close_v2(db);
}

void ContentStore::StmtFinalize::operator()(sqlite3_stmt* st) const noexcept
{
	sqlite3_finalize(st);
}

ContentStore::ContentStore(const std::string& sqlite_path) : path_(sqlite_path)
{
	if (!sqlite_path.empty())
		db_open(sqlite_path);
}

ContentStore::~ContentStore() = default;
ContentStore::ContentStore(ContentStore&&) noexcept = default;
ContentStore& ContentStore::operator=(ContentStore&&) noexcept = default;

void ContentStore::db_fail(const std::string& what) const
{
	std::string msg = "content store '" + path_ + "': " + what;
	if (db_)
		msg += std::string(": ") + sqlite3_errmsg(db_.get());
	throw Error(EIO, msg);
}

void ContentStore::db_exec(const char* sql, const char* what)
{
	if (sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr) != SQLITE_OK)
		db_fail(what);
}

ContentStore::Stmt ContentStore::db_prepare(const char* sql)
{
	sqlite3_stmt* st = nullptr;
	if (sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr) !=
	    SQLITE_OK)
		db_fail(std::string("cannot prepare '") + sql + "'");
	return Stmt(st);
}

void ContentStore::db_open(const std::string& path)
{
	sqlite3* raw = nullptr;
	int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
				 nullptr);
	db_.reset(raw); // closed on every path, also when the open failed
	if (rc != SQLITE_OK)
		db_fail("cannot open SQLite database");
	sqlite3_extended_result_codes(db_.get(), 1);
	sqlite3_busy_timeout(db_.get(), 5000);

	// The first statement that reads the file is where a corrupt or foreign
	// file is detected ("file is not a database").
	Stmt ver = db_prepare("PRAGMA user_version");
	if (sqlite3_step(ver.get()) != SQLITE_ROW)
		db_fail("cannot read the schema version");
	int found = sqlite3_column_int(ver.get(), 0);
	ver.reset();
	if (found != 0 && found != schema_version)
		throw Error(EIO, "content store '" + path + "': schema version " +
					 std::to_string(found) + " (this build reads version " +
					 std::to_string(schema_version) + ")");

	// WAL: readers do not block the committing root; FULL: a committed root
	// survives power loss, which is what "durable" promises.
	db_exec("PRAGMA journal_mode=WAL", "cannot switch to WAL journal mode");
	db_exec("PRAGMA synchronous=FULL", "cannot set synchronous=FULL");
	if (found == 0) {
		db_exec("BEGIN IMMEDIATE;"
			"CREATE TABLE IF NOT EXISTS objects (ref TEXT PRIMARY KEY, data BLOB NOT NULL) "
			"WITHOUT ROWID;"
			"CREATE TABLE IF NOT EXISTS root (id INTEGER PRIMARY KEY CHECK (id = 0), "
			"version INTEGER NOT NULL, ref TEXT NOT NULL);"
			"PRAGMA user_version = 1;"
			"COMMIT;",
			"cannot create the schema");
	}

	st_get_ = db_prepare("SELECT data FROM objects WHERE ref = ?1");
	st_has_ = db_prepare("SELECT 1 FROM objects WHERE ref = ?1");
	st_put_ = db_prepare("INSERT OR IGNORE INTO objects (ref, data) VALUES (?1, ?2)");
	st_root_ = db_prepare("INSERT OR REPLACE INTO root (id, version, ref) VALUES (0, ?1, ?2)");

	Stmt rs = db_prepare("SELECT version, ref FROM root WHERE id = 0");
	rc = sqlite3_step(rs.get());
	if (rc == SQLITE_ROW) {
		auto version = static_cast<uint64_t>(sqlite3_column_int64(rs.get(), 0));
		const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(rs.get(), 1));
		std::string ref = text ? text : "";
		if (!blobref_valid(ref))
			throw Error(EPROTO, "content store '" + path + "': stored root " +
						    key_quote(ref) + " is not a blobref");
		root_ = RootRef{version, std::move(ref)};
	} else if (rc != SQLITE_DONE) {
		db_fail("cannot read the root");
	}
}

std::string ContentStore::store(std::string data)
{
	std::string ref = blobref_hash(data);
	auto [it, inserted] = objects_.try_emplace(ref);
	Object& o = it->second;
	o.used = now_;
	if (inserted) {
		bytes_ += data.size();
		o.data = std::move(data);
		if (db_) {
			o.pending = true;
			pending_.push_back(ref);
		}
	}
	return ref;
}

void ContentStore::store_ref(const std::string& ref, std::string data)
{
	std::string actual = blobref_hash(data);
	if (actual != ref)
		throw Error(EPROTO, "object received as " + key_quote(ref) + " hashes to " + actual +
					    " (an object must be stored under the SHA-1 of its bytes)");
	store(std::move(data));
}

ContentStore::Object* ContentStore::db_load(const std::string& ref)
{
	sqlite3_stmt* st = st_get_.get();
	sqlite3_bind_text(st, 1, ref.data(), static_cast<int>(ref.size()), SQLITE_STATIC);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const void* blob = sqlite3_column_blob(st, 0);
		int n = sqlite3_column_bytes(st, 0);
		std::string data(static_cast<const char*>(blob), static_cast<size_t>(n));
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		if (blobref_hash(data) != ref)
			throw Error(EPROTO, "content store '" + path_ + "': object " + ref +
						    " read from the file does not match its hash "
						    "(the file is corrupt)");
		bytes_ += data.size();
		Object& o = objects_[ref];
		o.data = std::move(data);
		o.used = now_;
		return &o;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		db_fail("cannot read object " + ref);
	return nullptr;
}

ContentStore::Object* ContentStore::lookup(const std::string& ref)
{
	if (auto it = objects_.find(ref); it != objects_.end()) {
		it->second.used = now_;
		return &it->second;
	}
	return db_ ? db_load(ref) : nullptr;
}

const std::string* ContentStore::find(const std::string& ref)
{
	Object* o = lookup(ref);
	if (!o) {
		misses_++;
		return nullptr;
	}
	hits_++;
	return &o->data;
}

const Directory* ContentStore::find_dir(const std::string& ref)
{
	Object* o = lookup(ref);
	if (!o) {
		misses_++;
		return nullptr;
	}
	hits_++;
	if (!o->dir) {
		o->dir = dir_decode(o->data);
		dirs_++;
	}
	return &*o->dir;
}

std::string ContentStore::store_dir(Directory d)
{
	std::string ref = store(dir_encode(d));
	Object& o = objects_.at(ref);
	if (!o.dir) {
		o.dir = std::move(d);
		dirs_++;
	}
	return ref;
}

bool ContentStore::contains(const std::string& ref)
{
	if (objects_.contains(ref))
		return true;
	if (!db_)
		return false;
	sqlite3_stmt* st = st_has_.get();
	sqlite3_bind_text(st, 1, ref.data(), static_cast<int>(ref.size()), SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		db_fail("cannot look up object " + ref);
	return rc == SQLITE_ROW;
}

void ContentStore::db_commit_root(const RootRef& r)
{
	db_exec("BEGIN IMMEDIATE", "cannot begin a transaction");
	try {
		for (const auto& ref : pending_) {
			const std::string& data = objects_.at(ref).data;
			sqlite3_stmt* st = st_put_.get();
			sqlite3_bind_text(st, 1, ref.data(), static_cast<int>(ref.size()),
					  SQLITE_STATIC);
			sqlite3_bind_blob64(st, 2, data.data(), data.size(), SQLITE_STATIC);
			int rc = sqlite3_step(st);
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			if (rc != SQLITE_DONE)
				db_fail("cannot write object " + ref);
		}
		sqlite3_stmt* st = st_root_.get();
		sqlite3_bind_int64(st, 1, static_cast<sqlite3_int64>(r.version));
		sqlite3_bind_text(st, 2, r.ref.data(), static_cast<int>(r.ref.size()), SQLITE_STATIC);
		int rc = sqlite3_step(st);
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		if (rc != SQLITE_DONE)
			db_fail("cannot write the root");
		db_exec("COMMIT", "cannot commit the root");
	} catch (...) {
		sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
		throw;
	}
}

void ContentStore::set_root(const RootRef& r)
{
	if (!blobref_valid(r.ref))
		throw Error(EINVAL, "root " + key_quote(r.ref) +
					    " is not a blobref (sha1- and 40 lower-case hex digits)");
	if (db_) {
		db_commit_root(r);
		for (const auto& ref : pending_)
			objects_.at(ref).pending = false;
		pending_.clear();
	}
	root_ = r;
}

size_t ContentStore::expire(uint64_t max_age)
{
	size_t dropped = 0;
	for (auto it = objects_.begin(); it != objects_.end();) {
		const Object& o = it->second;
		if (o.pending || now_ - o.used < max_age) {
			++it;
			continue;
		}
		bytes_ -= o.data.size();
		dirs_ -= o.dir.has_value();
		it = objects_.erase(it);
		dropped++;
	}
	expired_ += dropped;
	return dropped;
}

std::vector<std::string> ContentStore::refs() const
{
	std::vector<std::string> out;
	out.reserve(objects_.size());
	for (const auto& [ref, o] : objects_)
		out.push_back(ref);
	std::sort(out.begin(), out.end());
	return out;
}

} // namespace kvs
