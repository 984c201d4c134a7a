// key.cpp - key validation and splitting (see key.hpp).
#include "key.hpp"

#include "error.hpp"

#include <cerrno>
#include <cstdio>

namespace kvs {

namespace {

constexpr const char* key_accepted =
	"keys are dot-separated names of [A-Za-z0-9_-], 1-255 chars each, "
	"at most 64 names and 1024 chars";

bool name_char_ok(char c) noexcept
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

[[noreturn]] void key_reject(std::string_view key, const std::string& why)
{
	throw Error(EINVAL, "bad key " + key_quote(key) + ": " + why + " (" + key_accepted + ")");
}

std::string char_quote(char c)
{
	unsigned char u = static_cast<unsigned char>(c);
	if (u >= 0x20 && u < 0x7f)
		return std::string("'") + c + "'";
	char buf[8];
	std::snprintf(buf, sizeof(buf), "\\x%02x", u);
	return buf;
}

} // namespace

bool key_name_valid(std::string_view name) noexcept
{
	if (name.empty() || name.size() > key_max_name)
		return false;
	for (char c : name) {
		if (!name_char_ok(c))
			return false;
	}
	return true;
}

std::vector<std::string> key_split(std::string_view key)
{
	if (key.empty())
		key_reject(key, "empty key");
	if (key.size() > key_max_len)
		key_reject(key, std::to_string(key.size()) + " chars (the limit is " +
					std::to_string(key_max_len) + ")");

	std::vector<std::string> parts;
	size_t start = 0;
	for (;;) {
		size_t dot = key.find('.', start);
		std::string_view name = key.substr(start, dot == std::string_view::npos
								  ? std::string_view::npos
								  : dot - start);
		if (name.empty())
			key_reject(key, "empty component");
		if (name.size() > key_max_name)
			key_reject(key, "component " + key_quote(name) + " is " +
						std::to_string(name.size()) + " chars (the limit is " +
						std::to_string(key_max_name) + ")");
		for (char c : name) {
			if (!name_char_ok(c))
				key_reject(key, "character " + char_quote(c) + " not allowed");
		}
		if (parts.size() == key_max_depth)
			key_reject(key, "more than " + std::to_string(key_max_depth) + " components");
		parts.emplace_back(name);
		if (dot == std::string_view::npos)
			break;
		start = dot + 1;
	}
	return parts;
}

std::vector<std::string> key_split_dir(std::string_view key)
{
	if (key.empty() || key == ".")
		return {};
	return key_split(key);
}

std::string key_join(const std::vector<std::string>& parts, size_t n)
{
	std::string s;
	for (size_t i = 0; i < n && i < parts.size(); i++) {
		if (i)
			s.push_back('.');
		s += parts[i];
	}
	return s;
}

std::string key_quote(std::string_view s)
{
	constexpr size_t max_shown = 64;
	std::string q = "'";
	size_t shown = 0;
	for (char c : s) {
		if (shown == max_shown) {
			q += "...";
			break;
		}
		unsigned char u = static_cast<unsigned char>(c);
		if (u >= 0x20 && u < 0x7f && c != '\'' && c != '\\') {
			q.push_back(c);
		} else {
			char buf[8];
			std::snprintf(buf, sizeof(buf), "\\x%02x", u);
			q += buf;
		}
		shown++;
	}
	q.push_back('\'');
	return q;
}

} // namespace kvs
