#include "support/AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tlc {

namespace {

bool writeTemp(const std::string& target, const std::string& content, std::string& tempPath, std::string& error) {
    std::string pattern = target + ".tmp.XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    if (fd < 0) {
        error = "cannot create a file next to '" + target + "': " + std::strerror(errno);
        return false;
    }
    tempPath = name.data();
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            error = "cannot write '" + target + "': " + std::strerror(errno);
            ::close(fd);
            std::remove(tempPath.c_str());
            return false;
        }
        done += static_cast<size_t>(n);
    }
    // Readable like any file the user creates (mkstemp makes 0600).
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    if (::close(fd) != 0) {
        error = "cannot write '" + target + "': " + std::strerror(errno);
        std::remove(tempPath.c_str());
        return false;
    }
    return true;
}

} // namespace

bool writeFilesAtomically(const std::vector<std::pair<std::string, std::string>>& files, std::string& error) {
    std::vector<std::string> temps;
    for (const auto& [path, content] : files) {
        std::string temp;
        if (!writeTemp(path, content, temp, error)) {
            for (const auto& t : temps) std::remove(t.c_str());
            return false;
        }
        temps.push_back(temp);
    }
    for (size_t i = 0; i < files.size(); ++i) {
        if (std::rename(temps[i].c_str(), files[i].first.c_str()) != 0) {
            error = "cannot write '" + files[i].first + "': " + std::strerror(errno);
            for (size_t j = i; j < temps.size(); ++j) std::remove(temps[j].c_str());
            return false;
        }
    }
    return true;
}

} // namespace tlc
