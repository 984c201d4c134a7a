// config.cpp: the hints file (pf_config.h), read with nlohmann::json.
#include "pf_config.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

using nlohmann::json;

namespace {

struct Bad {
	std::string msg;
};

const char *const kHintKeys[] = {"WillNeed", "Sequential", "Random", "Normal"};
const char kEntryKeys[] = "Path, BlockSize, CacheSize, ReadAheadSize, Adaptive, WillNeed, "
			  "Sequential, Random, Normal";

uint64_t number(const json &v, const std::string &where)
{
	if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
		throw Bad{where + ": " + v.dump() + " is not a non-negative integer"};
	return v.get<uint64_t>();
}

// A path as the kernel names the file: resolved when it exists, so that
// /proc/self/fd links (what the interposer sees) compare equal.
std::string resolve(const std::string &p)
{
	char buf[PATH_MAX];
	if (realpath(p.c_str(), buf))
		return buf;
	return p;
}

char *dup_str(const std::string &s)
{
	char *p = static_cast<char *>(malloc(s.size() + 1));
	if (!p)
		throw std::bad_alloc();
	memcpy(p, s.c_str(), s.size() + 1);
	return p;
}

pf_entry entry(const json &e, const std::string &where, bool is_dir)
{
	if (!e.is_object())
		throw Bad{where + ": not an object (accepted: {\"Path\": ..., ...})"};
	for (auto it = e.begin(); it != e.end(); ++it) {
		bool known = it.key() == "Path" || it.key() == "BlockSize" ||
			     it.key() == "CacheSize" || it.key() == "ReadAheadSize" ||
			     it.key() == "Adaptive";
		for (const char *k : kHintKeys)
			known = known || it.key() == k;
		if (!known)
			throw Bad{where + ": unknown key '" + it.key() + "' (accepted: " +
				  kEntryKeys + ")"};
	}
	auto path = e.find("Path");
	if (path == e.end() || !path->is_string() || path->get<std::string>().empty() ||
	    path->get<std::string>()[0] != '/')
		throw Bad{where + ".Path: missing or not an absolute path"};
	pf_entry out{};
	out.is_dir = is_dir;
	uint64_t bs = e.contains("BlockSize") ? number(e["BlockSize"], where + ".BlockSize") : 0;
	uint64_t cs = e.contains("CacheSize") ? number(e["CacheSize"], where + ".CacheSize") : 0;
	uint64_t ra = e.contains("ReadAheadSize")
			      ? number(e["ReadAheadSize"], where + ".ReadAheadSize")
			      : 0;
	if (cs > UINT32_MAX || ra > UINT32_MAX)
		throw Bad{where + ": CacheSize and ReadAheadSize are counts of blocks below 2^32"};
	out.block_size = bs ? bs : PF_BLOCK_SIZE_DEFAULT;
	out.cache_size = cs ? uint32_t(cs) : PF_CACHE_SIZE_DEFAULT;
	out.readahead = ra ? uint32_t(ra) : PF_READAHEAD_DEFAULT;
	if (out.readahead > out.cache_size - 1)
		out.readahead = out.cache_size - 1;
	if (e.contains("Adaptive")) {
		if (!e["Adaptive"].is_boolean())
			throw Bad{where + ".Adaptive: " + e["Adaptive"].dump() +
				  " is not true or false"};
		out.adaptive = e["Adaptive"].get<bool>();
	}
	std::vector<pf_hint> hints;
	for (int k = 0; k < 4; k++) {
		auto arr = e.find(kHintKeys[k]);
		if (arr == e.end())
			continue;
		std::string w = where + "." + kHintKeys[k];
		if (!arr->is_array())
			throw Bad{w + ": not an array (accepted: [{\"Offset\": N, \"Length\": N}])"};
		for (size_t i = 0; i < arr->size(); i++) {
			const json &r = (*arr)[i];
			std::string wi = w + "[" + std::to_string(i) + "]";
			if (!r.is_object())
				throw Bad{wi + ": not an object (accepted: {\"Offset\": N, \"Length\": N})"};
			for (auto it = r.begin(); it != r.end(); ++it)
				if (it.key() != "Offset" && it.key() != "Length")
					throw Bad{wi + ": unknown key '" + it.key() +
						  "' (accepted: Offset, Length)"};
			pf_hint h{};
			h.kind = pf_hint_kind(k);
			h.off = r.contains("Offset") ? number(r["Offset"], wi + ".Offset") : 0;
			h.len = r.contains("Length") ? number(r["Length"], wi + ".Length") : 0;
			hints.push_back(h);
		}
	}
	out.path = dup_str(resolve(path->get<std::string>()));
	out.nhints = hints.size();
	out.hints = static_cast<pf_hint *>(calloc(hints.size() + 1, sizeof(pf_hint)));
	if (!out.hints) {
		free(out.path);
		throw std::bad_alloc();
	}
	std::copy(hints.begin(), hints.end(), out.hints);
	return out;
}

void fail(char *err, size_t errlen, const std::string &name, const std::string &msg)
{
	snprintf(err, errlen, "%s: %s", name.c_str(), msg.c_str());
}

} // namespace

extern "C" int pf_config_parse(const char *text, const char *name, pf_config **out, char *err,
			       size_t errlen)
{
	auto *c = static_cast<pf_config *>(calloc(1, sizeof(pf_config)));
	if (!c) {
		fail(err, errlen, name, "out of memory");
		return -ENOMEM;
	}
	try {
		json doc = json::parse(text);
		if (!doc.is_object())
			throw Bad{"not a JSON object (accepted: {\"File\": [...], \"Directory\": [...]})"};
		for (auto it = doc.begin(); it != doc.end(); ++it)
			if (it.key() != "File" && it.key() != "Directory")
				throw Bad{"unknown key '" + it.key() + "' (accepted: File, Directory)"};
		std::vector<std::pair<const json *, std::string>> items;
		std::vector<bool> dirs;
		for (const char *kind : {"File", "Directory"}) {
			auto arr = doc.find(kind);
			if (arr == doc.end())
				continue;
			if (!arr->is_array())
				throw Bad{std::string(kind) + ": not an array of entries"};
			for (size_t i = 0; i < arr->size(); i++) {
				items.emplace_back(&(*arr)[i],
						   std::string(kind) + "[" + std::to_string(i) + "]");
				dirs.push_back(kind[0] == 'D');
			}
		}
		c->entries = static_cast<pf_entry *>(calloc(items.size() + 1, sizeof(pf_entry)));
		if (!c->entries)
			throw std::bad_alloc();
		for (size_t i = 0; i < items.size(); i++) {
			c->entries[i] = entry(*items[i].first, items[i].second, dirs[i]);
			c->nentries++;
		}
	} catch (const Bad &b) {
		fail(err, errlen, name, b.msg);
		pf_config_free(c);
		return -EINVAL;
	} catch (const json::exception &e) {
		// "[json.exception.parse_error.101] parse error at line 1, ..."
		const char *what = e.what();
		const char *msg = strchr(what, ']');
		fail(err, errlen, name, std::string(msg ? msg + 2 : what) + " (accepted: JSON)");
		pf_config_free(c);
		return -EINVAL;
	} catch (const std::bad_alloc &) {
		fail(err, errlen, name, "out of memory");
		pf_config_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

extern "C" int pf_config_load(const char *path, pf_config **out, char *err, size_t errlen)
{
	std::ifstream in(path);
	if (!in) {
		int e = errno ? errno : ENOENT;
		fail(err, errlen, path, std::string("cannot read: ") + strerror(e));
		return -e;
	}
	std::stringstream ss;
	ss << in.rdbuf();
	return pf_config_parse(ss.str().c_str(), path, out, err, errlen);
}

extern "C" void pf_config_free(pf_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nentries; i++) {
		free(c->entries[i].path);
		free(c->entries[i].hints);
	}
	free(c->entries);
	free(c);
}

extern "C" const pf_entry *pf_config_match(const pf_config *c, const char *abspath)
{
	const char *slash = strrchr(abspath, '/');
	size_t dirlen = slash ? size_t(slash - abspath) : 0;
	for (size_t i = 0; i < c->nentries; i++) {
		const pf_entry *e = &c->entries[i];
		if (!e->is_dir && strcmp(e->path, abspath) == 0)
			return e;
	}
	for (size_t i = 0; i < c->nentries; i++) {
		const pf_entry *e = &c->entries[i];
		if (!e->is_dir || !slash || slash[1] == '\0')
			continue;
		size_t n = strlen(e->path);
		// "/" as a directory: its children have their only slash first.
		if (n == 1 ? dirlen == 0 : (n == dirlen && strncmp(e->path, abspath, n) == 0))
			return e;
	}
	return nullptr;
}

extern "C" const char *pf_hint_name(pf_hint_kind kind)
{
	return kHintKeys[kind];
}
