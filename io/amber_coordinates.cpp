#include "io/amber_coordinates.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "common/errors.hpp"
#include "io/text_input.hpp"
#include "io/pdb_reader.hpp"

namespace mdsim {
namespace {

constexpr double kVelocityScale = 20.455;  // AMBER's velocity unit: Å per 1/20.455 ps

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  while (!lines.empty() && lines.back().find_first_not_of(" \t") == std::string::npos) lines.pop_back();
  return lines;
}

// Field k (12 columns) of a line, as a number; InputError naming the line and what was expected.
double field(const std::string& source, const std::vector<std::string>& lines, std::size_t line, int k,
             const char* what) {
  const std::size_t start = static_cast<std::size_t>(12 * k);
  const std::string text = start < lines[line].size() ? lines[line].substr(start, 12) : "";
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const bool blank_rest = text.find_first_not_of(" \t", static_cast<std::size_t>(end - text.c_str())) == std::string::npos;
  if (end == text.c_str() || !blank_rest || !std::isfinite(value))
    throw InputError(located(source, static_cast<int>(line + 1), 12 * k + 1,
                             fmt::format("expected {} as 6 numbers of 12 columns each (6F12.7), found '{}'", what, text)));
  return value;
}

// natom vectors, two a line, from line `first` on (Å, times `scale`, to nm).
std::vector<Vec3d> read_vectors(const std::string& source, const std::vector<std::string>& lines, std::size_t first,
                                long natom, double scale, const char* what) {
  std::vector<Vec3d> v(static_cast<std::size_t>(natom));
  for (long a = 0; a < natom; ++a) {
    const std::size_t line = first + static_cast<std::size_t>(a / 2);
    const int k = 3 * static_cast<int>(a % 2);
    v[static_cast<std::size_t>(a)] = Vec3d(field(source, lines, line, k, what), field(source, lines, line, k + 1, what),
                                           field(source, lines, line, k + 2, what)) *
                                     (0.1 * scale);
  }
  return v;
}

// Which of velocities and box follow the positions, from the line count as OpenMM's AmberAsciiRestart decides.
void sections_present(const std::string& source, const std::vector<std::string>& lines, long natom, bool& velocities,
                      bool& box) {
  const std::size_t half = static_cast<std::size_t>((natom + 1) / 2), n = lines.size();
  velocities = box = false;
  if (n == half + 2) return;
  if ((natom == 1 || natom == 2) && n == 4) {  // one line after the positions: velocities or a box?
    const std::string& line = lines[3];
    if (natom == 1) {
      box = line.size() > 36;
    } else {
      for (int k = 0; k < 6; ++k) box = box || field(source, lines, 3, k, "velocities or a box") >= 60.0;
    }
    velocities = !box;
    return;
  }
  if (n == half + 3) box = true;
  else if (n == 2 * half + 2) velocities = true;
  else if (n == 2 * half + 3) velocities = box = true;
  else
    throw InputError(located(source, static_cast<int>(n), 0,
                             fmt::format("has {} lines, which does not fit {} atoms: expected {} (positions), {} (and "
                                         "a box), {} (and velocities) or {} (both); the file is truncated or its "
                                         "atom count is wrong",
                                         n, natom, half + 2, half + 3, 2 * half + 2, 2 * half + 3)));
}

}  // namespace

CoordinateFile read_amber_coordinates_text(const std::string& text, const std::string& source, int expected_atoms) {
  if (text.rfind("CDF", 0) == 0 || text.rfind("\x89HDF", 0) == 0)
    throw InputError(located(source, 0, 0,
                             "is a NetCDF AMBER restart/trajectory, which is not supported: write an ASCII inpcrd/rst7 "
                             "(cpptraj: trajout file.rst7 restart)"));
  const std::vector<std::string> lines = lines_of(text);
  if (lines.size() < 2)
    throw InputError(located(source, static_cast<int>(lines.size()), 0,
                             "expected a title line, then the atom count: not an AMBER coordinate file"));
  std::istringstream counts(lines[1]);
  long natom = -1;
  if (!(counts >> natom) || natom < 1)
    throw InputError(located(source, 2, 0,
                             fmt::format("expected the atom count (and optionally the time), found '{}'", lines[1])));
  if (natom > 2 * static_cast<long>(lines.size()))  // before any size is computed from it
    throw InputError(located(source, 2, 0,
                             fmt::format("gives {} atoms, but the file has only {} lines (two atoms a line): the file "
                                         "is truncated or its atom count is wrong",
                                         natom, lines.size())));
  if (expected_atoms >= 0 && natom != expected_atoms)
    throw InputError(located(source, 2, 0,
                             fmt::format("has {} atoms, the topology has {}: the coordinates and the topology must "
                                         "describe the same atoms in the same order",
                                         natom, expected_atoms)));
  bool has_velocities = false, has_box = false;
  sections_present(source, lines, natom, has_velocities, has_box);
  CoordinateFile c;
  c.source = source;
  c.positions_nm = read_vectors(source, lines, 2, natom, 1.0, "positions (Å)");
  std::size_t next = 2 + static_cast<std::size_t>((natom + 1) / 2);
  if (has_velocities) {
    c.velocities_nm_per_ps = read_vectors(source, lines, next, natom, kVelocityScale, "velocities");
    next += static_cast<std::size_t>((natom + 1) / 2);
  }
  if (has_box) {
    double cell[6];
    for (int k = 0; k < 6; ++k) cell[k] = field(source, lines, next, k, "the box (a b c in Å, alpha beta gamma)");
    std::string problem;
    int at_fault = 0;
    c.box = reduced_box_from_cell(cell, problem, at_fault);
    if (!c.box)
      throw InputError(located(source, static_cast<int>(next + 1), 0, fmt::format("the box line {}", problem)));
  }
  return c;
}

CoordinateFile read_amber_coordinates(const std::string& path, int expected_atoms) {
  return read_amber_coordinates_text(read_text_file(path, "AMBER coordinate file"), path, expected_atoms);
}

}  // namespace mdsim
