// read_text_file, split_words (io/text_input.hpp).
#include "io/text_input.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "common/errors.hpp"

namespace mdsim {

std::string read_text_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(located(path, 0, 0, fmt::format("cannot open the {}", what)));
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

std::vector<std::string> split_words(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(std::move(w));
  return out;
}

}  // namespace mdsim
