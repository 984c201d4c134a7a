/*
 * http.cpp: request parsing and response framing (http.hpp).
 *
 * Lines may end in CRLF or a bare LF, as RFC 9112 lets a server accept.
 * Field names are matched case-insensitively; a Content-Length that is not
 * all digits, or two that differ, is a 400, as is a folded header line, a
 * missing or repeated Host, and a control character in the target or in a
 * field value (a bare CR or NUL would let two parsers disagree on where a
 * field ends).
 */
#include "http.hpp"

#include <cctype>
#include <charconv>

namespace kvsrv {

namespace {

bool iequals(std::string_view a, std::string_view b)
{
	if (a.size() != b.size())
		return false;
	for (size_t i = 0; i < a.size(); i++)
		if (std::tolower(static_cast<unsigned char>(a[i])) !=
		    std::tolower(static_cast<unsigned char>(b[i])))
			return false;
	return true;
}

std::string_view trim(std::string_view s)
{
	while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
		s.remove_prefix(1);
	while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
		s.remove_suffix(1);
	return s;
}

bool is_token(std::string_view s)
{
	if (s.empty())
		return false;
	for (char c : s)
		if (c <= ' ' || c >= 127 || std::string_view("()<>@,;:\\\"/[]?={}").find(c) !=
						    std::string_view::npos)
			return false;
	return true;
}

/* Whether a comma-separated header value lists token (Connection: a, b). */
bool lists(std::string_view value, std::string_view token)
{
	while (!value.empty()) {
		size_t comma = value.find(',');
		if (iequals(trim(value.substr(0, comma)), token))
			return true;
		if (comma == std::string_view::npos)
			break;
		value.remove_prefix(comma + 1);
	}
	return false;
}

Parse reject(int status, const char *why)
{
	Parse p;
	p.kind = Parse::rejected;
	p.status = status;
	p.why = why;
	return p;
}

/* Where the head ends (just past its empty line), or npos. */
size_t head_end(std::string_view buf)
{
	for (size_t i = buf.find('\n'); i != std::string_view::npos; i = buf.find('\n', i + 1)) {
		if (i + 1 < buf.size() && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < buf.size() && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return std::string_view::npos;
}

/* A target's bytes: no control characters (RFC 9112 section 3.2). */
bool clean_target(std::string_view t)
{
	for (unsigned char c : t)
		if (c <= ' ' || c == 0x7f)
			return false;
	return true;
}

/* A field value's bytes: VCHAR, obs-text, space and tab; no NUL, CR, LF or
 * other control character (RFC 9110 section 5.5). */
bool clean_value(std::string_view v)
{
	for (unsigned char c : v)
		if ((c < ' ' && c != '\t') || c == 0x7f)
			return false;
	return true;
}

/* The path of an origin-form ("/path") or absolute-form ("http://host/path")
 * target; empty when it is neither. */
std::string_view target_path(std::string_view t)
{
	if (!t.empty() && t[0] == '/')
		return t;
	for (std::string_view scheme : {"http://", "https://"}) {
		if (t.size() < scheme.size() || !iequals(t.substr(0, scheme.size()), scheme))
			continue;
		std::string_view rest = t.substr(scheme.size());
		size_t slash = rest.find('/');
		if (slash == 0)
			return {};
		return slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash);
	}
	return {};
}

/* The protocol version: 11 (HTTP/1.1 and any later 1.x, RFC 9110 section
 * 6.2), 10, another major version * 10, or -1 when malformed. */
int version_of(std::string_view v)
{
	if (v.size() != 8 || v.substr(0, 5) != "HTTP/" || v[6] != '.' ||
	    !std::isdigit(static_cast<unsigned char>(v[5])) ||
	    !std::isdigit(static_cast<unsigned char>(v[7])))
		return -1;
	int major = v[5] - '0', minor = v[7] - '0';
	if (major != 1)
		return major * 10;
	return minor == 0 ? 10 : 11;
}

/* A line of a chunked body: where it ends (just past LF) and its content
 * without CR, or npos when no LF within max bytes. */
size_t chunk_line(std::string_view buf, size_t pos, size_t max, std::string_view &line)
{
	size_t nl = buf.find('\n', pos);
	if (nl == std::string_view::npos || nl - pos > max)
		return std::string_view::npos;
	line = buf.substr(pos, nl - pos);
	if (!line.empty() && line.back() == '\r')
		line.remove_suffix(1);
	return nl + 1;
}

/* The longest chunk-size line accepted, extensions included. */
constexpr size_t max_chunk_line = 1024;

/*
 * Decodes the chunked body at buf[pos] (RFC 9112 section 7.1) into out;
 * sets end just past it.  ok, incomplete, or rejected: a bad chunk line,
 * data not followed by its CRLF, a body over limits.max_body or trailers
 * over limits.max_header.
 */
Parse dechunk(std::string_view buf, size_t pos, const Limits &limits, std::string &out,
	      size_t &end)
{
	out.clear();
	std::string_view line;
	for (;;) {
		size_t next = chunk_line(buf, pos, max_chunk_line, line);
		if (next == std::string_view::npos)
			return buf.size() - pos > max_chunk_line
				       ? reject(400, "chunk size line is longer than 1024 bytes")
				       : Parse{};
		size_t digits = 0;
		size_t size = 0;
		while (digits < line.size() && std::isxdigit(static_cast<unsigned char>(line[digits]))) {
			if (size > limits.max_body)
				return reject(413, "chunked body exceeds --max-body");
			char d = static_cast<char>(std::tolower(static_cast<unsigned char>(line[digits])));
			size = size * 16 + static_cast<size_t>(d <= '9' ? d - '0' : d - 'a' + 10);
			digits++;
		}
		std::string_view ext = trim(line.substr(digits));
		if (!digits || (!ext.empty() && ext[0] != ';') || !clean_value(ext))
			return reject(400, "chunk size line is not 'HEX[;extension]'");
		pos = next;
		if (size == 0)
			break;
		if (out.size() + size > limits.max_body)
			return reject(413, "chunked body exceeds --max-body");
		if (buf.size() - pos < size + 1)
			return Parse{};
		size_t after = pos + size;
		size_t crlf = buf[after] == '\n' ? 1 : buf[after] == '\r' ? 2 : 0;
		if (crlf == 2 && buf.size() - after < 2)
			return Parse{};
		if (!crlf || (crlf == 2 && buf[after + 1] != '\n'))
			return reject(400, "chunk data is not followed by CRLF");
		out.append(buf.substr(pos, size));
		pos = after + crlf;
	}
	/* Trailer fields, ignored, then the empty line. */
	size_t trailers = 0;
	for (;;) {
		size_t next = chunk_line(buf, pos, limits.max_header, line);
		if (next == std::string_view::npos)
			return buf.size() - pos > limits.max_header
				       ? reject(431, "chunked trailers exceed --max-header")
				       : Parse{};
		trailers += next - pos;
		if (trailers > limits.max_header)
			return reject(431, "chunked trailers exceed --max-header");
		pos = next;
		if (line.empty())
			break;
		size_t colon = line.find(':');
		if (colon == std::string_view::npos || !is_token(line.substr(0, colon)) ||
		    !clean_value(line.substr(colon + 1)))
			return reject(400, "trailer line is not 'Name: value'");
	}
	end = pos;
	Parse p;
	p.kind = Parse::ok;
	return p;
}

} // namespace

Parse parse_request(std::string_view buf, const Limits &limits, std::string &chunked_body)
{
	/* Empty lines before a request are ignored (RFC 9112 section 2.2). */
	size_t lead = 0;
	while (lead < buf.size() && (buf[lead] == '\r' || buf[lead] == '\n'))
		lead++;
	std::string_view rest = buf.substr(lead);
	size_t end = head_end(rest);
	if (end == std::string_view::npos) {
		if (rest.size() > limits.max_header)
			return reject(431, "request line and headers exceed --max-header");
		return Parse{};
	}
	if (end > limits.max_header)
		return reject(431, "request line and headers exceed --max-header");

	std::string_view head = rest.substr(0, end);
	size_t eol = head.find('\n');
	std::string_view line = head.substr(0, eol);
	if (!line.empty() && line.back() == '\r')
		line.remove_suffix(1);
	head.remove_prefix(eol + 1);

	Parse p;
	size_t sp1 = line.find(' ');
	size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
	if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
		return reject(400, "request line is not 'METHOD TARGET HTTP/1.x'");
	p.req.method = line.substr(0, sp1);
	std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
	int version = version_of(line.substr(sp2 + 1));
	if (!is_token(p.req.method))
		return reject(400, "method is not a token");
	if (!clean_target(target))
		return reject(400, "target holds a control character");
	p.req.target = target_path(target);
	if (p.req.target.empty())
		return reject(400, "target is neither '/path' nor 'http://host/path'");
	if (version < 0)
		return reject(400, "request line does not end in HTTP/1.x");
	if (version != 10 && version != 11)
		return reject(505, "only HTTP/1.x is served");
	bool http10 = version == 10;
	p.req.http10 = http10;
	p.req.keep_alive = !http10;

	bool have_length = false;
	size_t length = 0;
	int hosts = 0;
	int chunked = 0;
	bool expect = false;
	while (!head.empty()) {
		eol = head.find('\n');
		std::string_view field = head.substr(0, eol);
		head.remove_prefix(eol + 1);
		if (!field.empty() && field.back() == '\r')
			field.remove_suffix(1);
		if (field.empty())
			break;
		if (field[0] == ' ' || field[0] == '\t')
			return reject(400, "folded header lines are not accepted");
		size_t colon = field.find(':');
		if (colon == std::string_view::npos || !is_token(field.substr(0, colon)))
			return reject(400, "header line is not 'Name: value'");
		std::string_view name = field.substr(0, colon);
		std::string_view value = trim(field.substr(colon + 1));
		if (!clean_value(field.substr(colon + 1)))
			return reject(400, "header value holds NUL, CR or another control character");
		if (iequals(name, "content-length")) {
			size_t n = 0;
			auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
			if (value.empty() || ec != std::errc() || ptr != value.data() + value.size())
				return reject(400, "Content-Length is not a decimal number");
			if (have_length && n != length)
				return reject(400, "two different Content-Length headers");
			have_length = true;
			length = n;
		} else if (iequals(name, "transfer-encoding")) {
			if (!iequals(value, "chunked"))
				return reject(501, "only Transfer-Encoding: chunked is supported");
			chunked++;
		} else if (iequals(name, "host")) {
			hosts++;
		} else if (iequals(name, "expect")) {
			if (!iequals(value, "100-continue"))
				return reject(417, "only Expect: 100-continue is supported");
			expect = !http10;	/* RFC 9110 section 10.1.1: ignored from 1.0 */
		} else if (iequals(name, "connection")) {
			if (lists(value, "close"))
				p.req.keep_alive = false;
			else if (http10 && lists(value, "keep-alive"))
				p.req.keep_alive = true;
		}
	}
	/* RFC 9112 section 3.2: exactly one Host in 1.1, at most one in 1.0. */
	if (hosts > 1 || (!http10 && hosts == 0))
		return reject(400, "an HTTP/1.1 request needs exactly one Host header");
	/* RFC 9112 section 6.1 and 6.3: the framing must be unambiguous. */
	if (chunked && (have_length || http10 || chunked > 1))
		return reject(400, "Transfer-Encoding: chunked with Content-Length, twice or in "
				   "HTTP/1.0");
	if (!chunked && !have_length && (p.req.method == "PUT" || p.req.method == "POST"))
		return reject(411, "PUT and POST need a Content-Length or a chunked body");
	if (length > limits.max_body)
		return reject(413, "body exceeds --max-body");
	size_t body_end = end + length;
	bool whole = rest.size() >= body_end;
	if (chunked) {
		Parse c = dechunk(rest, end, limits, chunked_body, body_end);
		if (c.kind == Parse::rejected)
			return c;
		whole = c.kind == Parse::ok;
		p.req.body = chunked_body;
	} else {
		p.req.body = rest.substr(end, length);
	}
	if (!whole) {
		Parse wait;
		wait.head_done = true;
		wait.expect_continue = expect;
		wait.content_length = length;
		return wait;
	}
	p.kind = Parse::ok;
	p.length = lead + body_end;
	return p;
}

const char *status_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 417: return "Expectation Failed";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Unknown";
	}
}

void append_response(std::string &out, int status, std::string_view body, bool keep_alive,
		     std::string_view extra, std::string_view content_type, bool head_only)
{
	out += "HTTP/1.1 ";
	out += std::to_string(status);
	out += ' ';
	out += status_reason(status);
	out += "\r\n";
	if (status != 204) {
		out += "Content-Type: ";
		out += content_type;
		out += "\r\nContent-Length: ";
		out += std::to_string(body.size());
		out += "\r\n";
	}
	if (!keep_alive)
		out += "Connection: close\r\n";
	out += extra;
	out += "\r\n";
	if (status != 204 && !head_only)
		out += body;
}

} // namespace kvsrv
