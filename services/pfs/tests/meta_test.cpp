// meta_test.cpp - the namespace (meta.hpp) and the object store (store.hpp)
// without a network.
#include "meta.hpp"
#include "store.hpp"

#include "error.hpp"

#include <gtest/gtest.h>

#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

using namespace pfs;

namespace {

class Tmp {
public:
	Tmp()
	{
		char tmpl[] = "/tmp/pfs-test-XXXXXX";
		path = mkdtemp(tmpl);
	}
	~Tmp() { std::filesystem::remove_all(path); }
	std::string path;
};

int err_of(const std::function<void()> &fn)
{
	try {
		fn();
	} catch (const Error &e) {
		return e.errnum();
	}
	return 0;
}

} // namespace

TEST(Meta, NamespaceOpsAndErrors)
{
	Tmp t;
	Meta m(t.path + "/meta.db", 4);
	Attr d = m.mkdir("/d", 0755);
	EXPECT_EQ(d.type, Type::DIR);
	Attr f = m.create("/d/f", 0644, true, 0, 0, false);
	EXPECT_EQ(f.layout.stripe_size, kDefaultStripe);
	EXPECT_EQ(f.layout.stripe_count, 4u);
	EXPECT_EQ(f.layout.stripe_start, f.ino % 4);
	EXPECT_EQ(m.create("/d/f", 0644, false, 0, 0, false).ino, f.ino);
	EXPECT_EQ(err_of([&] { m.create("/d/f", 0644, true, 0, 0, false); }), EEXIST);
	EXPECT_EQ(err_of([&] { m.lookup("/d/nope"); }), ENOENT);
	EXPECT_EQ(err_of([&] { m.lookup("/d/f/x"); }), ENOTDIR);
	EXPECT_EQ(err_of([&] { m.lookup("/d/../f"); }), EINVAL);
	EXPECT_EQ(err_of([&] { m.rmdir("/d"); }), ENOTEMPTY);
	EXPECT_EQ(err_of([&] { m.unlink("/d"); }), EISDIR);
	EXPECT_EQ(m.lookup("//d///f").ino, f.ino);
	auto ents = m.readdir("/");
	ASSERT_EQ(ents.size(), 1u);
	EXPECT_EQ(ents[0].name, "d");

	/* Directory defaults are inherited by files and new directories. */
	m.setstripe("/d", 8192, 2, false);
	Attr g = m.create("/d/g", 0644, true, 0, 0, false);
	EXPECT_EQ(g.layout.stripe_size, 8192u);
	EXPECT_EQ(g.layout.stripe_count, 2u);
	Attr e = m.mkdir("/d/e", 0755);
	EXPECT_EQ(e.layout.stripe_size, 8192u);
	Attr h = m.create("/d/h", 0644, true, 0, 0, true);
	EXPECT_EQ(h.layout.stripe_count, 4u);
	EXPECT_EQ(err_of([&] { m.create("/d/bad", 0644, true, 0, 5, false); }), EINVAL);
	EXPECT_EQ(err_of([&] { m.setstripe("/d/g", 4096, 1, false); }), EEXIST);

	/* rename replaces a file and reports it; a directory cannot go beneath itself. */
	Attr replaced = m.rename("/d/f", "/d/g");
	EXPECT_EQ(replaced.ino, g.ino);
	EXPECT_EQ(m.lookup("/d/g").ino, f.ino);
	EXPECT_EQ(err_of([&] { m.rename("/d", "/d/e/x"); }), EINVAL);
	m.rename("/d/e", "/e");
	EXPECT_EQ(m.unlink("/d/g").ino, f.ino);
	EXPECT_EQ(err_of([&] { m.lookup("/d/g"); }), ENOENT);
}

TEST(Meta, SurvivesReopenAndRefusesAnotherServerCount)
{
	Tmp t;
	uint64_t ino;
	uint32_t c1;
	{
		Meta m(t.path + "/meta.db", 3);
		ino = m.create("/f", 0644, true, 0, 0, false).ino;
		c1 = m.new_client();
	}
	{
		Meta m(t.path + "/meta.db", 3);
		EXPECT_EQ(m.lookup("/f").ino, ino);
		EXPECT_GT(m.new_client(), c1);	/* ids are never handed out twice */
		m.unlink("/f");
		/* Inode numbers are not reused either. */
		EXPECT_GT(m.create("/f2", 0644, true, 0, 0, false).ino, ino);
	}
	try {
		Meta m(t.path + "/meta.db", 4);
		FAIL();
	} catch (const Error &e) {
		EXPECT_NE(std::string(e.what()).find("instance of 3 servers, not 4"),
			  std::string::npos);
	}
}

TEST(Meta, LinksFollowRulesAndCounts)
{
	Tmp t;
	Meta m(t.path + "/meta.db", 2);
	m.mkdir("/a", 0755);
	m.mkdir("/a/b", 0755);
	Attr f = m.create("/a/b/f", 0644, true, 0, 0, false);
	EXPECT_EQ(m.lookup("/a").nlink, 3u);	/* ".", its name, b's ".." */

	/* Relative targets, "..", absolute targets, links to directories. */
	m.symlink("b/f", "/a/rel");
	m.symlink("../a/b", "/a/up");
	m.symlink("/a/b", "/abs");
	EXPECT_EQ(m.lookup("/a/rel").type, Type::LNK);
	EXPECT_EQ(m.lookup("/a/rel").target, "b/f");
	EXPECT_EQ(m.lookup("/a/rel", true).ino, f.ino);
	EXPECT_EQ(m.lookup("/a/up/f").ino, f.ino);
	EXPECT_EQ(m.lookup("/abs/f").ino, f.ino);
	EXPECT_EQ(m.readdir("/abs").size(), 1u);
	m.symlink("loop2", "/loop1");
	m.symlink("loop1", "/loop2");
	EXPECT_EQ(err_of([&] { m.lookup("/loop1", true); }), ELOOP);
	EXPECT_EQ(m.lookup("/loop1").type, Type::LNK);	/* not followed at the end */
	m.symlink("nowhere", "/dangling");
	EXPECT_EQ(err_of([&] { m.lookup("/dangling", true); }), ENOENT);
	/* open(O_CREAT) creates what a dangling link names; O_EXCL does not follow. */
	EXPECT_EQ(err_of([&] { m.create("/dangling", 0644, true, 0, 0, false); }), EEXIST);
	Attr made = m.create("/dangling", 0644, false, 0, 0, false);
	EXPECT_EQ(m.lookup("/nowhere").ino, made.ino);
	EXPECT_EQ(err_of([&] { m.symlink(std::string(4096, 'x'), "/long"); }), ENAMETOOLONG);

	/* Hard links: counts, one name removed, the inode gone with the last. */
	EXPECT_EQ(m.link("/a/b/f", "/g").nlink, 2u);
	EXPECT_EQ(err_of([&] { m.link("/a", "/a2"); }), EPERM);
	EXPECT_EQ(err_of([&] { m.link("/a/b/f", "/g"); }), EEXIST);
	Attr one = m.unlink("/a/b/f");
	EXPECT_EQ(one.nlink, 1u);
	EXPECT_EQ(m.lookup("/g").ino, f.ino);
	/* rename of one name over another of the same inode changes nothing */
	m.link("/g", "/h");
	EXPECT_EQ(m.rename("/g", "/h").ino, 0u);
	EXPECT_EQ(m.lookup("/g").nlink, 2u);
	m.create("/k", 0644, true, 0, 0, false);
	Attr replaced = m.rename("/k", "/h");
	EXPECT_EQ(replaced.ino, f.ino);
	EXPECT_EQ(replaced.nlink, 1u);	/* /h was a second name of /g's inode */
	EXPECT_EQ(m.unlink("/g").nlink, 0u);
	Attr dev = m.mknod("/null", S_IFCHR | 0600, 0x103);
	EXPECT_EQ(dev.type, Type::CHR);
	EXPECT_EQ(dev.rdev, 0x103u);
	EXPECT_EQ(m.mknod("/fifo", S_IFIFO | 0600, 0).type, Type::FIFO);
	EXPECT_EQ(err_of([&] { m.mknod("/dir", S_IFDIR | 0600, 0); }), EINVAL);
}

TEST(Meta, OwnersModesTimesAndAttributes)
{
	Tmp t;
	Meta m(t.path + "/meta.db", 1);
	Attr d = m.mkdir("/d", 02775, Ids{1000, 50});
	EXPECT_EQ(d.uid, 1000u);
	Attr f = m.create("/d/f", 06755, true, 0, 0, false, Ids{1001, 60});
	EXPECT_EQ(f.gid, 50u);	/* from the set-group-ID directory */
	EXPECT_EQ(m.mkdir("/d/sub", 0755, Ids{1001, 60}).mode & S_ISGID, unsigned(S_ISGID));

	SetAttr s;
	s.set = kSetMode;
	s.mode = 0700;
	s.caller = Ids{1000, 50};
	EXPECT_EQ(err_of([&] { m.setattr("/d/f", 0, s); }), EPERM);	/* not the owner */
	s.caller = Ids{1001, 60};
	s.mode = 0755;
	EXPECT_EQ(m.setattr("/d/f", 0, s).mode, 0755u);
	s.mode = 06755;
	s.caller = Ids{0, 0};
	EXPECT_EQ(m.setattr("/d/f", 0, s).mode, 06755u);
	SetAttr own;
	own.set = kSetUid;
	own.uid = 0;
	own.caller = Ids{1001, 60};
	EXPECT_EQ(err_of([&] { m.setattr("/d/f", 0, own); }), EPERM);	/* root only */
	own.caller = Ids{0, 0};
	Attr given = m.setattr("/d/f", 0, own);
	EXPECT_EQ(given.uid, 0u);
	EXPECT_EQ(given.mode, 0755u);	/* set-id bits go with a chown */

	SetAttr times;
	times.set = kSetAtime | kSetMtime;
	times.atime_ns = 1;
	times.mtime_ns = 2;
	times.caller = Ids{0, 0};
	Attr tm = m.setattr("/d/f", 0, times);
	EXPECT_EQ(tm.atime_ns, 1u);
	EXPECT_EQ(tm.mtime_ns, 2u);
	EXPECT_GT(tm.ctime_ns, 2u);
	times.set = kSetMtimeNow;	/* UTIME_OMIT of atime */
	EXPECT_EQ(m.setattr("", f.ino, times).atime_ns, 1u);
	EXPECT_GT(m.lookup("/d/f").mtime_ns, 2u);
	uint64_t before = m.lookup("/d").mtime_ns;
	m.rmdir("/d/sub");
	EXPECT_GE(m.lookup("/d").mtime_ns, before);

	m.setxattr("/d/f", "user.a", std::string("1\0" "2", 3), 0);
	EXPECT_EQ(m.getxattr("/d/f", "user.a"), std::string("1\0" "2", 3));
	EXPECT_EQ(err_of([&] { m.setxattr("/d/f", "user.a", "x", XATTR_CREATE); }), EEXIST);
	EXPECT_EQ(err_of([&] { m.setxattr("/d/f", "user.b", "x", XATTR_REPLACE); }), ENODATA);
	EXPECT_EQ(err_of([&] { m.setxattr("/d/f", "trusted.a", "x", 0); }), EOPNOTSUPP);
	m.setxattr("/d/f", "user.b", "", 0);
	EXPECT_EQ(m.listxattr("/d/f"), std::string("user.a\0user.b\0", 14));
	m.removexattr("/d/f", "user.a");
	EXPECT_EQ(err_of([&] { m.getxattr("/d/f", "user.a"); }), ENODATA);
	EXPECT_EQ(err_of([&] { m.removexattr("/d/f", "user.a"); }), ENODATA);
}

TEST(Meta, MigratesAFileOfTheFirstSchemaAndRefusesANewerOne)
{
	Tmp t;
	std::string path = t.path + "/meta.db";
	sqlite3 *db;
	ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
	const char *v1 =
		"CREATE TABLE inode(ino INTEGER PRIMARY KEY AUTOINCREMENT, type INTEGER,"
		" mode INTEGER, mtime INTEGER, ss INTEGER, sc INTEGER, start INTEGER);"
		"CREATE TABLE dentry(parent INTEGER, name TEXT, ino INTEGER, PRIMARY KEY(parent, name));"
		"CREATE TABLE misc(key TEXT PRIMARY KEY, value INTEGER);"
		"INSERT INTO misc VALUES ('servers', 2), ('next_client', 5);"
		"INSERT INTO inode VALUES (1, 2, 493, 77, 1048576, 0, 0), (2, 1, 420, 88, 65536, 2, 0);"
		"INSERT INTO dentry VALUES (1, 'old', 2);";
	ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK);
	sqlite3_close(db);
	{
		Meta m(path, 2);
		Attr a = m.lookup("/old");
		EXPECT_EQ(a.mtime_ns, 88u);
		EXPECT_EQ(a.ctime_ns, 88u);
		EXPECT_EQ(a.nlink, 1u);
		EXPECT_EQ(a.layout.stripe_size, 65536u);
		EXPECT_GE(m.new_client(), 5u);
		m.link("/old", "/new");
		EXPECT_EQ(m.lookup("/new").nlink, 2u);
	}
	ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 9", nullptr, nullptr, nullptr), SQLITE_OK);
	sqlite3_close(db);
	try {
		Meta m(path, 2);
		FAIL();
	} catch (const Error &e) {
		EXPECT_NE(std::string(e.what()).find("schema version 9, newer than this server's 2"),
			  std::string::npos);
	}
}

TEST(Store, WriteReadTruncateCapacity)
{
	Tmp t;
	uint64_t size = 0;
	{
		Store s(t.path, 10000);
		EXPECT_EQ(s.read(7, 0, 10, &size), "");
		EXPECT_EQ(size, 0u);
		EXPECT_EQ(s.write(7, 100, "hello"), 105u);
		std::string r = s.read(7, 98, 10, &size);
		EXPECT_EQ(r, std::string("\0\0hello", 7));
		EXPECT_EQ(size, 105u);
		EXPECT_EQ(err_of([&] { s.write(8, 0, std::string(9900, 'x')); }), ENOSPC);
		s.truncate(7, 50);
		EXPECT_EQ(s.used(), 50u);
		s.write(8, 0, std::string(9900, 'x'));
		s.fsync(8);
		s.destroy(7);
		s.destroy(7);
		EXPECT_EQ(s.objects(), 1u);
	}
	Store again(t.path, 0);
	EXPECT_EQ(again.used(), 9900u);
	EXPECT_EQ(again.size(8), 9900u);
}
