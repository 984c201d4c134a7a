// meta_test.cpp - the namespace (meta.hpp) and the object store (store.hpp)
// without a network.
#include "meta.hpp"
#include "store.hpp"

#include "error.hpp"

#include <gtest/gtest.h>

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
