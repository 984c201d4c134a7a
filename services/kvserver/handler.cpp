/*
 * handler.cpp: the routes of loggp-kvserver (handler.hpp).
 */
#include "handler.hpp"

#include <cstdio>
#include <cstring>

#include "fnv.hpp"

namespace kvsrv {

namespace {

constexpr std::string_view kv_prefix = "/kv/";
constexpr const char *kv_allow = "Allow: GET, HEAD, PUT, POST, DELETE\r\n";

} // namespace

std::string Handler::hash_header(std::string_view value) const
{
	if (!opt_.hash_rounds)
		return {};
	uint64_t h = fnv_basis;
	for (int i = 0; i < opt_.hash_rounds; i++)
		h = fnv1a(value, h);
	char buf[48];
	std::snprintf(buf, sizeof(buf), "X-Value-Hash: %016llx\r\n",
		      static_cast<unsigned long long>(h));
	return buf;
}

/* The status of a write: done_status once it is applied (and durable under
 * --fsync always), 500 when the log refused it or could not make it durable. */
int Handler::write_status(const WriteResult &r, int done_status, int &err)
{
	err = r.errnum;
	if (!err && wal_ && r.ticket && wal_->policy() == FsyncPolicy::always)
		err = -wal_->wait_durable(r.ticket);
	return err ? 500 : done_status;
}

bool Handler::handle(const Request &req, std::string &out)
{
	int status = 404;
	std::string body;
	std::string extra;
	std::string_view ctype = "text/plain";
	int err = 0;
	/* HEAD is GET without the body (RFC 9110 section 9.3.2). */
	const bool head = req.method == "HEAD";
	const std::string_view m = head ? std::string_view("GET") : req.method;
	if (req.target == "/metrics") {
		if (m == "GET") {
			status = 200;
			body = metrics_.prometheus(gauges_());
			ctype = "text/plain; version=0.0.4";
		} else {
			status = 405;
			extra = "Allow: GET, HEAD\r\n";
		}
	} else if (req.target.substr(0, kv_prefix.size()) == kv_prefix) {
		std::string_view key = req.target.substr(kv_prefix.size());
		if (key.empty() || key.size() > opt_.limits.max_key) {
			status = 400;
			body = "key must be 1 to --max-key bytes\n";
		} else if (m == "GET") {
			if (auto v = store_.get(key)) {
				status = 200;
				extra = hash_header(*v);
				body = std::move(*v);
			}
		} else if (m == "PUT" || m == "POST") {
			WriteResult r = store_.put(key, req.body, wal_);
			status = write_status(r, r.existed ? 204 : 201, err);
			if (status != 500)
				extra = hash_header(req.body);
		} else if (m == "DELETE") {
			WriteResult r = store_.del(key, wal_);
			status = write_status(r, r.existed ? 204 : 404, err);
		} else {
			status = 405;
			extra = kv_allow;
		}
	}
	if (status == 500)
		body = std::string("the log refused the write: ") + std::strerror(err) + "\n";
	else if (status == 404 && body.empty())
		body = "not found\n";
	/* An HTTP/1.0 client keeps the connection only when told so. */
	if (req.http10 && req.keep_alive)
		extra += "Connection: keep-alive\r\n";
	metrics_.count_status(status);
	append_response(out, status, body, req.keep_alive, extra, ctype, head);
	return req.keep_alive;
}

} // namespace kvsrv
