// blobref_test.cpp - SHA-1 blobrefs against the FIPS 180 test vectors.
#include "blobref.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace kvs;

TEST(Blobref, KnownSha1Vectors)
{
	EXPECT_EQ(blobref_hash("abc"), "sha1-a9993e364706816aba3e25717850c26c9cd0d89d");
	EXPECT_EQ(blobref_hash(""), "sha1-da39a3ee5e6b4b0d3255bfef95601890afd80709");
	EXPECT_EQ(blobref_hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
		  "sha1-84983e441c3bd26ebaae4aa1f95129e5e54670f1");
	EXPECT_EQ(blobref_hash(std::string(1000000, 'a')),
		  "sha1-34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(Blobref, BinaryDataWithNulBytes)
{
	std::string a("x\0y", 3);
	std::string b("x\0z", 3);
	EXPECT_NE(blobref_hash(a), blobref_hash(b));
	EXPECT_NE(blobref_hash(a), blobref_hash("x"));
	EXPECT_TRUE(blobref_valid(blobref_hash(a)));
}

TEST(Blobref, Valid)
{
	EXPECT_TRUE(blobref_valid("sha1-a9993e364706816aba3e25717850c26c9cd0d89d"));
	EXPECT_FALSE(blobref_valid(""));
	EXPECT_FALSE(blobref_valid("sha1-"));
	EXPECT_FALSE(blobref_valid("sha1-A9993E364706816ABA3E25717850C26C9CD0D89D")); // upper case
	EXPECT_FALSE(blobref_valid("sha1-a9993e364706816aba3e25717850c26c9cd0d89"));   // 39 digits
	EXPECT_FALSE(blobref_valid("sha1-a9993e364706816aba3e25717850c26c9cd0d89d0")); // 41 digits
	EXPECT_FALSE(blobref_valid("sha2-a9993e364706816aba3e25717850c26c9cd0d89d"));
	EXPECT_FALSE(blobref_valid("sha1-g9993e364706816aba3e25717850c26c9cd0d89d"));
	EXPECT_FALSE(blobref_valid("a9993e364706816aba3e25717850c26c9cd0d89d"));
}
