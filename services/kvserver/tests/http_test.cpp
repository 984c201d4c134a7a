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

Parse parse(std::string_view s)
{
	static std::string chunked;
	return parse_request(s, small(), chunked);
}

int status(const std::string &s)
{
	Parse p = parse(s);
	return p.kind == Parse::rejected ? p.status : 0;
}

} // namespace

TEST(Http, WholeRequestWithBody)
{
	std::string buf = "PUT /kv/a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET";
	Parse p = parse(buf);
	ASSERT_EQ(p.kind, Parse::ok);
	EXPECT_EQ(p.req.method, "PUT");
	EXPECT_EQ(p.req.target, "/kv/a");
	EXPECT_EQ(p.req.body, "abc");
	EXPECT_TRUE(p.req.keep_alive);
	EXPECT_EQ(buf.substr(p.length), "GET");
}

TEST(Http, IncompleteUntilBodyArrives)
{
	Parse p = parse("GET /kv/a HTTP/1.1\r\nHost: x\r\n");
	EXPECT_EQ(p.kind, Parse::incomplete);
	EXPECT_FALSE(p.head_done);
	p = parse("PUT /kv/a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nab");
	EXPECT_EQ(p.kind, Parse::incomplete);
	EXPECT_TRUE(p.head_done);
	EXPECT_FALSE(p.expect_continue);
	EXPECT_EQ(p.content_length, 3u);
}

TEST(Http, BareLineFeedsAndConnectionHeaders)
{
	Parse p = parse("GET /kv/a HTTP/1.1\nHost: x\nConnection: Keep-Alive, close\n\n");
	ASSERT_EQ(p.kind, Parse::ok);
	EXPECT_FALSE(p.req.keep_alive);
	p = parse("GET /kv/a HTTP/1.0\r\n\r\n");
	EXPECT_FALSE(p.req.keep_alive);
	p = parse("GET /kv/a HTTP/1.0\r\nconnection: keep-alive\r\n\r\n");
	EXPECT_TRUE(p.req.keep_alive);
}

TEST(Http, Rejections)
{
	EXPECT_EQ(status("GARBAGE\r\n\r\n"), 400);
	EXPECT_EQ(status("GET kv HTTP/1.1\r\n\r\n"), 400);
	EXPECT_EQ(status("GET /kv/a HTTP/2.0\r\n\r\n"), 505);
	EXPECT_EQ(status("GET /kv/a HTTP/1.x\r\n\r\n"), 400);
	EXPECT_EQ(status("GET /kv/a HTTP/1.1\r\nbad header\r\n\r\n"), 400);
	EXPECT_EQ(status("GET /kv/a HTTP/1.1\r\nA: b\r\n folded\r\n\r\n"), 400);
	EXPECT_EQ(status("PUT /kv/a HTTP/1.1\r\nHost: x\r\n\r\n"), 411);
	EXPECT_EQ(status("PUT /kv/a HTTP/1.1\r\nContent-Length: 1x\r\n\r\n"), 400);
	EXPECT_EQ(status("PUT /kv/a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
		  400);
	EXPECT_EQ(status("PUT /kv/a HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n"), 413);
	EXPECT_EQ(status("PUT /kv/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"),
		  501);
	EXPECT_EQ(status("GET /kv/a HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n"), 417);
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

/* RFC 9112 section 3.2: exactly one Host in HTTP/1.1, at most one in 1.0. */
TEST(Http, HostIsRequiredOnceIn11)
{
	EXPECT_EQ(status("GET /kv/a HTTP/1.1\r\n\r\n"), 400);
	EXPECT_EQ(status("GET /kv/a HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"), 400);
	EXPECT_EQ(status("GET /kv/a HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n"), 400);
	EXPECT_EQ(parse("GET /kv/a HTTP/1.1\r\nHost: a\r\n\r\n").kind, Parse::ok);
	EXPECT_EQ(parse("GET /kv/a HTTP/1.0\r\n\r\n").kind, Parse::ok);
}

TEST(Http, AbsoluteFormAndLaterMinorVersions)
{
	Parse p = parse("GET http://example.org:8080/kv/a HTTP/1.1\r\nHost: x\r\n\r\n");
	ASSERT_EQ(p.kind, Parse::ok);
	EXPECT_EQ(p.req.target, "/kv/a");
	p = parse("GET HTTP://example.org HTTP/1.1\r\nHost: x\r\n\r\n");
	ASSERT_EQ(p.kind, Parse::ok);
	EXPECT_EQ(p.req.target, "/");
	EXPECT_EQ(status("GET ftp://example.org/kv/a HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
	EXPECT_EQ(status("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
	p = parse("GET /kv/a HTTP/1.2\r\nHost: x\r\n\r\n");
	ASSERT_EQ(p.kind, Parse::ok);	/* a later 1.x is served as 1.1 */
	EXPECT_FALSE(p.req.http10);
	EXPECT_TRUE(p.req.keep_alive);
}

/* A NUL or a bare CR would let two parsers disagree on where a field or
 * the target ends. */
TEST(Http, ControlCharactersAreRejected)
{
	using namespace std::string_literals;
	EXPECT_EQ(status("GET /kv/a HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n"s), 400);
	EXPECT_EQ(status("GET /kv/a HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n"), 400);
	EXPECT_EQ(status("GET /kv/a\x01 HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
	EXPECT_EQ(status("GET /kv/a\x7f HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
	EXPECT_EQ(status("GET /kv/a\rb HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
	EXPECT_EQ(parse("GET /kv/a HTTP/1.1\r\nHost: x\r\nX: tab\there \xff\r\n\r\n").kind,
		  Parse::ok);
}

TEST(Http, ChunkedBodies)
{
	std::string body;
	std::string buf = "PUT /kv/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n"
			  "3;name=v\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: t\r\n\r\nGET";
	Parse p = parse_request(buf, small(), body);
	ASSERT_EQ(p.kind, Parse::ok);
	EXPECT_EQ(p.req.body, "abcde");
	EXPECT_EQ(buf.substr(p.length), "GET");
	/* Every prefix is incomplete with its head done. */
	for (size_t n = buf.find("\r\n\r\n") + 4; n < p.length; n++) {
		Parse part = parse_request(std::string_view(buf).substr(0, n), small(), body);
		EXPECT_EQ(part.kind, Parse::incomplete) << n;
		EXPECT_TRUE(part.head_done) << n;
	}
	std::string head = "PUT /kv/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n";
	EXPECT_EQ(status(head + "\r\n9\r\n123456789\r\n8\r\n12345678\r\n"), 413);
	EXPECT_EQ(status(head + "\r\nzz\r\n"), 400);
	EXPECT_EQ(status(head + "\r\n3\r\nabcX"), 400);
	EXPECT_EQ(status(head + "Content-Length: 3\r\n\r\n"), 400);
	EXPECT_EQ(status(head + "Transfer-Encoding: chunked\r\n\r\n"), 400);
	EXPECT_EQ(status("PUT /kv/a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"), 400);
	EXPECT_EQ(status(head + "\r\n" + std::string(1100, '0')), 400);
}

TEST(Http, ExpectContinue)
{
	Parse p = parse("PUT /kv/a HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n");
	EXPECT_EQ(p.kind, Parse::incomplete);
	EXPECT_TRUE(p.head_done && p.expect_continue);
	/* HTTP/1.0 clients cannot be waiting for it (RFC 9110 section 10.1.1). */
	p = parse("PUT /kv/a HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n");
	EXPECT_FALSE(p.expect_continue);
	/* A body over the limit is refused before it is sent. */
	EXPECT_EQ(status("PUT /kv/a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
			 "Content-Length: 17\r\n\r\n"),
		  413);
}

TEST(Http, HeadOnlyResponse)
{
	std::string out;
	append_response(out, 200, "hello", true, {}, "text/plain", true);
	EXPECT_EQ(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n");
}
