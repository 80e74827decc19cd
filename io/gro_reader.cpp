// .gro reader (see the header): positions from fixed columns, the field width found from the decimal points as
// GROMACS's own reader does.
#include "io/gro_reader.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <vector>

#include "common/errors.hpp"
#include "io/text_input.hpp"

namespace mdsim {

namespace {

struct Reader {
  const std::string& source;
  [[noreturn]] void fail(int line, int column, const std::string& m) const {
    throw InputError(located(source, line, column, m));
  }

  // The number in columns [begin, begin + width) of `text` (0-based begin), or an error naming `what`.
  double field(const std::string& text, int line, std::size_t begin, std::size_t width, const char* what) const {
    if (text.size() <= begin)
      fail(line, static_cast<int>(begin) + 1, fmt::format("the atom line ends before {} (column {})", what, begin + 1));
    const std::string s = text.substr(begin, width);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    const std::string rest = end != nullptr ? std::string(end) : s;
    if (end == s.c_str() || rest.find_first_not_of(" \t\r") != std::string::npos || !std::isfinite(v))
      fail(line, static_cast<int>(begin) + 1,
           fmt::format("{} \"{}\" is not a number (fixed columns {} to {})", what, s, begin + 1, begin + width));
    return v;
  }

  // The field width: the distance between the first two decimal points from column 21.
  std::size_t width(const std::string& text, int line) const {
    const std::size_t first = text.find('.', 20);
    const std::size_t second = first == std::string::npos ? first : text.find('.', first + 1);
    if (second == std::string::npos)
      fail(line, 21, "expected x, y, z from column 21, numbers with decimal points (%8.3f)");
    return second - first;
  }

  std::optional<Boxd> box(const std::string& text, int line) const {
    std::istringstream in(text);
    std::vector<double> v;
    for (std::string t; in >> t;) {
      char* end = nullptr;
      v.push_back(std::strtod(t.c_str(), &end));
      if (end != t.c_str() + t.size() || !std::isfinite(v.back()))
        fail(line, 0, fmt::format("box line: \"{}\" is not a number", t));
    }
    if (v.size() != 3 && v.size() != 9)
      fail(line, 0, fmt::format("box line with {} numbers; expected 3 (rectangular: x y z) or 9 (triclinic: v1(x) "
                                "v2(y) v3(z) v1(y) v1(z) v2(x) v2(z) v3(x) v3(y)), nm", v.size()));
    v.resize(9, 0.0);
    if (v[3] != 0.0 || v[4] != 0.0 || v[6] != 0.0)
      fail(line, 0, "box vectors not in reduced form (v1(y), v1(z) and v2(z) must be 0): write the box as GROMACS does");
    Boxd b{Vec3d(v[0], 0, 0), Vec3d(v[5], v[1], 0), Vec3d(v[7], v[8], v[2])};
    if (v[0] == 0.0 && v[1] == 0.0 && v[2] == 0.0) return std::nullopt;  // no box
    if (!(v[0] > 0.0 && v[1] > 0.0 && v[2] > 0.0)) fail(line, 0, "box lengths must be positive");
    return b;
  }
};

}  // namespace

CoordinateFile parse_gro(const std::string& text, const std::string& source) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  const Reader reader{source};
  CoordinateFile out;
  out.source = source;
  if (lines.size() < 2) reader.fail(static_cast<int>(lines.size()) + 1, 0, "expected the atom count on line 2");
  char* end = nullptr;
  const long n = std::strtol(lines[1].c_str(), &end, 10);
  if (end == lines[1].c_str() || n < 0 || std::string(end).find_first_not_of(" \t\r") != std::string::npos)
    reader.fail(2, 1, fmt::format("\"{}\": expected the number of atoms", lines[1]));
  if (lines.size() < static_cast<std::size_t>(n) + 3)
    reader.fail(static_cast<int>(lines.size()), 0,
                fmt::format("the file ends after {} of {} atom lines and no box line", lines.size() - 2, n));
  std::size_t w = 0;
  for (long k = 0; k < n; ++k) {
    const std::string& l = lines[static_cast<std::size_t>(k) + 2];
    const int line = static_cast<int>(k) + 3;
    if (k == 0) w = reader.width(l, line);
    out.positions_nm.emplace_back(reader.field(l, line, 20, w, "x"), reader.field(l, line, 20 + w, w, "y"),
                                  reader.field(l, line, 20 + 2 * w, w, "z"));
    const std::size_t vb = 20 + 3 * w;
    const bool velocities = l.find_first_not_of(" \t\r", std::min(vb, l.size())) != std::string::npos;
    if (k == 0 ? velocities : !out.velocities_nm_per_ps.empty()) {
      out.velocities_nm_per_ps.emplace_back(reader.field(l, line, vb, w, "vx"), reader.field(l, line, vb + w, w, "vy"),
                                            reader.field(l, line, vb + 2 * w, w, "vz"));
    }
  }
  out.box = reader.box(lines[static_cast<std::size_t>(n) + 2], static_cast<int>(n) + 3);
  return out;
}

CoordinateFile read_gro(const std::string& path) {
  return parse_gro(read_text_file(path, ".gro file"), path);
}

}  // namespace mdsim
