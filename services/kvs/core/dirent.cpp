// dirent.cpp - canonical JSON encoding of directory objects (see dirent.hpp).
//
// Encoding is written by hand: names are [A-Za-z0-9_-], base64 and blobrefs
// need no escaping either, so the bytes are exactly the compact sorted JSON a
// general serialiser would emit, without building a JSON tree. Decoding first
// tries a scanner for exactly that canonical form (every object this library
// writes), about ten times faster than a JSON parser; anything else - other
// spellings, and every malformed input - goes through nlohmann::json, which
// reads any valid JSON spelling and names what is wrong.
#include "dirent.hpp"

#include "base64.hpp"
#include "blobref.hpp"
#include "error.hpp"
#include "key.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <optional>
#include <set>
#include <vector>

namespace kvs {

namespace {

[[noreturn]] void dir_corrupt(const std::string& why)
{
	throw Error(EPROTO, "corrupt directory object: " + why);
}

} // namespace

const char* dirent_type_name(Dirent::Type t) noexcept
{
	switch (t) {
	case Dirent::Type::FILEVAL:
		return "FILEVAL";
	case Dirent::Type::FILEREF:
		return "FILEREF";
	case Dirent::Type::DIRREF:
		return "DIRREF";
	}
	return "?";
}

std::string dir_encode(const Directory& d)
{
	std::string out = "{";
	for (const auto& [name, ent] : d) {
		if (out.size() > 1)
			out.push_back(',');
		out.push_back('"');
		out += name;
		out += "\":{\"";
		out += dirent_type_name(ent.type);
		out += "\":\"";
		if (ent.type == Dirent::Type::FILEVAL)
			base64_encode_append(out, ent.data);
		else
			out += ent.data;
		out += "\"}";
	}
	out.push_back('}');
	return out;
}

namespace {

// Consumes `lit` at `pos`; false if the text differs there.
bool scan_lit(std::string_view text, size_t& pos, std::string_view lit)
{
	if (text.substr(pos, lit.size()) != lit)
		return false;
	pos += lit.size();
	return true;
}

// A JSON string without escapes at `pos` (after its opening quote): the
// characters up to the closing quote, which is consumed.
bool scan_plain_string(std::string_view text, size_t& pos, std::string_view& out)
{
	size_t end = text.find('"', pos);
	if (end == std::string_view::npos)
		return false;
	out = text.substr(pos, end - pos);
	pos = end + 1;
	return true;
}

// The canonical form only: {"name":{"TYPE":"data"},...} with strictly
// increasing valid names. nullopt means "not canonical", not "corrupt": the
// caller then decodes with the general parser.
std::optional<Directory> dir_decode_canonical(std::string_view text)
{
	Directory d;
	size_t pos = 0;
	if (!scan_lit(text, pos, "{"))
		return std::nullopt;
	if (scan_lit(text, pos, "}"))
		return pos == text.size() ? std::optional<Directory>(std::move(d)) : std::nullopt;
	for (;;) {
		std::string_view name, type, data;
		if (!scan_lit(text, pos, "\"") || !scan_plain_string(text, pos, name) ||
		    !key_name_valid(name) || !scan_lit(text, pos, ":{\"") ||
		    !scan_plain_string(text, pos, type) || !scan_lit(text, pos, ":\"") ||
		    !scan_plain_string(text, pos, data) || !scan_lit(text, pos, "}"))
			return std::nullopt;
		if (!d.empty() && std::string_view(d.rbegin()->first) >= name)
			return std::nullopt;
		Dirent de;
		if (type == "FILEVAL") {
			auto bytes = base64_decode(data);
			if (!bytes)
				return std::nullopt;
			de = Dirent{Dirent::Type::FILEVAL, std::move(*bytes)};
		} else if ((type == "FILEREF" || type == "DIRREF") && blobref_valid(data)) {
			de = Dirent{type == "FILEREF" ? Dirent::Type::FILEREF : Dirent::Type::DIRREF,
				    std::string(data)};
		} else {
			return std::nullopt;
		}
		d.emplace_hint(d.end(), std::string(name), std::move(de));
		if (scan_lit(text, pos, "}"))
			return pos == text.size() ? std::optional<Directory>(std::move(d)) : std::nullopt;
		if (!scan_lit(text, pos, ","))
			return std::nullopt;
	}
}

} // namespace

Directory dir_decode(std::string_view text)
{
	if (auto d = dir_decode_canonical(text))
		return std::move(*d);

	// A JSON parser keeps the last of duplicate member names; an object with
	// two members of one name is ambiguous, so it is rejected instead.
	std::vector<std::set<std::string>> open_objects;
	std::string dup;
	auto on_event = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
		using E = nlohmann::json::parse_event_t;
		if (ev == E::object_start) {
			open_objects.emplace_back();
		} else if (ev == E::object_end) {
			open_objects.pop_back();
		} else if (ev == E::key && dup.empty() &&
			   !open_objects.back().insert(parsed.get<std::string>()).second) {
			dup = parsed.get<std::string>();
		}
		return true;
	};
	nlohmann::json j;
	try {
		j = nlohmann::json::parse(text.begin(), text.end(), on_event);
	} catch (const nlohmann::json::parse_error& e) {
		dir_corrupt(std::string("not valid JSON: ") + e.what());
	}
	if (!dup.empty())
		dir_corrupt("name " + key_quote(dup) + " appears twice in one object");
	if (!j.is_object())
		dir_corrupt(std::string("expected a JSON object of entries, got ") + j.type_name());

	Directory d;
	for (auto it = j.begin(); it != j.end(); ++it) {
		const std::string& name = it.key();
		const nlohmann::json& ent = it.value();
		if (!key_name_valid(name))
			dir_corrupt("entry name " + key_quote(name) +
				    " is not a key component ([A-Za-z0-9_-], 1-255 chars)");
		if (!ent.is_object() || ent.size() != 1)
			dir_corrupt("entry " + key_quote(name) +
				    " must be an object with exactly one of FILEVAL, FILEREF, DIRREF");
		const std::string& type = ent.begin().key();
		const nlohmann::json& val = ent.begin().value();
		if (!val.is_string())
			dir_corrupt("entry " + key_quote(name) + " " + type +
				    " must be a string, got " + val.type_name());
		const auto& s = val.get_ref<const std::string&>();
		Dirent de;
		if (type == "FILEVAL") {
			auto bytes = base64_decode(s);
			if (!bytes)
				dir_corrupt("entry " + key_quote(name) +
					    " FILEVAL is not canonical base64 (RFC 4648, padded)");
			de = Dirent{Dirent::Type::FILEVAL, std::move(*bytes)};
		} else if (type == "FILEREF" || type == "DIRREF") {
			if (!blobref_valid(s))
				dir_corrupt("entry " + key_quote(name) + " " + type + " " + key_quote(s) +
					    " is not a blobref (sha1- and 40 lower-case hex digits)");
			de = Dirent{type == "FILEREF" ? Dirent::Type::FILEREF : Dirent::Type::DIRREF, s};
		} else {
			dir_corrupt("entry " + key_quote(name) + " has unknown type " + key_quote(type) +
				    " (accepted: FILEVAL, FILEREF, DIRREF)");
		}
		d.emplace(name, std::move(de));
	}
	return d;
}

} // namespace kvs
