// tmpdir.hpp - test helper: a fresh directory removed (with its contents)
// when the test ends, also when it fails.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

class TmpDir {
public:
	TmpDir()
	{
		std::string tmpl = (std::filesystem::temp_directory_path() / "kvs-core-XXXXXX").string();
		if (!mkdtemp(tmpl.data()))
			throw std::runtime_error("mkdtemp failed for " + tmpl);
		path_ = tmpl;
	}
	~TmpDir()
	{
		std::error_code ec;
		std::filesystem::remove_all(path_, ec);
	}
	TmpDir(const TmpDir&) = delete;
	TmpDir& operator=(const TmpDir&) = delete;
	std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
	std::filesystem::path path_;
};
