/*
 * meta.cpp: the namespace in SQLite (meta.hpp).
 */
#include "meta.hpp"

#include <cerrno>
#include <chrono>

#include <sqlite3.h>

#include "error.hpp"

namespace pfs {

namespace {

constexpr uint64_t kRootIno = 1;
constexpr size_t kNameMax = 255;
constexpr size_t kPathMax = 4096;

[[noreturn]] void db_fail(sqlite3 *db, const std::string &what)
{
	throw Error(EIO, "metadata " + what + ": " + sqlite3_errmsg(db));
}

/* One prepared statement; binds by position from 1. */
class Stmt {
public:
	Stmt(sqlite3 *db, const char *sql) : db_(db)
	{
		if (sqlite3_prepare_v2(db, sql, -1, &st_, nullptr) != SQLITE_OK)
			db_fail(db, "prepare");
	}
	~Stmt() { sqlite3_finalize(st_); }
	Stmt(const Stmt &) = delete;
	Stmt &operator=(const Stmt &) = delete;
	Stmt &bind(int i, uint64_t v)
	{
		sqlite3_bind_int64(st_, i, static_cast<sqlite3_int64>(v));
		return *this;
	}
	Stmt &bind(int i, const std::string &v)
	{
		sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
		return *this;
	}
	/* true while there is a row */
	bool step()
	{
		int rc = sqlite3_step(st_);
		if (rc == SQLITE_ROW)
			return true;
		if (rc != SQLITE_DONE)
			db_fail(db_, "step");
		return false;
	}
	uint64_t u64(int col) { return static_cast<uint64_t>(sqlite3_column_int64(st_, col)); }
	std::string text(int col)
	{
		auto p = reinterpret_cast<const char *>(sqlite3_column_text(st_, col));
		return std::string(p ? p : "", static_cast<size_t>(sqlite3_column_bytes(st_, col)));
	}

private:
	sqlite3 *db_;
	sqlite3_stmt *st_ = nullptr;
};

uint64_t now_ns()
{
	return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
					     std::chrono::system_clock::now().time_since_epoch())
					     .count());
}

std::vector<std::string> split(const std::string &path)
{
	if (path.empty() || path[0] != '/')
		throw Error(EINVAL, "path '" + path + "': expected an absolute path (/a/b)");
	if (path.size() > kPathMax)
		throw Error(ENAMETOOLONG, "path of " + std::to_string(path.size()) +
						  " bytes: at most " + std::to_string(kPathMax));
	std::vector<std::string> out;
	size_t i = 0;
	while (i < path.size()) {
		size_t j = path.find('/', i);
		if (j == std::string::npos)
			j = path.size();
		std::string c = path.substr(i, j - i);
		if (c == "." || c == "..")
			throw Error(EINVAL, "path '" + path + "': '" + c + "' is not allowed");
		if (c.size() > kNameMax)
			throw Error(ENAMETOOLONG, "path '" + path + "': a name longer than " +
							  std::to_string(kNameMax) + " bytes");
		if (!c.empty())
			out.push_back(std::move(c));
		i = j + 1;
	}
	return out;
}

} // namespace

/* BEGIN IMMEDIATE ... COMMIT, rolled back unless commit() was reached. */
class Meta::Txn {
public:
	explicit Txn(Meta &m) : m_(m) { m_.exec("BEGIN IMMEDIATE"); }
	~Txn()
	{
		if (!done_)
			sqlite3_exec(m_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
	}
	void commit()
	{
		m_.exec("COMMIT");
		done_ = true;
	}

private:
	Meta &m_;
	bool done_ = false;
};

Meta::Meta(const std::string &path, uint32_t nservers) : nservers_(nservers)
{
	if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
		std::string e = db_ ? sqlite3_errmsg(db_) : "out of memory";
		sqlite3_close(db_);
		throw Error(EIO, "metadata file " + path + ": " + e);
	}
	try {
		exec("PRAGMA journal_mode=WAL");
		exec("PRAGMA synchronous=FULL");
		exec("CREATE TABLE IF NOT EXISTS inode(ino INTEGER PRIMARY KEY AUTOINCREMENT,"
		     " type INTEGER, mode INTEGER, mtime INTEGER, ss INTEGER, sc INTEGER,"
		     " start INTEGER)");
		exec("CREATE TABLE IF NOT EXISTS dentry(parent INTEGER, name TEXT, ino INTEGER,"
		     " PRIMARY KEY(parent, name))");
		exec("CREATE TABLE IF NOT EXISTS misc(key TEXT PRIMARY KEY, value INTEGER)");
		Txn t(*this);
		Stmt get(db_, "SELECT value FROM misc WHERE key = 'servers'");
		if (get.step()) {
			uint64_t had = get.u64(0);
			if (had != nservers)
				throw Error(EINVAL, "metadata file " + path + " belongs to an "
						    "instance of " + std::to_string(had) +
						    " servers, not " + std::to_string(nservers));
		} else {
			Stmt(db_, "INSERT INTO misc VALUES ('servers', ?)").bind(1, nservers).step();
			Stmt(db_, "INSERT INTO misc VALUES ('next_client', 1)").step();
			Stmt(db_, "INSERT INTO inode VALUES (1, ?, ?, ?, ?, 0, 0)")
				.bind(1, static_cast<uint64_t>(Type::DIR))
				.bind(2, 0755)
				.bind(3, now_ns())
				.bind(4, kDefaultStripe)
				.step();
		}
		t.commit();
	} catch (...) {
		sqlite3_close(db_);
		throw;
	}
}

Meta::~Meta()
{
	sqlite3_close(db_);
}

void Meta::exec(const char *sql)
{
	if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
		db_fail(db_, sql);
}

uint32_t Meta::new_client()
{
	Txn t(*this);
	Stmt get(db_, "SELECT value FROM misc WHERE key = 'next_client'");
	get.step();
	uint64_t id = get.u64(0);
	if (id >= UINT32_MAX)
		throw Error(EOVERFLOW, "every client id has been handed out");
	Stmt(db_, "UPDATE misc SET value = ? WHERE key = 'next_client'").bind(1, id + 1).step();
	t.commit();
	return static_cast<uint32_t>(id);
}

Attr Meta::attr(uint64_t ino)
{
	Stmt s(db_, "SELECT type, mode, mtime, ss, sc, start FROM inode WHERE ino = ?");
	s.bind(1, ino);
	if (!s.step())
		throw Error(EIO, "metadata: inode " + std::to_string(ino) + " is missing");
	Attr a;
	a.ino = ino;
	a.type = static_cast<Type>(s.u64(0));
	a.mode = static_cast<uint32_t>(s.u64(1));
	a.mtime_ns = s.u64(2);
	a.layout.stripe_size = s.u64(3);
	a.layout.stripe_count = static_cast<uint32_t>(s.u64(4));
	a.layout.stripe_start = static_cast<uint32_t>(s.u64(5));
	return a;
}

uint64_t Meta::child(uint64_t dir, const std::string &name)
{
	Stmt s(db_, "SELECT ino FROM dentry WHERE parent = ? AND name = ?");
	s.bind(1, dir).bind(2, name);
	return s.step() ? s.u64(0) : 0;
}

Meta::Found Meta::resolve(const std::string &path)
{
	std::vector<std::string> parts = split(path);
	Found f;
	f.ino = kRootIno;
	for (size_t i = 0; i < parts.size(); i++) {
		if (!f.ino)
			throw Error(ENOENT, "'" + path + "': no such directory '" +
						    parts[i - 1] + "'");
		if (attr(f.ino).type != Type::DIR)
			throw Error(ENOTDIR, "'" + path + "': '" + parts[i - 1] +
						     "' is not a directory");
		f.parent = f.ino;
		f.name = parts[i];
		f.ino = child(f.parent, f.name);
	}
	return f;
}

Attr Meta::lookup(const std::string &path)
{
	Found f = resolve(path);
	if (!f.ino)
		throw Error(ENOENT, "'" + path + "': no such file or directory");
	return attr(f.ino);
}

Attr Meta::insert(uint64_t parent, const std::string &name, Type type, uint32_t mode,
		  const Layout &layout)
{
	Stmt(db_, "INSERT INTO inode(type, mode, mtime, ss, sc, start) VALUES (?, ?, ?, ?, ?, 0)")
		.bind(1, static_cast<uint64_t>(type))
		.bind(2, mode & 07777)
		.bind(3, now_ns())
		.bind(4, layout.stripe_size)
		.bind(5, layout.stripe_count)
		.step();
	uint64_t ino = static_cast<uint64_t>(sqlite3_last_insert_rowid(db_));
	if (type == Type::REG)
		Stmt(db_, "UPDATE inode SET start = ? WHERE ino = ?")
			.bind(1, ino % nservers_)
			.bind(2, ino)
			.step();
	Stmt(db_, "INSERT INTO dentry VALUES (?, ?, ?)")
		.bind(1, parent)
		.bind(2, name)
		.bind(3, ino)
		.step();
	return attr(ino);
}

void Meta::remove(const Found &f)
{
	Stmt(db_, "DELETE FROM dentry WHERE parent = ? AND name = ?")
		.bind(1, f.parent)
		.bind(2, f.name)
		.step();
	Stmt(db_, "DELETE FROM inode WHERE ino = ?").bind(1, f.ino).step();
}

Attr Meta::create(const std::string &path, uint32_t mode, bool excl, uint64_t stripe_size,
		  uint32_t stripe_count, bool all)
{
	Txn t(*this);
	Found f = resolve(path);
	if (f.name.empty())
		throw Error(EISDIR, "'" + path + "': is the root directory");
	if (f.ino) {
		Attr a = attr(f.ino);
		if (excl)
			throw Error(EEXIST, "'" + path + "': exists");
		if (a.type == Type::DIR)
			throw Error(EISDIR, "'" + path + "': is a directory");
		return a;
	}
	Layout dir = attr(f.parent).layout;
	Layout l;
	l.stripe_size = stripe_size ? stripe_size : dir.stripe_size;
	l.stripe_count = stripe_count || all ? stripe_count : dir.stripe_count;
	layout_validate(l.stripe_size, l.stripe_count, nservers_);
	if (l.stripe_count == 0)
		l.stripe_count = nservers_;
	Attr a = insert(f.parent, f.name, Type::REG, mode, l);
	t.commit();
	return a;
}

Attr Meta::mkdir(const std::string &path, uint32_t mode)
{
	Txn t(*this);
	Found f = resolve(path);
	if (f.ino)
		throw Error(EEXIST, "'" + path + "': exists");
	Attr a = insert(f.parent, f.name, Type::DIR, mode, attr(f.parent).layout);
	t.commit();
	return a;
}

void Meta::rmdir(const std::string &path)
{
	Txn t(*this);
	Found f = resolve(path);
	if (!f.ino)
		throw Error(ENOENT, "'" + path + "': no such directory");
	if (f.ino == kRootIno)
		throw Error(EBUSY, "'" + path + "': the root directory stays");
	if (attr(f.ino).type != Type::DIR)
		throw Error(ENOTDIR, "'" + path + "': is not a directory");
	Stmt any(db_, "SELECT 1 FROM dentry WHERE parent = ? LIMIT 1");
	if (any.bind(1, f.ino).step())
		throw Error(ENOTEMPTY, "'" + path + "': directory not empty");
	remove(f);
	t.commit();
}

std::vector<Dirent> Meta::readdir(const std::string &path)
{
	Found f = resolve(path);
	if (!f.ino)
		throw Error(ENOENT, "'" + path + "': no such directory");
	if (attr(f.ino).type != Type::DIR)
		throw Error(ENOTDIR, "'" + path + "': is not a directory");
	Stmt s(db_, "SELECT d.name, d.ino, i.type FROM dentry d JOIN inode i ON d.ino = i.ino"
		    " WHERE d.parent = ? ORDER BY d.name");
	s.bind(1, f.ino);
	std::vector<Dirent> out;
	while (s.step())
		out.push_back(Dirent{s.text(0), s.u64(1), static_cast<Type>(s.u64(2))});
	return out;
}

Attr Meta::unlink(const std::string &path)
{
	Txn t(*this);
	Found f = resolve(path);
	if (!f.ino)
		throw Error(ENOENT, "'" + path + "': no such file");
	Attr a = attr(f.ino);
	if (a.type == Type::DIR)
		throw Error(EISDIR, "'" + path + "': is a directory (rmdir removes those)");
	remove(f);
	t.commit();
	return a;
}

Attr Meta::rename(const std::string &from, const std::string &to)
{
	Txn t(*this);
	Found src = resolve(from);
	if (!src.ino)
		throw Error(ENOENT, "'" + from + "': no such file or directory");
	if (src.ino == kRootIno)
		throw Error(EBUSY, "'" + from + "': the root directory stays");
	Found dst = resolve(to);
	if (dst.name.empty())
		throw Error(EBUSY, "'" + to + "': the root directory stays");
	Attr sa = attr(src.ino);
	if (sa.type == Type::DIR) {
		/* No directory may move beneath itself. */
		for (uint64_t d = dst.parent; d != kRootIno;) {
			if (d == src.ino)
				throw Error(EINVAL, "'" + from + "' cannot move beneath itself ('" +
							    to + "')");
			Stmt up(db_, "SELECT parent FROM dentry WHERE ino = ?");
			up.bind(1, d);
			d = up.step() ? up.u64(0) : kRootIno;
		}
	}
	Attr replaced;
	if (dst.ino == src.ino)
		return replaced;
	if (dst.ino) {
		Attr da = attr(dst.ino);
		if (da.type == Type::DIR && sa.type != Type::DIR)
			throw Error(EISDIR, "'" + to + "': is a directory");
		if (da.type != Type::DIR && sa.type == Type::DIR)
			throw Error(ENOTDIR, "'" + to + "': is not a directory");
		if (da.type == Type::DIR) {
			Stmt any(db_, "SELECT 1 FROM dentry WHERE parent = ? LIMIT 1");
			if (any.bind(1, dst.ino).step())
				throw Error(ENOTEMPTY, "'" + to + "': directory not empty");
		} else {
			replaced = da;
		}
		remove(dst);
	}
	Stmt(db_, "UPDATE dentry SET parent = ?, name = ? WHERE parent = ? AND name = ?")
		.bind(1, dst.parent)
		.bind(2, dst.name)
		.bind(3, src.parent)
		.bind(4, src.name)
		.step();
	t.commit();
	return replaced;
}

Attr Meta::setstripe(const std::string &path, uint64_t stripe_size, uint32_t stripe_count,
		     bool all)
{
	Txn t(*this);
	Found f = resolve(path);
	if (!f.ino)
		throw Error(ENOENT, "'" + path + "': no such directory (a new file takes its "
					     "layout at create)");
	Attr a = attr(f.ino);
	if (a.type != Type::DIR)
		throw Error(EEXIST, "'" + path + "': a file's layout is fixed when it is created");
	uint64_t ss = stripe_size ? stripe_size : a.layout.stripe_size;
	uint32_t sc = stripe_count || all ? stripe_count : a.layout.stripe_count;
	layout_validate(ss, sc, nservers_);
	Stmt(db_, "UPDATE inode SET ss = ?, sc = ? WHERE ino = ?")
		.bind(1, ss)
		.bind(2, sc)
		.bind(3, f.ino)
		.step();
	a = attr(f.ino);
	t.commit();
	return a;
}

} // namespace pfs
