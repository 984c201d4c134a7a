// proto_test.cpp - every request and reply survives its encoding; bad frames
// are EPROTO naming what is wrong.
#include "proto.hpp"

#include "error.hpp"

#include <gtest/gtest.h>

#include <cerrno>

using namespace pfs;

TEST(Proto, EveryRequestRoundTrips)
{
	for (uint8_t op = 1; op <= kOpLast; op++) {
		Request q;
		q.op = static_cast<Op>(op);
		q.client = 7;
		q.call = 1ULL << 40;
		q.ino = 99;
		q.offset = 4096;
		q.length = 100;
		q.data = "bytes";
		q.path = "/a/b";
		q.path2 = "/c";
		q.mode = 0644;
		q.excl = true;
		q.stripe_size = 65536;
		q.stripe_count = 3;
		q.stripe_all = true;
		q.uid = 1000;
		q.gid = 100;
		q.attrs.caller = Ids{1001, 101};
		q.attrs.set = kSetMode | kSetMtime;
		q.attrs.mtime_ns = 13;
		q.flags = 2;
		q.rdev = 0x103;
		q.atime_ns = 11;
		q.mtime_ns = 12;
		q.follow = true;
		for (bool rma : {false, true}) {
			q.rma = rma;
			q.rma_addr = 0x7f0000001000;
			q.rma_key = 42;
			std::string frame = request_encode(q);
			Request d = request_decode(frame);
			EXPECT_EQ(d.op, q.op);
			EXPECT_EQ(d.client, 7u);
			EXPECT_EQ(d.call, q.call);
			Request h = request_header(frame);
			EXPECT_EQ(h.call, q.call);
			EXPECT_EQ(request_encode(d), frame) << op_name(q.op);
			if (rma && (q.op == Op::READ || q.op == Op::WRITE)) {
				EXPECT_TRUE(d.rma);
				EXPECT_EQ(d.rma_addr, q.rma_addr);
				EXPECT_EQ(d.rma_key, 42u);
				EXPECT_EQ(d.length, 100u);
			}
		}
	}
}

TEST(Proto, EveryReplyRoundTrips)
{
	for (uint8_t op = 1; op <= kOpLast; op++) {
		Reply r;
		r.op = static_cast<Op>(op);
		r.call = 5;
		r.value = 123;
		r.index = 1;
		r.servers = 4;
		r.data = "data";
		r.attr.ino = 8;
		r.attr.type = Type::DIR;
		r.attr.layout.stripe_count = 2;
		r.attr.uid = 5;
		r.attr.ctime_ns = 6;
		r.attr.target = "../t";
		r.atime_ns = 1;
		r.mtime_ns = 2;
		r.placed = 77;
		r.fs = FsStat{1, 2, 3, 4, 5};
		r.entries = {Dirent{"x", 3, Type::REG}, Dirent{"y", 4, Type::DIR}};
		std::string frame = reply_encode(r);
		EXPECT_EQ(reply_call(frame), 5u);
		Reply d = reply_decode(frame);
		EXPECT_EQ(reply_encode(d), frame) << op_name(r.op);
	}
	Reply refused;
	refused.op = static_cast<Op>(99);	/* a refusal echoes an unknown op */
	refused.call = 9;
	refused.errnum = EPROTO;
	refused.error = "no";
	Reply d = reply_decode(reply_encode(refused));
	EXPECT_EQ(d.errnum, EPROTO);
	EXPECT_EQ(d.error, "no");
}

TEST(Proto, BadFramesAreEproto)
{
	Request q;
	q.op = Op::WRITE;
	q.data = "abc";
	std::string frame = request_encode(q);
	try {
		request_decode(frame.substr(0, frame.size() - 1));
		FAIL();
	} catch (const Error &e) {
		EXPECT_EQ(e.errnum(), EPROTO);
		EXPECT_NE(std::string(e.what()).find("pfs request truncated"), std::string::npos);
	}
	frame[0] = 99;
	try {
		request_decode(frame);
		FAIL();
	} catch (const Error &e) {
		EXPECT_STREQ(e.what(), "pfs request of unknown op 99 (expected 1-28)");
	}
	Reply r;
	r.op = Op::READDIR;
	r.entries = {Dirent{"x", 3, Type::REG}};
	std::string rf = reply_encode(r);
	rf.back() = 8;	/* the entry's file type */
	try {
		reply_decode(rf);
		FAIL();
	} catch (const Error &e) {
		EXPECT_STREQ(e.what(), "pfs reply: file type 8 (expected 1-7)");
	}
}
