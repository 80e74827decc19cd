// read_charmm_crd: CHARMM card coordinates (io/charmm_crd.hpp).
#include "io/charmm_crd.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/errors.hpp"
#include "io/text_input.hpp"

namespace mdsim {
namespace {

[[noreturn]] void fail(const std::string& source, int line, const std::string& message) {
  throw InputError(located(source, line, 0, message));
}

bool parse_number(const std::string& text, double& out) {
  const auto b = text.find_first_not_of(' '), e = text.find_last_not_of(' ');
  if (b == std::string::npos) return false;
  const std::string s = text.substr(b, e - b + 1);
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0' && std::isfinite(out);
}

// x, y, z (Å) of an atom line: by the format's columns, else by whitespace-separated fields 5 to 7.
bool atom_position(const std::string& line, bool ext, double xyz[3]) {
  const std::size_t start = ext ? 40 : 20, width = ext ? 20 : 10;
  bool ok = line.size() >= start + 3 * width - 1;
  for (std::size_t k = 0; ok && k < 3; ++k) ok = parse_number(line.substr(start + k * width, width), xyz[k]);
  if (ok) return true;
  const std::vector<std::string> w = split_words(line);
  if (w.size() < 7) return false;
  for (std::size_t k = 0; k < 3; ++k)
    if (!parse_number(w[4 + k], xyz[k])) return false;
  return true;
}

}  // namespace

CoordinateFile read_charmm_crd_text(const std::string& text, const std::string& source, int expected_atoms) {
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[line.find_first_not_of(" \t")] == '*') continue;
    break;
  }
  std::istringstream head(line);
  long count = -1;
  std::string flag;
  head >> count >> flag;
  if (count < 0 || count > 2147483647L)
    fail(source, number, "expected the atom count (after the '*' title lines), as CHARMM writes a coordinate file");
  const bool ext = flag == "EXT" || flag == "ext";
  if (expected_atoms >= 0 && count != expected_atoms)
    fail(source, number, fmt::format("the file has {} atoms, but the topology has {}", count, expected_atoms));
  CoordinateFile out;
  out.source = source;
  for (long a = 0; a < count; ++a) {
    ++number;
    if (!std::getline(in, line)) fail(source, number, fmt::format("the file ends after {} of its {} atoms", a, count));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    double xyz[3];
    if (!atom_position(line, ext, xyz))
      fail(source, number, fmt::format("atom {}: expected x, y and z in Å ({} format)", a + 1, ext ? "EXT" : "standard"));
    out.positions_nm.push_back({xyz[0] * 0.1, xyz[1] * 0.1, xyz[2] * 0.1});
  }
  return out;
}

CoordinateFile read_charmm_crd(const std::string& path, int expected_atoms) {
  return read_charmm_crd_text(read_text_file(path, "CHARMM coordinate file"), path, expected_atoms);
}

bool is_charmm_crd_file(const std::string& path) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto b = line.find_first_not_of(" \t\r");
    if (b != std::string::npos) return line[b] == '*';
  }
  return false;
}

}  // namespace mdsim
