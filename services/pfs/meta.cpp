/*
 * meta.cpp: the namespace in SQLite (meta.hpp).
 */
#include "meta.hpp"

#include <cerrno>
#include <chrono>
#include <deque>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "error.hpp"

namespace pfs {

namespace {

constexpr uint64_t kRootIno = 1;
constexpr size_t kNameMax = 255;
constexpr size_t kSymlinkMax = 4095;	/* a target, as the kernel's PATH_MAX - 1 */
constexpr int kLinksMax = 40;		/* symbolic links followed per path, as Linux */
constexpr uint32_t kNlinkMax = 65000;	/* links to one file, as ext4 */
constexpr uint64_t kClientBlock = 64;	/* client ids written ahead */

[[noreturn]] void db_fail(sqlite3 *db, const std::string &what)
{
	/* A full disk is the caller's to handle (a reserve), not an I/O error. */
	int e = sqlite3_errcode(db) == SQLITE_FULL || sqlite3_system_errno(db) == ENOSPC
			? ENOSPC
			: EIO;
	throw Error(e, "metadata " + what + ": " + sqlite3_errmsg(db));
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
	Stmt &blob(int i, std::string_view v)
	{
		sqlite3_bind_blob(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
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
		auto p = static_cast<const char *>(sqlite3_column_blob(st_, col));
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

/* Components of path; dots: "." and ".." kept (a link's target), else refused. */
std::vector<std::string> split(const std::string &path, bool dots)
{
	if (!dots && (path.empty() || path[0] != '/'))
		throw Error(EINVAL, "path '" + path + "': expected an absolute path (/a/b)");
	if (path.size() > Meta::kPathMax)
		throw Error(ENAMETOOLONG, "path of " + std::to_string(path.size()) +
						  " bytes: at most " + std::to_string(Meta::kPathMax));
	std::vector<std::string> out;
	size_t i = 0;
	while (i < path.size()) {
		size_t j = path.find('/', i);
		if (j == std::string::npos)
			j = path.size();
		std::string c = path.substr(i, j - i);
		if (!dots && (c == "." || c == ".."))
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

Type type_of_mode(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO: return Type::FIFO;
	case S_IFSOCK: return Type::SOCK;
	case S_IFCHR: return Type::CHR;
	case S_IFBLK: return Type::BLK;
	case 0:
	case S_IFREG: return Type::REG;
	}
	throw Error(EINVAL, "mknod: file type " + std::to_string(mode & S_IFMT) +
				    ": expected a FIFO, socket, character or block device");
}

void check_xattr_name(const std::string &name)
{
	if (name.empty() || name.size() > Meta::kXattrNameMax)
		throw Error(name.empty() ? EINVAL : ERANGE,
			    "attribute name of " + std::to_string(name.size()) +
				    " bytes: expected 1 to " + std::to_string(Meta::kXattrNameMax));
	if (name.compare(0, 5, "user.") != 0 || name.size() == 5)
		throw Error(EOPNOTSUPP, "attribute '" + name + "': only user.* attributes are kept");
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

Meta::Meta(const std::string &path, uint32_t nservers)
    : nservers_(nservers), reserve_(path + ".reserve")
{
	if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) {
		std::string e = db_ ? sqlite3_errmsg(db_) : "out of memory";
		sqlite3_close(db_);
		throw Error(EIO, "metadata file " + path + ": " + e);
	}
	try {
		exec("PRAGMA journal_mode=WAL");
		exec("PRAGMA synchronous=FULL");
		int version;
		bool tables;
		{
			Stmt ver(db_, "PRAGMA user_version");
			ver.step();
			version = static_cast<int>(ver.u64(0));
			Stmt old(db_, "SELECT 1 FROM sqlite_master WHERE name = 'inode'");
			tables = old.step();
		}
		if (version > kSchema)
			throw Error(EINVAL, "metadata file " + path + " has schema version " +
						    std::to_string(version) + ", newer than this server's " +
						    std::to_string(kSchema) + ": run a newer loggp-pfs-server");
		if (version < kSchema && tables)
			migrate(version);
		exec("CREATE TABLE IF NOT EXISTS inode(ino INTEGER PRIMARY KEY AUTOINCREMENT,"
		     " type INTEGER, mode INTEGER, mtime INTEGER, ss INTEGER, sc INTEGER,"
		     " start INTEGER, uid INTEGER, gid INTEGER, atime INTEGER, ctime INTEGER,"
		     " nlink INTEGER, rdev INTEGER, target BLOB)");
		exec("CREATE TABLE IF NOT EXISTS dentry(parent INTEGER, name TEXT, ino INTEGER,"
		     " PRIMARY KEY(parent, name))");
		exec("CREATE INDEX IF NOT EXISTS dentry_ino ON dentry(ino)");
		exec("CREATE TABLE IF NOT EXISTS xattr(ino INTEGER, name TEXT, value BLOB,"
		     " PRIMARY KEY(ino, name))");
		exec("CREATE TABLE IF NOT EXISTS misc(key TEXT PRIMARY KEY, value INTEGER)");
		exec(("PRAGMA user_version = " + std::to_string(kSchema)).c_str());
		Txn t(*this);
		Stmt get(db_, "SELECT value FROM misc WHERE key = 'servers'");
		if (get.step()) {
			uint64_t had = get.u64(0);
			if (had != nservers)
				throw Error(EINVAL, "metadata file " + path + " belongs to an "
						    "instance of " + std::to_string(had) +
						    " servers, not " + std::to_string(nservers));
		} else {
			uint64_t now = now_ns();
			Stmt(db_, "INSERT INTO misc VALUES ('servers', ?)").bind(1, nservers).step();
			Stmt(db_, "INSERT INTO misc VALUES ('next_client', 1)").step();
			Stmt(db_, "INSERT INTO inode VALUES (1, ?, ?, ?, ?, 0, 0, ?, ?, ?, ?, 2, 0, '')")
				.bind(1, static_cast<uint64_t>(Type::DIR))
				.bind(2, 0755)
				.bind(3, now)
				.bind(4, kDefaultStripe)
				.bind(5, ::getuid())
				.bind(6, ::getgid())
				.bind(7, now)
				.bind(8, now)
				.step();
		}
		Stmt next(db_, "SELECT value FROM misc WHERE key = 'next_client'");
		next.step();
		next_client_ = client_limit_ = next.u64(0);
		t.commit();
	} catch (...) {
		sqlite3_close(db_);
		throw;
	}
	keep_reserve();
}

Meta::~Meta()
{
	sqlite3_close(db_);
}

void Meta::migrate(int version)
{
	if (version != 0)
		throw Error(EINVAL, "metadata file: schema version " + std::to_string(version) +
					    " cannot be migrated (expected 0 or 2)");
	/* Version 1 (user_version 0): type, mode, mtime and layouts only. */
	Txn t(*this);
	exec("ALTER TABLE inode ADD COLUMN uid INTEGER");
	exec("ALTER TABLE inode ADD COLUMN gid INTEGER");
	exec("ALTER TABLE inode ADD COLUMN atime INTEGER");
	exec("ALTER TABLE inode ADD COLUMN ctime INTEGER");
	exec("ALTER TABLE inode ADD COLUMN nlink INTEGER");
	exec("ALTER TABLE inode ADD COLUMN rdev INTEGER");
	exec("ALTER TABLE inode ADD COLUMN target BLOB");
	Stmt(db_, "UPDATE inode SET uid = ?, gid = ?, atime = mtime, ctime = mtime, nlink = 1,"
		  " rdev = 0, target = ''")
		.bind(1, ::getuid())
		.bind(2, ::getgid())
		.step();
	t.commit();
}

void Meta::exec(const char *sql)
{
	if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
		db_fail(db_, sql);
}

uint32_t Meta::new_client()
{
	if (next_client_ >= UINT32_MAX)
		throw Error(EOVERFLOW, "every client id has been handed out");
	if (next_client_ == client_limit_) {
		Txn t(*this);
		Stmt(db_, "UPDATE misc SET value = ? WHERE key = 'next_client'")
			.bind(1, next_client_ + kClientBlock)
			.step();
		t.commit();
		client_limit_ = next_client_ + kClientBlock;
	}
	return static_cast<uint32_t>(next_client_++);
}

bool Meta::release_reserve()
{
	if (!have_reserve_)
		return false;
	::unlink(reserve_.c_str());
	have_reserve_ = false;
	return true;
}

void Meta::keep_reserve()
{
	struct stat st;
	if (!have_reserve_ && ::stat(reserve_.c_str(), &st) == 0 &&
	    static_cast<uint64_t>(st.st_blocks) * 512 >= kReserve) {
		have_reserve_ = true;
		return;
	}
	if (have_reserve_)
		return;
	/* Only with room to spare: taking the last blocks back would make the
	 * next write fail for nothing. */
	struct statvfs fs;
	std::string dir = reserve_.substr(0, reserve_.rfind('/') + 1);
	if (::statvfs(dir.c_str(), &fs) ||
	    static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize < 2 * kReserve)
		return;
	int fd = ::open(reserve_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	int e = ::posix_fallocate(fd, 0, static_cast<off_t>(kReserve));
	::close(fd);
	if (e)
		::unlink(reserve_.c_str());
	else
		have_reserve_ = true;
}

Attr Meta::attr(uint64_t ino)
{
	Stmt s(db_, "SELECT type, mode, mtime, ss, sc, start, uid, gid, atime, ctime, nlink,"
		    " rdev, target FROM inode WHERE ino = ?");
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
	a.uid = static_cast<uint32_t>(s.u64(6));
	a.gid = static_cast<uint32_t>(s.u64(7));
	a.atime_ns = s.u64(8);
	a.ctime_ns = s.u64(9);
	a.nlink = static_cast<uint32_t>(s.u64(10));
	a.rdev = s.u64(11);
	a.target = s.text(12);
	if (a.type == Type::DIR) {
		Stmt sub(db_, "SELECT COUNT(*) FROM dentry d JOIN inode i ON d.ino = i.ino"
			      " WHERE d.parent = ? AND i.type = ?");
		sub.bind(1, ino).bind(2, static_cast<uint64_t>(Type::DIR)).step();
		a.nlink = static_cast<uint32_t>(2 + sub.u64(0));
	}
	return a;
}

std::pair<uint64_t, Type> Meta::child(uint64_t dir, const std::string &name)
{
	Stmt s(db_, "SELECT d.ino, i.type FROM dentry d JOIN inode i ON d.ino = i.ino"
		    " WHERE d.parent = ? AND d.name = ?");
	s.bind(1, dir).bind(2, name);
	if (!s.step())
		return {0, Type::REG};
	return {s.u64(0), static_cast<Type>(s.u64(1))};
}

/*
 * Walks the components with a stack of the directories passed, so ".." in
 * a link's target goes back up what was really walked; a link met on the
 * way puts its target's components in front of the rest.
 */
Meta::Found Meta::resolve(const std::string &path, bool follow_last)
{
	std::vector<std::string> first = split(path, false);
	std::deque<std::string> todo(first.begin(), first.end());
	std::vector<std::pair<uint64_t, Type>> dirs{{kRootIno, Type::DIR}};
	Found f;
	f.ino = kRootIno;
	int links = 0;
	while (!todo.empty()) {
		std::string c = std::move(todo.front());
		todo.pop_front();
		if (c == "." || c == "..") {
			if (dirs.back().second != Type::DIR)
				throw Error(ENOTDIR, "'" + path + "': '" + f.name +
							     "' is not a directory");
			if (c == ".." && dirs.size() > 1)
				dirs.pop_back();
			f.parent = dirs.size() > 1 ? dirs[dirs.size() - 2].first : 0;
			f.name.clear();
			f.ino = dirs.back().first;
			continue;
		}
		if (dirs.back().second != Type::DIR)
			throw Error(ENOTDIR, "'" + path + "': '" + f.name + "' is not a directory");
		uint64_t dir = dirs.back().first;
		auto [ino, type] = child(dir, c);
		if (ino && type == Type::LNK && (!todo.empty() || follow_last)) {
			if (++links > kLinksMax)
				throw Error(ELOOP, "'" + path + "': more than " +
							   std::to_string(kLinksMax) +
							   " symbolic links on the way");
			std::string target = attr(ino).target;
			std::vector<std::string> more = split(target, true);
			todo.insert(todo.begin(), more.begin(), more.end());
			if (!target.empty() && target[0] == '/')
				dirs.assign(1, {kRootIno, Type::DIR});
			f.parent = dirs.size() > 1 ? dirs[dirs.size() - 2].first : 0;
			f.name.clear();
			f.ino = dirs.back().first;
			continue;
		}
		if (!ino && !todo.empty())
			throw Error(ENOENT, "'" + path + "': no such directory '" + c + "'");
		f.parent = dir;
		f.name = c;
		f.ino = ino;
		if (ino)
			dirs.emplace_back(ino, type);
	}
	return f;
}

Meta::Found Meta::existing(const std::string &path, bool follow_last)
{
	Found f = resolve(path, follow_last);
	if (!f.ino)
		throw Error(ENOENT, "'" + path + "': no such file or directory");
	return f;
}

Attr Meta::lookup(const std::string &path, bool follow)
{
	return attr(existing(path, follow).ino);
}

void Meta::touch_dir(uint64_t dir)
{
	uint64_t now = now_ns();
	Stmt(db_, "UPDATE inode SET mtime = ?, ctime = ? WHERE ino = ?")
		.bind(1, now)
		.bind(2, now)
		.bind(3, dir)
		.step();
}

bool Meta::empty_dir(uint64_t dir)
{
	Stmt any(db_, "SELECT 1 FROM dentry WHERE parent = ? LIMIT 1");
	return !any.bind(1, dir).step();
}

Attr Meta::insert(uint64_t parent, const std::string &name, Type type, uint32_t mode,
		  const Layout &layout, Ids ids, uint64_t rdev, const std::string &target)
{
	Attr dir = attr(parent);
	mode &= 07777;
	if (dir.mode & S_ISGID) {
		/* BSD group semantics in a set-group-ID directory. */
		ids.gid = dir.gid;
		if (type == Type::DIR)
			mode |= S_ISGID;
	}
	uint64_t now = now_ns();
	Stmt(db_, "INSERT INTO inode(type, mode, mtime, ss, sc, start, uid, gid, atime, ctime,"
		  " nlink, rdev, target) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, 1, ?, ?)")
		.bind(1, static_cast<uint64_t>(type))
		.bind(2, mode)
		.bind(3, now)
		.bind(4, layout.stripe_size)
		.bind(5, layout.stripe_count)
		.bind(6, ids.uid)
		.bind(7, ids.gid)
		.bind(8, now)
		.bind(9, now)
		.bind(10, rdev)
		.blob(11, target)
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
	touch_dir(parent);
	return attr(ino);
}

void Meta::remove(const Found &f)
{
	Stmt(db_, "DELETE FROM dentry WHERE parent = ? AND name = ?")
		.bind(1, f.parent)
		.bind(2, f.name)
		.step();
	Stmt(db_, "UPDATE inode SET nlink = nlink - 1, ctime = ? WHERE ino = ?")
		.bind(1, now_ns())
		.bind(2, f.ino)
		.step();
	Stmt left(db_, "SELECT type, nlink FROM inode WHERE ino = ?");
	left.bind(1, f.ino).step();
	if (static_cast<Type>(left.u64(0)) == Type::DIR || left.u64(1) == 0) {
		Stmt(db_, "DELETE FROM inode WHERE ino = ?").bind(1, f.ino).step();
		Stmt(db_, "DELETE FROM xattr WHERE ino = ?").bind(1, f.ino).step();
	}
	touch_dir(f.parent);
}

Attr Meta::create(const std::string &path, uint32_t mode, bool excl, uint64_t stripe_size,
		  uint32_t stripe_count, bool all, Ids ids)
{
	Txn t(*this);
	/* open(O_CREAT) follows a link at the end, O_EXCL does not. */
	Found f = resolve(path, !excl);
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
	Attr a = insert(f.parent, f.name, Type::REG, mode, l, ids);
	t.commit();
	return a;
}

Attr Meta::mkdir(const std::string &path, uint32_t mode, Ids ids)
{
	Txn t(*this);
	Found f = resolve(path);
	if (f.ino)
		throw Error(EEXIST, "'" + path + "': exists");
	Attr a = insert(f.parent, f.name, Type::DIR, mode, attr(f.parent).layout, ids);
	t.commit();
	return a;
}

Attr Meta::mknod(const std::string &path, uint32_t mode, uint64_t rdev, Ids ids)
{
	Type type = type_of_mode(mode);
	if (type == Type::REG)
		return create(path, mode, true, 0, 0, false, ids);
	Txn t(*this);
	Found f = resolve(path);
	if (f.ino)
		throw Error(EEXIST, "'" + path + "': exists");
	bool dev = type == Type::CHR || type == Type::BLK;
	Attr a = insert(f.parent, f.name, type, mode, Layout{0, 0, 0}, ids, dev ? rdev : 0);
	t.commit();
	return a;
}

Attr Meta::symlink(const std::string &target, const std::string &path, Ids ids)
{
	if (target.empty())
		throw Error(ENOENT, "symlink '" + path + "': the target is empty");
	if (target.size() > kSymlinkMax)
		throw Error(ENAMETOOLONG, "symlink '" + path + "': a target of " +
						  std::to_string(target.size()) + " bytes (at most " +
						  std::to_string(kSymlinkMax) + ")");
	Txn t(*this);
	Found f = resolve(path);
	if (f.ino)
		throw Error(EEXIST, "'" + path + "': exists");
	Attr a = insert(f.parent, f.name, Type::LNK, 0777, Layout{0, 0, 0}, ids, 0, target);
	t.commit();
	return a;
}

Attr Meta::link(const std::string &from, const std::string &to)
{
	Txn t(*this);
	Found src = existing(from);
	Attr a = attr(src.ino);
	if (a.type == Type::DIR)
		throw Error(EPERM, "link '" + from + "': is a directory (no hard links to those)");
	if (a.nlink >= kNlinkMax)
		throw Error(EMLINK, "link '" + from + "': already " + std::to_string(a.nlink) +
					    " links");
	Found dst = resolve(to);
	if (dst.ino || dst.name.empty())
		throw Error(EEXIST, "'" + to + "': exists");
	Stmt(db_, "INSERT INTO dentry VALUES (?, ?, ?)")
		.bind(1, dst.parent)
		.bind(2, dst.name)
		.bind(3, src.ino)
		.step();
	Stmt(db_, "UPDATE inode SET nlink = nlink + 1, ctime = ? WHERE ino = ?")
		.bind(1, now_ns())
		.bind(2, src.ino)
		.step();
	touch_dir(dst.parent);
	a = attr(src.ino);
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
	if (!empty_dir(f.ino))
		throw Error(ENOTEMPTY, "'" + path + "': directory not empty");
	remove(f);
	t.commit();
}

std::vector<Dirent> Meta::readdir(const std::string &path)
{
	Found f = existing(path, true);
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
	a.nlink--;
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
	/* Two names of one inode: POSIX says nothing happens. */
	if (dst.ino == src.ino)
		return replaced;
	if (dst.ino) {
		Attr da = attr(dst.ino);
		if (da.type == Type::DIR && sa.type != Type::DIR)
			throw Error(EISDIR, "'" + to + "': is a directory");
		if (da.type != Type::DIR && sa.type == Type::DIR)
			throw Error(ENOTDIR, "'" + to + "': is not a directory");
		if (da.type == Type::DIR && !empty_dir(dst.ino))
			throw Error(ENOTEMPTY, "'" + to + "': directory not empty");
		if (da.type != Type::DIR) {
			replaced = da;
			replaced.nlink--;
		}
		remove(dst);
	}
	Stmt(db_, "UPDATE dentry SET parent = ?, name = ? WHERE parent = ? AND name = ?")
		.bind(1, dst.parent)
		.bind(2, dst.name)
		.bind(3, src.parent)
		.bind(4, src.name)
		.step();
	Stmt(db_, "UPDATE inode SET ctime = ? WHERE ino = ?").bind(1, now_ns()).bind(2, src.ino).step();
	touch_dir(src.parent);
	touch_dir(dst.parent);
	t.commit();
	return replaced;
}

Attr Meta::setstripe(const std::string &path, uint64_t stripe_size, uint32_t stripe_count,
		     bool all)
{
	Txn t(*this);
	Found f = resolve(path, true);
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

Attr Meta::setattr(const std::string &path, uint64_t ino, const SetAttr &s)
{
	Txn t(*this);
	Found f;
	if (path.empty()) {
		Stmt has(db_, "SELECT 1 FROM inode WHERE ino = ?");
		if (!has.bind(1, ino).step())
			throw Error(ENOENT, "inode " + std::to_string(ino) + ": no longer named");
		f.ino = ino;
	} else {
		f = existing(path);
	}
	Attr a = attr(f.ino);
	bool root = s.caller.uid == 0, owner = s.caller.uid == a.uid;
	auto refuse = [&](const char *what) {
		throw Error(EPERM, std::string(what) + " '" + path + "': uid " +
					   std::to_string(s.caller.uid) + " is neither its owner (" +
					   std::to_string(a.uid) + ") nor root");
	};
	/* Group membership is not known here (a caller sends one gid): the
	 * rules that need it (set-group-ID kept only by a member, chgrp only
	 * to one's groups) are the kernel's (the mount's default_permissions). */
	uint32_t mode = a.mode;
	if (s.set & kSetMode) {
		if (!root && !owner)
			refuse("chmod");
		mode = s.mode & 07777;
	}
	uint32_t uid = a.uid, gid = a.gid;
	if (s.set & (kSetUid | kSetGid)) {
		if ((s.set & kSetUid) && s.uid != a.uid && !root)
			refuse("chown");
		if ((s.set & kSetGid) && s.gid != a.gid && !root && !owner)
			refuse("chgrp");
		if (s.set & kSetUid)
			uid = s.uid;
		if (s.set & kSetGid)
			gid = s.gid;
		/* Owners changed: set-user-ID goes, set-group-ID too where it
		 * means execution (with group execute), as Linux does. */
		if (a.type != Type::DIR) {
			mode &= ~static_cast<uint32_t>(S_ISUID);
			if (mode & S_IXGRP)
				mode &= ~static_cast<uint32_t>(S_ISGID);
		}
	}
	uint64_t now = now_ns(), atime = a.atime_ns, mtime = a.mtime_ns;
	if (s.set & (kSetAtime | kSetMtime)) {
		if (!root && !owner)
			refuse("utimensat");
	}
	if (s.set & (kSetAtimeNow | kSetMtimeNow)) {
		uint32_t w = owner ? S_IWUSR : s.caller.gid == a.gid ? S_IWGRP : S_IWOTH;
		if (!root && !owner && !(a.mode & w))
			throw Error(EACCES, "utimensat '" + path + "': no write permission");
	}
	if (s.set & kSetAtime)
		atime = s.atime_ns;
	if (s.set & kSetMtime)
		mtime = s.mtime_ns;
	if (s.set & kSetAtimeNow)
		atime = now;
	if (s.set & (kSetMtimeNow | kSetSize))
		mtime = now;
	Stmt(db_, "UPDATE inode SET mode = ?, uid = ?, gid = ?, atime = ?, mtime = ?, ctime = ?"
		  " WHERE ino = ?")
		.bind(1, mode)
		.bind(2, uid)
		.bind(3, gid)
		.bind(4, atime)
		.bind(5, mtime)
		.bind(6, now)
		.bind(7, f.ino)
		.step();
	a = attr(f.ino);
	t.commit();
	return a;
}

void Meta::setxattr(const std::string &path, const std::string &name, std::string_view value,
		    uint32_t flags)
{
	check_xattr_name(name);
	if (value.size() > kXattrValueMax)
		throw Error(E2BIG, "attribute '" + name + "': a value of " +
					   std::to_string(value.size()) + " bytes (at most " +
					   std::to_string(kXattrValueMax) + ")");
	Txn t(*this);
	Found f = existing(path);
	Stmt had(db_, "SELECT length(value) FROM xattr WHERE ino = ? AND name = ?");
	bool exists = had.bind(1, f.ino).bind(2, name).step();
	uint64_t old = exists ? had.u64(0) : 0;
	if (exists && (flags & XATTR_CREATE))
		throw Error(EEXIST, "attribute '" + name + "' of '" + path + "': exists");
	if (!exists && (flags & XATTR_REPLACE))
		throw Error(ENODATA, "attribute '" + name + "' of '" + path + "': not there");
	Stmt sum(db_, "SELECT COALESCE(SUM(length(name) + length(value)), 0) FROM xattr"
		      " WHERE ino = ?");
	sum.bind(1, f.ino).step();
	uint64_t total = sum.u64(0) - (exists ? old + name.size() : 0) + name.size() + value.size();
	if (total > kXattrTotalMax)
		throw Error(ENOSPC, "attributes of '" + path + "': " + std::to_string(total) +
					    " bytes (at most " + std::to_string(kXattrTotalMax) +
					    " per entry)");
	Stmt(db_, "INSERT OR REPLACE INTO xattr VALUES (?, ?, ?)")
		.bind(1, f.ino)
		.bind(2, name)
		.blob(3, value)
		.step();
	Stmt(db_, "UPDATE inode SET ctime = ? WHERE ino = ?").bind(1, now_ns()).bind(2, f.ino).step();
	t.commit();
}

std::string Meta::getxattr(const std::string &path, const std::string &name)
{
	check_xattr_name(name);
	Found f = existing(path);
	Stmt s(db_, "SELECT value FROM xattr WHERE ino = ? AND name = ?");
	if (!s.bind(1, f.ino).bind(2, name).step())
		throw Error(ENODATA, "attribute '" + name + "' of '" + path + "': not there");
	return s.text(0);
}

std::string Meta::listxattr(const std::string &path)
{
	Found f = existing(path);
	Stmt s(db_, "SELECT name FROM xattr WHERE ino = ? ORDER BY name");
	s.bind(1, f.ino);
	std::string out;
	while (s.step()) {
		out += s.text(0);
		out.push_back('\0');
	}
	return out;
}

void Meta::removexattr(const std::string &path, const std::string &name)
{
	check_xattr_name(name);
	Txn t(*this);
	Found f = existing(path);
	Stmt(db_, "DELETE FROM xattr WHERE ino = ? AND name = ?").bind(1, f.ino).bind(2, name).step();
	if (!sqlite3_changes(db_))
		throw Error(ENODATA, "attribute '" + name + "' of '" + path + "': not there");
	Stmt(db_, "UPDATE inode SET ctime = ? WHERE ino = ?").bind(1, now_ns()).bind(2, f.ino).step();
	t.commit();
}

} // namespace pfs
