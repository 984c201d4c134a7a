// base64.cpp - strict RFC 4648 base64 (see base64.hpp).
#include "base64.hpp"

#include <array>
#include <cstdint>

namespace kvs {

namespace {

constexpr char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> b64_table()
{
	std::array<int8_t, 256> t{};
	for (auto& v : t)
		v = -1;
	for (int i = 0; i < 64; i++)
		t[static_cast<unsigned char>(b64_alphabet[i])] = static_cast<int8_t>(i);
	return t;
}

constexpr std::array<int8_t, 256> b64_values = b64_table();

} // namespace

void base64_encode_append(std::string& out, std::string_view data)
{
	const auto* p = reinterpret_cast<const unsigned char*>(data.data());
	size_t n = data.size();
	size_t i = 0;

	out.reserve(out.size() + (n + 2) / 3 * 4);
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
		out.push_back(b64_alphabet[(v >> 18) & 63]);
		out.push_back(b64_alphabet[(v >> 12) & 63]);
		out.push_back(b64_alphabet[(v >> 6) & 63]);
		out.push_back(b64_alphabet[v & 63]);
	}
	if (n - i == 1) {
		uint32_t v = uint32_t{p[i]} << 16;
		out.push_back(b64_alphabet[(v >> 18) & 63]);
		out.push_back(b64_alphabet[(v >> 12) & 63]);
		out += "==";
	} else if (n - i == 2) {
		uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8);
		out.push_back(b64_alphabet[(v >> 18) & 63]);
		out.push_back(b64_alphabet[(v >> 12) & 63]);
		out.push_back(b64_alphabet[(v >> 6) & 63]);
		out.push_back('=');
	}
}

std::string base64_encode(std::string_view data)
{
	std::string out;
	base64_encode_append(out, data);
	return out;
}

std::optional<std::string> base64_decode(std::string_view text)
{
	if (text.size() % 4 != 0)
		return std::nullopt;

	size_t pad = 0;
	if (!text.empty() && text.back() == '=')
		pad = text.size() >= 2 && text[text.size() - 2] == '=' ? 2 : 1;

	std::string out;
	out.reserve(text.size() / 4 * 3);
	for (size_t i = 0; i < text.size(); i += 4) {
		bool last = i + 4 == text.size();
		size_t quad_pad = last ? pad : 0;
		uint32_t v = 0;
		for (size_t j = 0; j < 4; j++) {
			int8_t d = 0;
			if (j < 4 - quad_pad) {
				d = b64_values[static_cast<unsigned char>(text[i + j])];
				if (d < 0)
					return std::nullopt;
			}
			v = (v << 6) | static_cast<uint32_t>(d);
		}
		out.push_back(static_cast<char>((v >> 16) & 0xff));
		if (quad_pad == 2) {
			if (v & 0xffff) // unused bits must be zero (canonical form)
				return std::nullopt;
			break;
		}
		out.push_back(static_cast<char>((v >> 8) & 0xff));
		if (quad_pad == 1) {
			if (v & 0xff)
				return std::nullopt;
			break;
		}
		out.push_back(static_cast<char>(v & 0xff));
	}
	return out;
}

} // namespace kvs
