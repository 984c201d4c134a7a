// lookup_test.cpp - key resolution, errors, and fault-in from a parent store.
#include "lookup.hpp"

#include "apply.hpp"
#include "blobref.hpp"
#include "expect_error.hpp"
#include "tmpdir.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

using namespace kvs;

namespace {

Op put(std::string k, std::string v)
{
	return Op{std::move(k), std::move(v), false};
}

class LookupTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		root_ = apply_ops(auth_, empty_root(auth_),
				  {put("small", "tiny"), put("large", big_), put("a.b.c", "deep"),
				   put("a.b.ref", big_ + "2"), put("a.v", "val"), put("empty.x", "1")})
				.root_ref;
		root_ = apply_ops(auth_, root_, {Op{"empty.x", {}, true}}).root_ref;
	}

	// A lookup against a cache that starts empty: every MISSING_OBJECT is
	// fetched from the authoritative store, as a broker faults in from its
	// parent. Returns the value and the number of objects faulted in.
	std::pair<std::string, int> fault_in_get(ContentStore& cache, std::string_view key)
	{
		for (int faults = 0; faults < 100; faults++) {
			Lookup l = lookup(cache, root_, key);
			if (l.status == Lookup::Status::FOUND)
				return {l.value, faults};
			const std::string* obj = auth_.find(l.missing_ref);
			if (!obj) {
				ADD_FAILURE() << "authoritative store lacks " << l.missing_ref;
				break;
			}
			EXPECT_FALSE(cache.contains(l.missing_ref)) << "asked twice for " << l.missing_ref;
			cache.store_ref(l.missing_ref, *obj);
		}
		ADD_FAILURE() << "lookup of " << key << " never completed";
		return {"", -1};
	}

	ContentStore auth_;
	std::string root_;
	std::string big_ = std::string(300, 'B');
};

} // namespace

TEST_F(LookupTest, FoundInlineAndByReference)
{
	Lookup l = lookup(auth_, root_, "small");
	EXPECT_EQ(l.status, Lookup::Status::FOUND);
	EXPECT_EQ(l.value, "tiny");
	EXPECT_TRUE(l.missing_ref.empty());
	l = lookup(auth_, root_, "large");
	EXPECT_EQ(l.status, Lookup::Status::FOUND);
	EXPECT_EQ(l.value, big_);
	EXPECT_EQ(lookup(auth_, root_, "a.b.c").value, "deep");
	EXPECT_EQ(lookup(auth_, root_, "a.b.ref").value, big_ + "2");
}

TEST_F(LookupTest, Errors)
{
	EXPECT_KVS_ERROR(lookup(auth_, root_, "nope"), ENOENT, "key 'nope' not found");
	EXPECT_KVS_ERROR(lookup(auth_, root_, "a.b.nope"), ENOENT, "key 'a.b.nope' not found");
	EXPECT_KVS_ERROR(lookup(auth_, root_, "x.y.z"), ENOENT, "key 'x.y.z' not found: 'x' does not exist");
	EXPECT_KVS_ERROR(lookup(auth_, root_, "a.v.w"), ENOTDIR, "key 'a.v.w': 'a.v' is a value, not a directory");
	EXPECT_KVS_ERROR(lookup(auth_, root_, "large.x"), ENOTDIR, "'large' is a value");
	EXPECT_KVS_ERROR(lookup(auth_, root_, "a.b"), EISDIR, "key 'a.b' is a directory, not a value");
	EXPECT_KVS_ERROR(lookup(auth_, root_, "empty"), EISDIR, "is a directory");
	EXPECT_KVS_ERROR(lookup(auth_, root_, "."), EINVAL, "bad key '.'");
	EXPECT_KVS_ERROR(lookup(auth_, root_, "a..b"), EINVAL, "empty component");
	EXPECT_KVS_ERROR(lookup(auth_, "sha1-bogus", "a"), EINVAL, "root 'sha1-bogus' is not a blobref");
	EXPECT_KVS_ERROR(lookup_dir(auth_, "", "."), EINVAL, "root '' is not a blobref");
}

TEST_F(LookupTest, CorruptDirectoryIsEproto)
{
	ContentStore cs;
	std::string bad = cs.store("{\"a\":{\"DIRREF\":\"sha1-short\"}}");
	EXPECT_KVS_ERROR(lookup(cs, bad, "a.b"), EPROTO, "corrupt directory object");
}

TEST_F(LookupTest, MissingDirectoryAndBlob)
{
	ContentStore cache;
	Lookup l = lookup(cache, root_, "small");
	EXPECT_EQ(l.status, Lookup::Status::MISSING_OBJECT);
	EXPECT_EQ(l.missing_ref, root_);

	cache.store_ref(root_, *auth_.find(root_));
	EXPECT_EQ(lookup(cache, root_, "small").value, "tiny"); // inline: the root suffices
	l = lookup(cache, root_, "large");
	EXPECT_EQ(l.status, Lookup::Status::MISSING_OBJECT);
	EXPECT_EQ(l.missing_ref, blobref_hash(big_));
	l = lookup(cache, root_, "a.b.c");
	EXPECT_EQ(l.status, Lookup::Status::MISSING_OBJECT);
	Directory root = dir_decode(*auth_.find(root_));
	EXPECT_EQ(l.missing_ref, root.at("a").data);
	// Errors that the cached part already proves need no fault-in.
	EXPECT_KVS_ERROR(lookup(cache, root_, "nope"), ENOENT, "not found");
	EXPECT_KVS_ERROR(lookup(cache, root_, "small.x"), ENOTDIR, "is a value");
}

TEST_F(LookupTest, FaultInUntilFound)
{
	ContentStore cache;
	auto [v1, f1] = fault_in_get(cache, "a.b.ref");
	EXPECT_EQ(v1, big_ + "2");
	EXPECT_EQ(f1, 4); // root, a, a.b, the blob
	auto [v2, f2] = fault_in_get(cache, "a.b.c");
	EXPECT_EQ(v2, "deep");
	EXPECT_EQ(f2, 0); // the path is cached now
	auto [v3, f3] = fault_in_get(cache, "large");
	EXPECT_EQ(v3, big_);
	EXPECT_EQ(f3, 1);
	EXPECT_EQ(cache.count(), 5u);
	EXPECT_GT(cache.misses(), 0u);
}

TEST_F(LookupTest, ListDirectories)
{
	Listing l = lookup_dir(auth_, root_, ".");
	ASSERT_EQ(l.status, Listing::Status::FOUND);
	EXPECT_EQ(l.dir.size(), 4u); // small, large, a, empty
	EXPECT_EQ(lookup_dir(auth_, root_, "").dir, l.dir);
	Directory ab = lookup_dir(auth_, root_, "a.b").dir;
	EXPECT_EQ(ab.at("c"), (Dirent{Dirent::Type::FILEVAL, "deep"}));
	EXPECT_EQ(ab.at("ref").type, Dirent::Type::FILEREF);
	EXPECT_TRUE(lookup_dir(auth_, root_, "empty").dir.empty());
	EXPECT_KVS_ERROR(lookup_dir(auth_, root_, "a.v"), ENOTDIR, "'a.v' is a value, not a directory");
	EXPECT_KVS_ERROR(lookup_dir(auth_, root_, "a.zz"), ENOENT, "not found");
	EXPECT_KVS_ERROR(lookup_dir(auth_, root_, "a/"), EINVAL, "not allowed");
}

TEST_F(LookupTest, ListFaultsIn)
{
	ContentStore cache;
	int faults = 0;
	for (;;) {
		Listing l = lookup_dir(cache, root_, "a.b");
		if (l.status == Listing::Status::FOUND) {
			EXPECT_EQ(l.dir.size(), 2u);
			break;
		}
		ASSERT_LT(++faults, 10) << "listing never completed";
		cache.store_ref(l.missing_ref, *auth_.find(l.missing_ref));
	}
	EXPECT_EQ(faults, 3); // root, a, a.b
}

TEST_F(LookupTest, PersistentAuthoritativeStore)
{
	// The root broker restarts from its file and serves the same namespace.
	TmpDir tmp;
	std::string path = tmp.file("root.sqlite");
	{
		ContentStore disk(path);
		std::string r = apply_ops(disk, empty_root(disk), {put("p.q", big_), put("p.s", "s")}).root_ref;
		disk.set_root({1, r});
	}
	{
		ContentStore disk(path);
		ASSERT_TRUE(disk.root().has_value());
		EXPECT_EQ(lookup(disk, disk.root()->ref, "p.q").value, big_);
		EXPECT_EQ(lookup(disk, disk.root()->ref, "p.s").value, "s");
	}
}
