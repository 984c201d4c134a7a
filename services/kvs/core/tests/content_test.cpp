// content_test.cpp - the content store in memory and backed by SQLite.
#include "content.hpp"

#include "blobref.hpp"
#include "dirent.hpp"
#include "expect_error.hpp"
#include "tmpdir.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

using namespace kvs;

namespace {

// Runs SQL on the file through a separate connection, as another process would.
std::string sql_on_file(const std::string& path, const std::string& sql)
{
	sqlite3* db = nullptr;
	EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
	std::string first;
	char* err = nullptr;
	auto cb = [](void* out, int n, char** vals, char**) {
		if (n > 0 && vals[0] && static_cast<std::string*>(out)->empty())
			*static_cast<std::string*>(out) = vals[0];
		return 0;
	};
	int rc = sqlite3_exec(db, sql.c_str(), cb, &first, &err);
	EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
	sqlite3_free(err);
	sqlite3_close(db);
	return first;
}

} // namespace

TEST(ContentMemory, StoreIsContentAddressed)
{
	ContentStore cs;
	std::string ref = cs.store("abc");
	EXPECT_EQ(ref, "sha1-a9993e364706816aba3e25717850c26c9cd0d89d");
	EXPECT_FALSE(cs.persistent());
	const std::string* obj = cs.find(ref);
	ASSERT_NE(obj, nullptr);
	EXPECT_EQ(*obj, "abc");
	EXPECT_TRUE(cs.contains(ref));
	EXPECT_EQ(cs.count(), 1u);
	EXPECT_EQ(cs.bytes(), 3u);
}

TEST(ContentMemory, StoreIsIdempotent)
{
	ContentStore cs;
	std::string r1 = cs.store("same");
	std::string r2 = cs.store("same");
	EXPECT_EQ(r1, r2);
	EXPECT_EQ(cs.count(), 1u);
	EXPECT_EQ(cs.bytes(), 4u);
	cs.store_ref(r1, "same");
	EXPECT_EQ(cs.count(), 1u);
	cs.store("other");
	EXPECT_EQ(cs.count(), 2u);
	EXPECT_EQ(cs.bytes(), 9u);
	std::vector<std::string> refs = cs.refs();
	EXPECT_EQ(refs.size(), 2u);
	EXPECT_TRUE(std::is_sorted(refs.begin(), refs.end()));
}

TEST(ContentMemory, HitsAndMisses)
{
	ContentStore cs;
	std::string ref = cs.store("x");
	EXPECT_EQ(cs.find(blobref_hash("absent")), nullptr);
	EXPECT_NE(cs.find(ref), nullptr);
	EXPECT_NE(cs.find(ref), nullptr);
	EXPECT_EQ(cs.hits(), 2u);
	EXPECT_EQ(cs.misses(), 1u);
	EXPECT_FALSE(cs.contains(blobref_hash("absent")));
	EXPECT_EQ(cs.misses(), 1u); // contains() does not count
}

TEST(ContentMemory, StoreRefVerifiesDigest)
{
	ContentStore cs;
	std::string ref = blobref_hash("payload");
	cs.store_ref(ref, "payload");
	EXPECT_TRUE(cs.contains(ref));
	EXPECT_KVS_ERROR(cs.store_ref(ref, "tampered"), EPROTO, "hashes to " + blobref_hash("tampered"));
	EXPECT_KVS_ERROR(cs.store_ref("sha1-nonsense", "x"), EPROTO, "object received as 'sha1-nonsense'");
	EXPECT_EQ(cs.count(), 1u);
}

TEST(ContentMemory, RootWithoutFile)
{
	ContentStore cs;
	EXPECT_FALSE(cs.root().has_value());
	std::string ref = cs.store("{}");
	cs.set_root({1, ref});
	ASSERT_TRUE(cs.root().has_value());
	EXPECT_EQ(*cs.root(), (RootRef{1, ref}));
	EXPECT_KVS_ERROR(cs.set_root({2, "not-a-ref"}), EINVAL, "root 'not-a-ref' is not a blobref");
	EXPECT_EQ(cs.root()->version, 1u);
}

TEST(ContentMemory, DecodedDirectories)
{
	ContentStore cs;
	Directory d;
	d["k"] = Dirent{Dirent::Type::FILEVAL, "v"};
	std::string ref = cs.store_dir(d);
	EXPECT_EQ(ref, blobref_hash(dir_encode(d)));
	EXPECT_EQ(*cs.find(ref), dir_encode(d));
	EXPECT_EQ(cs.dirs_decoded(), 1u);
	const Directory* got = cs.find_dir(ref);
	ASSERT_NE(got, nullptr);
	EXPECT_EQ(*got, d);
	EXPECT_EQ(cs.find_dir(ref), got); // the same decoded object, not a new decode

	// A directory that arrived encoded is decoded once, on first use.
	std::string text = "{\"x\":{\"FILEVAL\":\"eA==\"}}";
	std::string r2 = blobref_hash(text);
	cs.store_ref(r2, text);
	EXPECT_EQ(cs.dirs_decoded(), 1u);
	ASSERT_NE(cs.find_dir(r2), nullptr);
	EXPECT_EQ(cs.find_dir(r2)->at("x").data, "x");
	EXPECT_EQ(cs.dirs_decoded(), 2u);

	EXPECT_EQ(cs.find_dir(blobref_hash("absent")), nullptr);
	std::string value = cs.store("not a directory");
	EXPECT_KVS_ERROR(cs.find_dir(value), EPROTO, "corrupt directory object");
	EXPECT_EQ(cs.dirs_decoded(), 2u);
}

TEST(ContentMemory, ExpireDropsWhatWentUnused)
{
	ContentStore cs;
	Directory d;
	d["k"] = Dirent{Dirent::Type::FILEVAL, "v"};
	std::string dir = cs.store_dir(d);
	std::string val = cs.store("value");
	cs.tick();
	ASSERT_NE(cs.find(val), nullptr); // used in tick 1, the directory last in tick 0
	cs.tick();
	EXPECT_EQ(cs.expire(3), 0u);
	EXPECT_EQ(cs.expire(2), 1u); // the directory is 2 ticks old, the value 1
	EXPECT_FALSE(cs.contains(dir));
	EXPECT_TRUE(cs.contains(val));
	EXPECT_EQ(cs.count(), 1u);
	EXPECT_EQ(cs.bytes(), 5u);
	EXPECT_EQ(cs.dirs_decoded(), 0u);
	EXPECT_EQ(cs.expired(), 1u);
	EXPECT_EQ(cs.find_dir(dir), nullptr); // a cache would now fault it in again

	// Storing it again brings it back, decoded once more on first use.
	cs.store_ref(dir, dir_encode(d));
	ASSERT_NE(cs.find_dir(dir), nullptr);
	EXPECT_EQ(cs.find_dir(dir)->at("k").data, "v");
	EXPECT_EQ(cs.dirs_decoded(), 1u);

	// A store of an object already held counts as a use.
	cs.tick();
	cs.store("value");
	EXPECT_EQ(cs.expire(1), 1u);
	EXPECT_TRUE(cs.contains(val));
	EXPECT_EQ(cs.expire(0), 1u);
	EXPECT_EQ(cs.count(), 0u);
	EXPECT_EQ(cs.bytes(), 0u);
	EXPECT_EQ(cs.expired(), 3u);
}

TEST(ContentMemory, Move)
{
	ContentStore a;
	std::string ref = a.store("moved");
	ContentStore b(std::move(a));
	ASSERT_NE(b.find(ref), nullptr);
	ContentStore c;
	c = std::move(b);
	EXPECT_EQ(*c.find(ref), "moved");
}

TEST(ContentSqlite, PersistsObjectsAndRoot)
{
	TmpDir tmp;
	std::string path = tmp.file("content.sqlite");
	std::string r1, r2, big(100000, 'B');
	{
		ContentStore cs(path);
		EXPECT_TRUE(cs.persistent());
		EXPECT_FALSE(cs.root().has_value());
		r1 = cs.store("one");
		r2 = cs.store(big);
		EXPECT_EQ(cs.pending(), 2u);
		cs.set_root({7, r1});
		EXPECT_EQ(cs.pending(), 0u);
	}
	EXPECT_EQ(sql_on_file(path, "PRAGMA journal_mode"), "wal");
	ContentStore cs(path);
	ASSERT_TRUE(cs.root().has_value());
	EXPECT_EQ(*cs.root(), (RootRef{7, r1}));
	EXPECT_EQ(cs.count(), 0u); // nothing loaded eagerly
	EXPECT_TRUE(cs.contains(r2));
	EXPECT_EQ(cs.count(), 0u);
	const std::string* obj = cs.find(r2);
	ASSERT_NE(obj, nullptr);
	EXPECT_EQ(*obj, big);
	EXPECT_EQ(*cs.find(r1), "one");
	EXPECT_EQ(cs.count(), 2u);
	EXPECT_EQ(cs.hits(), 2u);
	EXPECT_EQ(cs.find(blobref_hash("never stored")), nullptr);
	EXPECT_EQ(cs.misses(), 1u);
	EXPECT_EQ(cs.pending(), 0u); // objects read back are not rewritten
}

TEST(ContentSqlite, UncommittedObjectsAreNotDurable)
{
	TmpDir tmp;
	std::string path = tmp.file("c.sqlite");
	std::string ref;
	{
		ContentStore cs(path);
		cs.set_root({1, cs.store("committed")});
		ref = cs.store("stored after the last set_root");
	}
	ContentStore cs(path);
	EXPECT_EQ(cs.find(ref), nullptr);
	EXPECT_NE(cs.find(blobref_hash("committed")), nullptr);
}

TEST(ContentSqlite, SetRootWithNothingNew)
{
	TmpDir tmp;
	std::string path = tmp.file("c.sqlite");
	std::string ref;
	{
		ContentStore cs(path);
		ref = cs.store("root");
		cs.set_root({1, ref});
		EXPECT_EQ(cs.pending(), 0u);
		cs.set_root({2, ref});
		cs.store("root"); // already held: nothing new to write
		EXPECT_EQ(cs.pending(), 0u);
		cs.set_root({3, ref});
	}
	ContentStore cs(path);
	EXPECT_EQ(*cs.root(), (RootRef{3, ref}));
	EXPECT_EQ(sql_on_file(path, "SELECT count(*) FROM objects"), "1");
	EXPECT_EQ(sql_on_file(path, "SELECT count(*) FROM root"), "1");
}

TEST(ContentSqlite, ReopenAndExtend)
{
	TmpDir tmp;
	std::string path = tmp.file("c.sqlite");
	{
		ContentStore cs(path);
		cs.set_root({1, cs.store("a")});
	}
	{
		ContentStore cs(path);
		cs.store("a"); // in the file, not in memory: written again harmlessly
		cs.set_root({2, cs.store("b")});
	}
	ContentStore cs(path);
	EXPECT_EQ(cs.root()->version, 2u);
	EXPECT_NE(cs.find(blobref_hash("a")), nullptr);
	EXPECT_NE(cs.find(blobref_hash("b")), nullptr);
	EXPECT_EQ(sql_on_file(path, "SELECT count(*) FROM objects"), "2");
}

TEST(ContentSqlite, ExpireKeepsUnwrittenObjectsAndReloadsTheRest)
{
	TmpDir tmp;
	ContentStore cs(tmp.file("content.sqlite"));
	Directory d;
	d["n"] = Dirent{Dirent::Type::FILEVAL, "1"};
	std::string dir = cs.store_dir(d);
	std::string big = cs.store(std::string(1000, 'x'));
	cs.tick();
	EXPECT_EQ(cs.expire(0), 0u); // not in the file yet: the only copy
	EXPECT_EQ(cs.count(), 2u);
	cs.set_root({1, dir});
	EXPECT_EQ(cs.expire(0), 2u);
	EXPECT_EQ(cs.count(), 0u);
	EXPECT_EQ(cs.bytes(), 0u);
	const Directory* got = cs.find_dir(dir); // read back from the file
	ASSERT_NE(got, nullptr);
	EXPECT_EQ(*got, d);
	EXPECT_EQ(cs.find(big)->size(), 1000u);
	EXPECT_EQ(cs.count(), 2u);
	EXPECT_EQ(cs.hits(), 2u);
}

TEST(ContentSqlite, CorruptFileIsEio)
{
	TmpDir tmp;
	std::string path = tmp.file("garbage.sqlite");
	{
		std::ofstream f(path, std::ios::binary);
		for (int i = 0; i < 512; i++)
			f << "this is not an SQLite database. ";
	}
	EXPECT_KVS_ERROR(ContentStore cs(path), EIO, "content store '" + path + "'");
	EXPECT_KVS_ERROR(ContentStore cs(path), EIO, "file is not a database");
}

TEST(ContentSqlite, UnopenablePathIsEio)
{
	TmpDir tmp;
	EXPECT_KVS_ERROR(ContentStore cs(tmp.file("no/such/dir/c.sqlite")), EIO, "cannot open SQLite database: unable to open database file");
}

TEST(ContentSqlite, ForeignSchemaVersionIsEio)
{
	TmpDir tmp;
	std::string path = tmp.file("v7.sqlite");
	sql_on_file(path, "PRAGMA user_version = 7");
	EXPECT_KVS_ERROR(ContentStore cs(path), EIO, "schema version 7 (this build reads version 1)");
}

TEST(ContentSqlite, CorruptObjectInFileIsEproto)
{
	TmpDir tmp;
	std::string path = tmp.file("c.sqlite");
	std::string ref;
	{
		ContentStore cs(path);
		ref = cs.store("original");
		cs.set_root({1, ref});
	}
	sql_on_file(path, "UPDATE objects SET data = CAST('altered' AS BLOB)");
	ContentStore cs(path);
	EXPECT_KVS_ERROR(cs.find(ref), EPROTO, "does not match its hash (the file is corrupt)");
}
