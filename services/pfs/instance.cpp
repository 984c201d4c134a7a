/*
 * instance.cpp: an instance directory's files (instance.hpp).
 */
#include "instance.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "error.hpp"

namespace pfs {

std::string server_dir(const std::string &instance, uint32_t index)
{
	return instance + "/server-" + std::to_string(index);
}

std::string addr_path(const std::string &instance, uint32_t index)
{
	return server_dir(instance, index) + ".addr";
}

void addr_publish(const std::string &instance, uint32_t index, const std::string &addr)
{
	static const char digits[] = "0123456789abcdef";
	std::string hex;
	for (unsigned char c : addr) {
		hex.push_back(digits[c >> 4]);
		hex.push_back(digits[c & 15]);
	}
	std::string file = addr_path(instance, index), tmp = file + ".tmp";
	{
		std::ofstream out(tmp, std::ios::trunc);
		out << hex << "\n";
		if (!out.flush())
			throw Error(EIO, "cannot write " + tmp);
	}
	if (std::rename(tmp.c_str(), file.c_str()))
		throw Error(errno, "rename " + tmp + ": " + std::strerror(errno));
}

std::optional<std::string> addr_read(const std::string &instance, uint32_t index)
{
	std::ifstream in(addr_path(instance, index));
	std::string hex;
	if (!in || !(in >> hex) || hex.empty() || hex.size() % 2 ||
	    hex.find_first_not_of("0123456789abcdef") != std::string::npos)
		return std::nullopt;
	std::string out;
	for (size_t i = 0; i < hex.size(); i += 2)
		out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
	return out;
}

} // namespace pfs
