/*
 * loggp-kvs: look inside a running KVS (loggp-kvs-broker) from a shell.
 *
 *   loggp-kvs [-S SOCKET] [-t SEC] put KEY=VALUE...   (then commits)
 *   loggp-kvs [-S SOCKET] get KEY                      (prints the value)
 *   loggp-kvs [-S SOCKET] ls [DIR]
 *   loggp-kvs [-S SOCKET] dump [DIR]                   (KEY = VALUE lines)
 *   loggp-kvs [-S SOCKET] unlink KEY...
 *   loggp-kvs [-S SOCKET] version | stats
 *
 * SOCKET is a broker's Unix socket (DIR/kvs-<rank>.sock), default
 * $LOGGP_KVS_SOCKET.  Exit status: 0 success, 1 the KVS refused (missing
 * key, bad key, ...), 2 bad usage, 3 no broker or no answer in time.
 */
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <getopt.h>
#include <string>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base64.hpp"

namespace {

using json = nlohmann::json;

const char usage[] =
	"usage: loggp-kvs [-S SOCKET] [-t SEC] COMMAND [ARGS]\n"
	"  put KEY=VALUE...  buffer the puts, then commit them (prints the version)\n"
	"  get KEY           print the value\n"
	"  ls [DIR]          list a directory (default: the root '.')\n"
	"  dump [DIR]        every key below DIR with its value\n"
	"  unlink KEY...     remove keys, then commit\n"
	"  version           the root version the broker sees\n"
	"  stats             the broker's counters (JSON)\n"
	"  -S SOCKET  a broker's socket (default $LOGGP_KVS_SOCKET)\n"
	"  -t SEC     give up when the broker does not answer in SEC seconds (default 60)\n"
	"exit: 0 done, 1 refused, 2 bad usage, 3 no broker answers,\n"
	"      4 a commit's outcome is unknown (sent, not confirmed: read the keys)\n";

struct Usage : std::runtime_error {
	using std::runtime_error::runtime_error;
};
struct Unreachable : std::runtime_error {
	using std::runtime_error::runtime_error;
};
struct Refused : std::runtime_error {
	Refused(int e, const std::string &what) : std::runtime_error(what), errnum(e) {}
	int errnum;
};
/* A commit sent but not confirmed: the root may or may not apply it. */
struct Unknown : std::runtime_error {
	using std::runtime_error::runtime_error;
};

class Conn {
public:
	Conn(const std::string &path, int timeout_s) : path_(path)
	{
		struct sockaddr_un sa = {};
		if (path.empty())
			throw Usage("no broker socket: pass -S SOCKET or set LOGGP_KVS_SOCKET");
		if (path.size() >= sizeof sa.sun_path)
			throw Usage("socket path '" + path + "' is too long");
		sa.sun_family = AF_UNIX;
		std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
		fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct timeval tv = {timeout_s, 0};
		setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		if (connect(fd_, reinterpret_cast<struct sockaddr *>(&sa), sizeof sa))
			throw Unreachable("cannot connect to the broker at " + path + ": " +
					  std::strerror(errno) +
					  " (is loggp-kvs-broker running?)");
		timeout_s_ = timeout_s;
	}
	~Conn() { close(fd_); }

	json call(const json &req)
	{
		std::string line = req.dump() + "\n";
		if (write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
			throw Unreachable("the broker at " + path_ + " closed the connection");
		std::string buf;
		char c;
		for (;;) {
			ssize_t n = read(fd_, &c, 1);
			if (n == 1 && c == '\n')
				break;
			if (n == 1) {
				buf.push_back(c);
				continue;
			}
			answer_timed_out_ = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
			if (answer_timed_out_)
				throw Unreachable("no answer from the broker at " + path_ +
						  " within " + std::to_string(timeout_s_) + " s");
			throw Unreachable("the broker at " + path_ +
					  " closed the connection (did it stop?)");
		}
		json rep = json::parse(buf, nullptr, false);
		if (!rep.is_object())
			throw Unreachable("the broker at " + path_ + " sent a malformed answer");
		if (!rep.value("ok", false))
			throw Refused(rep.value("errnum", 0), rep.value("error", std::string("failed")));
		return rep;
	}

	/*
	 * A commit that times out, here or in a broker (ETIMEDOUT), has left
	 * this tool and may still be applied at the root: it is neither refused
	 * nor unreachable.  (The root fails a fence definitely only when
	 * participants are missing, which a one-participant commit cannot be.)
	 */
	json commit()
	{
		try {
			return call({{"op", "commit"}});
		} catch (const Unreachable &e) {
			if (!answer_timed_out_)
				throw;
			throw Unknown(std::string(e.what()) + "; the commit's outcome is unknown");
		} catch (const Refused &e) {
			if (e.errnum != ETIMEDOUT)
				throw;
			std::string what = e.what();
			if (what.find("outcome is unknown") == std::string::npos)
				what += "; the commit's outcome is unknown";
			throw Unknown(what);
		}
	}

private:
	std::string path_;
	int fd_ = -1;
	int timeout_s_ = 0;
	bool answer_timed_out_ = false;	/* the last call sent, then heard nothing */
};

std::string decode(const json &rep)
{
	auto v = kvs::base64_decode(rep.at("value").get<std::string>());
	if (!v)
		throw Unreachable("the broker sent a value that is not base64");
	return *v;
}

void dump(Conn &c, const std::string &dir)
{
	json rep = c.call({{"op", "ls"}, {"key", dir}});
	std::string prefix = dir == "." ? "" : dir + ".";
	for (auto &[name, e] : rep.at("entries").items()) {
		std::string key = prefix + name;
		if (e.at("type") == "DIRREF") {
			dump(c, key);
			continue;
		}
		std::string v = decode(c.call({{"op", "get"}, {"key", key}}));
		std::printf("%s = %s\n", key.c_str(), v.c_str());
	}
}

int run(int argc, char **argv)
{
	std::string sock = std::getenv("LOGGP_KVS_SOCKET") ? std::getenv("LOGGP_KVS_SOCKET") : "";
	int timeout = 60;
	int o;
	opterr = 0;
	while ((o = getopt(argc, argv, "+S:t:h")) != -1) {
		switch (o) {
		case 'S': sock = optarg; break;
		case 't':
			timeout = std::atoi(optarg);
			if (timeout < 1)
				throw Usage(std::string("bad value '") + optarg +
					    "' for -t: expected whole seconds from 1");
			break;
		case 'h': std::fputs(usage, stdout); return 0;
		default:
			throw Usage(std::string("unknown option or missing value: ") +
				    argv[optind - 1] + " (see -h)");
		}
	}
	if (optind >= argc)
		throw Usage("no command (expected put, get, ls, dump, unlink, version or stats)");
	std::string cmd = argv[optind++];
	std::vector<std::string> args(argv + optind, argv + argc);
	Conn c(sock, timeout);
	if (cmd == "put" || cmd == "unlink") {
		if (args.empty())
			throw Usage(cmd + " needs at least one " + (cmd == "put" ? "KEY=VALUE" : "KEY"));
		for (const auto &a : args) {
			if (cmd == "unlink") {
				c.call({{"op", "unlink"}, {"key", a}});
				continue;
			}
			size_t eq = a.find('=');
			if (eq == std::string::npos)
				throw Usage("put argument '" + a + "' is not KEY=VALUE");
			c.call({{"op", "put"},
				{"key", a.substr(0, eq)},
				{"value", kvs::base64_encode(a.substr(eq + 1))}});
		}
		std::printf("%llu\n", c.commit().at("version").get<unsigned long long>());
	} else if (cmd == "get") {
		if (args.size() != 1)
			throw Usage("get needs exactly one KEY");
		std::string v = decode(c.call({{"op", "get"}, {"key", args[0]}}));
		std::fwrite(v.data(), 1, v.size(), stdout);
		std::fputc('\n', stdout);
	} else if (cmd == "ls") {
		json rep = c.call({{"op", "ls"}, {"key", args.empty() ? "." : args[0]}});
		for (auto &[name, e] : rep.at("entries").items())
			std::printf("%s%s\n", name.c_str(), e.at("type") == "DIRREF" ? "." : "");
	} else if (cmd == "dump") {
		dump(c, args.empty() ? "." : args[0]);
	} else if (cmd == "version") {
		std::printf("%llu\n", c.call({{"op", "version"}}).at("version").get<unsigned long long>());
	} else if (cmd == "stats") {
		std::printf("%s\n", c.call({{"op", "stats"}}).dump().c_str());
	} else {
		throw Usage("unknown command '" + cmd +
			    "' (expected put, get, ls, dump, unlink, version or stats)");
	}
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	try {
		return run(argc, argv);
	} catch (const Usage &e) {
		std::fprintf(stderr, "loggp-kvs: %s\n", e.what());
		return 2;
	} catch (const Unreachable &e) {
		std::fprintf(stderr, "loggp-kvs: %s\n", e.what());
		return 3;
	} catch (const Refused &e) {
		std::fprintf(stderr, "loggp-kvs: %s\n", e.what());
		return 1;
	} catch (const Unknown &e) {
		std::fprintf(stderr, "loggp-kvs: %s\n", e.what());
		return 4;
	} catch (const nlohmann::json::exception &e) {
		std::fprintf(stderr, "loggp-kvs: the broker's answer is not what this tool "
			     "expects: %s\n", e.what());
		return 3;
	}
}
