/*
 * http.cpp: request parsing and response framing (http.hpp).
 *
 * Lines may end in CRLF or a bare LF, as RFC 9112 lets a server accept.
 * Field names are matched case-insensitively; a Content-Length that is not
 * all digits, or two that differ, is a 400, as is a folded header line.
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

} // namespace

Parse parse_request(std::string_view buf, const Limits &limits)
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
	std::string_view line = trim(head.substr(0, eol));
	head.remove_prefix(eol + 1);

	Parse p;
	size_t sp1 = line.find(' ');
	size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
	if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
		return reject(400, "request line is not 'METHOD TARGET HTTP/1.x'");
	p.req.method = line.substr(0, sp1);
	p.req.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
	std::string_view version = line.substr(sp2 + 1);
	if (!is_token(p.req.method) || p.req.target.empty() || p.req.target[0] != '/')
		return reject(400, "request line is not 'METHOD /PATH HTTP/1.x'");
	if (version.substr(0, 5) != "HTTP/")
		return reject(400, "request line does not end in HTTP/1.x");
	if (version != "HTTP/1.1" && version != "HTTP/1.0")
		return reject(505, "only HTTP/1.1 and HTTP/1.0 are served");
	bool http10 = version == "HTTP/1.0";
	p.req.http10 = http10;
	p.req.keep_alive = !http10;

	bool have_length = false;
	size_t length = 0;
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
			return reject(501, "Transfer-Encoding is not supported: send Content-Length");
		} else if (iequals(name, "connection")) {
			if (lists(value, "close"))
				p.req.keep_alive = false;
			else if (http10 && lists(value, "keep-alive"))
				p.req.keep_alive = true;
		}
	}
	if (!have_length && (p.req.method == "PUT" || p.req.method == "POST"))
		return reject(411, "PUT and POST need a Content-Length");
	if (length > limits.max_body)
		return reject(413, "body exceeds --max-body");
	if (rest.size() - end < length)
		return Parse{};
	p.req.body = rest.substr(end, length);
	p.kind = Parse::ok;
	p.length = lead + end + length;
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
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Unknown";
	}
}

void append_response(std::string &out, int status, std::string_view body, bool keep_alive,
		     std::string_view extra, std::string_view content_type)
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
	if (status != 204)
		out += body;
}

} // namespace kvsrv
