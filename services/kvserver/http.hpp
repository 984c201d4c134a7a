/*
 * http.hpp: the HTTP/1.1 subset loggp-kvserver speaks (README.md, "Protocol").
 *
 * parse_request() looks at the bytes a connection has buffered and says
 * whether they begin with a whole request (head and Content-Length body), a
 * part of one, or something that is not acceptable.  It never copies: the
 * views in Request point into the buffer and live as long as it does.  A
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
	std::string_view target;
	std::string_view body;
	bool keep_alive = true;	/* HTTP/1.1 unless "Connection: close"; 1.0 only with keep-alive */
	bool http10 = false;
};

struct Parse {
	enum Kind { incomplete, ok, rejected } kind = incomplete;
	size_t length = 0;	/* ok: bytes of head and body */
	int status = 0;		/* rejected: 400, 413, 431, 501 or 505 */
	const char *why = "";	/* rejected: one line for the reply body */
	Request req;
};

Parse parse_request(std::string_view buf, const Limits &limits);

/* The reason phrase of a status code this server sends. */
const char *status_reason(int status);

/*
 * Appends a whole response: status line, Content-Length, Connection: close
 * when !keep_alive, each of extra (already "Name: value\r\n" lines), body.
 */
void append_response(std::string &out, int status, std::string_view body, bool keep_alive,
		     std::string_view extra = {}, std::string_view content_type = "text/plain");

} // namespace kvsrv
