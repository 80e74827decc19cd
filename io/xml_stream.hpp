// Streaming XML reading for the OpenMM XML readers (io/system_xml): expat over a file (plain or gzip) or a text,
// each element handed to a reader with its depth and parent, errors located at the element's line. An exception
// thrown by a reader stops expat and is rethrown once expat has returned (never through expat's C frames).
#pragma once

#include <expat.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "physics/pbc.hpp"

namespace mdsim::xml {

// One element, with located errors ("file:line: <what>message").
struct Element {
  const std::string& file;
  std::string_view tag;
  const XML_Char** attrs;
  int line = 0;
  std::string what;  // prefix of messages: "force 0 (HarmonicBondForce): " inside a force

  [[noreturn]] void fail(const std::string& message) const;
  const char* optional(std::string_view key) const;
  const char* required(std::string_view key) const;  // InputError when missing
  double number(std::string_view key) const;         // a finite number
  double number_or(std::string_view key, double fallback) const;
  long long integer(std::string_view key) const;  // a whole number within int's range
  long long integer_or(std::string_view key, long long fallback) const;
  int particle(std::string_view key, int count) const;      // an index in [0, count)
  bool flag_or(std::string_view key, bool fallback) const;  // 0 or not 0

 private:
  double parse(std::string_view key, const char* text) const;
};

class XmlReader {
 public:
  explicit XmlReader(std::string file) : file_(std::move(file)) {}
  virtual ~XmlReader() = default;
  const std::string& file() const { return file_; }

  // Called for each element with its depth (0 = root) and its parent's tag ("" for the root).
  virtual void start(const Element& e, int depth, std::string_view parent) = 0;
  virtual void end(std::string_view /*tag*/, int /*depth*/) {}

  std::vector<std::string> stack;  // open elements' tags
  int root_line = 0;
  bool have_root = false;

 private:
  std::string file_;
};

// The whole text, or the file `path` (plain or gzip; `what` names it in messages: "System XML file"), through
// `reader`. InputError for malformed XML (line and column), an empty file, a damaged gzip file.
void parse_text(XmlReader& reader, const std::string& text);
void parse_file(XmlReader& reader, const std::string& path, const char* what);

// A periodic box from <PeriodicBoxVectors> (A, B, C), checked to be in OpenMM's reduced form.
struct BoxReader {
  Vec3d v[3];
  bool seen[3] = {false, false, false};
  int line = 0;  // of <PeriodicBoxVectors>

  void vector(const Element& e);                           // one of A, B, C
  std::optional<Boxd> box(const std::string& file) const;  // none when no vector was read
};

}  // namespace mdsim::xml
