/* The HTTP subset's parser and framing (http.hpp). */
#include <gtest/gtest.h>

#include "http.hpp"

using namespace kvsrv;

namespace {

Limits small()
{
	Limits l;
	l.max_header = 128;
	l.max_body = 16;
	return l;
}

} // namespace

TEST(Http, WholeRequestWithBody)
{
	std::string buf = "PUT /kv/a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET";
	Parse p = parse_request(buf, small());
	ASSERT_EQ(p.kind, Parse::ok);
	EXPECT_EQ(p.req.method, "PUT");
	EXPECT_EQ(p.req.target, "/kv/a");
	EXPECT_EQ(p.req.body, "abc");
	EXPECT_TRUE(p.req.keep_alive);
	EXPECT_EQ(buf.substr(p.length), "GET");
}

TEST(Http, IncompleteUntilBodyArrives)
{
	EXPECT_EQ(parse_request("GET /kv/a HTTP/1.1\r\nHost: x\r\n", small()).kind,
		  Parse::incomplete);
	EXPECT_EQ(parse_request("PUT /kv/a HTTP/1.1\r\nContent-Length: 3\r\n\r\nab", small()).kind,
		  Parse::incomplete);
}

TEST(Http, BareLineFeedsAndConnectionHeaders)
{
	Parse p = parse_request("GET /kv/a HTTP/1.1\nConnection: Keep-Alive, close\n\n", small());
	ASSERT_EQ(p.kind, Parse::ok);
	EXPECT_FALSE(p.req.keep_alive);
	p = parse_request("GET /kv/a HTTP/1.0\r\n\r\n", small());
	EXPECT_FALSE(p.req.keep_alive);
	p = parse_request("GET /kv/a HTTP/1.0\r\nconnection: keep-alive\r\n\r\n", small());
	EXPECT_TRUE(p.req.keep_alive);
}

TEST(Http, Rejections)
{
	auto status = [](const std::string &s) {
		Parse p = parse_request(s, small());
		return p.kind == Parse::rejected ? p.status : 0;
	};
	EXPECT_EQ(status("GARBAGE\r\n\r\n"), 400);
	EXPECT_EQ(status("GET kv HTTP/1.1\r\n\r\n"), 400);
	EXPECT_EQ(status("GET /kv/a HTTP/2.0\r\n\r\n"), 505);
	EXPECT_EQ(status("GET /kv/a HTTP/1.1\r\nbad header\r\n\r\n"), 400);
	EXPECT_EQ(status("GET /kv/a HTTP/1.1\r\nA: b\r\n folded\r\n\r\n"), 400);
	EXPECT_EQ(status("PUT /kv/a HTTP/1.1\r\n\r\n"), 411);
	EXPECT_EQ(status("PUT /kv/a HTTP/1.1\r\nContent-Length: 1x\r\n\r\n"), 400);
	EXPECT_EQ(status("PUT /kv/a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
		  400);
	EXPECT_EQ(status("PUT /kv/a HTTP/1.1\r\nContent-Length: 17\r\n\r\n"), 413);
	EXPECT_EQ(status("PUT /kv/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), 501);
	EXPECT_EQ(status("GET /kv/a HTTP/1.1\r\nX: " + std::string(200, 'y') + "\r\n\r\n"), 431);
	/* Too long before its end is even seen. */
	EXPECT_EQ(status("GET /kv/" + std::string(200, 'k')), 431);
}

TEST(Http, ResponseFraming)
{
	std::string out;
	append_response(out, 200, "hi", true);
	EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi");
	out.clear();
	append_response(out, 204, "", false);
	EXPECT_EQ(out, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
}
