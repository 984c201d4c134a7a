// codec_test.cpp - the message codec: round trips and refusals of bad input.
#include "common/codec.hpp"

#include <gtest/gtest.h>

using svc::Error;
using svc::Reader;
using svc::Writer;

TEST(Codec, RoundTrip)
{
	Writer w;
	w.u8(7);
	w.u32(0xdeadbeef);
	w.u64(1ULL << 40);
	w.str("hello");
	std::string b = w.take();
	Reader r(b, "test message");
	EXPECT_EQ(r.u8(), 7);
	EXPECT_EQ(r.u32(), 0xdeadbeefu);
	EXPECT_EQ(r.u64(), 1ULL << 40);
	EXPECT_EQ(r.view(), "hello");
	EXPECT_EQ(r.left(), 0u);
	r.done();
}

TEST(Codec, TruncatedAndTrailingNameTheMessage)
{
	Writer w;
	w.u32(100);	/* a string length with no bytes behind it */
	std::string b = w.take();
	Reader r(b, "pfs request");
	try {
		r.str();
		FAIL() << "no error";
	} catch (const Error &e) {
		EXPECT_EQ(e.errnum(), EPROTO);
		EXPECT_STREQ(e.what(), "pfs request truncated: needed 100 more bytes, 0 left");
	}
	std::string two("ab");
	Reader t(two, "pfs request");
	t.u8();
	try {
		t.done();
		FAIL() << "no error";
	} catch (const Error &e) {
		EXPECT_STREQ(e.what(), "pfs request: 1 trailing bytes");
	}
}
