// A CSV log whose lines start with a step number (the state log, the replica-exchange log): written
// through to the file line by line (a killed run keeps every line written), created whole (the header
// goes to a partial file renamed into place), and on a restart cut back to the checkpoint's step.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace mdsim {

class CsvLog {
 public:
  // Creates `path` with `header` as its first line. With `append_after_step` (a restart) an existing file
  // with the same header keeps its lines with step <= that value and new lines follow; a missing file is
  // created. `what` names the log in messages ("state log"). InputError when the folder is missing or not
  // writable or the existing file has another header.
  CsvLog(const std::string& path, const std::string& header, std::optional<std::int64_t> append_after_step,
         const std::string& what);
  ~CsvLog();
  CsvLog(const CsvLog&) = delete;
  CsvLog& operator=(const CsvLog&) = delete;

  // Writes and flushes `line` (no newline). RuntimeError naming the file and `step` when it fails (disk full).
  void write_line(const std::string& line, std::int64_t step);
  void close();  // RuntimeError when the final close fails

  const std::string& path() const { return path_; }
  const std::string& header() const { return header_; }

 private:
  std::string path_, header_, what_;
  std::FILE* file_ = nullptr;
};

}  // namespace mdsim
