// key_test.cpp - key validation, splitting and limits.
#include "key.hpp"

#include "expect_error.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

using namespace kvs;
using V = std::vector<std::string>;

TEST(Key, SplitValid)
{
	EXPECT_EQ(key_split("a"), V{"a"});
	EXPECT_EQ(key_split("a.b.c"), (V{"a", "b", "c"}));
	EXPECT_EQ(key_split("Rank_0.conn-info.X9"), (V{"Rank_0", "conn-info", "X9"}));
	EXPECT_EQ(key_split("-._"), (V{"-", "_"}));
}

TEST(Key, SplitInvalid)
{
	EXPECT_KVS_ERROR(key_split(""), EINVAL, "bad key '': empty key");
	EXPECT_KVS_ERROR(key_split("a..b"), EINVAL, "bad key 'a..b': empty component (keys are dot-separated names of [A-Za-z0-9_-], 1-255 chars each");
	EXPECT_KVS_ERROR(key_split(".a"), EINVAL, "empty component");
	EXPECT_KVS_ERROR(key_split("a."), EINVAL, "empty component");
	EXPECT_KVS_ERROR(key_split("."), EINVAL, "empty component");
	EXPECT_KVS_ERROR(key_split("a/b"), EINVAL, "character '/' not allowed");
	EXPECT_KVS_ERROR(key_split("a b"), EINVAL, "character ' ' not allowed");
	EXPECT_KVS_ERROR(key_split(std::string("a\nb")), EINVAL, "bad key 'a\\x0ab': character \\x0a");
	EXPECT_KVS_ERROR(key_split(std::string("a\0b", 3)), EINVAL, "character \\x00");
	EXPECT_KVS_ERROR(key_split("caf\xc3\xa9"), EINVAL, "character \\xc3");
}

TEST(Key, ComponentLength)
{
	std::string n255(255, 'x');
	EXPECT_EQ(key_split("a." + n255), (V{"a", n255}));
	EXPECT_KVS_ERROR(key_split("a." + std::string(256, 'x')), EINVAL, "is 256 chars (the limit is 255)");
}

TEST(Key, TotalLength)
{
	// Components of 255, 255, 255 and 254 chars plus 3 dots = 1022 chars.
	std::string k = std::string(255, 'a') + "." + std::string(255, 'b') + "." +
			std::string(255, 'c') + "." + std::string(254, 'd');
	ASSERT_EQ(k.size(), 1022u);
	EXPECT_EQ(key_split(k + ".e").size(), 5u); // exactly 1024
	EXPECT_KVS_ERROR(key_split(k + ".ef"), EINVAL, "1025 chars (the limit is 1024)");
	// The message quotes only the start of the long key.
	try {
		key_split(k + ".ef");
	} catch (const Error& e) {
		EXPECT_LT(std::string(e.what()).size(), 300u);
	}
}

TEST(Key, Depth)
{
	std::string k = "a";
	for (int i = 1; i < 64; i++)
		k += ".a";
	EXPECT_EQ(key_split(k).size(), 64u);
	EXPECT_KVS_ERROR(key_split(k + ".a"), EINVAL, "more than 64 components");
}

TEST(Key, SplitDir)
{
	EXPECT_EQ(key_split_dir("."), V{});
	EXPECT_EQ(key_split_dir(""), V{});
	EXPECT_EQ(key_split_dir("a.b"), (V{"a", "b"}));
	EXPECT_KVS_ERROR(key_split_dir(".."), EINVAL, "empty component");
	EXPECT_KVS_ERROR(key_split_dir("a/"), EINVAL, "not allowed");
}

TEST(Key, NameValidAndJoin)
{
	EXPECT_TRUE(key_name_valid("abc_-9"));
	EXPECT_FALSE(key_name_valid(""));
	EXPECT_FALSE(key_name_valid("a.b"));
	EXPECT_FALSE(key_name_valid(std::string(256, 'a')));
	V parts{"a", "b", "c"};
	EXPECT_EQ(key_join(parts, 0), "");
	EXPECT_EQ(key_join(parts, 2), "a.b");
	EXPECT_EQ(key_join(parts, 9), "a.b.c");
}

TEST(Key, Quote)
{
	EXPECT_EQ(key_quote("a.b"), "'a.b'");
	EXPECT_EQ(key_quote("it's"), "'it\\x27s'");
	EXPECT_EQ(key_quote(std::string(100, 'z')), "'" + std::string(64, 'z') + "...'");
}
