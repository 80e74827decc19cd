// What the text readers share: a whole input file as a string, and a line's whitespace-separated words.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mdsim {

// The file's bytes. InputError "path: cannot open the <what>" when it cannot be opened (what: "AMBER prmtop file").
std::string read_text_file(const std::string& path, std::string_view what);

// The words of `text`, split at spaces, tabs and line ends.
std::vector<std::string> split_words(std::string_view text);

}  // namespace mdsim
