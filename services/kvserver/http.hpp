/*
 * http.hpp: the HTTP/1.1 subset loggp-kvserver speaks (README.md, "Protocol").
 *
 * parse_request() looks at the bytes a connection has buffered and says
 * whether they begin with a whole request (head and a Content-Length or
 * chunked body), a part of one, or something that is not acceptable.  The
 * views in Request point into the buffer, except a chunked body, which is
 * decoded into the caller's string; both must outlive the Request.  A
 * rejected request carries its status code; the connection must close after
 * answering it, because where the next request would start is unknown.
 */
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "options.hpp"

namespace kvsrv {

struct Request {
	std::string_view method;
	std::string_view target;	/* the path: origin-form, or absolute-form's path */
	std::string_view body;
	bool keep_alive = true;	/* HTTP/1.1 unless "Connection: close"; 1.0 only with keep-alive */
	bool http10 = false;
};

struct Parse {
	enum Kind { incomplete, ok, rejected } kind = incomplete;
	size_t length = 0;	/* ok: bytes of head and body */
	int status = 0;		/* rejected: 400, 411, 413, 417, 431, 501 or 505 */
	const char *why = "";	/* rejected: one line for the reply body */
	/* incomplete: the head is whole and the body is still arriving; then
	 * whether the client waits for "100 Continue" before sending it, and
	 * its announced length (0 when chunked). */
	bool head_done = false;
	bool expect_continue = false;
	size_t content_length = 0;
	Request req;
};

Parse parse_request(std::string_view buf, const Limits &limits, std::string &chunked_body);

/* The reason phrase of a status code this server sends. */
const char *status_reason(int status);

/*
 * Appends a whole response: status line, Content-Length, Connection: close
 * when !keep_alive, each of extra (already "Name: value\r\n" lines), body
 * (left out for a HEAD request, whose Content-Length is still the body's).
 */
void append_response(std::string &out, int status, std::string_view body, bool keep_alive,
		     std::string_view extra = {}, std::string_view content_type = "text/plain",
		     bool head_only = false);

/* The interim reply that tells a client sending "Expect: 100-continue" to send its body. */
constexpr std::string_view continue_response = "HTTP/1.1 100 Continue\r\n\r\n";

} // namespace kvsrv
